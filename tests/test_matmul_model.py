"""The matmul model against hand-worked numbers on an H100 (132 SMs, 989.4 TFLOP/s dense bf16, 3.35 TB/s)."""
import pytest
from conftest import H100, only, verdicts

from gpuspec import devices, model
from gpuspec.kinds.matmul import Matmul
from gpuspec.tensors import Tensor

D = devices.lookup("H100-SXM")


def mm(m, k, n, dtype="bf16", tile=(128, 128), batch=()):
    a, b = Tensor("a", dtype, (*batch, m, k)), Tensor("b", dtype, (k, n))
    return model.estimate(Matmul(a, b, tile, D))


def test_flops_and_bytes_of_a_square_matmul():
    e = mm(4096, 4096, 4096)
    assert e["flops"].number == 2 * 4096**3
    assert e["bytes_moved"].number == 3 * 4096 * 4096 * 2
    assert e["t_math"].number == pytest.approx(2 * 4096**3 / 989.4e12)
    assert e["bound"].number == "compute"


def test_tiles_and_waves():
    e = mm(4096, 4096, 4096)
    assert e["tiles"].number == 32 * 32
    assert e["waves"].number == pytest.approx(1024 / 132)
    assert e["waves_started"].number == 8
    # every wave takes as long as a full one: 8 waves of one 128x128x4096 tile per SM
    per_tile = 2 * 128 * 128 * 4096 / (989.4e12 / 132)
    assert e["t_math_tiles"].number == pytest.approx(8 * per_tile)


def test_one_tile_too_many_starts_a_second_wave():
    e = mm(896, 4096, 2432)  # 7 x 19 = 133 tiles
    assert e["tiles"].number == 133
    assert e["waves_started"].number == 2
    assert e["wave_efficiency"].number == pytest.approx(133 / 132 / 2)


def test_edge_tiles_compute_padding():
    e = mm(130, 64, 128)
    assert e["tiles"].number == 2
    assert e["tile_efficiency"].number == pytest.approx(130 / 256)


def test_batched_matmul_counts_every_batch_entry():
    e = mm(1024, 1024, 1024, batch=(8,))
    assert e["batch"].number == 8
    assert e["flops"].number == 8 * 2 * 1024**3
    assert e["tiles"].number == 8 * 64


def test_peak_by_dtype():
    assert mm(256, 256, 256, "fp8")["peak_flop_rate"].number == D.fact("tensor_fp8").value
    assert mm(256, 256, 256, "fp32")["peak_flop_rate"].number == D.fact("fp32").value  # no TF32 by default
    assert mm(256, 256, 256, "tf32")["peak_flop_rate"].number == D.fact("tensor_tf32").value


def test_a_gemv_is_memory_bound():
    e = mm(1, 4096, 14336)
    assert e["bound"].number == "memory"
    assert e["intensity"].number == pytest.approx(1.0, rel=0.01)


def test_matmul_in_a_spec():
    spec = H100 + "a = bf16[4096, 4096]\nb = bf16[4096, 4096]\nc = a @ b with 128x256 tiles is 512 tiles, compute-bound"
    assert [v.status for v in verdicts(spec)] == ["pass", "pass"]


def test_the_result_of_a_matmul_is_a_tensor_for_what_follows():
    spec = H100 + "a = bf16[64, 32]\nb = bf16[32, 16]\nc = a @ b\nd = c * 2 is 1,024 elements"
    assert only(spec).status == "pass"
