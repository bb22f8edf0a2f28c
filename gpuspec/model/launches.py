"""Launch streams as a queue: the host enqueues one launch per launch cost and runs ahead; the GPU runs
kernels in order as they arrive. Total time, busy and idle time, and what a sampled utilization would show.

The queue is solved in closed form, so the work does not grow with the counts a spec writes (launches, layers,
kernels per layer, sample windows):
- a pattern is a list of runs of equal kernels; within a run the GPU first works through what queued up, then
  either keeps up with the host (no gaps) or waits the same time before every kernel (gaps in an arithmetic
  progression);
- repeating a pattern, the second repeat either ends as it began (every later repeat is the second one shifted
  by the host's time per repeat) or never waits (the GPU is the slower side from then on);
- sampled utilization counts the windows that lie wholly in an idle gap, and a progression of gaps is counted
  with a floor sum;
- with a sync per launch (the host waits for the GPU after each repeat's launches), every repeat plays out as
  the first one does from an empty queue, one after another: the first repeat's timeline, shifted by its own
  length for each later one.
Times are exact fractions (floats converted without rounding), so the shifted repeats line up exactly.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import NamedTuple

from gpuspec import units
from gpuspec.model.estimate import ModelError

# A window counts as idle when it lies in a gap to within this share of a window (float times are not exact).
_SLACK = Fraction(1, 10**9)
# Gaps repeated along two counts (kernels of a run, repeats of the pattern) are counted one row at a time, along
# the shorter count; past this many rows the sampled utilization is refused rather than computed slowly.
MAX_GAP_ROWS = 10_000


class Timeline:
    """What the queue does: when the GPU finishes, how long it was busy, and the sampled utilization (counted
    when first asked for: the one figure whose counting can be refused)."""

    def __init__(self, end: Fraction, busy: Fraction, host: Fraction, gaps: list[_Gap], window: Fraction):
        self.total = float(end)  # seconds from the first launch call to the end of the last kernel
        self.busy = float(busy)  # seconds the GPU spent running kernels
        self.host = float(host)  # seconds the host spent launching
        self._end, self._gaps, self._window = end, gaps, window

    @functools.cached_property
    def utilization(self) -> float:
        """The share of sample windows in which some kernel ran."""
        return _utilization(self._gaps, self._end, self._window)


Run = tuple[float, int]  # (GPU seconds of each kernel, how many kernels in a row)


def runs(pattern: Sequence[float]) -> list[Run]:
    """`pattern` (GPU seconds per kernel, in order) as runs of equal kernels."""
    found: list[Run] = []
    for duration in pattern:
        if found and found[-1][0] == duration:
            found[-1] = (duration, found[-1][1] + 1)
        else:
            found.append((duration, 1))
    return found


def run(pattern: Sequence[float] | Sequence[Run], repeats: int, launch_cost: float, window: float,
        graph_launch: float | None = None, node_cost: float = 0.0, synced: bool = False) -> Timeline:
    """The queue for `pattern` launched `repeats` times. The pattern lists the GPU seconds of each kernel, or
    runs of equal kernels as (seconds, count) pairs.

    Stream launches: launch i (from 1) is enqueued at i × launch_cost; kernel i starts when it is enqueued and
    kernel i − 1 has finished. As a graph (graph_launch given): one launch of graph_launch seconds, then the
    GPU runs every node back to back, each taking node_cost more than the kernel alone. `synced`: after each
    repeat's launches the host waits until the GPU has run them, so repeat r + 1 starts, from an empty queue, when
    repeat r ends (a graph is one launch: it waits once, at the end, which changes nothing).
    """
    if synced and graph_launch is None and repeats > 1:
        one = run(pattern, 1, launch_cost, window)
        shift = one._end
        gaps = [gap.repeated(shift, repeats) for gap in one._gaps]
        return Timeline(shift * repeats, Fraction(one.busy) * repeats, Fraction(one.host) * repeats, gaps,
                        Fraction(window))
    if pattern and isinstance(pattern[0], tuple):
        pattern_runs = [(d, int(c)) for d, c in pattern if c > 0]  # type: ignore[misc]
    else:
        pattern_runs = runs(pattern)  # type: ignore[arg-type]
    given = [d for d, _ in pattern_runs] + [launch_cost, window, node_cost, graph_launch or 0.0]
    if not all(math.isfinite(number) for number in given):
        raise OverflowError("a kernel time, launch cost or sample window is not a finite number")
    per_repeat = sum(c for _, c in pattern_runs)
    if graph_launch is not None:
        busy = repeats * sum((Fraction(d) + Fraction(node_cost)) * c for d, c in pattern_runs)
        total = Fraction(graph_launch) + busy
        gaps = [_Gap(Fraction(0), Fraction(graph_launch))]
        return Timeline(total, busy, Fraction(graph_launch), gaps, Fraction(window))
    queue = _Queue(Fraction(launch_cost))
    for duration, count in pattern_runs:
        queue.add(Fraction(duration), count)
    gaps, end = queue.gaps, queue.end
    if repeats > 1:
        first_lag = queue.end - queue.launched * queue.launch_cost
        queue.gaps = []
        for duration, count in pattern_runs:
            queue.add(Fraction(duration), count)
        later = repeats - 2  # repeats after the second
        if queue.end - queue.launched * queue.launch_cost == first_lag:
            # the second repeat ends as it began: every later one is the same, shifted by the host's time per repeat
            shift = per_repeat * queue.launch_cost
            gaps = gaps + [gap.repeated(shift, later + 1) for gap in queue.gaps]
            end = queue.end + later * shift
        else:
            # the GPU fell further behind: from the second repeat on it never waits (no gaps), and each later
            # repeat adds its own GPU time
            gaps = gaps + queue.gaps
            end = queue.end + later * sum(Fraction(d) * c for d, c in pattern_runs)
    busy = repeats * sum(Fraction(d) * c for d, c in pattern_runs)
    host = per_repeat * repeats * Fraction(launch_cost)
    return Timeline(end, busy, host, gaps, Fraction(window))


class _Gap(NamedTuple):
    """An idle stretch of `length` seconds from `start`, repeated at start + Σ kᵢ·stepᵢ (each kᵢ < countᵢ)."""

    start: Fraction
    length: Fraction
    steps: tuple = ()  # ((step seconds, count), ...): at most two

    def repeated(self, step: Fraction, count: int) -> _Gap:
        return _Gap(self.start, self.length, (*self.steps, (step, count)))


class _Queue:
    """The queue as it plays out run by run: when the GPU is next free, how many launches were enqueued, and the
    gaps in which the GPU waited."""

    def __init__(self, launch_cost: Fraction):
        self.launch_cost = launch_cost
        self.end = Fraction(0)
        self.launched = 0
        self.gaps: list[_Gap] = []

    def add(self, duration: Fraction, count: int) -> None:
        """`count` kernels of `duration` seconds each."""
        cost = self.launch_cost
        enqueued = (self.launched + 1) * cost  # when the first of them is enqueued
        start = max(self.end, enqueued)
        if start > self.end:
            self.gaps.append(_Gap(self.end, start - self.end))
        self.launched += count
        if duration >= cost:  # each kernel lasts at least a launch: once started, the GPU never waits
            self.end = start + count * duration
            return
        # The GPU catches up by cost - duration per kernel: the first `caught_up` run back to back, the rest wait
        caught_up = min(count, math.floor((start - enqueued) / (cost - duration)) + 1)
        if caught_up == count:
            self.end = start + count * duration
            return
        free = start + caught_up * duration
        ready = enqueued + caught_up * cost  # the launch the GPU waits for first
        self.gaps.append(_Gap(free, ready - free))
        waiting = count - caught_up
        if waiting > 1:
            self.gaps.append(_Gap(ready + duration, cost - duration, ((cost, waiting - 1),)))
        self.end = ready + (waiting - 1) * cost + duration


def _utilization(gaps: list[_Gap], total: Fraction, window: Fraction) -> float:
    """The share of windows [k·w, (k+1)·w) up to `total` that overlap some kernel: all windows but those that lie
    wholly in an idle gap."""
    if total <= 0:
        return 0.0
    windows = max(1, math.ceil(total / window - _SLACK))
    idle = sum(_idle_windows(gap, window) for gap in gaps)
    return min(1.0, max(0.0, (windows - idle) / windows))


def _idle_windows(gap: _Gap, window: Fraction) -> int:
    """Windows that lie wholly inside the gap (each of its repeats): k from ⌈start/w⌉ to ⌊end/w⌋ - 1."""
    if gap.length / window + 2 * _SLACK < 1:
        return 0  # too short to hold a window: and then the count below could come out as -1
    start, end = gap.start / window - _SLACK, (gap.start + gap.length) / window + _SLACK
    if not gap.steps:
        return math.floor(end) - math.ceil(start)
    steps = [(step / window, count) for step, count in gap.steps]
    if len(steps) == 1:
        (step, count), = steps
        return _floor_sum(count, step, end) + _floor_sum(count, -step, -start)
    (outer, rows), (inner, columns) = sorted(steps, key=lambda s: s[1])
    if rows > MAX_GAP_ROWS:
        length, width = (units.format_si(float(x), units.TIME) for x in (gap.length, window))
        raise ModelError(f"the sampled utilization of this queue is more than gpuspec computes: it has {rows:,} × "
                         f"{columns:,} idle gaps of {length}, longer than the sample window ({width}), and counting "
                         f"the windows in them takes {rows:,} steps (gpuspec takes at most {MAX_GAP_ROWS:,})",
                         "a sample window longer than the gaps (`set sample_window = 1 ms`) needs no counting; so do "
                         "fewer layers or fewer kernels per layer")
    # one row at a time, in whole numbers over a common denominator
    scale = math.lcm(inner.denominator, outer.denominator, start.denominator, end.denominator)
    a, o, s, e = (int(x * scale) for x in (inner, outer, start, end))
    return sum(_floor_sum_integers(columns, scale, a, e + row * o)
               + _floor_sum_integers(columns, scale, -a, -s - row * o) for row in range(rows))


def _floor_sum(n: int, slope: Fraction, offset: Fraction) -> int:
    """Σ ⌊slope·k + offset⌋ for k from 0 to n - 1, in O(log) steps."""
    scale = math.lcm(slope.denominator, offset.denominator)
    return _floor_sum_integers(n, scale, int(slope * scale), int(offset * scale))


def _floor_sum_integers(n: int, m: int, a: int, b: int) -> int:
    """Σ ⌊(a·k + b) / m⌋ for k from 0 to n - 1 (m > 0), by the Euclid-like reduction (as AtCoder's floor_sum)."""
    if n <= 0:
        return 0
    result = n * (n - 1) // 2 * (a // m) + n * (b // m)
    a, b = a % m, b % m
    while True:  # here 0 ≤ a, b < m
        top = a * n + b
        if top < m:
            return result
        n, b = divmod(top, m)
        m, a = a, m
        result += n * (n - 1) // 2 * (a // m) + n * (b // m)
        a, b = a % m, b % m
