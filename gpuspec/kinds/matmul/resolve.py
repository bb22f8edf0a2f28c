"""`a @ b with 128x256 tiles`: two named tensors of two or more dimensions that multiply, and the tile, one that a GPU
kernel could use."""
from __future__ import annotations

import re

from gpuspec import nodes
from gpuspec.devices import Device
from gpuspec.kinds.matmul import Matmul, default_tile
from gpuspec.resolve.scope import Scope, invalid, require_device
from gpuspec.resolve.tensor_expressions import tensor_expression
from gpuspec.tensors import Tensor, broadcast
from gpuspec.text import Span

# The tiles GPU GEMM kernels use: each side a multiple of 16 from 16 to 256.
# - 16: the tensor cores' MMA instructions compute 16 rows at a time (PTX ISA, `mma.sync` shapes m16n8k16 for 16-bit
#   inputs, m16n8k8 for tf32, m16n8k32 for 8-bit), and Triton's `tl.dot` needs every side of its blocks to be at
#   least 16; PyTorch's compiled matmuls never shrink a tile below 16 (kinds/matmul's SMALLEST_TILE_SIDE).
# - 256: the widest MMA one instruction issues (PTX ISA, `wgmma.mma_async` shapes m64nNk16, N up to 256) and the
#   largest side of CUTLASS's and Triton's autotuned tiles (256x128, 128x256).
TILE_STEP, TILE_LARGEST = 16, 256
# A tile also keeps a slice of A's rows and of B's columns in shared memory while it runs: at the least one MMA's
# depth of each row and column, 32 bytes (k16 at 16 bits, k8 at tf32, k32 at 8 bits), twice over so that the next
# slice loads while the tensor cores work on this one (double buffering, the fewest stages CUTLASS's and Triton's
# pipelined kernels run). Every catalog GPU holds that for a 256x256 tile (32 KiB); a device the spec defines may not.
TILE_SLICE_BYTES, TILE_STAGES = 32, 2
_TILE_WRITTEN = re.compile(r"\bwith[ \t]+([0-9]+[x×][0-9]+)[ \t]+tiles\b")


def resolve(subject: nodes.Subject, scope: Scope, local: dict[str, Tensor], statement: str) -> Matmul:
    device = require_device(scope, subject.span)
    written = subject.options
    if written.mode or written.threads is not None or written.graph:
        raise invalid("matmul-options", "a matmul takes `with ROWSxCOLUMNS tiles`", written.span)
    a, b = (tensor_expression(scope, side, local) for side in (subject.expr.left, subject.expr.right))
    for side, tensor in ((subject.expr.left, a), (subject.expr.right, b)):
        if not isinstance(tensor, Tensor) or len(tensor.shape) < 2:
            raise invalid("matmul-operand", "each side of `@` is a tensor of two or more dimensions", side.span,
                          "name it first: `a = bf16[4096, 8192]`")
    if a.shape[-1] != b.shape[-2]:
        raise invalid("shape-mismatch", f"`@` needs A's last dimension to equal B's second to last: "
                      f"{list(a.shape)} @ {list(b.shape)}", subject.expr.span)
    if a.dtype != b.dtype:
        raise invalid("dtype-mismatch", f"`@` multiplies tensors of one dtype, not {a.dtype} and {b.dtype}",
                      subject.expr.span)
    try:
        broadcast(a.shape[:-2], b.shape[:-2])
    except ValueError as error:
        raise invalid("shape-mismatch", str(error), subject.expr.span) from None
    tile = written.tile or default_tile(a.shape[-2], b.shape[-1])
    if written.tile is not None:
        _check_tile(written.tile, device, _tile_span(subject))
    return Matmul(a, b, tile, device, text=statement, tile_written=written.tile is not None)


def _check_tile(tile: tuple[int, int], device: Device, span: Span | None) -> None:
    """A tile written in the spec is one a GPU kernel could use (see TILE_STEP): an error at the tile otherwise."""
    rows, columns = tile
    written = f"{rows}x{columns}"
    wrong = [(side, size) for side, size in (("rows", rows), ("columns", columns))
             if size % TILE_STEP or not TILE_STEP <= size <= TILE_LARGEST]
    if wrong:
        nearest = "x".join(str(min(max(TILE_STEP * round(size / TILE_STEP), TILE_STEP), TILE_LARGEST))
                           for size in tile)
        sides = " and ".join(f"{size} {side}" for side, size in wrong)
        raise invalid("bad-tile", f"no GPU kernel runs {written} tiles ({sides}): a tile's sides are multiples of "
                      f"{TILE_STEP} from {TILE_STEP} to {TILE_LARGEST}, as the tensor cores' MMA instructions "
                      f"compute {TILE_STEP} rows at a time and at most {TILE_LARGEST} columns", span,
                      f"write `with {nearest} tiles`, or leave the tile out for the one PyTorch picks "
                      "(128x128, smaller for a skinny matmul)")
    needed = TILE_STAGES * (rows + columns) * TILE_SLICE_BYTES
    for field in ("shared_memory_per_block", "shared_memory_per_sm"):
        limit = device.fact(field)
        if limit is not None:
            if needed > limit.value:
                raise invalid("bad-tile", f"a {written} tile keeps {needed / 1024:g} KiB of A and B in "
                              f"shared memory (2 slices of {rows} + {columns} rows and columns, {TILE_SLICE_BYTES} B "
                              f"deep), more than {device.name}'s {field} ({limit.written})", span,
                              "choose a smaller tile")
            return


def _tile_span(subject: nodes.Subject) -> Span | None:
    """Where `with RxC tiles` is written in the subject's first line (its options' span if it is not found there)."""
    found = _TILE_WRITTEN.search(subject.text.split("\n", 1)[0])
    span = subject.span
    if found is None or span is None:
        return subject.options.span
    return Span(span.file, span.line, span.column + found.start(), span.line, span.column + found.end())
