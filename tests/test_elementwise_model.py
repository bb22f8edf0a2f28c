"""The elementwise model against hand-worked numbers: the lesson's x*2 on a 4096² bf16 tensor on an H100."""
import math

import pytest

from gpuspec import devices, model
from gpuspec.kinds.elementwise import Elementwise
from gpuspec.model.estimate import ModelError
from gpuspec.tensors import Apply, Scalar, Tensor

H100 = devices.lookup("H100-SXM")
X = Tensor("x", "bf16", (4096, 4096))


def estimate(expr, mode="eager", threads=256, device=H100, **options):
    return model.estimate(Elementwise(expr, mode, threads, device, **options))


def times_two(node=X):
    return Apply("mul", (node, Scalar(2.0)))


def test_lesson_grid_and_waves():
    e = estimate(times_two())
    assert e["elements"].number == 4096 * 4096 == 16_777_216
    assert e["blocks"].number == 16_777_216 // 256 == 65_536
    assert e["resident_blocks_per_sm"].number == 2048 // 256 == 8
    assert e["blocks_per_wave"].number == 132 * 8 == 1_056
    assert e["waves"].number == pytest.approx(65_536 / 1_056)  # 62.06
    assert e["waves_started"].number == 63


def test_lesson_bytes_flops_and_times():
    e = estimate(times_two())
    assert e["bytes_read"].number == e["bytes_written"].number == 16_777_216 * 2
    assert e["bytes_moved"].number == 67_108_864
    assert e["flops"].number == 16_777_216  # one multiply per element
    assert e["t_mem"].number == pytest.approx(67_108_864 / 3.35e12)  # 20.03 µs
    assert e["t_math"].number == pytest.approx(16_777_216 / 67e12)  # 0.2504 µs
    assert e["t_mem"].number / e["t_math"].number == pytest.approx(80.0, rel=1e-3)
    assert e["time"].number == e["t_mem"].number
    assert e["bound"].number == "memory"


def test_elementwise_math_on_half_types_runs_at_the_fp32_rate():
    e = estimate(times_two())
    assert e["peak_flop_rate"].number == H100.fact("fp32").value
    assert estimate(times_two(Tensor("d", "fp64", (1024,))))["peak_flop_rate"].number == H100.fact("fp64").value


def test_eager_chain_pays_the_round_trip_for_each_intermediate():
    chain = Apply("add", (times_two(), Scalar(1.0)))
    eager, fused = estimate(chain, "eager"), estimate(chain, "fused")
    assert eager["kernels"].number == 2 and fused["kernels"].number == 1
    assert eager["bytes_moved"].number == 4 * 33_554_432
    assert fused["bytes_moved"].number == 2 * 33_554_432
    assert eager["round_trips"].number == 1 and fused["round_trips"].number == 0
    assert eager["time"].number == pytest.approx(2 * fused["time"].number)
    assert fused["flops"].number == eager["flops"].number == 2 * 16_777_216  # FMA counts as two


def test_a_tensor_used_twice_in_one_kernel_is_read_once():
    e = estimate(Apply("mul", (X, X)))
    assert e["bytes_read"].number == 33_554_432


def test_two_inputs_are_each_read_once_and_the_result_takes_the_wider_dtype():
    y = Tensor("y", "fp32", (4096, 4096))
    e = estimate(Apply("add", (X, y)))
    assert e["bytes_read"].number == 16_777_216 * (2 + 4)
    assert e["bytes_written"].number == 16_777_216 * 4


def test_broadcasting_reads_the_smaller_input_once():
    bias = Tensor("b", "bf16", (4096,))
    e = estimate(Apply("add", (X, bias)))
    assert e["bytes_read"].number == 16_777_216 * 2 + 4096 * 2
    assert e["elements"].number == 16_777_216


def test_tiny_kernels_take_the_kernel_floor_and_are_overhead_bound():
    e = estimate(times_two(Tensor("v", "bf16", (4096,))))
    assert e["time"].number == H100.fact("kernel_floor").value
    assert e["bound"].number == "overhead"


def test_unary_functions_count_their_flops():
    e = estimate(Apply("gelu", (X,)))
    assert e["flops"].number == 5 * 16_777_216


def test_registers_limit_residency_in_allocation_units():
    # 64 registers × 32 threads = 2,048 per warp; 65,536 / 2,048 = 32 warps; 8 warps per block -> 4 blocks.
    e = estimate(times_two(), registers_per_thread=64)
    assert e["resident_blocks_per_sm"].number == 4
    assert e["residency_limit"].number == "registers"
    # 33 registers round up to 1,280 per warp (5 units of 256): 51 warps -> 6 blocks of 8 warps.
    assert estimate(times_two(), registers_per_thread=33)["resident_blocks_per_sm"].number == 6


def test_shared_memory_limits_residency_with_the_reserved_kilobyte():
    # 228 KiB per SM / (100 KiB + 1 KiB) -> 2 blocks.
    e = estimate(times_two(), shared_memory_per_block=100 * 1024)
    assert e["resident_blocks_per_sm"].number == 2


def test_block_size_changes_waves():
    e = estimate(times_two(), threads=1024)
    assert e["resident_blocks_per_sm"].number == 2
    assert e["blocks_per_wave"].number == 264
    assert e["waves"].number == pytest.approx(16_384 / 264)


def test_too_many_threads_per_block_is_a_model_error():
    with pytest.raises(ModelError, match="1024"):
        estimate(times_two(), threads=2048)["waves"]


def test_every_metric_keeps_its_derivation():
    e = estimate(times_two())
    assert e["t_mem"].derivation() == "t_mem = bytes_moved / hbm_bandwidth = 67.1 MB / 3.35 TB/s = 20.0 µs"
    assert "[S-HPCT]" in e.fact("hbm_bandwidth").derivation()
    for name in e.names():
        assert e[name].derivation().startswith(name)


def test_last_wave_occupancy():
    e = estimate(times_two())
    assert e["last_wave_occupancy"].number == pytest.approx((65_536 - 62 * 1_056) / 1_056)
    assert math.isclose(e["threads"].number, 16_777_216)


def test_every_function_an_expression_may_call_has_its_flops_counted():
    from gpuspec.kinds.elementwise.rules import UNARY_FLOPS
    from gpuspec.tensors import CASTS, FUNCTIONS, MOVES, UNARY_FUNCTIONS

    # the one-argument functions that do arithmetic; casts and moves do none (tests/test_casts_and_moves.py)
    assert set(UNARY_FLOPS) == set(UNARY_FUNCTIONS) == {name for name, arity in FUNCTIONS.items()
                                                         if arity == 1 and name not in CASTS and name not in MOVES}
    e = estimate(Apply("gelu", (Apply("silu", (X,)),)), mode="fused")
    assert e["flops"].number == X.elements * (UNARY_FLOPS["gelu"] + UNARY_FLOPS["silu"]) == X.elements * 9
