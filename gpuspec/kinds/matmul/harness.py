"""The plan for templates/matmul.py.jinja: torch.matmul of the spec's shapes and dtype."""
from __future__ import annotations

from gpuspec import codegen
from gpuspec.codegen import Code
from gpuspec.kinds.matmul import Matmul
from gpuspec.planning import HarnessError


def plan(workload: Matmul, key: str) -> dict:
    if workload.a.dtype not in ("bf16", "fp16", "fp32", "tf32", "fp64"):
        raise HarnessError(f"the matmul harness multiplies floating-point tensors, not {workload.a.dtype}")
    small = (min(workload.a.shape[-2], 64), min(workload.a.shape[-1], 64)), \
        (min(workload.b.shape[-2], 64), min(workload.b.shape[-1], 64))
    return {"template": "matmul.py.jinja", "kind": Code("matmul"), "id": codegen.identifier(f"w_{key}"),
            "a_shape": codegen.shape(workload.a.shape), "b_shape": codegen.shape(workload.b.shape),
            "small_a": codegen.shape(small[0]), "small_b": codegen.shape(small[1]),
            "dtype": codegen.torch_dtype(workload.a.dtype)}
