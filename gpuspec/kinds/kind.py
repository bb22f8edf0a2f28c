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
    """A figure someone observed for a workload (`observed 107 tokens/s`), in SI units: a time, a token rate,
    a FLOP rate or a bandwidth. The model derives from it what it implies (time, utilization)."""

    value: float
    dimension: tuple[int, ...] = field(converter=as_tuple)
    text: str = field(eq=False, default="")  # as written, for derivations


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


class Kind:
    """A kind of workload, as every stage needs to know it (a plain class: the registry builds eight at start-up).

    figures: the dimensions an observed figure may have, each with the metric that turns it into a time (the
    figure divides it) or None for a time itself. The resolver allows those units; the model's observed rules
    follow from the same table (gpuspec/model/observed.py).
    measured_leaves: the metrics a harness measures. The measured source is the model's rules with these leaves
    replaced by measurements, so a metric is measured when its model value depends on one of them.
    """

    __slots__ = ("name", "record", "recognizes", "needs_tensors", "noun", "modes", "figures", "streamable",
                 "timeline", "measured_leaves", "unmeasured")

    def __init__(self, name: str, record: type, recognizes: Callable[[nodes.Expr], bool], *,
                 needs_tensors: bool = False, noun: str = "", modes: Mapping[str, str] | None = None,
                 figures: Mapping[units.Dimension, str | None] | None = None, streamable: bool = False,
                 timeline: bool = False, measured_leaves: tuple[str, ...] = (), unmeasured: str = ""):
        self.name = name
        self.record = record
        self.recognizes = recognizes  # whether a subject written this way is this kind
        self.needs_tensors = needs_tensors  # recognized only in a subject over tensors: `a @ b` of numbers is not
        self.noun = noun  # what the subject is called where an expression may not hold it (`a row-wise operation`)
        self.modes = modes or {}  # the mode words it takes -> what each means
        self.figures = figures or {units.TIME: None}
        self.streamable = streamable  # a stream (`N launches of W`) may repeat it: it is a list of kernels
        self.timeline = timeline  # a launch queue: `plot timeline` draws it
        self.measured_leaves = measured_leaves
        self.unmeasured = unmeasured  # why no harness measures it, where none does

    def __repr__(self) -> str:
        return f"Kind({self.name!r})"

    @property
    def article(self) -> str:
        """`an elementwise workload`."""
        return f"{'an' if self.name[0] in 'aeiou' else 'a'} {self.name} workload"

    @property
    def observed_metrics(self) -> tuple[str, ...]:
        """The metrics an observed figure gives a workload of this kind, as its figures imply them (in the order
        explain shows them): its time always; a token rate, tokens per second; a FLOP rate, the FLOP rate and MFU;
        a bandwidth over the bytes moved, the bandwidth and MBU; over a collective's buffer, its algorithm and bus
        bandwidths. gpuspec/model/observed.py has their rules."""
        figures = self.figures
        names = ["observed_time", "observed_vs_model"]
        if figures.get(units.TOKEN_RATE):
            names.append("observed_tokens_per_s")
        if figures.get(units.FLOP_RATE):
            names += ["observed_flop_rate", "observed_mfu"]
        moved = figures.get(units.BANDWIDTH)
        if moved == "size":
            names += ["observed_algbw", "observed_busbw"]
        elif moved:
            names += ["observed_bandwidth", "observed_mbu"]
        return tuple(names)

    @property
    def observed_limits(self) -> tuple[str, ...]:
        """The utilizations an observed figure implies, which no run takes past 100%: checked where one is written."""
        return tuple(name for name in ("observed_mbu", "observed_mfu") if name in self.observed_metrics)


def calls(*functions: str) -> Callable[[nodes.Expr], bool]:
    """Recognizes a call of one of `functions` (`softmax(x)`)."""
    return lambda expr: isinstance(expr, nodes.Call) and expr.function in functions


# What the kinds of kernels (elementwise, matmul, row-wise, attention) share: torch.compile fuses an elementwise
# chain, a softmax or a norm into one kernel and pattern-matches attention to the fused kernel, so `compiled` means
# fused; and an observed FLOP rate or bandwidth becomes a time over the kernel's FLOPs or bytes.
KERNEL_MODES = {"eager": "eager", "fused": "fused", "compiled": "fused"}
KERNEL_FIGURES = {units.TIME: None, units.FLOP_RATE: "flops", units.BANDWIDTH: "bytes_moved"}
