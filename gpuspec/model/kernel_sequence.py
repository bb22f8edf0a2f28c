"""Workloads that run as a list of kernels (elementwise, row-wise, attention): the Kernel record, and the rules
that follow from the list alone.

Each kernel takes the largest of its t_mem, its t_math and the kernel floor; an eager list runs its kernels one
after another, so their times add up. The bound is whichever of memory, compute and the floor is largest.
"""
from __future__ import annotations

from typing import Callable

from gpuspec import units
from gpuspec.model.estimate import Estimate
from gpuspec.model.values import Value, choice, given, largest, product, quotient, total
from gpuspec.record import Record, record


@record
class Kernel(Record):
    """One kernel's traffic and work: what it reads and writes, and its FLOPs."""

    label: str
    bytes_read: int
    bytes_written: int
    flops: int


def kernel_list(e: Estimate, build: Callable[[object], list[Kernel]]) -> list[Kernel]:
    """The estimate's kernels, built once per estimate by `build(workload)`."""
    cached = getattr(e, "_kernel_list", None)
    if cached is None:
        cached = e._kernel_list = build(e.workload)  # type: ignore[attr-defined]
    return cached


def traffic(name: str, kernels: list[Kernel], single_note: str) -> Value:
    """bytes_read or bytes_written (`name`) of the list: a kernel's own, or each kernel's in the derivation."""
    if len(kernels) == 1:
        return given(name, getattr(kernels[0], name), units.BYTES, note=single_note)
    verb = "read" if name == "bytes_read" else "written"
    parts = [given(f"{verb} by kernel {i} ({k.label})", getattr(k, name), units.BYTES)
             for i, k in enumerate(kernels, 1)]
    return total(name, *parts)


def kernel_times(e: Estimate, kernels: list[Kernel]) -> list[float]:
    """The GPU time of each kernel, in order, as plain numbers (for the launch queue)."""
    bandwidth, peak = e.fact("hbm_bandwidth").number, e["peak_flop_rate"].number
    floor = e.fact("kernel_floor").number
    return [max((k.bytes_read + k.bytes_written) / bandwidth, k.flops / peak, floor) for k in kernels]


def time(e: Estimate, kernels: list[Kernel]) -> Value:
    """The time of the list, with each kernel's time in the derivation when there is more than one."""
    if len(kernels) == 1:
        return largest("time", e["t_mem"], e["t_math"], e.fact("kernel_floor"))
    bandwidth, peak, floor = e.fact("hbm_bandwidth"), e["peak_flop_rate"], e.fact("kernel_floor")
    parts = []
    for i, k in enumerate(kernels, 1):
        moved = given(f"bytes of kernel {i}", k.bytes_read + k.bytes_written, units.BYTES)
        work = given(f"FLOPs of kernel {i}", k.flops, units.FLOPS)
        parts.append(largest(f"time of kernel {i} ({k.label})", quotient(f"t_mem of kernel {i}", moved, bandwidth),
                             quotient(f"t_math of kernel {i}", work, peak), floor))
    return total("time", *parts, note="eager: kernels run one after another")


def t_floor(e: Estimate) -> Value:
    return product("t_floor", e["kernels"], e.fact("kernel_floor"))


def bound(e: Estimate) -> Value:
    candidates = {"memory": e["t_mem"], "compute": e["t_math"], "overhead": e["t_floor"]}
    word = max(candidates, key=lambda k: candidates[k].number)
    return choice("bound", word, "the largest of {0}, {1} and {2}", tuple(candidates.values()))
