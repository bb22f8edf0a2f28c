"""The plan for templates/rowwise.py.jinja: the model's kernels (rules.kernels), each a Triton kernel of its own
that does what the model says that kernel does, launched one program per row.

Eager is the multi-pass form: each pass reads x (and the row statistics before it) and writes one statistic per
row, or the output, so the statistics go through memory as the model counts them. Fused is one kernel that holds
the row on chip: x read once, the output written once.
"""
from __future__ import annotations

import math

from gpuspec import codegen
from gpuspec.codegen import Code
from gpuspec.kinds.rowwise import ROWWISE_OPS, Rowwise
from gpuspec.kinds.rowwise.rules import kernels
from gpuspec.planning import MAX_GRID, HarnessError, sized, small

# (op, the model's label of a kernel) -> what the kernel computes (a section of templates/rowwise.py.jinja): the
# row statistic it writes (or "y", the output) and the statistics it reads.
_KERNELS = {
    ("sum", "sum"): ("sum", "y", ()),
    ("mean", "mean"): ("mean", "y", ()),
    ("amax", "amax"): ("amax", "y", ()),
    ("softmax", "max pass"): ("amax", "row_max", ()),
    ("softmax", "exp-and-sum pass"): ("exp_sum", "row_sum", ("row_max",)),
    ("softmax", "normalize pass"): ("softmax_normalize", "y", ("row_max", "row_sum")),
    ("layernorm", "mean pass"): ("mean", "row_mean", ()),
    ("layernorm", "variance pass"): ("variance", "row_var", ("row_mean",)),
    ("layernorm", "normalize pass"): ("layernorm_normalize", "y", ("row_mean", "row_var")),
    ("rmsnorm", "mean-of-squares pass"): ("mean_square", "row_ms", ()),
    ("rmsnorm", "normalize pass"): ("rmsnorm_normalize", "y", ("row_ms",)),
}
# One kernel for the whole row: the reductions loop over it (x read once either way); the others hold it on chip.
_FUSED = {"sum": "sum", "mean": "mean", "amax": "amax", "softmax": "softmax_fused", "layernorm": "layernorm_fused",
          "rmsnorm": "rmsnorm_fused"}
HELD_ROW = 32_768  # the longest row a fused kernel holds in registers: 64 fp32 values a thread over 16 warps
CHUNK = 2048  # elements a pass kernel reads per step of its loop over the row


def plan(workload: Rowwise, name: Code, name_of=None) -> dict:
    x = workload.x
    if x.dtype not in ("bf16", "fp16", "fp32", "fp64"):
        raise HarnessError(f"the row-wise harness works on bf16, fp16, fp32 and fp64 tensors, not {x.dtype}")
    if workload.op not in ROWWISE_OPS:
        raise HarnessError(f"no harness for `{workload.op}`")
    rows, length = math.prod(x.shape[:-1]), x.shape[-1]
    if rows > MAX_GRID:
        raise HarnessError(f"{rows:,} rows is more programs than one kernel launches ({MAX_GRID:,}): the harness "
                           "runs one program per row")
    planned = []
    for kernel in kernels(workload):
        if workload.mode == "fused":
            role, writes, reads = _FUSED[workload.op], "y", ()
        elif (workload.op, kernel.label) in _KERNELS:
            role, writes, reads = _KERNELS[(workload.op, kernel.label)]
        else:
            raise HarnessError(f"no harness kernel does the model's {kernel.label!r} of {workload.op}")
        kernel_name = codegen.identifier(_kernel_name(name, kernel.label))
        held = role.endswith("_fused")
        planned.append({
            "name": kernel_name, "label": Code(kernel.label), "role": role, "writes": Code(writes),
            "reads": [Code(r) for r in reads], "held": held,
            "signature": codegen.wrapped(f"def {kernel_name}(", ["x_ptr", *(f"{r}_ptr" for r in reads),
                                         f"{writes}_ptr", "LENGTH: tl.constexpr", "BLOCK: tl.constexpr"], "):", 0),
            "launch": codegen.wrapped(f"{kernel_name}[(rows,)](", [
                "x", *reads, writes, "LENGTH=length", "BLOCK=block", *(["num_warps=warps"] if held else [])], ")", 4)})
    if any(k["held"] for k in planned) and length > HELD_ROW:
        raise HarnessError(f"a fused {workload.op} holds its row on chip, and rows of {length:,} elements are more "
                           f"than the harness's kernel holds ({HELD_ROW:,}); a kernel that read x again would not "
                           "be the one-pass kernel the model times")
    length_atol = {"sum": 0.02 * math.sqrt(length), "softmax": 1e-3}  # see the comment at atol below
    return {"template": "rowwise.py.jinja", "kind": Code("rowwise"), "id": name, "op": workload.op,
            "fused": workload.mode == "fused", "kernels": planned, "count": codegen.literal(len(planned)),
            "size": sized(codegen.shape(x.shape), codegen.shape(small(x.shape))),
            "dtype": codegen.torch_dtype(x.dtype), "reduces": workload.op in ("sum", "mean", "amax"),
            "acc": Code("tl.float64" if x.dtype == "fp64" else "tl.float32"), "chunk": codegen.literal(CHUNK),
            "rtol": codegen.literal(0.02), "back_to_back": workload.timing == "back_to_back",
            # a sum of n values rounded to bf16 is off by about √n rounding steps; softmax's outputs are about 1 / n
            "atol": codegen.literal(length_atol.get(workload.op, 0.02))}


def defines(workload: Rowwise, name: str) -> list[str]:
    """Its kernels (one per kernel of the model's), its operation and reference, and its measuring function."""
    return [*(_kernel_name(name, k.label) for k in kernels(workload)), f"{name}_op", f"{name}_reference",
            f"measure_{name}"]


def _kernel_name(name: str, label: str) -> str:
    """`safe_max_pass_kernel`: the workload's name and the model's label of the kernel."""
    return f"{name}_{codegen.words(label)}_kernel"
