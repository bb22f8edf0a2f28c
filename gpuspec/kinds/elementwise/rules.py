"""The elementwise model: bytes, FLOPs, roofline times, bound and kernels of an elementwise workload.

Rules:
- Each kernel reads each of its tensor inputs once and writes its output once (one thread per element).
- Eager runs one kernel per operation, so every intermediate makes a round trip through HBM; fused runs one.
- Elementwise math runs on the plain (non-tensor) units at the fp32 rate (fp64 for fp64 tensors):
  PyTorch and Triton compute half types in fp32 for elementwise work.
- A kernel's time is the largest of t_mem, t_math and the device's kernel floor; eager adds its kernels up.
"""
from __future__ import annotations

import math

from gpuspec import units
from gpuspec.model import kernel_sequence, occupancy, roofline
from gpuspec.model.estimate import Estimate
from gpuspec.model.kernel_sequence import Kernel
from gpuspec.model.values import (
    Value,
    ceil_quotient,
    given,
    product,
    renamed,
)
from gpuspec.tensors import DTYPES, Apply, Node, Tensor, is_constant, result_dtype, result_shape

COUNT, BYTES, FLOPS = units.COUNT, units.BYTES, units.FLOPS

# FLOPs per element of each function (gpuspec.tensors.UNARY_FUNCTIONS). Convention: every arithmetic operation and
# every special function evaluation (exp, log, sqrt, tanh, erf) counts as one FLOP; a fused multiply-add counts as
# two. A binary operation (add, sub, mul, div, pow, maximum, minimum) is one FLOP.
UNARY_FLOPS = {
    "neg": 1, "abs": 1, "relu": 1, "exp": 1, "log": 1, "sqrt": 1, "rsqrt": 1, "tanh": 1, "sin": 1, "cos": 1,
    "erf": 1, "square": 1,
    "sigmoid": 3,  # 1 / (1 + exp(-x)): exp, add, divide
    "silu": 4,     # x * sigmoid(x)
    "gelu": 5,     # 0.5 * x * (1 + erf(x / sqrt(2))): divide, erf, add, two multiplies
}


def _size(node: Node) -> int:
    """Bytes of a node's result in HBM."""
    dtype = result_dtype(node) or "fp32"
    return math.prod(result_shape(node)) * DTYPES[dtype][0]


def _flops(node: Node) -> int:
    """FLOPs of one operation node (not its arguments)."""
    if not isinstance(node, Apply) or is_constant(node):
        return 0
    elements = math.prod(result_shape(node))
    if node.op in UNARY_FLOPS:
        return elements * UNARY_FLOPS[node.op]
    return elements  # add, sub, mul, div, pow, maximum, minimum: one FLOP each


def _operations(node: Node) -> list[Apply]:
    """The operation nodes that need a kernel, arguments first (the order eager runs them)."""
    if not isinstance(node, Apply) or is_constant(node):
        return []
    found = [op for arg in node.args for op in _operations(arg)]
    return found + [node]


def _reads(node: Apply, fused: bool) -> dict[Node, int]:
    """The HBM reads of the kernel computing `node`: inputs (fused) or direct arguments (eager)."""
    reads: dict[Node, int] = {}
    for arg in node.args:
        if isinstance(arg, Tensor):
            reads[arg] = _size(arg)
        elif isinstance(arg, Apply) and not is_constant(arg):
            if fused:
                reads.update(_reads(arg, True))
            else:
                reads[arg] = _size(arg)
    return reads


def kernels(workload) -> list[Kernel]:
    """The kernels the workload launches, in order."""
    root = workload.expr
    if isinstance(root, Tensor):  # a plain copy of a tensor
        return [Kernel(root.name, _size(root), _size(root), 0)]
    operations = _operations(root)
    if workload.mode == "fused":
        return [Kernel(workload.text or "fused", sum(_reads(root, True).values()), _size(root),
                       sum(_flops(op) for op in operations))]
    return [Kernel(op.text or op.op, sum(_reads(op, False).values()), _size(op), _flops(op)) for op in operations]


def _kernels(e: Estimate) -> list[Kernel]:
    return kernel_sequence.kernel_list(e, kernels)


def time(e: Estimate) -> Value:
    return kernel_sequence.time(e, _kernels(e))


def kernel_times(e: Estimate) -> list[float]:
    """The GPU time of each kernel, in order (for the launch queue)."""
    return kernel_sequence.kernel_times(e, _kernels(e))


def elements(e: Estimate) -> Value:
    return given("elements", math.prod(result_shape(e.workload.expr)), COUNT)


def bytes_read(e: Estimate) -> Value:
    return kernel_sequence.traffic("bytes_read", _kernels(e), "each input read once")


def bytes_written(e: Estimate) -> Value:
    return kernel_sequence.traffic("bytes_written", _kernels(e), "the output written once")


def flops(e: Estimate) -> Value:
    return given("flops", sum(k.flops for k in _kernels(e)), FLOPS,
                 note="one FLOP per element per operation; FMA = 2")


def peak_flop_rate(e: Estimate) -> Value:
    # Elementwise work runs on the plain units; half types are computed in fp32.
    uses_fp64 = result_dtype(e.workload.expr) == "fp64"
    return renamed("peak_flop_rate", e.fact("fp64" if uses_fp64 else "fp32"))


def blocks(e: Estimate) -> Value:
    return ceil_quotient("blocks", e["elements"], e["threads_per_block"], note="one thread per element")


def threads(e: Estimate) -> Value:
    return product("threads", e["blocks"], e["threads_per_block"])


def kernel_count(e: Estimate) -> Value:
    ks = _kernels(e)
    note = "fused: one kernel" if e.workload.mode == "fused" else "eager: one kernel per operation"
    return given("kernels", len(ks), COUNT, note=note)


def launches(e: Estimate) -> Value:
    return renamed("launches", e["kernels"])


def round_trips(e: Estimate) -> Value:
    trips = 0 if e.workload.mode == "fused" else max(0, len(_kernels(e)) - 1)
    return given("round_trips", trips, COUNT, note="each intermediate is written to HBM and read back")


RULES = {
    "elements": elements, "bytes_read": bytes_read, "bytes_written": bytes_written, "flops": flops,
    "peak_flop_rate": peak_flop_rate, "t_floor": kernel_sequence.t_floor, "time": time,
    "bound": kernel_sequence.bound, "blocks": blocks, "threads": threads,
    "kernels": kernel_count, "launches": launches, "round_trips": round_trips,
    **roofline.RULES,
    **occupancy.RULES,
}
