"""The plan for templates/attention.py.jinja: PyTorch's attention over the spec's shapes (grouped-query where k
and v have fewer heads), eager or fused."""
from __future__ import annotations

from gpuspec import codegen
from gpuspec.codegen import Code
from gpuspec.kinds.attention import Attention
from gpuspec.planning import sized


def plan(workload: Attention, name: Code, name_of=None) -> dict:
    q, k = workload.q.shape, workload.k.shape
    group = q[1] // k[1]
    small_kv_heads = min(k[1], 2)
    small_q = codegen.shape((1, group * small_kv_heads, min(q[2], 64), min(q[3], 64)))
    small_k = codegen.shape((1, small_kv_heads, min(k[2], 64), min(k[3], 64)))
    fused = workload.mode == "fused"
    return {"template": "attention.py.jinja", "kind": Code("attention"), "id": name, "fused": fused,
            "helpers": frozenset({"attention_backend", "FUSED_ATTENTION"} if fused else ()), "gqa": group > 1,
            "q_size": sized(codegen.shape(q), small_q), "kv_size": sized(codegen.shape(k), small_k),
            "dtype": codegen.torch_dtype(workload.q.dtype)}


def defines(workload: Attention, name: str) -> list[str]:
    return [f"{name}_eager", f"{name}_fused", f"measure_{name}"]
