"""What every kind's harness plan (gpuspec/kinds/<kind>/harness.py) shares: the refusal when a workload cannot be
measured as written, the limits a generated program keeps to, and the small shapes of a `--small` run."""
from __future__ import annotations

import math

from gpuspec.codegen import Code

SMALL_ELEMENTS = 4096  # the largest tensor a `--small` run (under the Triton interpreter) builds
INT32_MAX = 2**31 - 1
MAX_GRID = 2**31 - 1  # programs in the first dimension of a launch grid, as CUDA allows
MAX_LAUNCHES = 100_000  # kernels of a stream or a decode step that a harness launches (and captures in a graph)
# Python reads at most 200 nested brackets; the templates put a generated expression inside a few of their own.
MAX_NESTING = 150
TOO_DEEP = f"the expression is nested too deeply for a generated program (at most {MAX_NESTING} levels)"


class HarnessError(ValueError):
    """A workload that no harness can measure as written (the reason says why)."""


def shallow(code: Code) -> Code:
    """`code`, if Python can read it: HarnessError when its brackets nest deeper than MAX_NESTING."""
    depth = deepest = 0
    for char in str(code):
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth -= 1
    if deepest > MAX_NESTING:
        raise HarnessError(TOO_DEEP)
    return code


def sized(full: Code, small_size: Code) -> Code:
    """`full`, or `small_size` in a `--small` run; one literal where the two are the same."""
    return full if full == small_size else Code(f"{small_size} if args.small else {full}")


def small(out_shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape of at most SMALL_ELEMENTS elements with the same trailing layout, for interpreter runs."""
    dims = list(out_shape) or [1]
    i = 0
    while math.prod(dims) > SMALL_ELEMENTS and i < len(dims) - 1:
        dims[i] = 1
        i += 1
    if math.prod(dims) > SMALL_ELEMENTS:
        dims[-1] = max(1, SMALL_ELEMENTS // max(1, math.prod(dims[:-1])))
    return tuple(dims)
