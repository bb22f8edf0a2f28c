"""The attention model: o = softmax(q kᵀ / √head_dim) v, standard (eager) or flash-style (fused), optionally causal.

q is [batch, heads, seq_q, head_dim]; k and v are [batch, kv_heads, seq_kv, head_dim], and each group of
heads / kv_heads query heads shares one k and v head (grouped-query attention).

Scores: batch·heads·seq_q·seq_kv; causal, query i (counted from 0) sees the keys up to i + seq_kv − seq_q (the mask
aligned at the bottom right), so seq_q = seq_kv = N leaves N(N + 1)/2 per head, about half.

FLOPs: the two matmuls, S = q kᵀ and o = P v, do 2·head_dim per score each (FMA = 2): 4·head_dim per score. Each
score adds 6 more: the 1/√head_dim scale (1) and the softmax's max, subtract, exp, add and divide (5). Flash's
rescaling of its running output is not counted. A fused causal kernel skips the masked scores; eager attention
computes every score and adds the mask (1 FLOP per score) before its softmax. All of it is counted at the dtype's
dense tensor-core rate (the softmax's share is 6 / (4·head_dim + 6), about 1% at head_dim 128).

Bytes:
- eager, three kernels: S = q kᵀ (scale folded in) reads q and k and writes the score matrix
  [batch, heads, seq_q, seq_kv] in the input dtype; softmax reads it and writes P, the same size;
  P v reads P and v and writes o. score_bytes is the size of that matrix. Causal, the first kernel also reads the
  [seq_q, seq_kv] mask once (it is broadcast over batch and heads).
- fused, one kernel: reads q, k and v once and writes o (bf16 when q is fp8); the scores stay on chip (re-reads of
  k and v from L2 are not counted). flash_decoding adds a second kernel that reduces the splits' partial outputs:
  a few bytes per head, counted as the kernel floor alone.
A kernel takes the largest of its t_mem, its t_math and the kernel floor; eager adds its kernels up.

The exponentials as a third roof: on a device whose profile gives exp_rate (the special-function units'
exponentials per second; no datasheet prints it), a fused kernel computes one exp per score on those units, and
they do not overlap the matmuls (a warp's softmax sits between its two MMAs): time = max(t_mem, t_math + t_exp,
kernel floor), t_exp = scores / exp_rate. On an H100 (16 exponentials per clock per SM at 1980 MHz) the
exponentials of a score take 0.37 of its math at head size 128 and 0.73 at head size 64, at the GEMM rate its
published profile measured (at the datasheet peak, 0.46 and 0.92: nearly as long as the matmuls).

The tiled kernel: on a device whose profile gives the implementation's tile overhead (attention_tile_overhead_flash2,
..._flash3, ..._cudnn, ..._triton; `auto` is PyTorch's flash backend, FlashAttention-2), a fused kernel is what
FlashAttention-2 and its successors launch: one tile per 128 query rows, per batch entry and query head (a decode
step's single query still fills a tile's 128 rows), each looping over its key blocks of 128 (causal: the blocks at
or below its diagonal) and paying `attention_tile_overhead` more blocks' worth of time (loading its queries, filling
the pipeline, writing o). A key block of one tile costs its 128 × 128 scores' math at the tensor rate plus their
exponentials, over the whole chip; the busiest SM runs ⌈tiles / SMs⌉ tiles, and the implementation reaches
`attention_share` of that (the share measured for it on the device or its nearest sibling; 1 where none was):
t_tiles = ⌈tiles / SMs⌉ × SMs × (key blocks per tile + overhead) × t_block / share; time = max(t_mem, t_tiles,
kernel floor).
"""
from __future__ import annotations

import math

from gpuspec import units
from gpuspec.model import kernel_sequence, roofline
from gpuspec.model.estimate import Estimate, NoValue
from gpuspec.model.kernel_sequence import Kernel
from gpuspec.model.values import Value, ceil_quotient, given, largest, product, quotient, renamed, smallest, total
from gpuspec.tensors import DTYPES

COUNT, BYTES, FLOPS, TIME = units.COUNT, units.BYTES, units.FLOPS, units.TIME
SOFTMAX_FLOPS_PER_SCORE = 6  # scale, max, subtract, exp, add, divide
MATMUL_FLOPS_PER_HEAD_DIM = 4  # q kᵀ and P v: 2 FLOPs (one FMA) each per score and head_dim element
TILE_ROWS = 128  # query rows per tile: FlashAttention-2's and -3's block of queries, Triton's tutorial BLOCK_M
KEY_BLOCK = 128  # keys per step of a tile's loop: the unit a tile's overhead is counted in


def _size(tensor, dtype: str | None = None) -> int:
    return math.prod(tensor.shape) * (DTYPES[dtype][0] if dtype else tensor.itemsize)


def score_count(seq_q: int, seq_kv: int, causal: bool) -> int:
    """Scores of one (batch, head): every query-key pair, or (causal) query i's keys up to i + seq_kv − seq_q."""
    if not causal:
        return seq_q * seq_kv
    offset = seq_kv - seq_q
    return seq_q * offset + seq_q * (seq_q + 1) // 2  # Σ over i of (i + 1 + offset)


def key_blocks(seq_q: int, seq_kv: int, causal: bool) -> int:
    """Key blocks one (batch, head)'s tiles run in all: ⌈seq_kv / 128⌉ each, or (causal) the blocks up to each
    tile's last query's keys. Tile t's last query is row (t + 1)·128 − 1, which sees (t + 1)·128 + offset keys."""
    tiles, full = -(-seq_q // TILE_ROWS), -(-seq_kv // KEY_BLOCK)
    if not causal:
        return tiles * full
    shift = -(-(seq_kv - seq_q) // KEY_BLOCK)  # with TILE_ROWS == KEY_BLOCK, tile t needs t + 1 + shift blocks
    low, high = 1 + shift, tiles - 1 + shift  # every tile but the last, which needs them all
    below = max(0, min(high, full) - low + 1)  # tiles whose need is under the full count
    return (low + low + below - 1) * below // 2 + full * (tiles - 1 - below) + full


def kernels(workload) -> list[Kernel]:
    q, k, v = workload.q, workload.k, workload.v
    batch, heads, seq_q, head_dim = q.shape
    seq_kv = k.shape[2]
    every = batch * heads * seq_q * seq_kv
    score_bytes = every * q.itemsize
    matmul = 2 * every * head_dim
    out = _size(q, workload.output_dtype)
    if workload.mode == "fused":
        scores = batch * heads * score_count(seq_q, seq_kv, workload.causal)
        flash = Kernel("flash attention", _size(q) + _size(k) + _size(v), out,
                       (MATMUL_FLOPS_PER_HEAD_DIM * head_dim + SOFTMAX_FLOPS_PER_SCORE) * scores)
        if workload.implementation == "flash_decoding":
            return [flash, Kernel("reduce the splits", 0, 0, 0)]
        return [flash]
    mask = seq_q * seq_kv * q.itemsize if workload.causal else 0
    return [Kernel("S = q kᵀ" + (" + mask" if workload.causal else ""), _size(q) + _size(k) + mask, score_bytes,
                   matmul + every * (2 if workload.causal else 1)),
            Kernel("P = softmax(S)", score_bytes, score_bytes, (SOFTMAX_FLOPS_PER_SCORE - 1) * every),
            Kernel("o = P v", score_bytes + _size(v), out, matmul)]


def _kernels(e: Estimate) -> list[Kernel]:
    return kernel_sequence.kernel_list(e, kernels)


def kernel_times(e: Estimate) -> list[float]:
    """The GPU time of each kernel, in order (for the launch queue)."""
    return kernel_sequence.kernel_times(e, _kernels(e))


def implementation(workload) -> str:
    """The implementation whose profile facts a fused kernel uses: `auto` is PyTorch's flash backend."""
    return "flash2" if workload.implementation == "auto" else workload.implementation


def time(e: Estimate) -> Value:
    workload = e.workload
    if workload.mode != "fused" or workload.implementation == "flash_decoding":
        return kernel_sequence.time(e, _kernels(e))
    if e.device.fact(f"attention_tile_overhead_{implementation(workload)}") is not None:
        return largest("time", e["t_mem"], tiled_time(e), e.fact("kernel_floor"))
    if e.device.fact("exp_rate") is None:  # the ideal model: two roofs
        return kernel_sequence.time(e, _kernels(e))
    t_exp = quotient("t_exp", e["scores"], e.fact("exp_rate"), note="one exponential per score on the SFUs")
    busy = total("t_math + t_exp", e["t_math"], t_exp, note="the exponentials do not overlap the matmuls")
    return largest("time", e["t_mem"], busy, e.fact("kernel_floor"))


def tiled_time(e: Estimate) -> Value:
    """The busiest SM's tiles (see the module's docstring), at the implementation's share."""
    workload, name = e.workload, implementation(e.workload)
    _, _, seq_q, head_dim = workload.q.shape
    seq_kv = workload.k.shape[2]
    per_head = -(-seq_q // TILE_ROWS)
    tiled = tiles(e)
    blocks = key_blocks(seq_q, seq_kv, workload.causal)
    loop = given("key blocks per tile", blocks / per_head, COUNT,
                 note=f"{KEY_BLOCK} keys each" + ("; causal: the blocks up to each tile's diagonal, on average"
                                                  if workload.causal else ""))
    steps = total("steps per tile", loop, e.fact(f"attention_tile_overhead_{name}"),
                  note="the key blocks and the tile's own overhead, in key blocks")
    block_scores = given("scores per key block", TILE_ROWS * KEY_BLOCK, COUNT)
    block_flops = product("FLOPs per key block", block_scores,
                          given("FLOPs per score", MATMUL_FLOPS_PER_HEAD_DIM * head_dim + SOFTMAX_FLOPS_PER_SCORE,
                                FLOPS))
    t_block = total("t_block", quotient("math of a key block", block_flops, e["peak_flop_rate"]),
                    quotient("exponentials of a key block", block_scores, e.fact("exp_rate")),
                    note="one key block of one tile over the whole chip; its exponentials after its matmuls")
    rounds = ceil_quotient("tiles on the busiest SM", tiled, e.fact("sms"))
    share = e.device.fact(f"attention_share_{name}")
    reached = (renamed("attention_share", e.fact(f"attention_share_{name}")) if share is not None else
               given("attention_share", 1, COUNT, note=f"no share measured for {name} on this device: the tensor "
                                                         "rate as it is"))
    busy = product("the busiest SM's work", rounds, e.fact("sms"), steps, t_block)
    return quotient("t_tiles", busy, reached, note=f"{name}: tiles of {TILE_ROWS} queries over the SMs")


def _dim(name: str, tensor: str, axis: int, note: str | None = None):
    return lambda e: given(name, getattr(e.workload, tensor).shape[axis], COUNT, note=note)


def scores(e: Estimate) -> Value:
    workload = e.workload
    if not workload.causal or workload.mode != "fused":
        return product("scores", e["batch"], e["heads"], e["seq_q"], e["seq_kv"],
                       note="eager computes every score, masked or not" if workload.causal else None)
    per_head = score_count(workload.q.shape[2], workload.k.shape[2], True)
    return product("scores", e["batch"], e["heads"],
                   given("scores per head", per_head, COUNT, note="causal: query i sees the keys up to "
                         "i + seq_kv − seq_q"))


def flops(e: Estimate) -> Value:
    workload = e.workload
    if not workload.causal:
        matmuls = product("FLOPs of the two matmuls", given("4", 4, FLOPS), e["batch"], e["heads"], e["seq_q"],
                          e["seq_kv"], e["head_dim"])
    else:
        matmuls = product("FLOPs of the two matmuls", given("4", 4, FLOPS), e["scores"], e["head_dim"])
    softmax = product("FLOPs of the softmax", given("FLOPs per score", SOFTMAX_FLOPS_PER_SCORE, FLOPS), e["scores"],
                      note="scale, max, subtract, exp, add, divide")
    if workload.causal and workload.mode != "fused":
        mask = product("FLOPs of the mask", given("FLOPs per score", 1, FLOPS), e["scores"],
                       note="the mask added to every score")
        return total("flops", matmuls, softmax, mask)
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
    note = "eager: q kᵀ, softmax, P v"
    if fused:
        note = ("flash_decoding: the split over the keys, then the reduction" if len(_kernels(e)) > 1 else
                "fused: one flash-style kernel")
    return given("kernels", len(_kernels(e)), COUNT, note=note)


def tiles(e: Estimate) -> Value:
    """A fused kernel's tiles: one per 128 query rows (padded) of each batch entry and query head."""
    per_head = -(-e.workload.q.shape[2] // TILE_ROWS)
    return product("tiles", e["batch"], e["heads"], given("query tiles per head", per_head, COUNT,
                                                          note=f"{TILE_ROWS} query rows each, padded"))


def sms_used(e: Estimate) -> Value:
    """SMs a fused kernel's grid occupies: its tiles, one per SM at a time, up to the SM count (a decode step's one
    query per head fills one tile per head: 32 heads use 32 SMs). Eager attention is three kernels, each with a grid
    of its own, and flash_decoding splits the keys over as many blocks as it likes: neither has one count."""
    if e.workload.mode != "fused" or e.workload.implementation == "flash_decoding":
        which = "eager attention runs three kernels, each on a grid of its own" if e.workload.mode != "fused" \
            else "flash_decoding splits the keys over a grid of its own choosing"
        raise NoValue(f"{which}: sms_used counts a flash-style kernel's tiles",
                      "claim the sms_used of a fused attention (its tiles up to the SM count)")
    return smallest("sms_used", tiles(e), e.fact("sms"), note="one tile per SM at a time, up to the SM count")


def round_trips(e: Estimate) -> Value:
    eager = e.workload.mode != "fused"
    return given("round_trips", 2 if eager else 0, COUNT,
                 note="S and P each written to HBM and read back" if eager else "the scores stay on chip")


RULES = {
    "batch": _dim("batch", "q", 0), "heads": _dim("heads", "q", 1, "query heads"),
    "kv_heads": _dim("kv_heads", "k", 1, "key and value heads"), "seq_q": _dim("seq_q", "q", 2, "query length"),
    "seq_kv": _dim("seq_kv", "k", 2, "key and value length"), "head_dim": _dim("head_dim", "q", 3),
    "scores": scores, "flops": flops, "score_bytes": score_bytes, "bytes_read": bytes_read,
    "bytes_written": bytes_written, "peak_flop_rate": peak_flop_rate, "kernels": kernel_count,
    "launches": lambda e: renamed("launches", e["kernels"]), "t_floor": kernel_sequence.t_floor, "time": time,
    "bound": kernel_sequence.bound, "round_trips": round_trips,
    "sms_used": sms_used, **roofline.RULES,
}
