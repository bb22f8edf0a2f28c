"""What an observed figure implies, and what says whether it is possible: a workload written with
`observed 107 tokens/s` (or a time, a launch rate, a FLOP rate, a bandwidth, an MFU, an MBU, a share of a link's
line rate) gets these metrics beside its kind's own, as its kind's figures declare them (Kind.figures).

Rules:
- The observation becomes a time first: a time is itself; a rate is the count it is a rate of / the rate (tokens
  per step, kernels per run, the FLOPs one GPU does: published FLOP rates are per GPU, the bytes moved, a
  collective's buffer: NCCL's algorithm bandwidth); a utilization is first the rate it is a share of: MFU × the
  peak FLOP rate, MBU × HBM's bandwidth, a share of the line rate × the link's bandwidth in one direction (the bus
  bandwidth, which over the ring's wire share is the algorithm bandwidth).
- Everything else divides the model's counts (tokens, kernels, FLOPs, bytes) by that time, and the rates by the
  device's peaks: the utilizations a run at that speed would have.
- Whether it is possible (the checks an observed figure comes with, Kind.observed_limits): a FLOP rate within the
  peak; a bandwidth within HBM's, or where a run repeats back to back and every byte it moves fits in L2, within
  L2's (observed_bandwidth_use: a repeat finds its data there); a collective's bus bandwidth within the line rate
  (an NVLink SHARP all-reduce, where the hardware has it, moves the buffer once each way: its algorithm bandwidth
  within the line rate); what the workload keeps in device memory (memory_needed) within memory_size; and the
  kernels a stream or a step runs per second within twice the rate a real GPU runs small kernels back to back
  (observed_launch_use, over 1 / kernel_gap: a published profile's, so the calibrated source judges it).
"""
from __future__ import annotations

from gpuspec import kinds, units
from gpuspec.kinds.kind import Kind
from gpuspec.model import kernel_sequence
from gpuspec.model.estimate import Estimate, ModelError
from gpuspec.model.values import Value, given, product, quotient, renamed

# NVLink SHARP (the switch reduces an all-reduce) needs Hopper or later with NVSwitch, and NCCL uses it only above
# 4 GPUs (kinds/collective/rules.py, NVLS_MIN_GPUS).
_NVLS_COMPUTE_CAPABILITY = 9.0
_NVLS_MIN_GPUS = 5


def figure(e: Estimate) -> Value:
    observed = e.workload.observed
    return Value("observed", observed.value, tuple(observed.dimension), note=f"as written: {observed.text}",
                 percent=observed.dimension == units.COUNT)


def _peak(e: Estimate, utilization: str) -> Value:
    """What a utilization is a share of."""
    if utilization == "MFU":
        return e["peak_flop_rate"]
    if utilization == "MBU":
        return e.fact("hbm_bandwidth")
    return e["link_bandwidth"]  # `of line rate`: the bus bandwidth over one direction of the link


def _observed_time(figures: dict) -> object:
    def observed_time(e: Estimate) -> Value:
        given_figure = figure(e)
        name = e.workload.observed.figure
        if name not in figures:  # the resolver allows only the kind's figures
            raise ModelError(f"an observed {name} says nothing about {kinds.of(e.workload).article}")
        over = figures[name]
        if over is None:
            return renamed("observed_time", given_figure)
        if e[over].number == 0:  # a rate of nothing the workload does gives it no time
            counted = e[over]
            raise ModelError(f"`observed {e.workload.observed.text}` says nothing about this workload: it is a "
                             f"rate of its {counted.name}, and it has none ({counted.name} = 0)",
                             "write the time it took (`observed 25 µs`) or a rate of what it does")
        if name == "of line rate":
            busbw = product("observed bus bandwidth", given_figure, _peak(e, name))
            algbw = quotient("observed algorithm bandwidth", busbw, e["wire_share"])
            return quotient("observed_time", e[over], algbw, note="the buffer over the algorithm bandwidth")
        if name in ("MFU", "MBU"):
            rate = product("observed rate", given_figure, _peak(e, name),
                           note="per GPU" if name == "MFU" else None)
            return quotient("observed_time", e[over], rate)
        if over == "size":
            note = "a collective's bandwidth is buffer / time"
        else:
            note = "a FLOP rate is per GPU" if name == "FLOP/s" else None
        return quotient("observed_time", e[over], given_figure, note=note)
    return observed_time


def _per_time(name: str, over: str | None, note: str | None = None):
    """`name` = the metric `over` / observed_time."""
    return lambda e: quotient(name, e[over], e["observed_time"], note=note)


def observed_mfu(e: Estimate) -> Value:
    return quotient("observed_mfu", e["observed_flop_rate"], e["peak_flop_rate"], percent=True)


def observed_mbu(e: Estimate) -> Value:
    mbu = quotient("observed_mbu", e["observed_bandwidth"], e.fact("hbm_bandwidth"), percent=True)
    if mbu.number <= 1 or getattr(e.workload, "timing", "alone") == "back_to_back" or kinds.of(e.workload).repeated:
        return mbu
    fits = _l2_fit(e)
    if fits is None or not fits[0]:
        return mbu
    return Value(mbu.name, mbu.number, mbu.dimension, mbu.rule, mbu.inputs, percent=True,
                 note=f"its {fits[1].format()} would fit in L2 ({fits[2].format()}), but a call timed alone starts "
                      "with L2 flushed; if it ran back to back, say so: `set timing = back_to_back`")


def _l2_fit(e: Estimate) -> tuple[bool, Value, Value] | None:
    """(whether the bytes one run moves fit in L2, those bytes, the L2 that holds them) or None where the device
    has no L2 facts: the L2 a kernel can use (l2_usable, measured, in profiles) or else the whole L2."""
    capacity_name = "l2_usable" if e.device.fact("l2_usable") is not None else "l2_size"
    if e.device.fact(capacity_name) is None or e.device.fact("l2_bandwidth") is None:
        return None
    repeated = kinds.of(e.workload).repeated
    moved = renamed("one repeat's bytes", e["bytes_per_repeat"]) if repeated else e["bytes_moved"]
    capacity = _top(e.fact(capacity_name))
    return moved.number <= capacity.number, moved, capacity


def _top(value: Value) -> Value:
    """A fact written as a range at its top: the most the device can do, for a check of what is possible."""
    if value.high is None or value.high == value.number:
        return value
    return Value(value.name, value.high, value.dimension, reference=value.reference,
                 note=f"the top of {value.format()}" + (f"; {value.note}" if value.note else ""))


def observed_bandwidth_use(e: Estimate) -> Value:
    """The observed bandwidth over the fastest memory the data can sit in: L2's where a run repeated back to back
    moves no more bytes than fit in L2 (a repeat finds them there), else HBM's."""
    fits = _l2_fit(e)
    if fits is not None and fits[0]:
        return quotient("observed_bandwidth_use", e["observed_bandwidth"], _top(e.fact("l2_bandwidth")),
                        percent=True, note=f"of L2's bandwidth: the {fits[1].format()} {_a_run(e)} moves fit in "
                                           f"L2 ({fits[2].format()}), and runs back to back find them there")
    note = "of HBM's bandwidth" + (f": the {fits[1].format()} {_a_run(e)} moves do not fit in L2 "
                                   f"({fits[2].format()})" if fits is not None else "")
    return quotient("observed_bandwidth_use", e["observed_bandwidth"], e.fact("hbm_bandwidth"), percent=True,
                    note=note)


def _a_run(e: Estimate) -> str:
    return "one repeat" if kinds.of(e.workload).repeated else "a call"


# How much faster than a real GPU's back-to-back kernel (a profile's kernel_gap) a run of kernels one after another
# may seem before the figure is called impossible. kernel_gap is a measured small kernel (RRZE's 64 kB kernels in a
# CUDA graph, Hazy Research's 1.3 µs on an H100), at one block size, on the part or a sibling standing in for it; the
# fastest column of RRZE's files is 2-3% under it (1.26 µs against 1.285 on an H200, 0.936 against 0.964 on an L40).
# Twice its rate leaves room for kernels smaller than those and faster clocks, and still catches a figure no GPU comes
# near: a unit prefix, a count of something other than kernels.
LAUNCH_RATE_MARGIN = 2


def observed_launch_use(e: Estimate) -> Value:
    """The kernels run per second at the observed time over the fastest a GPU runs kernels one after another: twice
    the rate of a small kernel back to back on a real device (1 / kernel_gap, which only a profile has)."""
    if e.device.fact("kernel_gap") is None:
        raise ModelError(f"observed_launch_use needs kernel_gap, what a real {e.device.name}'s kernels cost back to "
                         "back, which only a profile has (the ideal model's kernels take kernel_floor): gpuspec checks it on the "
                         "calibrated source",
                         "claim it `in practice`: the published profile has kernel_gap")
    gap = e.fact("kernel_gap")
    fastest = quotient("the fastest rate of kernels back to back", given("margin", LAUNCH_RATE_MARGIN, units.COUNT),
                       gap, note=f"{LAUNCH_RATE_MARGIN} × the rate of a real small kernel back to back: no published "
                             "run of kernels comes within 3% of 1 / kernel_gap")
    return quotient("observed_launch_use", e["observed_launches_per_s"], fastest, percent=True,
                    note=f"of {LAUNCH_RATE_MARGIN} / kernel_gap ({gap.format()} a kernel back to back)")


def observed_vs_model(e: Estimate) -> Value:
    return quotient("observed_vs_model", e["observed_time"], e["time"], note="how many times the model's time")


def observed_busbw(e: Estimate) -> Value:
    return product("observed_busbw", e["observed_algbw"], e["wire_share"])


def _nvls_possible(e: Estimate) -> bool:
    """Whether NVLink SHARP may have run this collective: an all-reduce over NVLink across more than 4 GPUs of a
    part that has it (Hopper or later, or a profile that measured it), unless the spec said ring."""
    w = e.workload
    if w.op != "all_reduce" or w.link != "nvlink" or w.gpus < _NVLS_MIN_GPUS or w.algorithm == "ring":
        return False
    if e.device.fact("nvls_bandwidth") is not None:
        return True
    try:
        return float(e.device.text.get("compute_capability", "0")) >= _NVLS_COMPUTE_CAPABILITY
    except ValueError:
        return False


def observed_link_use(e: Estimate) -> Value:
    """The observed bus bandwidth over the link's line rate in one direction: what a ring sends over each link. An
    NVLink SHARP all-reduce sends each GPU's buffer to the switch once and reads the sum back once, so its bus
    bandwidth (NCCL's formula, a ring's) can pass the line rate: there the algorithm bandwidth is what the link
    carries."""
    if _nvls_possible(e):
        return quotient("observed_link_use", e["observed_algbw"], e["link_bandwidth"], percent=True,
                        note="NVLink SHARP may have run it: the switch reduces, so each GPU sends the buffer once "
                             "and the algorithm bandwidth is what its link carries")
    return quotient("observed_link_use", e["observed_busbw"], e["link_bandwidth"], percent=True,
                    note="a ring's bus bandwidth is what each link carries")


def largest_kernel_memory(e: Estimate) -> Value:
    """What a workload of kernels keeps in device memory at the least: its largest kernel's inputs and output, all
    there while it runs (a kernel list's, or the one kernel's bytes read and written)."""
    e["bytes_moved"]  # the kind's rules build their kernel list on the estimate
    kernels = kernel_sequence.built_kernels(e)
    if not kernels or len(kernels) == 1:
        return renamed("memory_needed", e["bytes_moved"])
    i, biggest = max(enumerate(kernels, 1), key=lambda pair: pair[1].bytes_read + pair[1].bytes_written)
    return given("memory_needed", biggest.bytes_read + biggest.bytes_written, units.BYTES,
                 note=f"kernel {i} ({biggest.label}) of {len(kernels)}: its inputs and output, in memory at once")


def memory_filled(e: Estimate) -> Value:
    return quotient("memory_filled", e["memory_needed"], e.fact("memory_size"), percent=True)


# Every workload's: what it keeps in device memory (its kind's rules say it where a workload is not kernels).
MEMORY_RULES = {"memory_needed": largest_kernel_memory, "memory_filled": memory_filled}


def rules_for(kind: Kind, kind_rules: dict) -> dict:
    """A kind's rules with the observed metrics its figures imply (Kind.observed_metrics) added."""
    figures = kind.figures
    rate_of = figures.get("FLOP/s") or figures.get("MFU")
    moved = figures.get("B/s") or figures.get("MBU")
    made = {"observed_time": _observed_time(figures), "observed_vs_model": observed_vs_model,
            "observed_tokens_per_s": _per_time("observed_tokens_per_s", figures.get("tokens/s")),
            "observed_launches_per_s": _per_time("observed_launches_per_s", figures.get("launches/s"),
                                                 "kernels run per second"),
            "observed_launch_use": observed_launch_use,
            "observed_flop_rate": _per_time("observed_flop_rate", rate_of, "per GPU"),
            "observed_mfu": observed_mfu,
            "observed_bandwidth": _per_time("observed_bandwidth", moved, "per GPU"),
            "observed_mbu": observed_mbu, "observed_bandwidth_use": observed_bandwidth_use,
            "observed_algbw": _per_time("observed_algbw", moved),
            "observed_busbw": observed_busbw, "observed_link_use": observed_link_use}
    return {**kind_rules, **{name: made[name] for name in kind.observed_metrics}}
