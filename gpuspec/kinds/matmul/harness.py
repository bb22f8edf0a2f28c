"""The plan for templates/matmul.py.jinja: torch.matmul of the spec's shapes and dtype."""
from __future__ import annotations

from gpuspec import codegen
from gpuspec.codegen import Code
from gpuspec.kinds.matmul import Matmul
from gpuspec.planning import HarnessError, sized


def plan(workload: Matmul, name: Code, name_of=None) -> dict:
    if workload.a.dtype not in ("bf16", "fp16", "fp32", "tf32", "fp64"):
        raise HarnessError(f"the matmul harness multiplies floating-point tensors, not {workload.a.dtype}")
    a, b = workload.a.shape, workload.b.shape
    a_shape, b_shape = codegen.shape(a), codegen.shape(b)
    small_a = codegen.shape((min(a[-2], 64), min(a[-1], 64)))
    small_b = codegen.shape((min(b[-2], 64), min(b[-1], 64)))
    return {"template": "matmul.py.jinja", "kind": Code("matmul"), "id": name,
            "a_size": sized(a_shape, small_a), "b_size": sized(b_shape, small_b),
            "dtype": codegen.torch_dtype(workload.a.dtype), "tf32": workload.a.dtype == "tf32"}


def defines(workload: Matmul, name: str) -> list[str]:
    return [f"measure_{name}"]
