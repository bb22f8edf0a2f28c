"""The attention model: o = softmax(q kᵀ / √head_dim) v, standard (eager) or flash-style (fused).

q is [batch, heads, seq_q, head_dim]; k and v are [batch, kv_heads, seq_kv, head_dim], and each group of
heads / kv_heads query heads shares one k and v head (grouped-query attention). No causal mask.

FLOPs: the two matmuls, S = q kᵀ and o = P v, do 2·seq_q·seq_kv·head_dim each per head (FMA = 2):
4·batch·heads·seq_q·seq_kv·head_dim. Each score adds 6 more: the 1/√head_dim scale (1) and the softmax's
max, subtract, exp, add and divide (5). Flash's rescaling of its running output is not counted. All of it
is counted at the dtype's dense tensor-core rate (the softmax's share is 6 / (4·head_dim + 6), about 1% at
head_dim 128), so the model does not show the exp units as a limit.

Bytes:
- eager, three kernels: S = q kᵀ (scale folded in) reads q and k and writes the score matrix
  [batch, heads, seq_q, seq_kv] in the input dtype; softmax reads it and writes P, the same size;
  P v reads P and v and writes o. score_bytes is the size of that matrix.
- fused, one kernel: reads q, k and v once and writes o; the scores stay on chip (re-reads of k and v
  from L2 are not counted).
A kernel takes the largest of its t_mem, its t_math and the kernel floor; eager adds its kernels up.

The exponentials as a third roof: on a device whose profile gives exp_rate (the special-function units'
exponentials per second; no datasheet prints it), a fused kernel computes one exp per score on those units, and
they do not overlap the matmuls (a warp's softmax sits between its two MMAs): time = max(t_mem, t_math + t_exp,
kernel floor), t_exp = scores / exp_rate. At head size 128 on an H100, t_exp is about a third of t_math; at head
size 64, two thirds.
"""
from __future__ import annotations

import math

from gpuspec import units
from gpuspec.model import kernel_sequence, roofline
from gpuspec.model.estimate import Estimate
from gpuspec.model.kernel_sequence import Kernel
from gpuspec.model.values import Value, given, largest, product, quotient, renamed, total

COUNT, BYTES, FLOPS = units.COUNT, units.BYTES, units.FLOPS
SOFTMAX_FLOPS_PER_SCORE = 6  # scale, max, subtract, exp, add, divide


def _size(tensor) -> int:
    return math.prod(tensor.shape) * tensor.itemsize


def kernels(workload) -> list[Kernel]:
    q, k, v = workload.q, workload.k, workload.v
    batch, heads, seq_q, head_dim = q.shape
    seq_kv = k.shape[2]
    scores = batch * heads * seq_q * seq_kv
    score_bytes = scores * q.itemsize
    matmul = 2 * scores * head_dim
    out = _size(q)
    if workload.mode == "fused":
        return [Kernel("flash attention", _size(q) + _size(k) + _size(v), out,
                       2 * matmul + SOFTMAX_FLOPS_PER_SCORE * scores)]
    return [Kernel("S = q kᵀ", _size(q) + _size(k), score_bytes, matmul + scores),
            Kernel("P = softmax(S)", score_bytes, score_bytes, (SOFTMAX_FLOPS_PER_SCORE - 1) * scores),
            Kernel("o = P v", score_bytes + _size(v), out, matmul)]


def _kernels(e: Estimate) -> list[Kernel]:
    return kernel_sequence.kernel_list(e, kernels)


def kernel_times(e: Estimate) -> list[float]:
    """The GPU time of each kernel, in order (for the launch queue)."""
    return kernel_sequence.kernel_times(e, _kernels(e))


def time(e: Estimate) -> Value:
    if e.workload.mode != "fused" or e.device.fact("exp_rate") is None:  # the ideal model: two roofs
        return kernel_sequence.time(e, _kernels(e))
    scores = product("scores", e["batch"], e["heads"], e["seq_q"], e["seq_kv"])
    t_exp = quotient("t_exp", scores, e.fact("exp_rate"), note="one exponential per score on the SFUs")
    busy = total("t_math + t_exp", e["t_math"], t_exp, note="the exponentials do not overlap the matmuls")
    return largest("time", e["t_mem"], busy, e.fact("kernel_floor"))


def _dim(name: str, tensor: str, axis: int, note: str | None = None):
    return lambda e: given(name, getattr(e.workload, tensor).shape[axis], COUNT, note=note)


def flops(e: Estimate) -> Value:
    matmuls = product("FLOPs of the two matmuls", given("4", 4, FLOPS), e["batch"], e["heads"], e["seq_q"],
                      e["seq_kv"], e["head_dim"])
    scores = product("scores", e["batch"], e["heads"], e["seq_q"], e["seq_kv"])
    softmax = product("FLOPs of the softmax", given("FLOPs per score", SOFTMAX_FLOPS_PER_SCORE, FLOPS), scores,
                      note="scale, max, subtract, exp, add, divide")
    return total("flops", matmuls, softmax)


def score_bytes(e: Estimate) -> Value:
    size = given(f"bytes per {e.workload.q.dtype}", e.workload.q.itemsize, BYTES)
    return product("score_bytes", e["batch"], e["heads"], e["seq_q"], e["seq_kv"], size,
                   note="the [batch, heads, seq_q, seq_kv] score matrix")


def bytes_read(e: Estimate) -> Value:
    return kernel_sequence.traffic("bytes_read", _kernels(e), "q, k and v read once")


def bytes_written(e: Estimate) -> Value:
    return kernel_sequence.traffic("bytes_written", _kernels(e), "o written once; the scores stay on chip")


def peak_flop_rate(e: Estimate) -> Value:
    return renamed("peak_flop_rate", e.fact(roofline.TENSOR_PEAK.get(e.workload.q.dtype, "tensor_bf16")))


def kernel_count(e: Estimate) -> Value:
    fused = e.workload.mode == "fused"
    return given("kernels", len(_kernels(e)), COUNT,
                 note="fused: one flash-style kernel" if fused else "eager: q kᵀ, softmax, P v")


RULES = {
    "batch": _dim("batch", "q", 0), "heads": _dim("heads", "q", 1, "query heads"),
    "kv_heads": _dim("kv_heads", "k", 1, "key and value heads"), "seq_q": _dim("seq_q", "q", 2, "query length"),
    "seq_kv": _dim("seq_kv", "k", 2, "key and value length"), "head_dim": _dim("head_dim", "q", 3),
    "flops": flops, "score_bytes": score_bytes, "bytes_read": bytes_read, "bytes_written": bytes_written,
    "peak_flop_rate": peak_flop_rate, "kernels": kernel_count, "launches": lambda e: renamed("launches", e["kernels"]),
    "t_floor": kernel_sequence.t_floor, "time": time, "bound": kernel_sequence.bound,
    "round_trips": lambda e: given("round_trips", len(_kernels(e)) - 1, COUNT,
                                   note="S and P each written to HBM and read back"),
    **roofline.RULES,
}
