"""`attention(q, k, v) fused`, `attention(q, k, v, causal) fused`: three named 4-d tensors whose shapes agree
(grouped-query attention allowed), bf16 or fp16, or fp8 when fused; the file's attention implementation."""
from __future__ import annotations

from gpuspec import nodes
from gpuspec.diagnostics import did_you_mean
from gpuspec.kinds.attention import KIND, Attention
from gpuspec.resolve import options
from gpuspec.resolve.scope import Scope, invalid, require_device
from gpuspec.tensors import Tensor

MASKS = ("causal",)  # what a fourth argument may say


def _mask(call: nodes.Call) -> tuple[nodes.Call, bool]:
    """The call without its mask argument, and whether it was `causal`."""
    if len(call.args) != 4:
        return call, False
    last = call.args[3]
    if not isinstance(last, nodes.Name) or last.id not in MASKS:
        written = f"`{last.id}`" if isinstance(last, nodes.Name) else "an expression"
        raise invalid("attention-operand", f"the fourth argument of `attention` is its mask, `causal`, not {written}",
                      last.span, (did_you_mean(last.id, MASKS) if isinstance(last, nodes.Name) else None)
                      or "write `attention(q, k, v, causal)`: each query sees only the keys up to its own position")
    return nodes.Call(call.function, call.args[:3], span=call.span), True


def resolve(subject: nodes.Subject, scope: Scope, local: dict[str, Tensor], statement: str) -> Attention:
    device = require_device(scope, subject.span)
    call, causal = _mask(subject.expr)
    mode = options.call_mode(KIND, subject, scope)
    q, k, v = options.tensor_args(scope, call, local, 3, "attention")
    for arg, tensor in zip(call.args, (q, k, v)):
        if len(tensor.shape) != 4:
            raise invalid("attention-operand", f"`{tensor.name}` is {list(tensor.shape)}; attention takes "
                          "4-d tensors: [batch, heads, seq, head_dim]", arg.span)
        if tensor.dtype not in ("bf16", "fp16", "fp8"):
            raise invalid("dtype-mismatch", f"attention runs on bf16, fp16 or fp8 tensors, not {tensor.dtype} "
                          f"(`{tensor.name}`)", arg.span)
    if len({q.dtype, k.dtype, v.dtype}) > 1:
        raise invalid("dtype-mismatch", f"q, k and v share one dtype, not {q.dtype}, {k.dtype} and {v.dtype}",
                      call.span)
    if q.dtype == "fp8" and mode != "fused":
        raise invalid("dtype-mismatch", "fp8 attention runs fused only: standard attention's three kernels have no "
                      "fp8 form (PyTorch multiplies no fp8 batches)", subject.span,
                      "write `attention(q, k, v) fused`, or give q, k and v bf16 or fp16")
    if k.shape != v.shape:
        raise invalid("shape-mismatch", f"k and v have one shape, not {list(k.shape)} and {list(v.shape)}",
                      call.span)
    if k.shape[0] != q.shape[0] or k.shape[3] != q.shape[3]:
        raise invalid("shape-mismatch", f"q and k share batch and head_dim: {list(q.shape)} and "
                      f"{list(k.shape)}", call.span)
    if q.shape[1] % k.shape[1]:
        raise invalid("shape-mismatch", f"kv_heads ({k.shape[1]}) must divide heads ({q.shape[1]})", call.span,
                      "grouped-query attention shares each k and v head among heads / kv_heads query heads")
    if causal and q.shape[2] > k.shape[2]:
        raise invalid("shape-mismatch", f"causal attention has no more queries than keys, not {q.shape[2]} "
                      f"against {k.shape[2]}", call.span, "the mask is aligned at the bottom right: the last query "
                      "sees every key, and a query before the first key would see none")
    return Attention(q, k, v, mode, device, text=statement, causal=causal,
                     implementation=scope.attention_implementation)
