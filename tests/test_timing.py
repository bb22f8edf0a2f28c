"""Timing: sample statistics, stopping criteria, measure() on a fake clock, and L2 flush and rotation sizes."""
from __future__ import annotations

import itertools
import json
import math
import random

import pytest

from gpuspec.timing import (
    FixedCount,
    RelativeNoise,
    Result,
    Summary,
    l2_flush_bytes,
    measure,
    rotating_buffers,
    summarize,
)

H100_L2 = 50e6  # bytes, as NVIDIA writes it
MIB = 1 << 20


class FakeGPU:
    """A run_once() that plays timings from a list (cycling) and advances a fake clock by each one."""

    def __init__(self, timings, warmup_timings=()):
        self.now = 1000.0  # not zero, so a wall time that forgets the start shows
        self.calls = 0
        self._warmup = list(warmup_timings)
        self._timings = itertools.cycle(timings)

    def clock(self) -> float:
        return self.now

    def __call__(self) -> float:
        self.calls += 1
        seconds = self._warmup.pop(0) if self._warmup else next(self._timings)
        self.now += seconds
        return seconds


# Powers of two add exactly in floating point, so budgets land where the test says.
QUIET = [2**-10]
NOISY = [2**-10, 2**-9]


# summarize


def test_percentiles_interpolate_between_closest_ranks():
    times = list(range(1, 11))
    random.Random(0).shuffle(times)
    summary = summarize(times)
    assert summary.samples == 10
    assert summary.median == pytest.approx(5.5)
    assert summary.p10 == pytest.approx(1.9)  # rank 0.9 of 1..10
    assert summary.p90 == pytest.approx(9.1)  # rank 8.1
    assert summary.relative_spread == pytest.approx(7.2 / 5.5)
    assert (summary.minimum, summary.maximum) == (1, 10)
    assert summary.mean == pytest.approx(5.5)
    assert summary.total == pytest.approx(55)


def test_an_outlier_moves_p90_and_mean_but_not_the_median():
    summary = summarize([4, 1, 3, 2, 100])
    assert summary.median == 3
    assert summary.p10 == pytest.approx(1.4)  # rank 0.4 of [1, 2, 3, 4, 100]
    assert summary.p90 == pytest.approx(61.6)  # rank 3.6: 4 + 0.6 * 96
    assert summary.mean == pytest.approx(22)
    assert summary.relative_spread == pytest.approx((61.6 - 1.4) / 3)


def test_two_samples_have_a_spread():
    summary = summarize([1.0, 3.0])
    assert (summary.p10, summary.median, summary.p90) == pytest.approx((1.2, 2.0, 2.8))
    assert summary.relative_spread == pytest.approx(0.8)


def test_one_sample_has_no_spread():
    summary = summarize([2e-3])
    assert summary.median == summary.p10 == summary.p90 == summary.minimum == summary.maximum == 2e-3
    assert summary.relative_spread == 0.0
    assert summary.total == 2e-3


def test_a_constant_stream_has_zero_spread():
    assert summarize([1e-3] * 7).relative_spread == 0.0


def test_zero_median_with_a_spread_is_infinitely_noisy():
    assert summarize([0.0] * 9 + [1.0]).relative_spread == math.inf
    assert summarize([0.0] * 4).relative_spread == 0.0


def test_summary_dict_is_plain_and_json_ready():
    values = summarize([1, 2, 3]).to_dict()
    assert list(values) == [field for field in Summary.__dataclass_fields__]
    assert type(values["samples"]) is int
    assert all(type(value) is float for key, value in values.items() if key != "samples")
    assert json.loads(json.dumps(values))["median"] == 2.0


@pytest.mark.parametrize("times", [[], [1.0, -1e-6], [float("nan")], [1.0, float("inf")], ["1.0"]])
def test_summarize_rejects_empty_or_bad_timings(times):
    with pytest.raises(ValueError):
        summarize(times)


# RelativeNoise and FixedCount


def samples_until_done(criterion, stream, limit=10_000) -> int | None:
    """How many samples of `stream` it takes for `criterion` to be done, or None within `limit`."""
    criterion.reset()
    for count, seconds in enumerate(itertools.islice(itertools.cycle(stream), limit), start=1):
        criterion.add(seconds)
        if criterion.done():
            return count
    return None


def test_quiet_stream_stops_at_min_samples_when_min_time_is_already_met():
    assert samples_until_done(RelativeNoise(max_noise=0.01, min_time=0.0, min_samples=10), [1e-3]) == 10


def test_quiet_stream_waits_for_min_time():
    # 2**-10 s samples first add up to 50 ms at the 52nd (51.2 of them make 50 ms).
    assert samples_until_done(RelativeNoise(max_noise=0.01, min_time=0.05, min_samples=10), QUIET) == 52


def test_noisy_stream_keeps_going():
    assert samples_until_done(RelativeNoise(max_noise=0.01, min_time=0.0), NOISY) is None


def test_a_few_outliers_do_not_keep_a_quiet_stream_going():
    # One slow sample in twenty sits beyond p90.
    stream = [1e-3] * 19 + [5e-3]
    assert samples_until_done(RelativeNoise(max_noise=0.01, min_time=0.0, min_samples=20), stream) == 20


def test_noise_at_the_limit_is_accepted():
    # With max_noise 0 only a constant stream can stop, and it must.
    assert samples_until_done(RelativeNoise(max_noise=0.0, min_time=0.0, min_samples=3), [1e-3]) == 3


def test_reset_forgets_samples():
    criterion = RelativeNoise(min_time=0.0, min_samples=3)
    for _ in range(3):
        criterion.add(1.0)
    assert criterion.done()
    criterion.reset()
    assert not criterion.done()


def test_fixed_count_stops_after_exactly_n():
    assert samples_until_done(FixedCount(7), NOISY) == 7


@pytest.mark.parametrize(
    "make",
    [
        lambda: RelativeNoise(max_noise=-0.1),
        lambda: RelativeNoise(min_time=float("nan")),
        lambda: RelativeNoise(min_samples=0),
        lambda: FixedCount(0),
    ],
)
def test_criteria_reject_bad_settings(make):
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize("criterion", [RelativeNoise(), FixedCount(3)])
def test_criteria_reject_bad_timings(criterion):
    with pytest.raises(ValueError):
        criterion.add(-1.0)


# measure


def test_warmup_calls_are_discarded():
    gpu = FakeGPU([1e-3], warmup_timings=[5.0, 5.0, 5.0])
    result = measure(gpu, FixedCount(4), warmup=3, warmup_time=0, budget=math.inf, clock=gpu.clock)
    assert gpu.calls == 7
    assert result.summary.samples == 4
    assert result.summary.maximum == 1e-3


def test_stops_by_noise_on_a_quiet_stream():
    gpu = FakeGPU(QUIET)
    result = measure(gpu, RelativeNoise(min_time=0.05, min_samples=10), warmup=0, warmup_time=0, clock=gpu.clock)
    assert isinstance(result, Result)
    assert result.stopped_by == "noise"
    assert result.summary.samples == 52  # as in test_quiet_stream_waits_for_min_time
    assert result.wall_seconds == pytest.approx(52 * 2**-10)


def test_stops_by_budget_on_a_noisy_stream():
    gpu = FakeGPU([0.25, 0.5])
    result = measure(gpu, RelativeNoise(), warmup=0, warmup_time=0, budget=2.0, clock=gpu.clock)
    # Wall time after each sample: 0.25, 0.75, 1.0, 1.5, 1.75, 2.25.
    assert result.stopped_by == "budget"
    assert result.summary.samples == 6
    assert result.wall_seconds == 2.25


def test_budget_counts_warmup():
    gpu = FakeGPU([0.25, 0.5], warmup_timings=[1.0, 0.5])
    result = measure(gpu, RelativeNoise(), warmup=2, warmup_time=0, budget=2.0, clock=gpu.clock)
    # Warm-up spends 1.5 s; then 0.25 and 0.5 reach 2.25.
    assert (result.stopped_by, result.summary.samples) == ("budget", 2)


def test_stops_at_max_samples():
    gpu = FakeGPU(NOISY)
    result = measure(gpu, RelativeNoise(), warmup=1, warmup_time=0, max_samples=25, budget=math.inf, clock=gpu.clock)
    assert (result.stopped_by, result.summary.samples, gpu.calls) == ("max_samples", 25, 26)


def test_a_satisfied_criterion_wins_over_max_samples():
    gpu = FakeGPU(NOISY)
    result = measure(gpu, FixedCount(5), warmup=0, warmup_time=0, max_samples=5, clock=gpu.clock)
    assert (result.stopped_by, result.summary.samples) == ("noise", 5)


@pytest.mark.parametrize("warmup", [0, 3])
def test_always_takes_one_sample_even_with_a_zero_budget(warmup):
    gpu = FakeGPU([1.0])
    result = measure(gpu, RelativeNoise(), warmup=warmup, warmup_time=0, budget=0.0, clock=gpu.clock)
    assert (result.stopped_by, result.summary.samples, gpu.calls) == ("budget", 1, warmup + 1)


def test_the_criterion_is_reset_before_measuring():
    criterion = FixedCount(3)
    for _ in range(3):
        criterion.add(1.0)
    gpu = FakeGPU([1e-3])
    assert measure(gpu, criterion, warmup=0, warmup_time=0, clock=gpu.clock).summary.samples == 3


@pytest.mark.parametrize("bad", [-1e-6, float("nan"), float("inf")])
@pytest.mark.parametrize("warmup", [0, 2])
def test_rejects_bad_timings(bad, warmup):
    # A bad warm-up timing is caught though every later one is good.
    gpu = FakeGPU([1e-3] if warmup else [1e-3, bad], warmup_timings=[bad] if warmup else [])
    with pytest.raises(ValueError):
        measure(gpu, FixedCount(10), warmup=warmup, warmup_time=0, clock=gpu.clock)


@pytest.mark.parametrize("settings", [{"warmup": -1}, {"max_samples": 0}, {"budget": -1.0}, {"budget": float("nan")}])
def test_rejects_bad_settings(settings):
    gpu = FakeGPU([1e-3])
    with pytest.raises(ValueError):
        measure(gpu, FixedCount(1), clock=gpu.clock, **settings)
    assert gpu.calls == 0


# L2 flush and rotation


def test_flush_is_twice_h100_l2_rounded_up_to_a_page():
    flush = l2_flush_bytes(H100_L2)
    assert flush % 4096 == 0
    assert 2 * H100_L2 <= flush < 2 * H100_L2 + 4096
    assert flush == 100_003_840


def test_flush_of_an_exact_page_multiple_is_not_rounded_up():
    assert l2_flush_bytes(50 * MIB) == 100 * MIB
    assert l2_flush_bytes(50 * MIB, factor=3) == 150 * MIB


def test_flush_is_at_least_one_mib():
    assert l2_flush_bytes(256 * 1024) == MIB
    assert l2_flush_bytes(0) == MIB


@pytest.mark.parametrize("args", [(-1.0,), (float("inf"),), (H100_L2, 0.0), (H100_L2, float("nan"))])
def test_flush_rejects_bad_sizes(args):
    with pytest.raises(ValueError):
        l2_flush_bytes(*args)


@pytest.mark.parametrize(
    "working_set, copies",
    [
        (10e6, 10),  # 100 MB / 10 MB
        (30e6, 4),  # ceil(3.33)
        (25e6, 4),  # an exact quotient is not rounded up
        (60e6, 2),
        (100e6, 1),  # twice L2 already evicts itself
        (400e6, 1),
        (1e6, 64),  # 100 copies wanted, capped
        (4096, 64),
    ],
)
def test_rotating_buffers_on_h100(working_set, copies):
    assert rotating_buffers(working_set, H100_L2) == copies


def test_a_working_set_that_fits_in_l2_always_rotates():
    # factor 0.5 alone would say one copy, but a single copy that fits stays resident.
    assert rotating_buffers(25e6, H100_L2, factor=0.5) == 2
    assert rotating_buffers(H100_L2, H100_L2, factor=1.0) == 2
    assert rotating_buffers(60e6, H100_L2, factor=1.0) == 1


def test_float_error_in_the_quotient_does_not_add_a_copy():
    assert 3 * 0.1 / 0.1 > 3  # 3.0000000000000004
    assert rotating_buffers(0.1, 0.1, factor=3) == 3


def test_no_l2_means_one_copy():
    assert rotating_buffers(1e6, 0) == 1


@pytest.mark.parametrize("args", [(0.0, H100_L2), (-1.0, H100_L2), (1e6, -1.0), (1e6, H100_L2, 0.0)])
def test_rotating_buffers_rejects_bad_sizes(args):
    with pytest.raises(ValueError):
        rotating_buffers(*args)


# warm-up by time, dropped samples, clocks


def test_warmup_runs_for_its_time_whatever_one_call_takes():
    gpu = FakeGPU([2**-10])  # about 1 ms a call: 0.025 s of warm-up is 26 calls, not 1
    result = measure(gpu, FixedCount(2), warmup=1, warmup_time=0.025, budget=math.inf, clock=gpu.clock)
    assert result.warmup_calls == math.ceil(0.025 / 2**-10) == 26
    assert gpu.calls == 26 + 2


def test_warmup_takes_at_least_its_count_of_calls_when_one_call_outlasts_its_time():
    gpu = FakeGPU([1.0])
    result = measure(gpu, FixedCount(1), warmup=3, warmup_time=0.025, budget=math.inf, clock=gpu.clock)
    assert (result.warmup_calls, gpu.calls) == (3, 4)


class ClockedGPU(FakeGPU):
    """A FakeGPU whose samples carry a clock reading: the listed clocks in turn, a throttled one dropped."""

    def __init__(self, timings, clocks, max_mhz=1980.0):
        super().__init__(timings)
        self.clocks, self.max_mhz = itertools.cycle(clocks), max_mhz

    def __call__(self):
        from gpuspec.timing import Sample, throttled

        seconds = super().__call__()
        clock = next(self.clocks)
        return Sample(seconds, clock, throttled(clock, self.max_mhz))


def test_throttled_samples_are_dropped_counted_by_reason_and_kept_out_of_the_summary():
    # every third sample at 900 MHz, and that one twice as slow: dropping it leaves a quiet stream
    gpu = ClockedGPU([2**-10, 2**-10, 2**-9], [1980.0, 1975.0, 900.0])
    result = measure(gpu, FixedCount(6), warmup=0, warmup_time=0, budget=math.inf, clock=gpu.clock)
    assert result.summary.samples == 6 and result.summary.maximum == 2**-10
    assert result.dropped == {"throttled: SM clock under 75% of its 1980 MHz maximum": 2} and gpu.calls == 8
    assert result.clock_mhz == {"minimum": 1975.0, "median": 1977.5, "maximum": 1980.0, "readings": 6}
    as_dict = result.to_dict()
    assert as_dict["dropped"] == result.dropped and as_dict["clock_mhz"]["readings"] == 6
    assert as_dict["stopped_by"] == "noise" and as_dict["warmup_calls"] == 0
    json.dumps(as_dict, allow_nan=False)


def test_when_every_sample_is_dropped_the_summary_is_of_the_dropped_ones_and_says_so():
    gpu = ClockedGPU([0.25], [500.0])
    result = measure(gpu, FixedCount(3), warmup=0, warmup_time=0, budget=1.0, clock=gpu.clock)
    assert result.stopped_by == "all_dropped"
    assert result.summary.samples == 4 and result.summary.median == 0.25  # 4 × 0.25 s spends the budget
    assert sum(result.dropped.values()) == 4 and result.clock_mhz == {"minimum": 500.0, "median": 500.0,
                                                                       "maximum": 500.0, "readings": 4}


def test_dropped_samples_count_towards_max_samples_so_a_throttled_gpu_cannot_loop_forever():
    gpu = ClockedGPU([1e-3], [100.0])
    result = measure(gpu, RelativeNoise(), warmup=0, warmup_time=0, max_samples=7, budget=math.inf, clock=gpu.clock)
    assert (result.stopped_by, gpu.calls) == ("all_dropped", 7)


@pytest.mark.parametrize("clock, maximum, expected", [
    (1484.0, 1980.0, True), (1485.0, 1980.0, False), (1980.0, 1980.0, False), (None, 1980.0, False),
    (1000.0, None, False), (float("nan"), 1980.0, False), (0.0, 1980.0, False), (1000.0, float("inf"), False),
])
def test_throttled_is_under_three_quarters_of_the_maximum_and_says_nothing_without_readings(clock, maximum,
                                                                                              expected):
    from gpuspec.timing import throttled

    reason = throttled(clock, maximum)
    assert (reason is not None) is expected
    if expected:
        assert "1980 MHz" in reason and "75%" in reason


def test_a_sample_without_clock_readings_has_no_clock_summary():
    gpu = FakeGPU([1e-3])
    result = measure(gpu, FixedCount(2), warmup=0, warmup_time=0, clock=gpu.clock)
    assert result.clock_mhz is None and "clock_mhz" not in result.to_dict() and result.dropped == {}


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf")])
def test_rejects_a_bad_warmup_time(bad):
    gpu = FakeGPU([1e-3])
    with pytest.raises(ValueError):
        measure(gpu, FixedCount(1), warmup_time=bad, clock=gpu.clock)
    assert gpu.calls == 0


def test_every_stopping_reason_has_words():
    from gpuspec import timing

    reasons = {getattr(timing, n) for n in dir(timing) if n.startswith("STOPPED_")}
    assert reasons == set(timing.STOP_REASONS) and all(timing.STOP_REASONS.values())
