"""`python -m gpuspec` runs the command line."""
import sys

from gpuspec.cli import main

sys.exit(main())
