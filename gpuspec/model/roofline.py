"""The roofline rules every kernel workload shares, given its bytes, FLOPs and peak: intensity, ridge point,
t_mem, t_math, and the rates and utilizations its time implies."""
from __future__ import annotations

from gpuspec.model.estimate import Estimate
from gpuspec.model.values import Value, quotient, total

# The device fact that is a dtype's dense peak for matrix work: the tensor cores' rate of bf16, fp16, fp8, int8 and
# tf32; fp32 at the plain fp32 rate (PyTorch does not use TF32 for float32 matmuls unless told to); fp64 at the fp64
# tensor rate.
TENSOR_PEAK = {"bf16": "tensor_bf16", "fp16": "tensor_fp16", "fp8": "tensor_fp8", "int8": "tensor_int8",
               "tf32": "tensor_tf32", "fp32": "fp32", "fp64": "tensor_fp64"}


def bytes_moved(e: Estimate) -> Value:
    return total("bytes_moved", e["bytes_read"], e["bytes_written"])


def intensity(e: Estimate) -> Value:
    return quotient("intensity", e["flops"], e["bytes_moved"])


def ridge_point(e: Estimate) -> Value:
    return quotient("ridge_point", e["peak_flop_rate"], e.fact("hbm_bandwidth"))


def t_mem(e: Estimate) -> Value:
    return quotient("t_mem", e["bytes_moved"], e.fact("hbm_bandwidth"))


def t_math(e: Estimate) -> Value:
    return quotient("t_math", e["flops"], e["peak_flop_rate"])


def achieved_bandwidth(e: Estimate) -> Value:
    return quotient("achieved_bandwidth", e["bytes_moved"], e["time"])


def bandwidth_utilization(e: Estimate) -> Value:
    return quotient("bandwidth_utilization", e["achieved_bandwidth"], e.fact("hbm_bandwidth"), percent=True)


def achieved_flop_rate(e: Estimate) -> Value:
    return quotient("achieved_flop_rate", e["flops"], e["time"])


def flop_utilization(e: Estimate) -> Value:
    return quotient("flop_utilization", e["achieved_flop_rate"], e["peak_flop_rate"], percent=True)


RULES = {
    "bytes_moved": bytes_moved, "intensity": intensity, "ridge_point": ridge_point, "t_mem": t_mem,
    "t_math": t_math, "achieved_bandwidth": achieved_bandwidth, "bandwidth_utilization": bandwidth_utilization,
    "achieved_flop_rate": achieved_flop_rate, "flop_utilization": flop_utilization,
}
