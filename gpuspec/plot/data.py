"""What each picture shows, worked out without drawing: the roofline's ceilings, ridge points and workload
points per device, and a launch stream's host launches, GPU kernels and idle gaps on one time axis.

Everything here is plain numbers in SI units (FLOP/B, FLOP/s, seconds), so tests check the pictures' data
and `draw` only has to place it.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

from gpuspec import model, units
from gpuspec.record import Record, as_tuple, record
from gpuspec.sources import NotAvailable

# The ceilings a roofline shows: the plain units' rates, then the tensor cores' dense rates, by dtype.
PLAIN = ("fp32", "fp16", "bf16")
TENSOR = ("tensor_tf32", "tensor_fp16", "tensor_bf16", "tensor_fp8")
# fp64 ceilings are shown only when a workload runs at one, so that ML specs are not crowded by them.
FP64 = ("fp64", "tensor_fp64")
SOURCES = ("model", "calibrated", "measured")
# Points closer than this on both log axes (decades) would be drawn on top of each other: they become one.
SAME_SPOT = 0.02
LABEL_LENGTH = 28
# A timeline shows about this many launches, or three of the longest kernels, whichever is longer.
LAUNCHES_SHOWN = 12
MAX_DRAWN = 100  # launches a timeline draws, at most (each is a shape to draw)
# What a roofline's log axes hold (FLOP/B, FLOP/s, B/s). Past this the limits' padding and matplotlib's ticks
# overflow a float, and no device or workload comes near it (SI prefixes end at 1e±30 too).
DRAWABLE = (1e-30, 1e30)


class Undrawable(ValueError):
    """A picture whose numbers no axis can hold: the message says which number, where it comes from and why
    (`reason`), then what a `plot` command could draw instead (`hint`)."""

    def __init__(self, reason: str, hint: str = ""):
        super().__init__(f"{reason}; {hint}" if hint else reason)
        self.reason = reason


@record
class Subject(Record):
    """A workload to draw, with where it is written and the short label it is drawn with."""

    label: str
    path: str
    line: int
    workload: object


def label_of(text: str) -> str:
    """The short label of a statement: its name (`y = x * 2:` -> `y`), else the workload as written."""
    named = re.match(r"\s*([A-Za-z_]\w*)\s*=(?!=)", text)
    if named:
        return named.group(1)
    shown = re.split(r"\s+is\s+", text.strip().rstrip(":"), maxsplit=1)[0].strip()
    return shown if len(shown) <= LABEL_LENGTH else shown[:LABEL_LENGTH - 1].rstrip() + "…"


class ModelSource:
    """The model as a source, shaped like the calibrated and measured ones (gpuspec.sources)."""

    def estimate(self, workload):
        return model.estimate(workload)

    def device(self, device):
        return device


# --- the roofline ----------------------------------------------------------------------------------


@record
class Ceiling(Record):
    """A horizontal roof: the peak FLOP rate of some dtypes on the plain units or the tensor cores, and the
    intensity at which the memory roof meets it (an interval when a fact is a range)."""

    label: str                 # `fp16 · bf16 tensor cores`
    dtypes: tuple[str, ...]
    tensor: bool
    flop_rate: float           # FLOP/s
    ridge: tuple[float, float]  # FLOP/B: (low, high)
    used: bool                 # some workload drawn runs at this peak

    @property
    def caption(self) -> str:
        """What the picture writes on the ceiling: `fp32 · fp16 · bf16 30.3 TFLOP/s`."""
        return f"{self.label} {units.format_si(self.flop_rate, units.FLOP_RATE)}"


@record
class Roof(Record):
    """One source's roof for a device: the memory slope and the ceilings."""

    source: str            # model or calibrated
    bandwidth: float       # B/s
    ceilings: tuple[Ceiling, ...]


@record
class Point(Record):
    """A workload (or several drawn on one spot) as one source sees it."""

    labels: tuple[str, ...]
    lines: tuple[int, ...]
    source: str
    intensity: float       # FLOP/B
    flop_rate: float       # FLOP/s achieved: flops / time
    bound: str             # memory, compute or overhead (the model's word)

    @property
    def label(self) -> str:
        return " · ".join(self.labels[:2]) + (f" +{len(self.labels) - 2}" if len(self.labels) > 2 else "")


@record
class RooflinePanel(Record):
    """One device's roofline: its roofs, the points, and axis limits that hold all of them."""

    device: str
    roofs: tuple[Roof, ...]
    points: tuple[Point, ...]
    x_limits: tuple[float, float]  # FLOP/B
    y_limits: tuple[float, float]  # FLOP/s


def plottable(workload) -> bool:
    """Whether a workload has a place on a roofline: FLOPs, bytes and a time, all positive."""
    try:
        e = model.estimate(workload)
        return all(name in e for name in ("flops", "bytes_moved", "time")) and \
            e["flops"].number > 0 and e["bytes_moved"].number > 0 and e["time"].number > 0
    except (model.ModelError, ArithmeticError, ValueError):
        return False


def roofline(subjects: list[Subject], sources: dict[str, object] | None = None,
             shared: bool = True) -> tuple[RooflinePanel, ...]:
    """One panel per device, in order of first appearance. `sources` maps a source's name to its provider
    (default: the model alone); a provider that cannot say anything about a workload gives it no point.
    `shared`: every panel on the same axis limits, which hold all of them, so that devices compare by eye
    (else each panel's own)."""
    sources = sources or {"model": ModelSource()}
    by_device: dict[tuple, list[Subject]] = {}
    for subject in subjects:
        if plottable(subject.workload):
            by_device.setdefault(_roof_key(subject.workload.device), []).append(subject)
    panels = tuple(_panel(members, sources) for members in by_device.values())
    if not shared or len(panels) < 2:
        return panels
    x_limits = (min(p.x_limits[0] for p in panels), max(p.x_limits[1] for p in panels))
    y_limits = (min(p.y_limits[0] for p in panels), max(p.y_limits[1] for p in panels))
    return tuple(RooflinePanel(p.device, p.roofs, p.points, x_limits, y_limits) for p in panels)


def _roof_key(device) -> tuple:
    # Devices that share a name but not a roof (an override of a ceiling) get panels of their own.
    facts = ("hbm_bandwidth", *PLAIN, *TENSOR, *FP64)
    return (device.name, *((f.low, f.high) if (f := device.fact(name)) else None for name in facts))


def _panel(subjects: list[Subject], sources: dict[str, object]) -> RooflinePanel:
    device = subjects[0].workload.device
    peaks = {name for s in subjects for name in _peak_facts(s.workload)}
    roofs = []
    for name in ("model", "calibrated"):
        if name in sources:
            try:
                seen = sources[name].device(device)
            except NotAvailable:
                continue
            roofs.append(_roof(name, seen, peaks))
            _check_roof(roofs[-1], seen, subjects[0])
    points: list[Point] = []
    for name in SOURCES:
        if name in sources:
            found = [(s, p) for s in subjects if (p := _point(s, name, sources[name])) is not None]
            for subject, point in found:
                _check_point(point, subject)
            points.extend(_merged([p for _, p in found]))
    x_limits, y_limits = _limits(roofs, points)
    return RooflinePanel(device.name, tuple(roofs), tuple(points), x_limits, y_limits)


def _point(subject: Subject, source: str, provider) -> Point | None:
    counts = model.estimate(subject.workload)  # FLOPs and bytes are counted, not measured: the model's
    try:
        time = provider.estimate(subject.workload)["time"].number
    except (NotAvailable, model.ModelError):
        return None
    if not isinstance(time, float | int) or time <= 0:
        return None
    flops, moved = counts["flops"].number, counts["bytes_moved"].number
    return Point((subject.label,), (subject.line,), source, _ratio(flops, moved), _ratio(flops, time),
                 str(counts["bound"].number))


def _ratio(top: float, bottom: float) -> float:
    """top / bottom, infinite where the quotient overflows or bottom is 0 (the checks below then refuse it)."""
    try:
        return top / bottom
    except (ZeroDivisionError, OverflowError):
        return math.inf


def _drawable(value) -> bool:
    return isinstance(value, float | int) and DRAWABLE[0] <= value <= DRAWABLE[1]


_OUTSIDE = "is outside what a roofline's axes hold ({} to {} FLOP/B, FLOP/s or B/s)".format(
    *(f"{end:g}".replace("e+", "e") for end in DRAWABLE))


def _check_roof(roof: Roof, device, subject: Subject) -> None:
    """Undrawable if the roof's bandwidth, a peak or a ridge point lies off any axis (a device fact of
    1e-305 TB/s puts the ridge past the largest float)."""
    where = f"{subject.path}:{subject.line}: `{subject.label}` runs on {device.name}, whose {roof.source} roofline " \
            "cannot be drawn"
    bandwidth = f"hbm_bandwidth = {units.format_si(roof.bandwidth, units.BANDWIDTH)}"
    if not _drawable(roof.bandwidth):
        raise Undrawable(f"{where}: {bandwidth} {_OUTSIDE}")
    for ceiling in roof.ceilings:
        rate = f"the {ceiling.label} peak of {units.format_si(ceiling.flop_rate, units.FLOP_RATE)}"
        if not _drawable(ceiling.flop_rate):
            raise Undrawable(f"{where}: {rate} {_OUTSIDE}")
        for ridge in ceiling.ridge:
            if not _drawable(ridge):
                raise Undrawable(f"{where}: the ridge point of {rate} over {bandwidth}, {ridge:.3g} FLOP/B, "
                                 f"{_OUTSIDE}")


def _check_point(point: Point, subject: Subject) -> None:
    """Undrawable if a workload's point lies off any axis (1 kFLOP in 1e297 s is 1e-294 FLOP/s)."""
    for value, what, unit in ((point.intensity, "arithmetic intensity", "FLOP/B"),
                              (point.flop_rate, "performance", "FLOP/s")):
        if not _drawable(value):
            raise Undrawable(f"{subject.path}:{subject.line}: `{subject.label}` cannot be placed on a roofline: "
                             f"its {what} ({point.source}), {value:.3g} {unit}, {_OUTSIDE}",
                             "draw the other workloads by naming their lines (FILE:LINE)")


def _merged(points: list[Point]) -> list[Point]:
    """Points of one source on (nearly) the same spot as one point with all their labels."""
    merged: list[Point] = []
    for point in points:
        for i, other in enumerate(merged):
            if (abs(math.log10(point.intensity) - math.log10(other.intensity)) < SAME_SPOT
                    and abs(math.log10(point.flop_rate) - math.log10(other.flop_rate)) < SAME_SPOT):
                labels = tuple(dict.fromkeys(other.labels + point.labels))
                merged[i] = Point(labels, other.lines + point.lines, other.source, other.intensity,
                                  other.flop_rate, other.bound)
                break
        else:
            merged.append(point)
    return merged


def _peak_facts(workload) -> set[str]:
    """The device facts a workload's peak FLOP rate comes from (`fp32`, `tensor_bf16`), found in its derivation."""
    e = model.estimate(workload)
    if "peak_flop_rate" not in e:
        return set()
    try:
        pending = [e["peak_flop_rate"]]
    except model.ModelError:
        return set()
    found = set()
    while pending:
        value = pending.pop()
        if value.name in (*PLAIN, *TENSOR, *FP64):
            found.add(value.name)
        pending.extend(value.inputs)
    return found


def _roof(source: str, device, peaks: set[str]) -> Roof:
    bandwidth = device.fact("hbm_bandwidth")
    names = [n for n in (*PLAIN, *TENSOR, *FP64) if device.fact(n) and (n not in FP64 or n in peaks)]
    # Rates that read the same on the same units share one line and one label: the L4's fp32, fp16 and bf16 are
    # 30.3, 30.29 and 30.3 TFLOP/s, three labels printed on top of each other had they been kept apart.
    groups: dict[tuple[bool, str], list[str]] = {}
    for name in names:
        shown = units.format_si(device.fact(name).value, units.FLOP_RATE)
        groups.setdefault((name.startswith("tensor_"), shown), []).append(name)
    ceilings = []
    for (tensor, _), members in groups.items():
        facts = [device.fact(n) for n in members]
        dtypes = tuple(n.removeprefix("tensor_") for n in members)
        label = " · ".join(dtypes) + (" tensor cores" if tensor else "")
        ridge = (min(_ratio(f.low, bandwidth.high) for f in facts), max(_ratio(f.high, bandwidth.low) for f in facts))
        ceilings.append(Ceiling(label, dtypes, tensor, max(f.value for f in facts), ridge,
                                any(n in peaks for n in members)))
    ceilings.sort(key=lambda c: c.flop_rate)
    return Roof(source, bandwidth.value, tuple(ceilings))


def _limits(roofs: list[Roof], points: list[Point]) -> tuple[tuple[float, float], tuple[float, float]]:
    """Whole decades around every point and ridge, with room above the highest ceiling for its label. Floats:
    10 ** 19 as an int is past what numpy (and so matplotlib) takes as a number."""
    xs = [p.intensity for p in points] + [r for roof in roofs for c in roof.ceilings for r in c.ridge] or [1.0]
    ys = [p.flop_rate for p in points] + [c.flop_rate for roof in roofs for c in roof.ceilings] or [1.0]
    x_low, x_high = 10.0 ** math.floor(math.log10(min(xs)) - 0.3), 10.0 ** math.ceil(math.log10(max(xs)) + 0.3)
    y_low, y_high = 10.0 ** math.floor(math.log10(min(ys)) - 0.3), 10.0 ** math.ceil(math.log10(max(ys)) + 0.3)
    return (x_low, x_high), (y_low, y_high)


# --- the launch timeline ---------------------------------------------------------------------------


@record
class Interval(Record):
    """[start, end) in seconds from the first launch call; `launch` is the 1-based launch (or kernel) number."""

    start: float
    end: float
    launch: int


@record
class Lane(Record):
    """One stream as the launch queue plays it out: the host's launches above, the GPU's kernels below."""

    label: str
    line: int
    statement: str
    graph: bool
    launch_cost: float                 # host seconds per launch (the graph launch, for a CUDA graph)
    kernel_times: tuple[float, ...]    # GPU seconds of each kernel of one repeat
    host: tuple[Interval, ...]
    gpu: tuple[Interval, ...]
    gaps: tuple[Interval, ...]         # the GPU idle, within the span shown
    total: float                       # the whole stream's time, as the model computes it
    busy_share: float                  # the whole stream's share of time the GPU runs kernels
    place: str = ""                    # where it is written: `line 7`, or `a.gpu:7` when lanes come from files

    @property
    def name(self) -> str:
        """What the lane's title calls the stream: its name, else the workload as written (its claims left out: a
        label is shortened)."""
        if self.label.isidentifier():
            return self.label
        return re.split(r"\s+is\s+", self.statement.strip().rstrip(":"), maxsplit=1)[0].strip()


@record
class Timeline(Record):
    lanes: tuple[Lane, ...]
    span: float  # seconds shown, the same for every lane so that their launch rates compare

    def zoom(self, lane: Lane) -> str:
        """What part of the lane's stream the span shows, when not all of it: `first 43.2 µs of 36.0 ms`."""
        if lane.total <= self.span * (1 + 1e-9):
            return ""
        return f"first {units.format_si(self.span, units.TIME)} of {units.format_si(lane.total, units.TIME)}"


def queue(pattern: list[float], repeats: int, launch_cost: float, until: float = math.inf,
          graph_launch: float | None = None, node_cost: float = 0.0,
          most: int | None = None) -> tuple[list[Interval], list[Interval]]:
    """The host's launches and the GPU's kernels of a stream, those that start before `until` (and at most
    `most` launches: with a negligible launch cost, millions are enqueued before the first kernel ends).

    The rule is gpuspec.model.launches': launch i (from 1) is enqueued at i × launch_cost and its kernel
    starts once enqueued and once the kernel before it has ended. As a CUDA graph, one launch of
    graph_launch seconds, then every kernel back to back, each node_cost longer.
    """
    host: list[Interval] = []
    gpu: list[Interval] = []
    if graph_launch is not None:
        host.append(Interval(0.0, graph_launch, 1))
        end = graph_launch
        for index in range(1, len(pattern) * repeats + 1):
            if end >= until:
                break
            duration = pattern[(index - 1) % len(pattern)] + node_cost
            gpu.append(Interval(end, end + duration, index))
            end += duration
        return host, gpu
    end = 0.0
    for index in range(1, len(pattern) * repeats + 1):
        enqueued = index * launch_cost
        start = max(end, enqueued)
        full = most is not None and len(host) >= most
        if enqueued - launch_cost < until and not full:
            host.append(Interval(enqueued - launch_cost, enqueued, index))
        if start >= until:  # no later kernel starts in the span either: only launches are left to show
            if enqueued >= until or full:
                break
            continue
        end = start + pattern[(index - 1) % len(pattern)]
        gpu.append(Interval(start, end, index))
    return host, gpu


def idle_gaps(kernels: list[Interval], span: float) -> list[Interval]:
    """The stretches of [0, span) in which no kernel runs; `launch` is the kernel the GPU is waiting for."""
    gaps, free = [], 0.0
    for kernel in kernels:
        if kernel.start >= span:
            break
        if kernel.start > free:
            gaps.append(Interval(free, kernel.start, kernel.launch))
        free = max(free, kernel.end)
    if free < span:
        gaps.append(Interval(free, span, kernels[-1].launch + 1 if kernels else 1))
    return gaps


def timeline(subjects: list[Subject]) -> Timeline:
    """The streams among `subjects`, one lane each, over a span that shows the first launches of all.
    Undrawable, naming the stream, if the model cannot compute one's time (its launch queue overflows)."""
    shapes = [(s, _drawn_shape(s)) for s in subjects]
    span = min(max(model.estimate(s.workload)["time"].number for s, _ in shapes),
               max(max(LAUNCHES_SHOWN * cost, 3 * max(pattern)) for _, (pattern, cost, _) in shapes))
    # at most MAX_DRAWN kernels (or graph nodes) in the span, and launches where each waits for its own: a launch
    # cost of 1e-300 s enqueues 1e295 launches in a kernel's time, and the first MAX_DRAWN of them are drawn
    span = min(span, min(cost + MAX_DRAWN * (min(pattern) + node_cost) if s.workload.graph
                         else MAX_DRAWN * max(cost, min(pattern)) for s, (pattern, cost, node_cost) in shapes))
    lanes = []
    several = len({s.path for s in subjects}) > 1  # lanes of several files say which file each is from
    for subject, (pattern, cost, node_cost) in shapes:
        w = subject.workload
        e = model.estimate(w)
        host, gpu = queue(pattern, w.count, cost, span, cost if w.graph else None, node_cost, MAX_DRAWN + 1)
        total = e["time"].number
        if gpu and gpu[-1].end >= total * (1 - 1e-12):  # the whole stream fits: its idle tail is not idle
            gaps = idle_gaps(gpu, min(span, gpu[-1].end))
        else:
            gaps = idle_gaps(gpu, span)
        place = f"{Path(subject.path).name}:{subject.line}" if several else f"line {subject.line}"
        label = subject.label.removeprefix(f"{Path(subject.path).name}: ")  # the place names the file
        lanes.append(Lane(label, subject.line, w.text or label, w.graph, cost, as_tuple(pattern),
                          tuple(host), tuple(gpu), tuple(gaps), total, e["busy_share"].number, place))
    return Timeline(tuple(lanes), span)


def _drawn_shape(subject: Subject) -> tuple[list[float], float, float]:
    """_shape of a stream whose lane can be drawn: Undrawable, naming it, if its queue overflows."""
    w = subject.workload
    if w.replays or (w.synced and not w.graph):  # the lane draws one queue of kernels, run ahead by the host
        what = "replays a CUDA graph" if w.replays else "waits for the GPU after each launch"
        raise Undrawable(f"{subject.path}:{subject.line}: `{subject.label}` {what}, and gpuspec draws only streams "
                         "of kernels the host launches ahead of the GPU", "its time and shares are in `gpuspec "
                         "explain`; draw the other streams by naming their lines (FILE:LINE)")
    try:
        e = model.estimate(subject.workload)
        e["time"], e["busy_share"]  # what the lane's title shows
        return _shape(subject.workload)
    except (model.ModelError, ArithmeticError) as error:
        raise Undrawable(f"{subject.path}:{subject.line}: `{subject.label}` has no timeline to draw: {error}",
                         "draw the other streams by naming their lines (FILE:LINE)") from None


def _shape(stream) -> tuple[list[float], float, float]:
    """A stream's kernel times, its launch cost (or graph launch cost) and the graph node cost, in seconds."""
    e = model.estimate(stream)
    pattern = model.kernel_times(stream.kernel)
    node_cost = e.fact("graph_node_cost").number if stream.graph else 0.0
    return pattern, e["launch_cost"].number, node_cost
