"""The issue rate of plain (non-tensor) math against hand-worked numbers on an H100 SXM.

The catalog's fp32 peak, 67 TFLOP/s, is 132 SMs × 128 lanes × 2 FLOP × 1.98 GHz: it counts an FMA (two FLOPs) per
lane per clock. A lone multiply or add is one FLOP in one instruction, so the lanes issue those at half the peak,
33.5 T instructions/s. The roofline's t_math (FLOPs at the peak, the textbook arithmetic the lesson quotes) stays
as it is; t_issue (instructions at the issue rate) is what `time` and `bound` use.
"""
import pytest
from conftest import verdicts

from gpuspec import devices, model
from gpuspec.kinds.elementwise import Elementwise
from gpuspec.tensors import Apply, Scalar, Tensor

H100 = devices.lookup("H100-SXM")
X = Tensor("x", "bf16", (4096, 4096))
N = 4096 * 4096  # 16,777,216 elements
ISSUE = 67e12 / 2  # instructions per second


def estimate(expr, mode="fused"):
    return model.estimate(Elementwise(expr, mode, 256, H100))


def gelu_chain(terms=7):
    """gelu(x) * gelu(x * 2) * ... * gelu(x * terms): per element 7 gelus of 5 FLOPs, 6 scalings and 6 products,
    every one a lone operation (no multiply feeds an add): 47 FLOPs in 47 instructions."""
    factors = [Apply("gelu", (X if k == 1 else Apply("mul", (X, Scalar(float(k)))),)) for k in range(1, terms + 1)]
    product = factors[0]
    for factor in factors[1:]:
        product = Apply("mul", (product, factor))
    return product


def test_the_lesson_keeps_its_textbook_arithmetic():
    e = estimate(Apply("mul", (X, Scalar(2.0))), "eager")
    assert e["t_math"].number == pytest.approx(N / 67e12)  # 16.8 MFLOP / 67 TFLOPS ≈ 0.25 µs
    assert e["t_mem"].number / e["t_math"].number == pytest.approx(80.0, rel=1e-3)
    # the multiply issues alone: one instruction an element at half the peak, twice t_math, still far below t_mem
    assert e["instructions"].number == N
    assert e["issue_rate"].number == ISSUE
    assert e["t_issue"].number == pytest.approx(N / ISSUE) == pytest.approx(2 * e["t_math"].number)
    assert e["time"].number == e["t_mem"].number and e["bound"].number == "memory"


def test_a_chain_of_lone_operations_is_bound_by_the_issue_rate_not_the_flop_rate():
    e = estimate(gelu_chain())
    assert e["flops"].number == 47 * N
    assert e["instructions"].number == 47 * N
    t_mem = 2 * N * 2 / 3.35e12        # bf16 read once, written once: 67,108,864 B / 3.35 TB/s = 20.03 µs
    t_math = 47 * N / 67e12            # 788,529,152 FLOP / 67 TFLOP/s = 11.77 µs: below t_mem (the old verdict)
    t_issue = 47 * N / ISSUE           # 788,529,152 instructions / 33.5 T/s = 23.54 µs: above it
    assert e["t_mem"].number == pytest.approx(t_mem) == pytest.approx(20.03e-6, rel=1e-3)
    assert e["t_math"].number == pytest.approx(t_math) == pytest.approx(11.77e-6, rel=1e-3)
    assert e["t_issue"].number == pytest.approx(t_issue) == pytest.approx(23.54e-6, rel=1e-3)
    assert e["t_math"].number < e["t_mem"].number < e["t_issue"].number
    assert e["time"].number == pytest.approx(t_issue)
    assert e["bound"].number == "compute"


def test_the_same_chain_as_written_in_a_spec_fails_the_memory_bound_claim_the_flop_rate_would_pass():
    spec = ("device H100-SXM\nx = bf16[4096, 4096]\n"
            "y = gelu(x) * gelu(x * 2) * gelu(x * 3) * gelu(x * 4) * gelu(x * 5) * gelu(x * 6) * gelu(x * 7) fused:\n"
            "    compute-bound\n    ≈ 23.5 µs\n    t_math ≈ 11.8 µs\n    t_mem ≈ 20.0 µs\n    memory-bound\n")
    found = [v for v in verdicts(spec) if v.source == "model"]
    assert [v.status for v in found] == ["pass", "pass", "pass", "pass", "fail"]


def test_a_multiply_that_feeds_an_add_is_one_fma_in_a_fused_kernel_and_two_instructions_eager():
    fma = Apply("add", (Apply("mul", (X, Scalar(2.0))), Scalar(1.0)))  # x * 2 + 1
    fused, eager = estimate(fma, "fused"), estimate(fma, "eager")
    assert fused["flops"].number == eager["flops"].number == 2 * N
    assert fused["instructions"].number == N                     # one FFMA an element: 2 FLOPs in one slot
    assert fused["t_issue"].number == pytest.approx(fused["t_math"].number)
    assert eager["instructions"].number == 2 * N                 # a multiply kernel, then an add kernel
    assert "a multiply feeding an add is one FMA" in fused["instructions"].note
    assert "no multiply and add fuse" in eager["instructions"].note


def test_of_two_products_summed_one_contracts_and_a_broadcast_product_contracts_its_own_elements():
    y = Tensor("y", "bf16", (4096, 4096))
    row = Tensor("r", "bf16", (4096,))
    two = Apply("add", (Apply("mul", (X, y)), Apply("mul", (y, X))))       # x*y + y*x: an FMUL and an FFMA
    assert estimate(two)["instructions"].number == 2 * N
    small = Apply("add", (Apply("mul", (row, Scalar(3.0))), X))            # (r * 3) + x: r's 4096 products
    assert estimate(small)["flops"].number == 4096 + N
    assert estimate(small)["instructions"].number == N


def test_casts_and_moves_issue_no_math():
    cast = Apply("to_fp32", (X,))
    e = estimate(cast, "eager")
    assert e["flops"].number == 0 and e["instructions"].number == 0 and e["t_issue"].number == 0
    assert estimate(Apply("transpose", (X,)), "eager")["instructions"].number == 0


def test_the_derivation_says_why_the_issue_rate_is_half_the_peak():
    e = estimate(gelu_chain())
    assert e["issue_rate"].rule == "{0} / 2"
    assert "one instruction per lane per clock" in e["issue_rate"].note
    assert "FMA as two FLOPs" in e["issue_rate"].note
    assert e["time"].rule == "max({0}, {1}, {2})"
    assert [v.name for v in e["time"].inputs] == ["t_mem", "t_issue", "kernel_floor"]


def test_fp64_work_issues_at_half_the_fp64_peak():
    d = Tensor("d", "fp64", (1024,))
    e = estimate(Apply("mul", (d, Scalar(2.0))))
    assert e["issue_rate"].number == H100.fact("fp64").value / 2
    # a value cast to fp64 inside an fp32 expression computes in fp64 too
    f = Tensor("f", "fp32", (1024,))
    inner = estimate(Apply("to_fp32", (Apply("mul", (Apply("to_fp64", (f,)), Scalar(2.0))),)))
    assert inner["peak_flop_rate"].number == H100.fact("fp64").value


def test_the_calibrated_source_uses_the_issue_time_too():
    """On H100's published profile (a kernel costs kernel_gap beyond its work) the work is still t_issue."""
    from gpuspec.sources import Published

    e = Published().estimate(Elementwise(gelu_chain(), "fused", 256, H100))
    gap = e.fact("lone_kernel_latency").number if e.device.fact("lone_kernel_latency") else e.fact("kernel_gap").number
    measured_bandwidth = e.fact("hbm_bandwidth").number
    issue = e["issue_rate"].number
    assert e["time"].number == pytest.approx(gap + max(2 * N * 2 / measured_bandwidth, 47 * N / issue))
    assert "t_issue" in [v.name for v in e["time"].inputs[1].inputs]
