"""Units: decimal and binary prefixes stay apart, micro has three spellings, rates and counts."""
import pytest

from gpuspec import units
from gpuspec.units import parse_unit


def test_mb_is_decimal_and_mib_is_binary():
    assert parse_unit("MB").scale == 1e6
    assert parse_unit("MiB").scale == 2**20
    assert parse_unit("GB").scale == 1e9
    assert parse_unit("GiB").scale == 2**30


@pytest.mark.parametrize("spelling", ["µs", "μs", "us"])
def test_every_micro_sign_means_micro(spelling):
    unit = parse_unit(spelling)
    assert unit.scale == pytest.approx(1e-6) and unit.dimension == units.TIME


def test_rates():
    assert parse_unit("TB/s").dimension == units.BANDWIDTH
    assert parse_unit("TFLOPS").scale == 1e12 and parse_unit("TFLOPS").dimension == units.FLOP_RATE
    assert parse_unit("TFLOP/s").dimension == units.FLOP_RATE
    assert parse_unit("FLOP/B").dimension == units.INTENSITY
    assert parse_unit("GHz").dimension == units.FREQUENCY


def test_counting_words_are_plain_numbers_that_name_what_they_count():
    assert parse_unit("waves").dimension == units.COUNT
    assert parse_unit("waves").noun == "waves"


def test_percent_and_times():
    assert parse_unit("%").scale == 0.01
    assert parse_unit("×").scale == 1 and parse_unit("x").scale == 1


def test_bare_si_suffix():
    assert parse_unit("M").scale == 1e6 and parse_unit("M").dimension == units.COUNT


def test_unknown_units_are_refused():
    for text in ("qs", "Ks", "MBs", "TB/q"):
        with pytest.raises(units.UnknownUnit):
            parse_unit(text)


def test_formatting_picks_a_prefix_by_size():
    assert units.format_si(67_108_864, units.BYTES) == "67.1 MB"
    assert units.format_si(20.032e-6, units.TIME) == "20.0 µs"
    assert units.format_si(3.35e12, units.BANDWIDTH) == "3.35 TB/s"
    assert units.format_si(16_777_216, units.COUNT) == "16,777,216"


def test_a_long_time_stays_in_seconds():
    # No SI prefix above one makes sense for a time (`ks`, `Ps` are not read either): past days, an exponent.
    assert units.format_si(3.6e24, units.TIME) == "3.60e24 s"
    assert units.format_si(3.6e9, units.TIME) == "3.60e9 s"
    assert units.format_si(7_200, units.TIME) == "7,200 s"  # thousands separated, as every plain number from 1,000
    assert units.format_si(1.5e15, units.FLOPS) == "1.50 PFLOP"  # other units keep their prefixes


def test_a_long_time_in_a_derivation_reads_as_the_failure_says_it():
    from gpuspec.api import check_text
    from gpuspec.report import text

    spec = "device H100-SXM\nv = bf16[4096]\nsmall = v * 2\nbig = 1e30 launches of small is ≈ 1 s\n"
    shown = text.render(check_text(spec, "t.gpu"), verbose=True)
    assert "time = 3.600e24 s, not ≈ 1 s" in shown and " Ps" not in shown and "e9 " not in shown
    assert "= 3.60e24 s (host and GPU overlap" in shown


def test_formatting_in_the_claims_unit_keeps_four_digits():
    assert units.format_in(20.032e-6, parse_unit("µs")) == "20.03 µs"
    assert units.format_in(62.0606, parse_unit("waves")) == "62.06"
    assert units.format_in(33_554_432, parse_unit("MB")) == "33.55 MB"
    assert units.format_in(3.7988e25, parse_unit("FLOP")) == "3.799e25 FLOP"


def test_long_spans_take_no_prefix():
    assert parse_unit("days").scale == 86400 and parse_unit("h").dimension == units.TIME
    assert parse_unit("min").scale == 60
    for text in ("mdays", "kh", "Mmin"):
        with pytest.raises(units.UnknownUnit):
            parse_unit(text)
