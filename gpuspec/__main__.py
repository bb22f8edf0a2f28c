"""`python -m gpuspec` runs the command line."""
from gpuspec.cli import run

run()
