"""Stopping criteria and sample statistics for timing: pure Python, used inside generated harnesses."""
from __future__ import annotations

import bisect
import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from typing import Protocol

# The values of Result.stopped_by.
STOPPED_BY_NOISE = "noise"
STOPPED_BY_BUDGET = "budget"
STOPPED_BY_MAX_SAMPLES = "max_samples"
# Every sample was dropped (a throttled clock, a stream hold that timed out): the summary is of the dropped ones.
STOPPED_ALL_DROPPED = "all_dropped"
# What each stopping reason means, in words, for reports.
STOP_REASONS = {
    STOPPED_BY_NOISE: "the criterion was met (enough samples, enough time, spread under the limit)",
    STOPPED_BY_BUDGET: "the time budget ran out first",
    STOPPED_BY_MAX_SAMPLES: "the most samples allowed were taken",
    STOPPED_ALL_DROPPED: "every sample was dropped (the reasons are kept); the summary is of the dropped samples",
}

# Warm-up by time, as triton.testing.do_bench does (25 ms): long enough for clocks to rise and caches to settle,
# however long one call is.
WARMUP_SECONDS = 0.025
# nvbench drops samples taken while the SM clock is under 75% of its maximum: they time a throttled GPU.
THROTTLE_THRESHOLD = 0.75

_PAGE = 4096
_MIN_FLUSH = 1 << 20
_MAX_BUFFERS = 64
# Slack when rounding a quotient up, so 4.000000000000001 (an exact 4 in floating point) stays 4.
_CEIL_SLACK = 1e-9


@dataclasses.dataclass(frozen=True)
class Summary:
    """Statistics of a set of timings, all in seconds except `samples` and `relative_spread`."""

    samples: int  # how many timings
    median: float
    p10: float
    p90: float
    mean: float
    minimum: float
    maximum: float
    relative_spread: float  # (p90 - p10) / median; 0.0 for fewer than 2 samples
    total: float  # sum of the timings (GPU seconds spent)

    def to_dict(self) -> dict:
        """The fields as plain ints and floats, ready for json.dumps (relative_spread may be inf, see summarize)."""
        values = {field.name: float(getattr(self, field.name)) for field in dataclasses.fields(self)}
        values["samples"] = int(self.samples)
        return values


def summarize(times: Sequence[float]) -> Summary:
    """The Summary of `times`, in any order.

    Percentiles interpolate linearly between the closest ranks (rank q*(n-1) of the sorted times, as numpy's
    default). relative_spread is (p90 - p10) / median, 0.0 for fewer than 2 samples; when the median is 0 it is
    0.0 if p10 == p90 and inf otherwise. Raises ValueError on an empty sequence or a negative or non-finite time.
    """
    if len(times) == 0:
        raise ValueError("no timings to summarize")
    for seconds in times:
        _check_time(seconds)
    ordered = sorted(float(t) for t in times)
    total = math.fsum(ordered)
    return Summary(
        samples=len(ordered),
        median=_percentile(ordered, 50),
        p10=_percentile(ordered, 10),
        p90=_percentile(ordered, 90),
        mean=total / len(ordered),
        minimum=ordered[0],
        maximum=ordered[-1],
        relative_spread=_relative_spread(ordered),
        total=total,
    )


def _check_time(seconds: float) -> None:
    """Raise ValueError unless `seconds` is a finite number at or above zero."""
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        raise ValueError(f"a timing must be a number of seconds, got {seconds!r}")
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"a timing must be finite and not negative, got {seconds!r}")


def _percentile(ordered: Sequence[float], percent: int) -> float:
    """The `percent`-th percentile (an int, 0..100) of non-empty sorted values, by linear interpolation."""
    # Integer arithmetic finds the rank exactly: 0.1 * 9 would land a hair off 0.9.
    low, remainder = divmod((len(ordered) - 1) * percent, 100)
    if remainder == 0:
        return ordered[low]
    return ordered[low] + (ordered[low + 1] - ordered[low]) * (remainder / 100)


def _relative_spread(ordered: Sequence[float]) -> float:
    """(p90 - p10) / median of sorted values; 0.0 below 2 samples, inf when the median is 0 but the spread is
    not."""
    if len(ordered) < 2:
        return 0.0
    spread = _percentile(ordered, 90) - _percentile(ordered, 10)
    median = _percentile(ordered, 50)
    if median == 0:
        # Timings at the clock's resolution: a spread over nothing cannot be called quiet.
        return 0.0 if spread == 0 else math.inf
    return spread / median


class StoppingCriterion(Protocol):
    """Decides when enough timings were taken: reset(), then add() each timing and ask done()."""

    def reset(self) -> None: ...

    def add(self, seconds: float) -> None: ...

    def done(self) -> bool: ...


class RelativeNoise:
    """Stop once the relative spread of the samples is under max_noise and at least min_time of samples were taken.

    The noise is (p90 - p10) / median of the samples so far, the same as Summary.relative_spread: the 10% tails
    on either side are ignored, so a few outliers (a clock-boost change, a preempted launch) do not keep it going.
    It is done when all of: at least min_samples samples, their sum at least min_time seconds, and noise <=
    max_noise.
    """

    def __init__(self, max_noise: float = 0.01, min_time: float = 0.05, min_samples: int = 10):
        if not (math.isfinite(max_noise) and max_noise >= 0):
            raise ValueError(f"max_noise must be finite and not negative, got {max_noise!r}")
        if not (math.isfinite(min_time) and min_time >= 0):
            raise ValueError(f"min_time must be finite and not negative, got {min_time!r}")
        if min_samples < 1:
            raise ValueError(f"min_samples must be at least 1, got {min_samples!r}")
        self.max_noise = max_noise
        self.min_time = min_time
        self.min_samples = min_samples
        self.reset()

    def reset(self) -> None:
        """Forget every sample."""
        self._ordered: list[float] = []
        self._total = 0.0

    def add(self, seconds: float) -> None:
        """Record one timing; ValueError if it is negative or not finite."""
        _check_time(seconds)
        # Kept sorted as they come so done() reads percentiles without sorting thousands of samples each time.
        bisect.insort(self._ordered, float(seconds))
        self._total += seconds

    def noise(self) -> float:
        """The relative spread of the samples so far (0.0 below 2 samples)."""
        return _relative_spread(self._ordered)

    def done(self) -> bool:
        """True once min_samples, min_time and max_noise are all met."""
        if len(self._ordered) < self.min_samples or self._total < self.min_time:
            return False
        return self.noise() <= self.max_noise


class FixedCount:
    """Stop after exactly n samples (for tests and quick runs)."""

    def __init__(self, n: int):
        if n < 1:
            raise ValueError(f"n must be at least 1, got {n!r}")
        self.n = n
        self.reset()

    def reset(self) -> None:
        """Forget every sample."""
        self._count = 0

    def add(self, seconds: float) -> None:
        """Count one timing; ValueError if it is negative or not finite."""
        _check_time(seconds)
        self._count += 1

    def done(self) -> bool:
        """True once n samples were added."""
        return self._count >= self.n


@dataclasses.dataclass(frozen=True)
class Sample:
    """One timing with what was seen while it was taken: the SM clock (MHz, None where it cannot be read), and
    `dropped`, the reason it must not count (a throttled clock, a stream hold that timed out), or None."""

    seconds: float
    clock_mhz: float | None = None
    dropped: str | None = None


def throttled(clock_mhz: float | None, max_mhz: float | None, threshold: float = THROTTLE_THRESHOLD) -> str | None:
    """Why a sample taken at `clock_mhz` is throttled (under `threshold` × `max_mhz`), or None: also when either
    clock is unknown, not finite or not positive (no reading says nothing)."""
    if clock_mhz is None or max_mhz is None:
        return None
    if not (math.isfinite(clock_mhz) and math.isfinite(max_mhz) and clock_mhz > 0 and max_mhz > 0):
        return None
    if clock_mhz < threshold * max_mhz:
        return f"throttled: SM clock under {threshold:.0%} of its {max_mhz:g} MHz maximum"
    return None


@dataclasses.dataclass(frozen=True)
class Result:
    """What measure() found: the timings' Summary, why it stopped, the wall time the whole call took, how many
    warm-up calls ran, the samples dropped by reason, and the SM clock (MHz) over the kept samples."""

    summary: Summary
    stopped_by: str  # one of STOP_REASONS
    wall_seconds: float
    warmup_calls: int = 0
    dropped: dict[str, int] = dataclasses.field(default_factory=dict)
    clock_mhz: dict[str, float] | None = None  # minimum, median, maximum and readings; None without readings

    def to_dict(self) -> dict:
        """The summary's fields, with stopped_by, warmup_calls, dropped and clock_mhz beside them: JSON-ready."""
        values = self.summary.to_dict()
        values.update(stopped_by=self.stopped_by, warmup_calls=int(self.warmup_calls),
                      dropped={reason: int(count) for reason, count in self.dropped.items()},
                      wall_seconds=float(self.wall_seconds))
        if self.clock_mhz is not None:
            values["clock_mhz"] = dict(self.clock_mhz)
        return values


def measure(
    run_once: Callable[[], float | Sample],
    criterion: StoppingCriterion,
    *,
    warmup: int = 1,
    warmup_time: float = WARMUP_SECONDS,
    max_samples: int = 10_000,
    budget: float = 10.0,
    clock: Callable[[], float] = time.perf_counter,
) -> Result:
    """Warm up, then call run_once() repeatedly, each call returning one timing in seconds (or a Sample), until
    criterion.done(), max_samples timings, or `budget` seconds of wall time (measured with `clock`) have passed —
    at least one timing is always taken. Raises ValueError if run_once returns a negative or non-finite timing.

    Warm-up calls run_once() at least `warmup` times and until `warmup_time` seconds of wall time have passed, and
    discards them. The criterion is reset first. The budget counts from the start of the call, warm-up included, so
    it bounds the whole call; warm-up always runs in full even past the budget. A Sample with a `dropped` reason is
    counted by reason and kept out of the statistics and the criterion (it still counts towards max_samples and
    spends budget); if every sample was dropped, the summary is of the dropped ones and stopped_by says so.
    Stopping reasons are checked after each timing in the order noise, max_samples, budget: a criterion satisfied
    by the last timing reports "noise". wall_seconds is the whole call, warm-up included. Warm-up timings are
    checked too: a bad one means a broken timer.
    """
    if warmup < 0:
        raise ValueError(f"warmup must not be negative, got {warmup!r}")
    if not (math.isfinite(warmup_time) and warmup_time >= 0):
        raise ValueError(f"warmup_time must be finite and not negative, got {warmup_time!r}")
    if max_samples < 1:
        raise ValueError(f"max_samples must be at least 1, got {max_samples!r}")
    if not (budget >= 0):  # also rejects nan
        raise ValueError(f"budget must not be negative, got {budget!r}")
    start = clock()
    criterion.reset()
    warmup_calls = 0
    while warmup_calls < warmup or clock() - start < warmup_time:
        _as_sample(run_once())
        warmup_calls += 1
    kept: list[Sample] = []
    dropped: list[Sample] = []
    while True:
        sample = _as_sample(run_once())
        if sample.dropped is None:
            kept.append(sample)
            criterion.add(sample.seconds)
        else:
            dropped.append(sample)
        if kept and criterion.done():
            stopped_by = STOPPED_BY_NOISE
        elif len(kept) + len(dropped) >= max_samples:
            stopped_by = STOPPED_BY_MAX_SAMPLES
        elif clock() - start >= budget:
            stopped_by = STOPPED_BY_BUDGET
        else:
            continue
        break
    if not kept:
        stopped_by, kept = STOPPED_ALL_DROPPED, dropped
    reasons: dict[str, int] = {}
    for sample in dropped:
        reasons[sample.dropped] = reasons.get(sample.dropped, 0) + 1
    return Result(summary=summarize([s.seconds for s in kept]), stopped_by=stopped_by,
                  wall_seconds=clock() - start, warmup_calls=warmup_calls, dropped=reasons,
                  clock_mhz=_clocks([s.clock_mhz for s in kept]))


def _as_sample(value: float | Sample) -> Sample:
    """A Sample of what run_once returned, its timing checked (ValueError if negative or not finite)."""
    sample = value if isinstance(value, Sample) else Sample(value)
    _check_time(sample.seconds)
    return sample


def _clocks(readings: Sequence[float | None]) -> dict[str, float] | None:
    """Minimum, median and maximum of the finite clock readings, and how many there were; None without any."""
    found = sorted(float(r) for r in readings if r is not None and math.isfinite(r))
    if not found:
        return None
    return {"minimum": found[0], "median": _percentile(found, 50), "maximum": found[-1], "readings": len(found)}


def l2_flush_bytes(l2_bytes: float, factor: float = 2.0) -> int:
    """Bytes of a buffer to overwrite between samples so the next sample starts with a cold L2: factor × L2 size,
    rounded up to a multiple of 4096, at least 1 MiB.

    Factor 2 because L2 replacement is not strict LRU: writing just one L2's worth can leave some old lines behind.
    Raises ValueError if l2_bytes is negative or not finite, or factor is not positive and finite.
    """
    if not (math.isfinite(l2_bytes) and l2_bytes >= 0):
        raise ValueError(f"l2_bytes must be finite and not negative, got {l2_bytes!r}")
    if not (math.isfinite(factor) and factor > 0):
        raise ValueError(f"factor must be finite and positive, got {factor!r}")
    pages = math.ceil(factor * l2_bytes / _PAGE - _CEIL_SLACK)
    return max(pages * _PAGE, _MIN_FLUSH)


def rotating_buffers(working_set_bytes: float, l2_bytes: float, factor: float = 2.0) -> int:
    """How many copies of a working set to rotate through so that consecutive samples never find their inputs in L2:
    ceil(factor × L2 / working set), at least 1, and at least 2 when the working set fits in L2 (a single copy that
    fits would still be resident when the next sample reads it, whatever `factor` says).

    Capped at 64: a working set under factor × L2 / 64 would need hundreds or thousands of copies, and such a small
    kernel is bound by launch overhead anyway, so at the cap consecutive samples may find some inputs in L2; flush
    with a buffer of l2_flush_bytes() instead when that matters. Raises ValueError unless working_set_bytes is
    positive and finite, l2_bytes finite and not negative, and factor positive and finite.
    """
    if not (math.isfinite(working_set_bytes) and working_set_bytes > 0):
        raise ValueError(f"working_set_bytes must be finite and positive, got {working_set_bytes!r}")
    if not (math.isfinite(l2_bytes) and l2_bytes >= 0):
        raise ValueError(f"l2_bytes must be finite and not negative, got {l2_bytes!r}")
    if not (math.isfinite(factor) and factor > 0):
        raise ValueError(f"factor must be finite and positive, got {factor!r}")
    copies = max(math.ceil(factor * l2_bytes / working_set_bytes - _CEIL_SLACK), 1)
    if working_set_bytes <= l2_bytes:
        copies = max(copies, 2)
    return min(copies, _MAX_BUFFERS)
