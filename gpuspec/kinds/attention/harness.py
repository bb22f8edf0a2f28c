"""The plan for templates/attention.py.jinja: PyTorch's attention over the spec's shapes (grouped-query where k
and v have fewer heads, causal where the spec says so), eager or fused; a Triton flash-attention kernel where the
spec names `triton` or the tensors are fp8 (PyTorch's attention takes no fp8)."""
from __future__ import annotations

from gpuspec import codegen
from gpuspec.codegen import Code
from gpuspec.kinds.attention import Attention
from gpuspec.planning import HarnessError, sized

# Implementations the harness cannot run: what it would take.
_NOT_RUN = {"flash3": "FlashAttention-3 is not part of PyTorch: measure it with its own benchmark",
            "cudnn": "the harness runs PyTorch's flash and memory-efficient backends and a Triton kernel, not cuDNN's",
            "flash_decoding": "Flash-Decoding (xformers) is not part of PyTorch: measure it with xformers' benchmark"}


def plan(workload: Attention, name: Code, name_of=None) -> dict:
    if workload.mode == "fused" and workload.implementation in _NOT_RUN:
        raise HarnessError(_NOT_RUN[workload.implementation])
    q, k = workload.q.shape, workload.k.shape
    group = q[1] // k[1]
    small_kv_heads = min(k[1], 2)
    small_q = codegen.shape((1, group * small_kv_heads, min(q[2], 64), min(q[3], 64)))
    small_k = codegen.shape((1, small_kv_heads, min(k[2], 64), min(k[3], 64)))
    fused = workload.mode == "fused"
    triton = fused and (workload.implementation == "triton" or workload.q.dtype == "fp8")
    helpers = {"attention_backend", "FUSED_ATTENTION"} if fused and not triton else set()
    return {"template": "attention.py.jinja", "kind": Code("attention"), "id": name, "fused": fused,
            "triton": triton, "causal": workload.causal, "helpers": frozenset(helpers), "gqa": group > 1,
            "q_size": sized(codegen.shape(q), small_q), "kv_size": sized(codegen.shape(k), small_k),
            "dtype": codegen.torch_dtype(workload.q.dtype), "fp8": workload.q.dtype == "fp8",
            "out_dtype": codegen.torch_dtype(workload.output_dtype)}


def defines(workload: Attention, name: str) -> list[str]:
    return [f"{name}_eager", f"{name}_fused", f"{name}_kernel", f"measure_{name}"]
