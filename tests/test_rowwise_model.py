"""The row-wise model against hand-worked numbers on an H100 (3.35 TB/s, 67.0 TFLOP/s fp32, 2 µs kernel floor).

x is bf16[8192, 4096]: 8,192 rows of 4,096, 33,554,432 elements, 67,108,864 bytes; a row statistic is
8,192 × 2 B = 16,384 B.
"""
import pytest
from conftest import H100, verdicts

from gpuspec import devices, model
from gpuspec.kinds.rowwise import Rowwise
from gpuspec.tensors import Tensor

D = devices.lookup("H100-SXM")
ROWS, LENGTH = 8192, 4096
N = ROWS * LENGTH
X_BYTES = N * 2
STAT = ROWS * 2
BW, FP32, FLOOR = 3.35e12, D.fact("fp32").value, D.fact("kernel_floor").value


def est(op, mode="eager", shape=(ROWS, LENGTH), dtype="bf16"):
    return model.estimate(Rowwise(op, Tensor("x", dtype, shape), mode, D))


def test_rows_and_elements():
    e = est("softmax")
    assert e["rows"].number == 8192 and e["row_length"].number == 4096
    assert e["elements"].number == 33_554_432
    assert est("sum", shape=(4, 8, 512))["rows"].number == 32  # every leading dimension is rows


def test_eager_softmax_reads_x_three_times():
    e = est("softmax")
    assert e["kernels"].number == 3 and e["passes"].number == 3 and e["round_trips"].number == 2
    # max pass reads x; exp-and-sum reads x and the maxima; normalize reads x, maxima and sums
    assert e["bytes_read"].number == 3 * X_BYTES + 3 * STAT == 201_375_744
    # the maxima, the sums, and y
    assert e["bytes_written"].number == 2 * STAT + X_BYTES == 67_141_632
    assert e["flops"].number == 7 * N
    assert e["bound"].number == "memory"
    kernels = [(X_BYTES + STAT) / BW, (X_BYTES + 2 * STAT) / BW, (2 * X_BYTES + 2 * STAT) / BW]
    assert e["time"].number == pytest.approx(sum(kernels))  # ≈ 80.2 µs
    assert e["time"].number == pytest.approx(80.2e-6, rel=1e-3)


def test_fused_softmax_reads_once_and_writes_once():
    e = est("softmax", "fused")
    assert e["kernels"].number == 1 and e["passes"].number == 1 and e["round_trips"].number == 0
    assert e["bytes_read"].number == e["bytes_written"].number == X_BYTES
    assert e["flops"].number == 5 * N  # exp kept on chip: normalizing is one divide
    assert e["time"].number == pytest.approx(2 * X_BYTES / BW)  # ≈ 40.1 µs
    assert est("softmax")["time"].number / e["time"].number == pytest.approx(2.0, rel=1e-3)


def test_reductions_write_one_value_per_row():
    for op, flops in (("sum", N), ("mean", N + ROWS), ("amax", N)):
        for mode in ("eager", "fused"):
            e = est(op, mode)
            assert e["kernels"].number == 1, (op, mode)
            assert e["bytes_read"].number == X_BYTES
            assert e["bytes_written"].number == STAT
            assert e["flops"].number == flops, op
    assert est("sum")["time"].number == pytest.approx((X_BYTES + STAT) / BW)


def test_layernorm_and_rmsnorm():
    ln = est("layernorm")
    assert ln["kernels"].number == 3
    assert ln["bytes_read"].number == 3 * X_BYTES + 3 * STAT
    assert ln["bytes_written"].number == 2 * STAT + X_BYTES
    assert ln["flops"].number == 6 * N + 4 * ROWS
    assert est("layernorm", "fused")["flops"].number == 6 * N + 4 * ROWS  # the same arithmetic, on chip
    rms = est("rmsnorm")
    assert rms["kernels"].number == 2 and rms["round_trips"].number == 1
    assert rms["bytes_read"].number == 2 * X_BYTES + STAT
    assert rms["bytes_written"].number == STAT + X_BYTES
    assert rms["flops"].number == 3 * N + 3 * ROWS
    assert rms["bytes_moved"].number / est("rmsnorm", "fused")["bytes_moved"].number == pytest.approx(1.5, rel=1e-3)


def test_math_runs_at_the_fp32_rate_and_small_rows_hit_the_floor():
    assert est("softmax")["peak_flop_rate"].number == FP32
    assert est("softmax", dtype="fp64")["peak_flop_rate"].number == D.fact("fp64").value
    e = est("softmax", shape=(4, 256))
    assert e["time"].number == pytest.approx(3 * FLOOR)
    assert e["bound"].number == "overhead"
    assert e["intensity"].number == pytest.approx(7 * 1024 / (3 * 2048 + 3 * 8 + 2 * 8 + 2048))


def test_rowwise_in_a_spec():
    spec = H100 + ("x = bf16[8192, 4096]\ns = softmax(x) is 3 kernels, 201 MB read, ≈ 80 µs\n"
                   "softmax(x) fused is 1 kernels, ≈ 40 µs\nset mode = fused\nlayernorm(x) is 1 kernels\n"
                   "m = mean(x)\nm * 2 is 8,192 elements\n")
    assert [v.status for v in verdicts(spec)] == ["pass"] * 7
