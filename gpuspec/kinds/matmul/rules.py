"""The matmul model: FLOPs, bytes, the tensor-core roofline, and tile and wave quantization.

Rules:
- C[..., M, N] = A[..., M, K] @ B[..., K, N]: 2·M·N·K FLOPs per batch entry (FMA = 2); A and B are read once and
  C written once (the ideal a good kernel approaches; re-reads from L2 are not counted).
- bf16, fp16 and fp8 run at the dense tensor-core rate of their dtype; tf32 at the tf32 rate; fp32 at the plain
  fp32 rate (PyTorch does not use TF32 for float32 matmuls unless told to); fp64 at the fp64 tensor rate.
- C is computed in tiles, one tile per SM at a time (128x128 unless the spec names a tile; a skinny shape's tile
  shrinks to the next power of two of M or N, at least 16, as PyTorch's compiled matmuls choose):
  tiles = ⌈M / tile rows⌉ · ⌈N / tile columns⌉ · batch, and they run in ⌈tiles / SMs⌉ waves. A partial last
  wave and partial edge tiles take as long as full ones, so
  t_math_tiles = waves started × the time of one full tile on one SM.
- time = the largest of t_mem, t_math_tiles and the kernel floor.
- On a calibrated device the tensor rate is the profile's: a published profile's is the part's own GEMMs, else a
  sibling's share per clock times the part's sustained clock under load (gpuspec/published.py), so a power-limited
  part runs below its datasheet (an L4 at 72 W: about half its 121 TFLOP/s). The ideal model keeps the datasheet.
- On a device whose profile measured it (a published or calibrated profile; no datasheet has it), a GEMM timed
  alone also takes `gemm_fixed_cost`: launch latency, prologue and pipeline fill, epilogue. time = that roofline
  time + gemm_fixed_cost (XLA's sm_90 sweep: bf16 1024³ takes 9.1 µs where its math takes 5.6 µs at the
  achievable rate).
"""
from __future__ import annotations

import math

from gpuspec import units
from gpuspec.kinds.matmul import DEFAULT_TILE
from gpuspec.model import roofline
from gpuspec.model.estimate import Estimate
from gpuspec.model.values import (
    Value,
    ceil_quotient,
    ceiling,
    choice,
    given,
    largest,
    product,
    quotient,
    renamed,
    smallest,
    total,
)
from gpuspec.tensors import DTYPES, broadcast

COUNT, BYTES, FLOPS = units.COUNT, units.BYTES, units.FLOPS


def _dims(e: Estimate) -> tuple[int, int, int, int]:
    a, b = e.workload.a.shape, e.workload.b.shape
    batch = math.prod(broadcast(tuple(a[:-2]), tuple(b[:-2])))
    return a[-2], b[-1], a[-1], batch


def m(e: Estimate) -> Value:
    return given("m", _dims(e)[0], COUNT, note="rows of A and C")


def n(e: Estimate) -> Value:
    return given("n", _dims(e)[1], COUNT, note="columns of B and C")


def k(e: Estimate) -> Value:
    return given("k", _dims(e)[2], COUNT, note="the shared dimension")


def batch(e: Estimate) -> Value:
    return given("batch", _dims(e)[3], COUNT)


def flops(e: Estimate) -> Value:
    return product("flops", given("2", 2, FLOPS), e["m"], e["n"], e["k"], e["batch"])


def _size(tensor) -> Value:
    return given(f"bytes of {tensor.name}", math.prod(tensor.shape) * DTYPES[tensor.dtype][0], BYTES)


def bytes_read(e: Estimate) -> Value:
    return total("bytes_read", _size(e.workload.a), _size(e.workload.b), note="A and B read once each")


def bytes_written(e: Estimate) -> Value:
    out = e.workload.a.dtype if e.workload.a.dtype not in ("fp8", "int8") else "bf16"
    size = given(f"bytes per {out}", DTYPES[out][0], BYTES)
    return product("bytes_written", e["m"], e["n"], e["batch"], size, note="C written once")


def peak_flop_rate(e: Estimate) -> Value:
    return renamed("peak_flop_rate", e.fact(roofline.TENSOR_PEAK.get(e.workload.a.dtype, "tensor_bf16")))


def _tile_note(e: Estimate, side: int, dimension: str) -> str | None:
    if e.workload.tile_written:
        return None
    if e.workload.tile[side] == DEFAULT_TILE[side]:
        return "the default tile"
    return (f"the default {DEFAULT_TILE[side]} shrunk to the next power of two of {dimension}, at least 16, as "
            "PyTorch's compiled matmuls pick for a skinny shape")


def tile_m(e: Estimate) -> Value:
    return given("tile_m", e.workload.tile[0], COUNT, note=_tile_note(e, 0, "m"))


def tile_n(e: Estimate) -> Value:
    return given("tile_n", e.workload.tile[1], COUNT, note=_tile_note(e, 1, "n"))


def tiles(e: Estimate) -> Value:
    rows = ceil_quotient("tile rows", e["m"], e["tile_m"])
    cols = ceil_quotient("tile columns", e["n"], e["tile_n"])
    return product("tiles", rows, cols, e["batch"])


def tile_efficiency(e: Estimate) -> Value:
    padded = product("padded C", e["tiles"], e["tile_m"], e["tile_n"])
    useful = product("C", e["m"], e["n"], e["batch"])
    return quotient("tile_efficiency", useful, padded, percent=True, note="edge tiles compute padding too")


def waves(e: Estimate) -> Value:
    return quotient("waves", e["tiles"], e.fact("sms"), note="one tile per SM at a time")


def sms_used(e: Estimate) -> Value:
    return smallest("sms_used", e["tiles"], e.fact("sms"), note="one tile per SM at a time, up to the SM count")


def waves_started(e: Estimate) -> Value:
    return ceiling("waves_started", e["waves"])


def wave_efficiency(e: Estimate) -> Value:
    return quotient("wave_efficiency", e["waves"], e["waves_started"], percent=True)


def t_math_tiles(e: Estimate) -> Value:
    per_tile = product("FLOPs of one tile", given("2", 2, FLOPS), e["tile_m"], e["tile_n"], e["k"])
    per_sm = quotient("peak per SM", e["peak_flop_rate"], e.fact("sms"))
    one = quotient("time of one tile", per_tile, per_sm)
    return product("t_math_tiles", e["waves_started"], one, note="every wave takes as long as a full one")


def time(e: Estimate) -> Value:
    floor = e.fact("kernel_floor")  # first: a device without one (a TPU) says why before any other fact it lacks
    if e.device.fact("gemm_fixed_cost") is None:  # the ideal model: the roofline alone
        return largest("time", e["t_mem"], e["t_math_tiles"], floor)
    roof = largest("roofline time", e["t_mem"], e["t_math_tiles"], floor)
    return total("time", roof, e.fact("gemm_fixed_cost"), note="a GEMM timed alone: its roofline time and its fixed "
                 "cost")


def bound(e: Estimate) -> Value:
    memory, math_ = e["t_mem"], e["t_math_tiles"]
    if memory.number >= math_.number:
        return choice("bound", "memory", "memory, as {0} ≥ {1}", (memory, math_))
    return choice("bound", "compute", "compute, as {0} < {1}", (memory, math_))


def kernel_times(e: Estimate) -> list[float]:
    """The GPU time of each kernel, in order (for the launch queue): one."""
    return [e["time"].number]


RULES = {
    "m": m, "n": n, "k": k, "batch": batch, "flops": flops, "bytes_read": bytes_read, "bytes_written": bytes_written,
    "peak_flop_rate": peak_flop_rate, "tile_m": tile_m, "tile_n": tile_n, "tiles": tiles,
    "tile_efficiency": tile_efficiency, "waves": waves, "waves_started": waves_started, "sms_used": sms_used,
    "wave_efficiency": wave_efficiency, "t_math_tiles": t_math_tiles, "time": time, "bound": bound,
    "kernels": lambda e: given("kernels", 1, COUNT), "launches": lambda e: given("launches", 1, COUNT),
    "blocks": lambda e: renamed("blocks", e["tiles"]),
    **roofline.RULES,
}
