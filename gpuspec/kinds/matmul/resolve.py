"""`a @ b with 128x256 tiles`: two named tensors of two or more dimensions that multiply, and the tile."""
from __future__ import annotations

from gpuspec import nodes
from gpuspec.kinds.matmul import Matmul, default_tile
from gpuspec.resolve.scope import Scope, invalid, require_device
from gpuspec.resolve.tensor_expressions import tensor_expression
from gpuspec.tensors import Tensor, broadcast


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
    if min(tile) < 1:
        raise invalid("bad-tile", "a tile has at least one row and one column", written.span)
    return Matmul(a, b, tile, device, text=statement, tile_written=written.tile is not None)
