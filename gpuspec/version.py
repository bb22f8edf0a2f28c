"""gpuspec's version: its own module, so the pipeline's modules can name it without importing the package's
public face (gpuspec/__init__.py, which sits above everything)."""

__version__ = "0.1.0"
