"""Launch streams as a queue: the host enqueues one launch per launch cost and runs ahead; the GPU runs
kernels in order as they arrive. Total time, busy and idle time, and what a sampled utilization would show.
"""
from __future__ import annotations

import math

from gpuspec.model.estimate import ModelError
from gpuspec.record import ValueRecord, record

MAX_KERNELS = 10_000_000  # beyond this the queue is not simulated kernel by kernel


@record
class Timeline(ValueRecord):
    """What the queue does: when the GPU finishes, how long it was busy, and the sampled utilization."""

    total: float      # seconds from the first launch call to the end of the last kernel
    busy: float       # seconds the GPU spent running kernels
    host: float       # seconds the host spent launching
    utilization: float  # share of sample windows in which some kernel ran


def run(pattern: list[float], repeats: int, launch_cost: float, window: float, graph_launch: float | None = None,
        node_cost: float = 0.0) -> Timeline:
    """The queue for `pattern` (GPU seconds per kernel) launched `repeats` times.

    Stream launches: launch i is enqueued by (i + 1) × launch_cost; kernel i starts when it is enqueued and
    kernel i − 1 has finished. As a graph (graph_launch given): one launch of graph_launch seconds, then the
    GPU runs every node back to back, each taking node_cost more than the kernel alone.
    """
    kernels = len(pattern) * repeats
    if kernels > MAX_KERNELS:
        raise ModelError(f"{kernels:,} kernels is more than gpuspec simulates ({MAX_KERNELS:,})")
    if graph_launch is not None:
        durations = [k + node_cost for k in pattern]
        busy = sum(durations) * repeats
        total = graph_launch + busy
        return Timeline(total, busy, graph_launch, _sampled([(graph_launch, total)], total, window))
    if len(set(pattern)) == 1:
        return _uniform(pattern[0], kernels, launch_cost, window)
    intervals, end, index = [], 0.0, 0
    for _ in range(repeats):
        for duration in pattern:
            index += 1
            start = max(end, index * launch_cost)
            end = start + duration
            if intervals and start <= intervals[-1][1]:
                intervals[-1] = (intervals[-1][0], end)
            else:
                intervals.append((start, end))
    busy = sum(pattern) * repeats
    return Timeline(end, busy, kernels * launch_cost, _sampled(intervals, end, window))


def _uniform(duration: float, kernels: int, launch_cost: float, window: float) -> Timeline:
    """The same queue in closed form when every kernel takes the same time."""
    busy = duration * kernels
    if duration >= launch_cost:  # the GPU is the slower side: once started it never waits
        total = launch_cost + busy
        return Timeline(total, busy, kernels * launch_cost, _sampled([(launch_cost, total)], total, window))
    total = kernels * launch_cost + duration  # the host is the slower side: each kernel waits for its launch
    gap = launch_cost - duration
    if gap < window:  # every window between the first kernel and the last holds part of a kernel
        return Timeline(total, busy, kernels * launch_cost, _sampled([(launch_cost, total)], total, window))
    intervals = [((i + 1) * launch_cost, (i + 1) * launch_cost + duration) for i in range(kernels)]
    return Timeline(total, busy, kernels * launch_cost, _sampled(intervals, total, window))


def _sampled(intervals: list[tuple[float, float]], total: float, window: float) -> float:
    """The share of windows [k·w, (k+1)·w) up to `total` that overlap some busy interval (sorted, disjoint)."""
    if total <= 0:
        return 0.0
    windows = max(1, math.ceil(total / window - 1e-9))
    touched, last = 0, -1
    for start, end in intervals:
        first = max(int(start // window), last + 1)
        final = min(int(math.ceil(end / window - 1e-9)) - 1, windows - 1)
        final = max(final, int(start // window))
        if final >= first:
            touched += final - first + 1
            last = final
    return min(1.0, touched / windows)
