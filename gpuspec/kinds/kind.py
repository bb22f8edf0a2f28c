"""Kind: what every kind of workload declares about itself, as data; and what every kind's record shares (the
observed figure).

A kind's stages live beside its declaration (gpuspec/kinds/<kind>/resolve.py, rules.py, harness.py) and are
imported by the stage that needs them; a declaration is cheap to import, so the registry holds every kind's.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

from attrs import field

from gpuspec import nodes, units
from gpuspec.record import ValueRecord, as_tuple, record


@record
class Observation(ValueRecord):
    """A figure someone observed for a workload (`observed 107 tokens/s`, `observed 60% MFU`), in SI units (a
    utilization as a fraction): which figure it is (a key of FIGURES), its dimension, and the text as written. The
    model derives from it what it implies (time, rates, utilizations)."""

    value: float
    dimension: tuple[int, ...] = field(converter=as_tuple)
    figure: str = "time"
    text: str = field(eq=False, default="")  # as written, for derivations


# The figures an observation may be, each with what it is in words (for help). A kind's `figures` names those it
# takes, each with the metric the figure is a rate of (None for a time). A utilization is a rate over a peak: MFU
# the FLOP rate over the device's peak, MBU the bandwidth over HBM's, `of line rate` a collective's bus bandwidth
# over its link's line rate in one direction; it is written as a percentage and the words that name it.
FIGURES = {
    "time": "a time (`9.35 ms`)",
    "tokens/s": "a token rate (`107 tokens/s`)",
    "launches/s": "a launch rate (`250,000 launches/s`)",
    "FLOP/s": "a FLOP rate per GPU (`400 TFLOP/s`)",
    "B/s": "a bandwidth (`1.4 TB/s`)",
    "MFU": "an MFU (`40% MFU`)",
    "MBU": "an MBU (`69% MBU`)",
    "of line rate": "a share of the link's line rate (`82% of line rate`)",
}
# What each figure's unit is, and the nouns a count per second may count (`launches/s` and `kernels/s` are one).
FIGURE_DIMENSIONS = {"time": units.TIME, "tokens/s": units.TOKEN_RATE, "launches/s": units.TOKEN_RATE,
                     "FLOP/s": units.FLOP_RATE, "B/s": units.BANDWIDTH, "MFU": units.COUNT, "MBU": units.COUNT,
                     "of line rate": units.COUNT}
RATE_NOUNS = {"tokens": "tokens/s", "token": "tokens/s", "launches": "launches/s", "launch": "launches/s",
              "kernels": "launches/s", "kernel": "launches/s"}
UTILIZATIONS = ("MFU", "MBU", "of line rate")


def observed_field():
    """The `observed` field of every record: keyword-only, so that every workload takes it the same way; part of
    equality, since two observations of one workload imply different things."""
    return field(default=None, kw_only=True)


# How a figure about kernels was timed (`set timing = ...`), and what each word means. `alone` is how gpuspec's
# harness times (templates/timer.py.jinja), as triton.testing.do_bench and nvbench do: one call between two CUDA
# events, the L2 flushed and the host's launch kept out. A loop's wall time, host launches included, is a stream:
# `N launches of W`.
TIMINGS = {
    "alone": "one call timed on its own after an L2 flush, between CUDA events (gpuspec's harness, do_bench, "
             "nvbench; the default)",
    "back_to_back": "the GPU time of each call in a long run of calls back to back (a loop or a CUDA graph timed "
                    "on the GPU and divided by its count, or a profiler's kernel durations)",
}


# The metrics every workload has (gpuspec/model/observed.py's MEMORY_RULES), and those of the roofline, which every
# kind of kernels shares (gpuspec/model/roofline.py).
MEMORY_METRICS = ("memory_needed", "memory_filled")
ROOFLINE_METRICS = ("bytes_moved", "intensity", "ridge_point", "t_mem", "t_math", "achieved_bandwidth",
                    "bandwidth_utilization", "achieved_flop_rate", "flop_utilization")


class Kind:
    """A kind of workload, as every stage needs to know it (a plain class: the registry builds eight at start-up).

    figures: the observed figures it takes (keys of FIGURES), each with the metric the figure is a rate of (the
    figure divides it into a time; a utilization, times its peak, does) or None for a time itself. The resolver
    allows those; the model's observed rules and the checks that come with a figure follow from the same table
    (gpuspec/model/observed.py).
    repeated: a run repeats the same kernels back to back (a stream), so data that fits in L2 stays there.
    metrics: the metrics of its rules (rules.py's RULES), which the resolver knows before any rule is loaded.
    dtype_help: what to write for it to run in another dtype (`{dtype}`), where a device lacks its dtype's rate.
    measured_leaves: the metrics a harness measures. The measured source is the model's rules with these leaves
    replaced by measurements, so a metric is measured when its model value depends on one of them.
    """

    __slots__ = ("name", "record", "recognizes", "needs_tensors", "noun", "modes", "figures", "streamable",
                 "timeline", "measured_leaves", "unmeasured", "repeated", "metrics", "dtype_help")

    def __init__(self, name: str, record: type, recognizes: Callable[[nodes.Expr], bool], *,
                 needs_tensors: bool = False, noun: str = "", modes: Mapping[str, str] | None = None,
                 figures: Mapping[str, str | None] | None = None, streamable: bool = False,
                 timeline: bool = False, measured_leaves: tuple[str, ...] = (), unmeasured: str = "",
                 repeated: bool = False, metrics: tuple[str, ...] = (),
                 dtype_help: str = "make its tensors {dtype} (`x = {dtype}[4096, 4096]`)"):
        self.name = name
        self.record = record
        self.recognizes = recognizes  # whether a subject written this way is this kind
        self.needs_tensors = needs_tensors  # recognized only in a subject over tensors: `a @ b` of numbers is not
        self.noun = noun  # what the subject is called where an expression may not hold it (`a row-wise operation`)
        self.modes = modes or {}  # the mode words it takes -> what each means
        self.figures = dict(figures or {"time": None})
        unknown = set(self.figures) - set(FIGURES)
        if unknown:
            raise ValueError(f"{name}: no such observed figure: {sorted(unknown)}")
        self.streamable = streamable  # a stream (`N launches of W`) may repeat it: it is a list of kernels
        self.timeline = timeline  # a launch queue: `plot timeline` draws it
        self.measured_leaves = measured_leaves
        self.unmeasured = unmeasured  # why no harness measures it, where none does
        self.repeated = repeated
        # the metrics its rules compute (the keys of its rules.py RULES), besides MEMORY_METRICS and what an
        # observed figure adds (observed_metrics): for "did you mean" to name only what a workload of it has
        self.metrics = metrics
        self.dtype_help = dtype_help  # how a spec gives it another dtype, for a device without its dtype's rate

    def __repr__(self) -> str:
        return f"Kind({self.name!r})"

    @property
    def article(self) -> str:
        """`an elementwise workload`."""
        return f"{'an' if self.name[0] in 'aeiou' else 'a'} {self.name} workload"

    @property
    def observed_metrics(self) -> tuple[str, ...]:
        """The metrics an observed figure gives a workload of this kind, as its figures imply them (in the order
        explain shows them): its time always; where it takes a token or launch rate, tokens or launches per
        second; a FLOP rate or MFU, the FLOP rate and MFU; a bandwidth over the bytes moved (or MBU), the bandwidth,
        MBU and the share of the memory its data can sit in; over a collective's buffer, its algorithm and bus
        bandwidths and the share of its link's line rate. gpuspec/model/observed.py has their rules."""
        figures = self.figures
        names = ["observed_time", "observed_vs_model"]
        if "tokens/s" in figures:
            names.append("observed_tokens_per_s")
        if "launches/s" in figures:
            names += ["observed_launches_per_s", "observed_launch_use"]
        if "FLOP/s" in figures or "MFU" in figures:
            names += ["observed_flop_rate", "observed_mfu"]
        if figures.get("B/s") == "size":
            names += ["observed_algbw", "observed_busbw", "observed_link_use"]
        elif "B/s" in figures or "MBU" in figures:
            names += ["observed_bandwidth", "observed_mbu", "observed_bandwidth_use"]
        return tuple(names)

    def observed_limits(self, workload) -> tuple[tuple[str, str, str, str], ...]:
        """The checks an observed figure comes with: each a metric that no run takes past 100%, why, what to check
        when it fails, and the source that judges it (the model, or the calibrated source for a fact only a real
        device's profile has). The FLOP rate within the device's peak; the bandwidth within what its memory delivers
        (HBM's, or where the data may sit in L2, a run repeated back to back, observed_bandwidth_use: L2's when
        it fits); a collective's bus bandwidth within its link's line rate; the workload's data within the
        device's memory; the kernels run per second within what a GPU runs back to back (observed_launch_use,
        against the published profile's kernel_gap: a catalog GPU's, which every one has). A check needs the
        device facts it divides by: a device without them gets none."""
        from gpuspec.devices import published_name

        device, metrics = workload.device, self.observed_metrics
        found = []
        if "observed_mfu" in metrics:
            found.append(("observed_mfu", "an observed figure cannot beat the device's peak", _BEYOND, "model"))
        if "observed_mbu" in metrics:
            in_l2 = self.repeated or getattr(workload, "timing", "alone") == "back_to_back"
            if in_l2 and device.fact("l2_bandwidth") is not None and device.fact("l2_size") is not None:
                found.append(("observed_bandwidth_use", "an observed figure cannot beat the memory its data sits in",
                              _BEYOND, "model"))
            else:
                found.append(("observed_mbu", "an observed figure cannot beat the device's peak", _BEYOND, "model"))
        if "observed_link_use" in metrics:
            found.append(("observed_link_use", "a collective's bus bandwidth cannot beat its link's line rate",
                          "the observed figure implies more than the link carries: check the figure (an algorithm "
                          "bandwidth, or a bus bandwidth?), the link and the number of GPUs", "model"))
        if "observed_launch_use" in metrics and published_name(device) is not None:
            found.append(("observed_launch_use", "no GPU runs kernels one after another faster than back to back",
                          "the observed figure implies kernels faster than any GPU runs them one after another: "
                          "check the figure and its unit (launches/s or kernels/s, a k or M), what it counts, and "
                          "the kernels per step", "calibrated"))
        if device.fact("memory_size") is not None:
            found.append(("memory_filled", "what a workload keeps in device memory must fit in it",
                          "it does not fit in the device's memory: check the device, the batch, the context and the "
                          "dtypes, or split it over more GPUs", "model"))
        return tuple(found)


_BEYOND = "the observed figure implies more than the device can do: check the figure and its unit, the device, the " \
          "batch and the dtypes"


def calls(*functions: str) -> Callable[[nodes.Expr], bool]:
    """Recognizes a call of one of `functions` (`softmax(x)`)."""
    return lambda expr: isinstance(expr, nodes.Call) and expr.function in functions


# What the kinds of kernels (elementwise, matmul, row-wise, attention) share: torch.compile fuses an elementwise
# chain, a softmax or a norm into one kernel and pattern-matches attention to the fused kernel, so `compiled` means
# fused; and an observed FLOP rate or bandwidth becomes a time over the kernel's FLOPs or bytes.
KERNEL_MODES = {"eager": "eager", "fused": "fused", "compiled": "fused"}
KERNEL_FIGURES = {"time": None, "FLOP/s": "flops", "B/s": "bytes_moved", "MFU": "flops", "MBU": "bytes_moved"}
