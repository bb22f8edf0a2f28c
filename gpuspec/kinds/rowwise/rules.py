"""The row-wise model: sum, mean, amax, softmax, layernorm and rmsnorm over the last axis of a tensor.

x has `rows` rows of `row_length` elements (all leading dimensions are rows). Row statistics (maxima, sums,
means, variances) are in x's dtype, as PyTorch keeps them; the output is in x's dtype too.

Kernels and passes (a pass reads all of x once). `eager` is the textbook multi-pass form, not PyTorch's own
torch.softmax, layer_norm or rms_norm, which are one kernel each (`fused`). The harness runs exactly this list of
kernels, one Triton kernel per entry (kinds/rowwise/harness.py):
- sum, mean, amax: one kernel, one pass, in either mode; it writes one value per row.
- eager softmax (the three-pass "safe" softmax): max pass (read x, write the row maxima); exp-and-sum pass
  (read x and the maxima, write the row sums); normalize pass (read x, maxima and sums, write y).
- eager layernorm: mean pass; variance pass (read x and the means, write the variances); normalize pass
  (read x, means and variances, write y). No affine weight or bias.
- eager rmsnorm: mean-of-squares pass (read x, write one value per row); normalize pass (read x and it,
  write y). No weight.
- fused: one kernel, one pass: x read once and the output written once (online softmax; the row's
  statistics never leave the chip).
Each row statistic an eager kernel writes and the next reads is one HBM round trip.

FLOPs (every arithmetic operation, comparison and special function is one FLOP; an FMA is two), per
element of x unless said per row:
- sum: 1 (add). mean: 1 (add) + 1 per row (divide). amax: 1 (compare).
- softmax eager: max 1; exp-and-sum: subtract, exp, add = 3; normalize recomputes exp(x − max): subtract,
  exp, divide = 3; 7 in all. Fused keeps exp(x − max) on chip, so normalizing is one divide: 5 in all.
- layernorm: mean 1 (add) + 1 per row (divide); variance: subtract, then square-and-add as an FMA = 3,
  + 1 per row (divide); normalize: subtract, multiply = 2, + 2 per row (add eps, rsqrt); 6 per element
  and 4 per row, in either mode.
- rmsnorm: square-and-add as an FMA = 2, + 1 per row (divide); normalize: multiply = 1, + 2 per row
  (add eps, rsqrt); 3 per element and 3 per row, in either mode.
The math runs on the plain units at the fp32 rate (fp64 for fp64), as elementwise work does.
A kernel takes the largest of its t_mem, its t_math and the kernel floor; eager adds its kernels up.
"""
from __future__ import annotations

import math

from gpuspec import units
from gpuspec.model import kernel_sequence, roofline
from gpuspec.model.estimate import Estimate
from gpuspec.model.kernel_sequence import Kernel
from gpuspec.model.values import Value, given, product, renamed, smallest

COUNT, BYTES, FLOPS = units.COUNT, units.BYTES, units.FLOPS

# op -> the eager passes: (label, FLOPs per element, FLOPs per row, row statistics read, writes the output)
# A pass that does not write the output writes one row statistic.
EAGER = {
    "sum": [("sum", 1, 0, 0, True)],
    "mean": [("mean", 1, 1, 0, True)],
    "amax": [("amax", 1, 0, 0, True)],
    "softmax": [("max pass", 1, 0, 0, False), ("exp-and-sum pass", 3, 0, 1, False), ("normalize pass", 3, 0, 2, True)],
    "layernorm": [("mean pass", 1, 1, 0, False), ("variance pass", 3, 1, 1, False), ("normalize pass", 2, 2, 2, True)],
    "rmsnorm": [("mean-of-squares pass", 2, 1, 0, False), ("normalize pass", 1, 2, 1, True)],
}
# FLOPs per element and per row of the one fused kernel.
FUSED = {"sum": (1, 0), "mean": (1, 1), "amax": (1, 0), "softmax": (5, 0), "layernorm": (6, 4), "rmsnorm": (3, 3)}


def _shape(e: Estimate) -> tuple[int, int, int]:
    """(rows, row_length, bytes per element)."""
    x = e.workload.x
    return math.prod(x.shape[:-1]), x.shape[-1], x.itemsize


def kernels(workload) -> list[Kernel]:
    x = workload.x
    rows, length, size = math.prod(x.shape[:-1]), x.shape[-1], x.itemsize
    out = math.prod(workload.out_shape) * size
    if workload.mode == "fused" or len(EAGER[workload.op]) == 1:
        per_element, per_row = FUSED[workload.op]
        return [Kernel(f"{workload.op}, fused" if workload.mode == "fused" else workload.op,
                       rows * length * size, out, per_element * rows * length + per_row * rows)]
    found = []
    for label, per_element, per_row, stats, writes_output in EAGER[workload.op]:
        found.append(Kernel(label, rows * length * size + stats * rows * size, out if writes_output else rows * size,
                            per_element * rows * length + per_row * rows))
    return found


def _kernels(e: Estimate) -> list[Kernel]:
    return kernel_sequence.kernel_list(e, kernels)


def kernel_times(e: Estimate) -> list[float]:
    """The GPU time of each kernel, in order (for the launch queue)."""
    return kernel_sequence.kernel_times(e, _kernels(e))


def time(e: Estimate) -> Value:
    return kernel_sequence.time(e, _kernels(e))


def rows(e: Estimate) -> Value:
    return given("rows", _shape(e)[0], COUNT, note="every leading dimension is rows")


def row_length(e: Estimate) -> Value:
    return given("row_length", _shape(e)[1], COUNT, note="the last axis")


def elements(e: Estimate) -> Value:
    return product("elements", e["rows"], e["row_length"], note="elements of x")


def passes(e: Estimate) -> Value:
    note = "fused: x read once" if e.workload.mode == "fused" else "eager: each kernel reads x once"
    return given("passes", len(_kernels(e)), COUNT, note=note)


def kernel_count(e: Estimate) -> Value:
    ks = _kernels(e)
    note = "one kernel" if len(ks) == 1 else \
        "eager: the textbook passes, a kernel each; PyTorch's own softmax and norms are one kernel each: fused"
    return given("kernels", len(ks), COUNT, note=note)


def bytes_read(e: Estimate) -> Value:
    return kernel_sequence.traffic("bytes_read", _kernels(e), "x read once")


def bytes_written(e: Estimate) -> Value:
    single = "one value per row" if e.workload.op in ("sum", "mean", "amax") else "the output written once"
    return kernel_sequence.traffic("bytes_written", _kernels(e), single)


def flops(e: Estimate) -> Value:
    return given("flops", sum(k.flops for k in _kernels(e)), FLOPS,
                 note="per element and per row of the operation's arithmetic; a fused multiply-add counts 2")


def peak_flop_rate(e: Estimate) -> Value:
    return renamed("peak_flop_rate", e.fact("fp64" if e.workload.x.dtype == "fp64" else "fp32"))


def sms_used(e: Estimate) -> Value:
    """SMs the kernels' grids occupy: each kernel runs one block per row (as the harness's Triton kernels do), so
    the rows, up to the SM count (8 rows of 4,096 on a 132-SM H100 use 8 SMs, however long the rows)."""
    return smallest("sms_used", e["rows"], e.fact("sms"), note="one block per row, up to the SM count")


def round_trips(e: Estimate) -> Value:
    return given("round_trips", len(_kernels(e)) - 1, COUNT,
                 note="each row statistic an eager kernel writes is read back by the next")


RULES = {
    "rows": rows, "row_length": row_length, "elements": elements, "passes": passes, "kernels": kernel_count,
    "launches": lambda e: renamed("launches", e["kernels"]),
    "bytes_read": bytes_read, "bytes_written": bytes_written, "flops": flops, "peak_flop_rate": peak_flop_rate,
    "t_floor": kernel_sequence.t_floor, "time": time, "bound": kernel_sequence.bound, "round_trips": round_trips,
    "sms_used": sms_used, **roofline.RULES,
}
