"""gpuspec: check the numbers written about GPU performance against an analytical model."""

__version__ = "0.1.0"
