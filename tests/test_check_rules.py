"""The comparison rules: = rounds to the digits written, ≈ within a tolerance, bounds, ranges, words."""
from conftest import H100, errors, only, verdicts

X = H100 + "x = bf16[4096, 4096]\ny = x * 2\n"


def test_equal_holds_when_value_rounds_to_written_digits():
    assert only(X + "y.waves = 62").status == "pass"  # 62.06


def test_equal_fails_when_value_does_not_round_to_written_digits():
    verdict = only(X + "y.bytes_read = 33.5 MB")  # 33.554432 MB rounds to 33.6
    assert verdict.status == "fail"
    assert "33.55 MB" in verdict.message


def test_equal_with_more_digits_is_stricter():
    assert only(X + "y.waves = 62.06").status == "pass"
    assert only(X + "y.waves = 62.1").status == "pass"
    assert only(X + "y.waves = 62.0").status == "fail"


def test_equal_rounds_in_the_unit_written():
    assert only(X + "y.bytes_read = 33.6 MB").status == "pass"
    assert only(X + "y.bytes_read = 32 MiB").status == "pass"  # exactly 2^25 B
    assert only(X + "y.bytes_read = 33.6 MiB").status == "fail"  # MiB is binary: 32 MiB


def test_approx_uses_the_file_default_of_ten_percent():
    assert only(X + "y.time ≈ 22 µs").status == "pass"  # 20.03 within 10% of 22 (19.8–24.2)
    assert only(X + "y.time ≈ 23 µs").status == "fail"  # 20.7–25.3


def test_approx_uses_the_tolerance_the_file_sets():
    assert only(X + "set tolerance = 1%\ny.time ≈ 20.2 µs").status == "pass"
    assert only(X + "set tolerance = 1%\ny.time ≈ 20.5 µs").status == "fail"


def test_approx_uses_the_tolerance_written_beside_it():
    assert only(X + "y.time ≈ 21 µs ± 1 µs").status == "pass"
    assert only(X + "y.time ≈ 22 µs ± 1 µs").status == "fail"
    assert only(X + "y.time ≈ 21 µs ± 5%").status == "pass"
    assert only(X + "y.time ≈ 21.5 µs +- 5%").status == "fail"


def test_bounds():
    assert only(X + "y.time < 21 µs").status == "pass"
    assert only(X + "y.time < 20 µs").status == "fail"
    assert only(X + "y.time ≤ 20.1 µs").status == "pass"
    assert only(X + "y.time >= 20 µs").status == "pass"
    assert only(X + "y.time > 21 µs").status == "fail"


def test_ranges_hold_within_the_written_digits():
    assert only(X + "y.time = 19–21 µs").status == "pass"
    assert only(X + "y.time = 20..20 µs").status == "pass"  # 20.03 rounds into 20–20
    assert only(X + "y.time = 21..25 µs").status == "fail"


def test_open_lower_bound():
    assert only(X + "y.waves = 60+").status == "pass"
    assert only(X + "y.waves = 63+").status == "fail"


def test_ratio_and_percentage():
    assert only(X + "y.t_mem / y.t_math ≈ 80×").status == "pass"
    assert only(X + "y.t_mem / y.t_math ≈ 80x").status == "pass"
    assert only(X + "y.bandwidth_utilization = 100%").status == "pass"
    assert only(X + "y.flop_utilization ≈ 1.25%").status == "pass"


def test_word_claims():
    assert only(X + "y is memory-bound").status == "pass"
    verdict = only(X + "y is compute-bound")
    assert verdict.status == "fail" and "memory" in verdict.message


def test_a_range_value_meets_approx_when_they_overlap():
    # H100's L2 latency is a measured range, 259.9–291 cycles.
    assert only(H100 + "device.l2_latency ≈ 280 cycles").status == "pass"
    assert only(H100 + "device.l2_latency ≈ 200 cycles").status == "fail"
    assert only(H100 + "device.l2_latency = 250..300 cycles").status == "pass"
    assert only(H100 + "device.hbm_latency = 400+ cycles").status == "pass"


def test_sources_other_than_the_model_are_skipped_with_a_reason():
    found = verdicts(X + "set sources = model, measured\ny.time ≈ 20 µs")
    assert [v.status for v in found] == ["pass", "skip"]
    assert "--measure" in found[1].message


def test_tolerance_goes_with_approx_only():
    [error] = errors(X + "y.time = 20 µs ± 5%")
    assert error.code == "tolerance-without-approx"


def test_equal_holds_for_a_large_exact_whole_number():
    # 6,738,415,616 parameters: floating-point slack must not move the boundary by a digit written.
    assert only(H100 + "w = 6738415616 * 1\nw is 6,738,415,616").status == "pass"
    assert only(H100 + "w = 6738415616 * 1\nw is 6,738,415,617").status == "fail"
