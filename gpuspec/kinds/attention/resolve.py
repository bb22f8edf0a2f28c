"""`attention(q, k, v) fused`: three named 4-d bf16 or fp16 tensors whose shapes agree (grouped-query attention
allowed)."""
from __future__ import annotations

from gpuspec import nodes
from gpuspec.kinds.attention import KIND, Attention
from gpuspec.resolve import options
from gpuspec.resolve.scope import Scope, invalid, require_device
from gpuspec.tensors import Tensor


def resolve(subject: nodes.Subject, scope: Scope, local: dict[str, Tensor], statement: str) -> Attention:
    device = require_device(scope, subject.span)
    call = subject.expr
    mode = options.call_mode(KIND, subject, scope)
    q, k, v = options.tensor_args(scope, call, local, 3, "attention")
    for arg, tensor in zip(call.args, (q, k, v)):
        if len(tensor.shape) != 4:
            raise invalid("attention-operand", f"`{tensor.name}` is {list(tensor.shape)}; attention takes "
                          "4-d tensors: [batch, heads, seq, head_dim]", arg.span)
        if tensor.dtype not in ("bf16", "fp16"):
            raise invalid("dtype-mismatch", f"attention runs on bf16 or fp16 tensors, not {tensor.dtype} "
                          f"(`{tensor.name}`)", arg.span)
    if len({q.dtype, k.dtype, v.dtype}) > 1:
        raise invalid("dtype-mismatch", f"q, k and v share one dtype, not {q.dtype}, {k.dtype} and {v.dtype}",
                      call.span)
    if k.shape != v.shape:
        raise invalid("shape-mismatch", f"k and v have one shape, not {list(k.shape)} and {list(v.shape)}",
                      call.span)
    if k.shape[0] != q.shape[0] or k.shape[3] != q.shape[3]:
        raise invalid("shape-mismatch", f"q and k share batch and head_dim: {list(q.shape)} and "
                      f"{list(k.shape)}", call.span)
    if q.shape[1] % k.shape[1]:
        raise invalid("shape-mismatch", f"kv_heads ({k.shape[1]}) must divide heads ({q.shape[1]})", call.span,
                      "grouped-query attention shares each k and v head among heads / kv_heads query heads")
    return Attention(q, k, v, mode, device, text=statement)
