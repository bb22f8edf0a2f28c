"""The elementwise model: bytes, FLOPs, roofline times, bound and kernels of an elementwise workload.

Rules:
- Each kernel reads each of its tensor inputs once and writes its output once (one thread per element).
- Eager runs one kernel per operation, so every intermediate makes a round trip through HBM; fused runs one.
- Elementwise math runs on the plain (non-tensor) units at the fp32 rate (fp64 where any value is fp64):
  PyTorch and Triton compute half types in fp32 for elementwise work.
- FLOPs: one per element per operation, an FMA two, as the roofline counts them: t_math = flops / the peak.
- Issue slots: the peak counts an FMA (two FLOPs) per lane per clock, so a lone add or multiply, one FLOP in one
  instruction, runs at half of it. `issue_rate` = peak / 2 instructions per second; each FLOP is one
  instruction, except that a fused kernel contracts a multiply feeding an add or subtract into one FMA (Triton
  and nvcc do: mul + add, one instruction); eager kernels do one operation each, so nothing contracts. Casts,
  copies and transposes move data and issue no math. t_issue = instructions / issue_rate.
- A kernel's time is the largest of t_mem, t_issue and the device's kernel floor (t_issue ≥ t_math always);
  eager adds its kernels up.
- A cast is an operation like any other (a kernel in eager mode: it reads its argument and writes the new
  dtype); a copy writes its tensor again, a transpose writes it with the last two dimensions swapped.
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
    quotient,
    renamed,
)
from gpuspec.tensors import (
    DTYPES,
    MOVES,
    Apply,
    Node,
    Tensor,
    cast_dtype,
    computed_dtypes,
    is_constant,
    result_dtype,
    result_shape,
)

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
    if not isinstance(node, Apply) or is_constant(node) or node.op in MOVES or cast_dtype(node):
        return 0  # a copy, a transpose or a cast moves data: no arithmetic
    elements = math.prod(result_shape(node))
    if node.op in UNARY_FLOPS:
        return elements * UNARY_FLOPS[node.op]
    return elements  # add, sub, mul, div, pow, maximum, minimum: one FLOP each


def _contracted(node: Node) -> int:
    """Elements of node's result whose multiply and add issue as one FMA: an add or subtract with a multiply
    among its arguments (of a multiply on each side, one contracts; the other issues alone)."""
    if not isinstance(node, Apply) or node.op not in ("add", "sub") or is_constant(node):
        return 0
    mul = next((a for a in node.args if isinstance(a, Apply) and a.op == "mul" and not is_constant(a)), None)
    return 0 if mul is None else min(math.prod(result_shape(node)), math.prod(result_shape(mul)))


def _instructions(operations: list[Apply], fused: bool) -> int:
    """Instructions issued per element, summed: one per FLOP, less one per contracted FMA in a fused kernel."""
    return sum(_flops(op) - (_contracted(op) if fused else 0) for op in operations)


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
        return [Kernel(root.name, _size(root), _size(root), 0, 0)]
    operations = _operations(root)
    if workload.mode == "fused":
        return [Kernel(workload.text or "fused", sum(_reads(root, True).values()), _size(root),
                       sum(_flops(op) for op in operations), _instructions(operations, True))]
    return [Kernel(op.text or op.op, sum(_reads(op, False).values()), _size(op), _flops(op),
                   _instructions([op], False)) for op in operations]


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
    # Elementwise work runs on the plain units; half types are computed in fp32, and fp64 values in fp64.
    uses_fp64 = "fp64" in computed_dtypes(e.workload.expr)
    return renamed("peak_flop_rate", e.fact("fp64" if uses_fp64 else "fp32"))


def instructions(e: Estimate) -> Value:
    note = "one per FLOP; a multiply feeding an add is one FMA" if e.workload.mode == "fused" else \
        "one per FLOP: eager kernels do one operation each, so no multiply and add fuse into an FMA"
    return given("instructions", sum(k.instructions or 0 for k in _kernels(e)), COUNT, note=note)


def issue_rate(e: Estimate) -> Value:
    return Value("issue_rate", e["peak_flop_rate"].number / 2, units.TOKEN_RATE, "{0} / 2", (e["peak_flop_rate"],),
                 note="one instruction per lane per clock: the peak counts an FMA as two FLOPs, a lone add or "
                      "multiply is one")


def t_issue(e: Estimate) -> Value:
    return quotient("t_issue", e["instructions"], e["issue_rate"])


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
    intermediates = max(0, len(_operations(e.workload.expr)) - 1)  # every operation's result but the last
    trips = 0 if e.workload.mode == "fused" else intermediates
    if trips:
        note = "each intermediate is written to HBM and read back"
    elif intermediates:
        note = "fused: every intermediate stays on chip"
    else:
        note = "one operation: no intermediate to write to HBM"
    return given("round_trips", trips, COUNT, note=note)


RULES = {
    "elements": elements, "bytes_read": bytes_read, "bytes_written": bytes_written, "flops": flops,
    "peak_flop_rate": peak_flop_rate, "instructions": instructions, "issue_rate": issue_rate, "t_issue": t_issue,
    "t_floor": kernel_sequence.t_floor, "time": time,
    "bound": kernel_sequence.bound, "blocks": blocks, "threads": threads,
    "kernels": kernel_count, "launches": launches, "round_trips": round_trips,
    **roofline.RULES,
    **occupancy.RULES,
}
