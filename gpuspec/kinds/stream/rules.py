"""The stream model: a workload launched N times, as the queue between host and GPU plays it out.

Rules:
- Stream launches cost the host `launch_cost` each (the catalog's, or the spec's): an eager PyTorch op; a loop of
  cudaLaunchKernel in C++ (`set launched_from = cpp`) costs `cpp_launch_cost` each; a CUDA graph costs one
  `graph_launch_cost`, and each kernel in it `graph_node_cost` more GPU time.
- The GPU runs each repeat's kernels back to back (their kind's rules with `timing = back_to_back`): on a profile
  with `kernel_gap`, each takes that gap beyond its work; a lone call's latency is not paid again per repeat.
- Replays (`N launches of G`, G a stream `as a CUDA graph` of K kernels): each launch costs the host one
  `graph_launch_cost` and, once it is enqueued and the replay before it has ended, the GPU runs G's K nodes back
  to back (G's busy time): the queue of one "kernel" per launch, as long as a replay.
- A sync per launch (`set sync = per_launch`): the host waits for the GPU after each launch (of all the repeated
  workload's kernels, or of one graph replay), so the next launch starts from an empty queue: the time is the
  launches times the time of one launch played out alone (host launch, then the GPU), nothing overlapped across
  launches.
- The bound is overhead when the host takes longer to launch than the GPU takes to run (the GPU waits on
  the host); otherwise it is the kernel's own bound.
- `utilization` is what a sampling monitor such as nvidia-smi reports: the share of sample windows in which
  any kernel ran. `busy_share` is the share of time the GPU actually ran kernels.
"""
from __future__ import annotations

import importlib

import attrs

from gpuspec import units
from gpuspec.kinds.stream import LAUNCHERS
from gpuspec.model import launches
from gpuspec.model.estimate import Estimate
from gpuspec.model.values import Value, choice, given, product, quotient, renamed, total

COUNT, TIME = units.COUNT, units.TIME


def _inner(e: Estimate) -> Estimate:
    """The repeated workload's own estimate, shared with its claims; timed back to back, as a stream runs it (a
    figure about the workload alone may have been timed alone: the stream's kernels are not)."""
    kernel = e.workload.kernel
    if getattr(kernel, "timing", "back_to_back") != "back_to_back":
        kernel = attrs.evolve(kernel, timing="back_to_back")
    return e.estimate_of(kernel)


def repeat_kernel_times(inner: Estimate) -> list[float]:
    """The GPU time of each kernel of one repeat, in order, as the repeated workload's own rules give them (every
    streamable kind's rules have kernel_times)."""
    return importlib.import_module(f"gpuspec.kinds.{inner.workload.kind}.rules").kernel_times(inner)


def _timeline(e: Estimate) -> launches.Timeline:
    cached = getattr(e, "_timeline", None)
    if cached is None:
        e["launch_cost"]  # first: a device without one (a TPU) says why before any other fact it lacks
        w = e.workload
        if w.replays:  # a replay is one launch, and the GPU runs the graph's nodes back to back
            cached = launches.run([_inner(e)["busy_time"].number], w.count, e["launch_cost"].number,
                                  w.sample_window, synced=w.synced)
            e._timeline = cached  # type: ignore[attr-defined]
            return cached
        pattern = repeat_kernel_times(_inner(e))
        if w.graph:
            cached = launches.run(pattern, w.count, 0.0, w.sample_window, e.fact("graph_launch_cost").number,
                                  e.fact("graph_node_cost").number)
        else:
            gap = _stream_gap(e)
            pattern = [t + gap.number for t in pattern] if gap is not None else pattern
            cached = launches.run(pattern, w.count, e["launch_cost"].number, w.sample_window, synced=w.synced)
        e._timeline = cached  # type: ignore[attr-defined]
    return cached


def repeats(e: Estimate) -> Value:
    return given("repeats", e.workload.count, COUNT)


def kernels(e: Estimate) -> Value:
    return product("kernels", e["repeats"], renamed("kernels_per_repeat", _inner(e)["kernels"]))


def _repeated(e: Estimate, metric: str, name: str | None = None) -> Value:
    """The repeated workload's own `metric`, under a name that says whose it is (`the repeated workload's time`):
    the stream's own metric of that name is another number."""
    return renamed(name or f"the repeated workload's {metric}", _inner(e)[metric])


def launches_(e: Estimate) -> Value:
    if e.workload.graph:
        return given("launches", 1, COUNT, note="one CUDA graph launch for the whole stream")
    if e.workload.replays:
        return Value("launches", e.workload.count, COUNT, "{0}", (e["repeats"],), note="one graph launch per replay")
    return renamed("launches", e["kernels"])


def _stream_gap(e: Estimate) -> Value | None:
    """What a kernel launched from the stream costs the GPU beyond a graph node's, on a profile that has it (the
    ideal model has none)."""
    if e.workload.graph or e.workload.replays or e.device.fact("stream_launch_gap") is None or \
            e.device.fact("kernel_gap") is None:
        return None
    return e.fact("stream_launch_gap")


def kernel_time(e: Estimate) -> Value:
    if e.workload.replays:
        return renamed("kernel_time", _repeated(e, "kernel_time", "a kernel's time in the replayed graph"))
    gap = _stream_gap(e)
    name = "kernel_time" if gap is None else "the repeated kernel's time"
    own = renamed(name, _repeated(e, "time")) if _inner(e)["kernels"].number == 1 else \
        quotient(name, _repeated(e, "time"), renamed("kernels_per_repeat", _inner(e)["kernels"]),
                 note="the average kernel")
    return own if gap is None else total("kernel_time", own, gap, note="launched from the stream, not a graph")


def launch_cost(e: Estimate) -> Value:
    if e.workload.graph or e.workload.replays:
        return e.fact("graph_launch_cost")
    return e.fact(LAUNCHERS[e.workload.launched_from])


def host_time(e: Estimate) -> Value:
    if e.workload.graph:
        return renamed("host_time", e["launch_cost"])
    return product("host_time", e["launches"], e["launch_cost"])


def busy_time(e: Estimate) -> Value:
    if e.workload.replays:
        return product("busy_time", e["repeats"], renamed("busy time of a replay", _inner(e)["busy_time"]))
    if e.workload.graph:
        node_cost = e.fact("graph_node_cost")
        return Value("busy_time", e["kernels"].number * (e["kernel_time"].number + node_cost.number), TIME,
                     "{0} × ({1} + {2})", (e["kernels"], e["kernel_time"], node_cost))
    return product("busy_time", e["kernels"], e["kernel_time"])


def time(e: Estimate) -> Value:
    timeline = _timeline(e)
    synced = e.workload.synced and not e.workload.graph
    if e.workload.replays:
        replay = renamed("busy time of a replay", _inner(e)["busy_time"])
        rule = "the queue: {0} launches at {1} each, {2} on the GPU each"
        return Value("time", timeline.total, TIME, rule, (e["launches"], e["launch_cost"], replay),
                     note="each launch waits for the GPU, then the GPU for the next launch: nothing overlaps"
                          if synced else "host and GPU overlap; each replay starts once launched and once the "
                                         "previous one ends")
    if e.workload.graph:  # one launch, then every node back to back, each graph_node_cost beyond its kernel
        return Value("time", timeline.total, TIME, "{0} + {1} × ({2} + {3})",
                     (e["launch_cost"], e["kernels"], e["kernel_time"], e.fact("graph_node_cost")),
                     note="one graph launch, then every node back to back")
    else:
        rule = "the queue: {0} launches at {1} each, GPU {2} per kernel"
        inputs = (e["launches"], e["launch_cost"], e["kernel_time"])
    if synced:
        note = ("a sync per launch: the host waits for the GPU after each launch of the workload, so each plays "
                "out alone and the times add up; host and GPU overlap only within a launch")
    else:
        note = "host and GPU overlap; each kernel starts once launched and once the previous one ends"
    return Value("time", timeline.total, TIME, rule, inputs, note=note)


def idle_time(e: Estimate) -> Value:
    return Value("idle_time", e["time"].number - e["busy_time"].number, TIME, "{0} - {1}", (e["time"], e["busy_time"]))


def busy_share(e: Estimate) -> Value:
    return quotient("busy_share", e["busy_time"], e["time"], percent=True)


def idle_share(e: Estimate) -> Value:
    return quotient("idle_share", e["idle_time"], e["time"], percent=True)


def sample_window(e: Estimate) -> Value:
    return given("sample_window", e.workload.sample_window, TIME)


def utilization(e: Estimate) -> Value:
    value = _timeline(e).utilization
    return Value("utilization", value, COUNT, "windows of {0} with a kernel running / all windows of {0}",
                 (e["sample_window"],), percent=True, note="what nvidia-smi's GPU utilization would show")


def bound(e: Estimate) -> Value:
    """As decided: overhead where the host takes longer to launch than the GPU to run (the GPU waits on it), else
    the repeated workload's own bound."""
    host, busy = e["host_time"], e["busy_time"]
    if host.number > busy.number:
        return choice("bound", "overhead", "the GPU waits on the host, as {0} > {1}", (host, busy))
    own = _repeated(e, "bound")
    return choice("bound", own.number, "the repeated workload's bound, as {0} ≤ {1}", (host, busy, own))  # type: ignore[arg-type]


def bytes_moved(e: Estimate) -> Value:
    return product("bytes_moved", e["repeats"], e["bytes_per_repeat"])


def flops(e: Estimate) -> Value:
    return product("flops", e["repeats"], _repeated(e, "flops", "FLOPs per repeat"))


def bytes_per_repeat(e: Estimate) -> Value:
    return renamed("bytes_per_repeat", _repeated(e, "bytes_moved"))


RULES = {
    "repeats": repeats, "kernels": kernels, "launches": launches_, "kernel_time": kernel_time,
    "launch_cost": launch_cost, "host_time": host_time, "launch_time": lambda e: renamed("launch_time", e["host_time"]),
    "busy_time": busy_time, "time": time, "idle_time": idle_time, "busy_share": busy_share,
    "idle_share": idle_share, "sample_window": sample_window, "utilization": utilization, "bound": bound,
    "bytes_moved": bytes_moved, "flops": flops, "bytes_per_repeat": bytes_per_repeat,
    # what an observed figure of the stream is measured against: the repeated workload's peak and memory
    "peak_flop_rate": lambda e: renamed("peak_flop_rate", _inner(e)["peak_flop_rate"]),
    "memory_needed": lambda e: renamed("memory_needed", _repeated(e, "memory_needed")),
    # the SMs each repeat's kernel occupies: the repeats run one after another, on as many SMs each
    "sms_used": lambda e: renamed("sms_used", _repeated(e, "sms_used")),
}
