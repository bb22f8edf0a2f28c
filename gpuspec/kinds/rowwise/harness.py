"""The plan for templates/rowwise.py.jinja: the operation over rows of the spec's shape, eager or fused."""
from __future__ import annotations

import math

from gpuspec import codegen
from gpuspec.codegen import Code
from gpuspec.kinds.rowwise import ROWWISE_OPS, Rowwise
from gpuspec.planning import HarnessError, small


def plan(workload: Rowwise, key: str) -> dict:
    x = workload.x
    if x.dtype not in ("bf16", "fp16", "fp32", "fp64"):
        raise HarnessError(f"the row-wise harness works on bf16, fp16, fp32 and fp64 tensors, not {x.dtype}")
    if workload.op not in ROWWISE_OPS:
        raise HarnessError(f"no harness for `{workload.op}`")
    length = x.shape[-1]
    # a sum of n values rounded to bf16 is off by about √n rounding steps; softmax's outputs are about 1 / n
    atol = {"sum": 0.02 * math.sqrt(length), "softmax": 1e-3}.get(workload.op, 0.02)
    return {"template": "rowwise.py.jinja", "kind": Code("rowwise"), "id": codegen.identifier(f"w_{key}"),
            "op": workload.op, "fused": workload.mode == "fused", "shape": codegen.shape(x.shape),
            "small_shape": codegen.shape(small(x.shape)), "dtype": codegen.torch_dtype(x.dtype),
            "rtol": codegen.literal(0.02), "atol": codegen.literal(atol)}
