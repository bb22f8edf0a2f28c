"""The plan for templates/attention.py.jinja: PyTorch's attention over the spec's shapes (grouped-query where k
and v have fewer heads), eager or fused."""
from __future__ import annotations

from gpuspec import codegen
from gpuspec.codegen import Code
from gpuspec.kinds.attention import Attention


def plan(workload: Attention, key: str) -> dict:
    q, k = workload.q.shape, workload.k.shape
    group = q[1] // k[1]
    small_kv_heads = min(k[1], 2)
    small_q = (1, group * small_kv_heads, min(q[2], 64), min(q[3], 64))
    small_k = (1, small_kv_heads, min(k[2], 64), min(k[3], 64))
    return {"template": "attention.py.jinja", "kind": Code("attention"), "id": codegen.identifier(f"w_{key}"),
            "fused": workload.mode == "fused", "gqa": group > 1,
            "q_shape": codegen.shape(q), "kv_shape": codegen.shape(k),
            "small_q": codegen.shape(small_q), "small_kv": codegen.shape(small_k),
            "dtype": codegen.torch_dtype(workload.q.dtype)}
