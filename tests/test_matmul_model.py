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


def test_a_skinny_matmul_runs_tiles_shrunk_to_its_rows():
    # PyTorch's compiled matmuls shrink a tile's side to the next power of two of M (at least 16): 64 rows run
    # 64x128 tiles. One tile is 2 x 64 x 128 x 8192 FLOPs at 989.4 / 132 TFLOP/s per SM = 17.9 µs.
    spec = H100 + ("a = bf16[64, 8192]\nb = bf16[8192, 8192]\n"
                   "c = a @ b is 64 tiles, c.tile_m = 64, c.t_math_tiles ≈ 17.9 µs ± 1%, memory-bound\n"
                   "h = bf16[1, 4096]\nw = bf16[4096, 14336]\nh @ w is tile_m = 16, 112 tiles\n"
                   "d = bf16[5, 4096]\nd @ w is tile_m = 16\n"
                   "e = bf16[33, 4096]\ne @ w is tile_m = 64\n"
                   "f = bf16[96, 24]\ng = bf16[24, 40]\nf @ g is tile_m = 128, tile_n = 64\n")
    assert [v.status for v in verdicts(spec)] == ["pass"] * 10


def test_shrunk_tiles_turn_a_wrong_compute_bound_verdict_memory_bound():
    # A100 (108 SMs, 312 TFLOP/s, 2.039 TB/s): 64 x 8192 @ 8192 x 13952 is 109 tile columns, one more than the SMs,
    # so two waves start. With 128-row tiles each wave is 2 x 128 x 128 x 8192 / (312e12 / 108) = 92.9 µs: 186 µs of
    # math against 8192 x 13952 x 2 B + ... = 230 MB / 2.039 TB/s = 113 µs of memory, "compute-bound". The 64-row
    # tiles the compiler runs halve each wave: 92.9 µs, memory-bound.
    a = Tensor("a", "bf16", (64, 8192))
    b = Tensor("b", "bf16", (8192, 13952))
    a100 = devices.lookup("A100-80GB")
    written = model.estimate(Matmul(a, b, (128, 128), a100))
    assert written["t_math_tiles"].number == pytest.approx(2 * 2 * 128 * 128 * 8192 / (312e12 / 108))
    assert written["bound"].number == "compute"
    chosen = verdicts("device A100-80GB\na = bf16[64, 8192]\nb = bf16[8192, 13952]\n"
                      "c = a @ b is memory-bound, tile_m = 64, t_math_tiles ≈ 92.9 µs ± 1%, t_mem ≈ 113 µs ± 1%\n")
    assert [v.status for v in chosen] == ["pass"] * 4
    # a tile the spec writes is kept as written
    kept = verdicts("device A100-80GB\na = bf16[64, 8192]\nb = bf16[8192, 13952]\n"
                    "a @ b with 128x128 tiles is compute-bound, tile_m = 128\n")
    assert [v.status for v in kept] == ["pass", "pass"]


def test_a_power_limited_part_runs_its_gemms_at_its_published_rate_and_the_ideal_model_at_its_datasheet():
    # L4: 58 SMs, 121 TFLOP/s at its 2040 MHz boost; its published profile sustains about half of that (the L20's
    # share per clock times the L4's estimated 1050 MHz under load: tests/test_published_profiles.py works it out).
    from gpuspec import published
    from gpuspec.sources import rebind

    l4 = devices.lookup("L4")
    a, b = Tensor("a", "bf16", (8192, 8192)), Tensor("b", "bf16", (8192, 8192))
    workload = Matmul(a, b, (128, 128), l4)
    ideal = model.estimate(workload)
    # 64 x 64 = 4096 tiles over 58 SMs: 71 waves started, each 2·128·128·8192 FLOP at 121e12 / 58 per SM
    one_tile = 2 * 128 * 128 * 8192 / (121e12 / 58)
    assert ideal["t_math_tiles"].number == pytest.approx(71 * one_tile)
    assert ideal["time"].number == pytest.approx(71 * one_tile)
    profile = published.build("L4")
    real = model.estimate(rebind(workload, profile.apply(l4)))
    rate = profile.facts["tensor_bf16"]
    assert real["peak_flop_rate"].number == pytest.approx(rate)
    assert real["t_math_tiles"].number == pytest.approx(71 * 2 * 128 * 128 * 8192 / (rate / 58))
    assert real["time"].number == pytest.approx(real["t_math_tiles"].number + profile.facts["gemm_fixed_cost"])
    assert real["time"].number / ideal["time"].number == pytest.approx(121e12 / rate, rel=1e-3)
    (leaf,) = real["peak_flop_rate"].inputs  # the profile's fact, with its derivation as its note
    assert "L4's clock: 1050 MHz of its 2040 MHz boost" in leaf.derivation()
    assert ideal["peak_flop_rate"].inputs[0].number == 121e12
