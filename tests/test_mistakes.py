"""The usual mistakes, diagnosed: a failing claim whose number fits a common slip says which."""
from conftest import H100, only

X = H100 + "x = bf16[4096, 4096]\ny = x * 2\n"


def hint(spec: str) -> str:
    verdict = only(spec)
    assert verdict.status == "fail"
    return verdict.hint or ""


def test_a_sparse_peak_taken_for_the_dense_one():
    assert "2:4-sparse" in hint(H100 + "device.tensor_bf16 = 1979 TFLOP/s")


def test_gib_written_as_gb():
    # 16.06 GB of weights are 14.96 GiB; the claim wrote the GiB number with GB.
    text = hint(H100 + "w = 8.03e9 * 2 B\nw is ≈ 14.96 GB ± 1%")
    assert "the claim matches the value in GiB (14.96 GiB = 16.06 GB)" in text


def test_gb_written_as_gib():
    assert "in MB" in hint(X + "y.bytes_read = 33.55 MiB")


def test_bits_for_bytes():
    assert "bits" in hint(X + "y.bytes_moved ≈ 537 MB")


def test_a_factor_of_a_thousand():
    assert "unit prefix slip" in hint(X + "y.time ≈ 20 ms")
    assert "a thousandth" in hint(X + "y.time ≈ 20 ns")


def test_an_fma_counted_as_one_flop():
    # x * 2 + 1 is a multiply and an add per element: 2 FLOPs, which an FMA does in one instruction.
    assert "FMA" in hint(X + "z = x * 2 + 1 fused\nz.flops ≈ 16.8 MFLOP")


def test_an_early_datasheet_value_the_catalog_notes():
    # 67.1 MB at the early 3 TB/s figure is 22.4 µs; the final datasheet says 3.35 TB/s.
    text = hint(X + "y.t_mem ≈ 22.4 µs ± 2%")
    assert "hbm_bandwidth = 3 TB/s" in text and "3.35 TB/s" in text


def test_no_hint_when_no_slip_fits():
    assert hint(X + "y.time ≈ 31 µs") == ""


def test_the_hint_is_part_of_the_message():
    verdict = only(H100 + "device.tensor_bf16 = 1979 TFLOP/s")
    assert verdict.message.endswith(verdict.hint)
