"""The launch queue in closed form agrees with the queue played out kernel by kernel and window by window, and its
work does not grow with the counts: ten million launches, a million layers, a nanosecond sample window."""
from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuspec.model import launches
from gpuspec.model.estimate import ModelError

UNIT = 2.0**-20  # times are whole multiples of it: exact in binary, so windows and kernels often meet exactly


def played_out(pattern: list[float], repeats: int, cost: float, window: float) -> tuple[Fraction, Fraction, float]:
    """(total, busy, utilization) by launching every kernel and looking at every window."""
    cost_, window_ = Fraction(cost), Fraction(window)
    busy, end, index = [], Fraction(0), 0
    for _ in range(repeats):
        for duration in pattern:
            index += 1
            start = max(end, index * cost_)
            end = start + Fraction(duration)
            busy.append((start, end))
    # window k shows a kernel when the kernel overlaps it by more than a billionth of a window at either end
    slack = Fraction(1, 10**9)
    touched = set()
    for start, stop in busy:
        touched.update(range(math.floor(start / window_ + slack), math.ceil(stop / window_ - slack)))
    windows = max(1, math.ceil(end / window_ - slack))
    touched = len(touched)
    return end, sum(stop - start for start, stop in busy), touched / windows


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.integers(1, 5)), min_size=1, max_size=4),
       st.integers(1, 6), st.integers(0, 30), st.integers(1, 50))
def test_the_closed_form_matches_the_queue_played_out(run_list, repeats, cost, window):
    pattern = [d * UNIT for d, count in run_list for _ in range(count)]
    total, busy, utilization = played_out(pattern, repeats, cost * UNIT, window * UNIT)
    for given_as in (pattern, [(d * UNIT, c) for d, c in run_list]):
        found = launches.run(given_as, repeats, cost * UNIT, window * UNIT)
        assert found.total == float(total)
        assert found.busy == pytest.approx(float(busy), rel=1e-12)
        assert found.host == pytest.approx(len(pattern) * repeats * cost * UNIT, rel=1e-12)
        assert found.utilization == pytest.approx(utilization, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(1e-7, 1e-4), min_size=1, max_size=5), st.integers(1, 30), st.floats(1e-7, 1e-4),
       st.floats(1e-7, 1e-3))
def test_the_closed_form_matches_with_times_that_are_not_round(pattern, repeats, cost, window):
    total, _, utilization = played_out(pattern, repeats, cost, window)
    found = launches.run(pattern, repeats, cost, window)
    assert found.total == pytest.approx(float(total), rel=1e-12)
    assert found.utilization == pytest.approx(utilization, abs=1e-12)


US = 1e-6


@pytest.mark.parametrize("pattern, repeats, cost, window", [
    ([(2 * US, 1)], 10**7, 1.0, 1e-9),                       # the spec of a 139-byte hostile file
    ([(2 * US, 1)], 10**15, 5 * US, 1e-9),                   # more launches than a float counts exactly
    ([(20 * US, 7), (30 * US, 1), (2 * US, 7)], 666_666, 5 * US, 1e-9),   # a decode step of 666,666 layers
    ([(20 * US, 7), (30 * US, 1), (2 * US, 10**9)], 10**4, 5 * US, 1e-9),  # a billion small kernels per layer
    ([(2 * US, 10**12)], 3, 5 * US, 1e-9),
    ([(1e-300, 5)], 10**12, 1e-300, 1e-300),
], ids=["ten-million-launches", "1e15-launches", "666666-layers", "billion-kernels-per-layer", "1e12-in-a-run",
        "tiny-times"])
def test_huge_counts_are_computed_not_played_out(pattern, repeats, cost, window):
    found = launches.run(pattern, repeats, cost, window)  # benchmarks/limits.py times these
    kernels = sum(c for _, c in pattern) * repeats
    assert found.busy == pytest.approx(repeats * sum(d * c for d, c in pattern), rel=1e-9)
    assert found.total >= max(found.busy, kernels * cost) * (1 - 1e-9)
    assert 0 <= found.utilization <= 1


def test_ten_million_one_second_launches_in_nanosecond_windows():
    found = launches.run([2 * US], 10**7, 1.0, 1e-9)
    assert found.total == pytest.approx(10**7 + 2 * US)
    # each kernel touches 2,000 windows (2 µs of 1 ns), or 2,001 when it does not start on a window's edge
    assert found.utilization == pytest.approx(2000 / 1e9, rel=1e-3)


@pytest.mark.parametrize("small", [4, 6, 9], ids=["gpu-slower", "gpu-slightly-slower", "host-slower"])
def test_a_queue_that_backs_up_in_every_repeat_matches_the_queue_played_out(small):
    # a kernel of 30 units, then ones of 1, launched every 5 units: the small ones queue behind the big one, and over a
    # repeat the GPU falls further behind (34 units of work per 25 of launches; 36 per 35) or catches up (39 per 50)
    pattern = [30 * UNIT] + [1 * UNIT] * small
    for repeats in (1, 2, 3, 7, 50):
        total, _, utilization = played_out(pattern, repeats, 5 * UNIT, 0.5 * UNIT)
        found = launches.run(pattern, repeats, 5 * UNIT, 0.5 * UNIT)
        assert found.total == pytest.approx(float(total), rel=1e-12)
        assert found.utilization == pytest.approx(utilization, abs=1e-9)


def test_gaps_on_two_counts_beyond_the_limit_are_refused_with_the_limit():
    rows = launches.MAX_GAP_ROWS + 10  # the small kernels of a layer wait from the 7th on
    timeline = launches.run([(20 * US, 1), (2 * US, rows)], rows, 5 * US, 1e-9)
    assert timeline.total == pytest.approx(rows * (rows + 1) * 5 * US + 2 * US)  # the time needs no counting
    with pytest.raises(ModelError) as error:
        timeline.utilization
    assert f"(gpuspec takes at most {launches.MAX_GAP_ROWS:,})" in str(error.value)
    assert "sample_window" in error.value.help
    # with windows longer than the gaps no gap holds a window: nothing to count, nothing refused
    assert launches.run([(20 * US, 1), (2 * US, rows)], rows, 5 * US, 1e-3).utilization == 1.0


@pytest.mark.parametrize("bad", [math.inf, math.nan])
def test_a_time_that_is_not_finite_is_an_overflow_not_a_value(bad):
    with pytest.raises(OverflowError):
        launches.run([bad], 3, 5 * US, 1e-3)
    with pytest.raises(OverflowError):
        launches.run([2 * US], 3, bad, 1e-3)
