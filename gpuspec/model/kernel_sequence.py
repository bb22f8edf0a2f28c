"""Workloads that run as a list of kernels (elementwise, row-wise, attention): the Kernel record, and the rules
that follow from the list alone.

The ideal model: each kernel takes the largest of its t_mem, its compute time and the kernel floor; an eager list
runs its kernels one after another, so their times add up. The bound is whichever of memory, compute and the floor
is largest. The compute time is t_math (FLOPs at the peak) unless the kind counts the instructions its kernels
issue (elementwise work on the plain units: `t_issue`, where a lone add or multiply takes an issue slot that an
FMA fills with two FLOPs, so it runs at half the FMA-counted peak); a kernel's instructions are then its own.

Real hardware (a profile that has `kernel_gap`; the catalog has none, so the ideal model stays as it is): a kernel
costs the GPU a fixed time on top of its work, not instead of it. Run back to back with others, each kernel takes
kernel_gap + the larger of its t_mem and t_math (RRZE's graphs of small kernels on H200: 1.285 µs per node at
64 kB, 1.539 µs at 1.6 MB, 5.56 µs at 26 MB: the fixed part, plus a part that grows with the bytes). A call timed
alone (`set timing = alone`, the default: gpuspec's harness, do_bench, nvbench) pays lone_kernel_latency for its
first kernel instead of kernel_gap, where the profile has it: the events, the start from an idle GPU, the cold
caches (nvbench's cold time of a 64 kB kernel on H200 is 4.3 µs). `set timing = back_to_back` is the GPU time per
call of a long run, or a profiler's durations.
"""
from __future__ import annotations

from typing import Callable

from gpuspec import units
from gpuspec.model.estimate import Estimate
from gpuspec.model.values import Value, choice, given, largest, product, quotient, renamed, total
from gpuspec.record import Record, record


@record
class Kernel(Record):
    """One kernel's traffic and work: what it reads and writes, and its FLOPs."""

    label: str
    bytes_read: int
    bytes_written: int
    flops: int
    instructions: int | None = None  # issued per element and summed, where the kind counts them (elementwise)


def compute_name(e: Estimate) -> str:
    """The metric that is a workload's compute time: t_issue where its kind counts issue slots, else t_math."""
    return "t_issue" if "t_issue" in e else "t_math"


def _compute_seconds(e: Estimate, k: Kernel, peak: float) -> float:
    if k.instructions is not None and "t_issue" in e:
        return k.instructions / e["issue_rate"].number
    return k.flops / peak


def _compute_part(e: Estimate, i: int, k: Kernel) -> Value:
    """Kernel i's compute time in a derivation: its FLOPs at the peak, or its instructions at the issue rate."""
    if k.instructions is not None and "t_issue" in e:
        issued = given(f"instructions of kernel {i}", k.instructions, units.COUNT)
        return quotient(f"t_issue of kernel {i}", issued, e["issue_rate"])
    return quotient(f"t_math of kernel {i}", given(f"FLOPs of kernel {i}", k.flops, units.FLOPS), e["peak_flop_rate"])


def kernel_list(e: Estimate, build: Callable[[object], list[Kernel]]) -> list[Kernel]:
    """The estimate's kernels, built once per estimate by `build(workload)`."""
    cached = getattr(e, "_kernel_list", None)
    if cached is None:
        cached = e._kernel_list = build(e.workload)  # type: ignore[attr-defined]
    return cached


def built_kernels(e: Estimate) -> list[Kernel] | None:
    """The kernel list `kernel_list` built for this estimate, or None where its kind's rules keep none (a GEMM is
    one kernel): what model/observed.py reads a workload's largest kernel from."""
    return getattr(e, "_kernel_list", None)


def traffic(name: str, kernels: list[Kernel], single_note: str) -> Value:
    """bytes_read or bytes_written (`name`) of the list: a kernel's own, or each kernel's in the derivation."""
    if len(kernels) == 1:
        return given(name, getattr(kernels[0], name), units.BYTES, note=single_note)
    verb = "read" if name == "bytes_read" else "written"
    parts = [given(f"{verb} by kernel {i} ({k.label})", getattr(k, name), units.BYTES)
             for i, k in enumerate(kernels, 1)]
    return total(name, *parts)


def kernel_gap(e: Estimate) -> Value | None:
    """The GPU time a kernel run back to back costs beyond its work, where the device's profile has it; None in the
    ideal model (whose kernels take the kernel floor instead)."""
    return e.fact("kernel_gap") if e.device.fact("kernel_gap") is not None else None


def first_kernel_cost(e: Estimate) -> Value | None:
    """The fixed cost of a call's first kernel: lone_kernel_latency where the figure was timed alone and the profile
    has it, else kernel_gap; None in the ideal model. The kernels after the first each cost kernel_gap. Kinds with
    kernels of their own (a GEMM) add it the same way."""
    gap = kernel_gap(e)
    return e.fact("lone_kernel_latency") if gap is not None and pays_lone_latency(e) else gap


def pays_lone_latency(e: Estimate) -> bool:
    """Whether a call's first kernel pays the lone-kernel latency: the figure was timed alone and the profile has
    that latency. (Asked by name: each `e.fact` is a new Value, so comparing them by identity would not tell.)"""
    return getattr(e.workload, "timing", "alone") == "alone" and e.device.fact("lone_kernel_latency") is not None


def l2_bandwidth(e: Estimate, kernels: list[Kernel]) -> Value | None:
    """The L2 bandwidth, where the kernels run back to back on a profile that measured it and every byte they move
    fits in the L2 a kernel can use (l2_usable): a repeated call then finds its data in L2. None otherwise (a call
    timed alone comes after an L2 flush)."""
    if kernel_gap(e) is None or getattr(e.workload, "timing", "alone") != "back_to_back" or \
            e.device.fact("l2_bandwidth") is None or e.device.fact("l2_usable") is None:
        return None
    moved = sum(k.bytes_read + k.bytes_written for k in kernels)
    return e.fact("l2_bandwidth") if moved <= e.device.fact("l2_usable").value else None


def kernel_times(e: Estimate, kernels: list[Kernel]) -> list[float]:
    """The GPU time of each kernel run back to back, in order, as plain numbers (for the launch queue)."""
    bandwidth, peak = e.fact("hbm_bandwidth").number, e["peak_flop_rate"].number
    gap = kernel_gap(e)
    if gap is not None:
        cached = l2_bandwidth(e, kernels)
        bandwidth = cached.number if cached is not None else bandwidth
        return [gap.number + max((k.bytes_read + k.bytes_written) / bandwidth, _compute_seconds(e, k, peak))
                for k in kernels]
    floor = e.fact("kernel_floor").number
    return [max((k.bytes_read + k.bytes_written) / bandwidth, _compute_seconds(e, k, peak), floor) for k in kernels]


def time(e: Estimate, kernels: list[Kernel]) -> Value:
    """The time of the list, with each kernel's time in the derivation when there is more than one."""
    gap = kernel_gap(e)
    if gap is not None:
        return _real_time(e, kernels, gap)
    floor = e.fact("kernel_floor")  # first: a device without one (a TPU) says why before any other fact it lacks
    if len(kernels) == 1:
        return largest("time", e["t_mem"], e[compute_name(e)], floor)
    bandwidth = e.fact("hbm_bandwidth")
    parts = []
    for i, k in enumerate(kernels, 1):
        moved = given(f"bytes of kernel {i}", k.bytes_read + k.bytes_written, units.BYTES)
        parts.append(largest(f"time of kernel {i} ({k.label})", quotient(f"t_mem of kernel {i}", moved, bandwidth),
                             _compute_part(e, i, k), floor))
    return total("time", *parts, note="eager: kernels run one after another")


def _real_time(e: Estimate, kernels: list[Kernel], gap: Value) -> Value:
    """Each kernel's fixed cost + its work, added up: the first kernel's is the lone-kernel latency for a call timed
    alone, every other kernel's the back-to-back gap."""
    first = first_kernel_cost(e)
    timed = "timed alone" if pays_lone_latency(e) else "back to back"
    if getattr(e.workload, "timing", "alone") == "alone" and timed == "back to back":
        timed = "timed alone, but the profile has no lone-kernel latency: counted as back to back"
    cached = l2_bandwidth(e, kernels)
    if cached is not None:
        timed += ", its data in L2"
    if len(kernels) == 1:
        memory = e["t_mem"] if cached is None else quotient("t_l2", e["bytes_moved"], cached,
                                                            note="every byte fits in L2: a repeat finds it there")
        return total("time", first, largest("work", memory, e[compute_name(e)]),
                     note=f"{timed}: a kernel costs the GPU a fixed time beyond its work")
    bandwidth = cached or e.fact("hbm_bandwidth")
    parts = []
    for i, k in enumerate(kernels, 1):
        moved = given(f"bytes of kernel {i}", k.bytes_read + k.bytes_written, units.BYTES)
        memory = f"t_mem of kernel {i}" if cached is None else f"t_l2 of kernel {i}"
        work = largest(f"work of kernel {i}", quotient(memory, moved, bandwidth), _compute_part(e, i, k))
        parts.append(total(f"time of kernel {i} ({k.label})", first if i == 1 else gap, work))
    return total("time", *parts, note=f"eager, {timed}: kernels run one after another, each a fixed time beyond its "
                                      "work")


def t_floor(e: Estimate) -> Value:
    """The fixed costs: kernels × the floor in the ideal model; on a profile with a gap, the first kernel's cost and
    kernel_gap for each of the others."""
    gap = kernel_gap(e)
    if gap is None:
        return product("t_floor", e["kernels"], e.fact("kernel_floor"))
    first, later = first_kernel_cost(e), e["kernels"].number - 1
    if not pays_lone_latency(e):
        return product("t_floor", e["kernels"], gap)
    if not later:
        return renamed("t_floor", first)
    return total("t_floor", first, product("later kernels' gaps", given("later kernels", later, units.COUNT), gap))


def bound(e: Estimate) -> Value:
    candidates = {"memory": e["t_mem"], "compute": e[compute_name(e)], "overhead": e["t_floor"]}
    word = max(candidates, key=lambda k: candidates[k].number)
    return choice("bound", word, "the largest of {0}, {1} and {2}", tuple(candidates.values()))
