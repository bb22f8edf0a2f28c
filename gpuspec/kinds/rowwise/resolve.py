"""`softmax(x) fused`: a row-wise operation over a named floating-point tensor of at least one dimension."""
from __future__ import annotations

from gpuspec import nodes
from gpuspec.kinds.rowwise import KIND, Rowwise
from gpuspec.resolve import options
from gpuspec.resolve.scope import Scope, invalid, require_device
from gpuspec.tensors import FLOAT_DTYPES, Tensor


def resolve(subject: nodes.Subject, scope: Scope, local: dict[str, Tensor], statement: str) -> Rowwise:
    device = require_device(scope, subject.span)
    call = subject.expr
    mode = options.call_mode(KIND, subject, scope)
    (x,) = options.tensor_args(scope, call, local, 1, "rowwise")
    if not x.shape:
        raise invalid("rowwise-operand", f"`{call.function}` works over the last axis, and `{x.name}` is 0-d",
                      call.args[0].span, "give it at least one dimension: `x = bf16[8192, 4096]`")
    if x.dtype not in FLOAT_DTYPES:
        raise invalid("dtype-mismatch", f"`{call.function}` takes a floating-point tensor, not {x.dtype}",
                      call.args[0].span)
    return Rowwise(call.function, x, mode, device, text=statement, timing=scope.timing)
