"""Drawing the pictures `data` works out, with matplotlib (the `plot` extra): the roofline and the launch
timeline, as PNG or SVG bytes that are the same on every run."""
from __future__ import annotations

import io
import math

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
from matplotlib.transforms import Bbox

from gpuspec import units
from gpuspec.plot.data import RooflinePanel, Timeline

DPI = 120                   # PNG pixels per inch: a 10-inch picture is 1200 pixels wide
ROOFLINE_PANEL = (10.0, 6.0)  # inches per device
TIMELINE_WIDTH, TIMELINE_LANE, TIMELINE_FRAME = 10.0, 2.3, 0.9  # inches: width, per stream, axis and title

BOUND_COLORS = {"memory": "#1f6fb4", "compute": "#c4302b", "overhead": "#7a7a7a"}
SOURCE_MARKERS = {"model": "o", "calibrated": "^", "measured": "s"}
PLAIN_COLOR, TENSOR_COLOR, MEMORY_COLOR = "#2b8a3e", "#7b3fa0", "#1f6fb4"
HOST_COLORS = ("#f0a33a", "#d9822b")  # alternate shades so that back-to-back launches read as separate
KERNEL_COLOR, IDLE_COLOR = "#1f6fb4", "#e8504a"
STYLE = {
    "svg.hashsalt": "gpuspec",  # ids inside the SVG are derived from this, not from a random salt
    "svg.fonttype": "path",     # text as shapes: the picture looks the same without the font installed
    "font.size": 9,
    "axes.titlesize": 10,
}


def pixel_size(figure: Figure) -> tuple[int, int]:
    """The PNG size of a figure, in pixels."""
    width, height = figure.get_size_inches()
    return round(width * DPI), round(height * DPI)


def render(figure: Figure, format: str) -> bytes:
    """The figure as PNG or SVG bytes, with no date or other run-dependent metadata in them."""
    metadata = {"Date": None} if format == "svg" else {"Software": None}
    buffer = io.BytesIO()
    with matplotlib.rc_context(STYLE):
        figure.savefig(buffer, format=format, dpi=DPI, metadata=metadata)
    return buffer.getvalue()


def _figure(width: float, height: float) -> Figure:
    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)  # a canvas of its own, so that text can be measured to place labels
    return figure


# --- the roofline ----------------------------------------------------------------------------------


def roofline(panels: tuple[RooflinePanel, ...]) -> Figure:
    """One log-log roofline per device, stacked: roofs as lines, ridge points marked, workloads as points."""
    with matplotlib.rc_context(STYLE):
        figure = _figure(ROOFLINE_PANEL[0], ROOFLINE_PANEL[1] * len(panels))
        axes = figure.subplots(len(panels), 1, squeeze=False)[:, 0]
        for ax, panel in zip(axes, panels):
            _roofline_axes(ax, panel)
        # Lay out once, then freeze: label placement below measures text against the final axes.
        figure.get_layout_engine().execute(figure)
        figure.set_layout_engine("none")
        for ax, panel in zip(axes, panels):
            _place_labels(ax, panel)
    return figure


def _roofline_axes(ax, panel: RooflinePanel) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*panel.x_limits)
    ax.set_ylim(*panel.y_limits)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_major_locator(LogLocator(base=10))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _rate(v)))
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("arithmetic intensity (FLOP/B)")
    ax.set_ylabel("performance (FLOP/s)")
    ax.grid(True, which="major", color="#e4e4e4", linewidth=0.6)
    ax.set_axisbelow(True)
    roof = next((r for r in panel.roofs if r.source == "model"), panel.roofs[0] if panel.roofs else None)
    bandwidth = f", HBM {units.format_si(roof.bandwidth, units.BANDWIDTH)}" if roof else ""
    ax.set_title(f"{panel.device}: the roofline{bandwidth}", loc="left")
    for roof in panel.roofs:
        style = "-" if roof.source == "model" else "--"
        top = max((c.ridge[1] for c in roof.ceilings), default=panel.x_limits[1])
        x_low = panel.x_limits[0]
        ax.plot([x_low, top], [roof.bandwidth * x_low, roof.bandwidth * top], style, color=MEMORY_COLOR,
                linewidth=1.6, zorder=2)
        for ceiling in roof.ceilings:
            color = TENSOR_COLOR if ceiling.tensor else PLAIN_COLOR
            ridge = ceiling.flop_rate / roof.bandwidth
            ax.plot([ridge, panel.x_limits[1]], [ceiling.flop_rate] * 2, style, color=color,
                    linewidth=1.6 if ceiling.used else 1.0, alpha=1.0 if ceiling.used else 0.55, zorder=2)
            ax.plot([ridge], [ceiling.flop_rate], "D", color=color, markersize=4 if ceiling.used else 3, zorder=3)
            if roof.source == "model":
                ax.annotate(f"{ceiling.label}  {units.format_si(ceiling.flop_rate, units.FLOP_RATE)}",
                            (panel.x_limits[1], ceiling.flop_rate), xytext=(-4, 1.5), textcoords="offset points",
                            ha="right", va="bottom", fontsize=7.5, color=color, gid="ceiling-label")
                if ceiling.used:  # a dotted drop to the axis: where the workloads of this peak turn compute-bound
                    ax.plot([ridge, ridge], [panel.y_limits[0], ceiling.flop_rate], ":", color=color,
                            linewidth=0.9, zorder=1)
                    ax.annotate(f"ridge {ridge:.3g} FLOP/B", (ridge, panel.y_limits[0]),
                                xytext=(3, 3), textcoords="offset points", rotation=90, ha="left", va="bottom",
                                fontsize=7.5, color=color)
    for point in panel.points:
        ax.plot([point.intensity], [point.flop_rate], SOURCE_MARKERS[point.source],
                color=BOUND_COLORS.get(point.bound, "#333333"), markersize=7, markeredgecolor="white",
                markeredgewidth=0.8, zorder=4)
    ax.legend(handles=_legend(panel), loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
              fontsize=8, frameon=False)


def _legend(panel: RooflinePanel) -> list:
    handles: list = [Line2D([], [], color=MEMORY_COLOR, label="memory roof (HBM)"),
                     Line2D([], [], color=PLAIN_COLOR, label="plain units"),
                     Line2D([], [], color=TENSOR_COLOR, label="tensor cores"),
                     Line2D([], [], color="#555555", marker="D", linestyle="", markersize=4, label="ridge point")]
    if any(r.source == "calibrated" for r in panel.roofs):
        handles.append(Line2D([], [], color="#555555", linestyle="--", label="calibrated roof"))
    for source in dict.fromkeys(p.source for p in panel.points):
        handles.append(Line2D([], [], color="#555555", marker=SOURCE_MARKERS[source], linestyle="",
                              label=f"{source}"))
    for bound in dict.fromkeys(p.bound for p in panel.points):
        handles.append(Patch(color=BOUND_COLORS.get(bound, "#333333"), label=f"{bound}-bound"))
    return handles


def _offsets() -> list[tuple[float, float, str, str]]:
    """Where a point's label may go, tried in turn: (dx, dy) in points, and its alignment. Below the point
    first (under the roof is where the space is), then further out, ring by ring."""
    places = []
    for radius in (7, 16, 28, 42, 60, 80):
        for angle in (-35, -145, -90, 35, 145, 90, 0, 180):
            dx, dy = radius * math.cos(math.radians(angle)), radius * math.sin(math.radians(angle))
            ha = "center" if abs(dx) < 1 else "left" if dx > 0 else "right"
            va = "center" if abs(dy) < 1 else "bottom" if dy > 0 else "top"
            places.append((round(dx, 1), round(dy, 1), ha, va))
    return places


_OFFSETS = _offsets()


def _place_labels(ax, panel: RooflinePanel) -> None:
    """Each point's label beside it, at the first place that overlaps no other label or point and stays
    inside the axes; a label set further out gets a thin line to its point."""
    renderer = ax.figure.canvas.get_renderer()
    inside = ax.get_window_extent(renderer)
    taken = [t.get_window_extent(renderer).expanded(1.05, 1.2) for t in ax.texts]
    for point in panel.points:
        x, y = ax.transData.transform((point.intensity, point.flop_rate))
        taken.append(Bbox([[x - 5, y - 5], [x + 5, y + 5]]))
    for point in panel.points:
        chosen = None
        for place in _OFFSETS:
            text = _label(ax, point, place)
            box = _words(text, renderer)
            fits = inside.contains(box.x0, box.y0) and inside.contains(box.x1, box.y1)
            if fits and not any(box.overlaps(other) for other in taken):
                chosen = text
                break
            text.remove()
        if chosen is None:  # nowhere free: the first place, which at least stays next to its point
            chosen = _label(ax, point, _OFFSETS[0])
        taken.append(_words(chosen, renderer).expanded(1.02, 1.1))


def _words(annotation, renderer) -> Bbox:
    """Where an annotation's text lies, without its leader line."""
    annotation.update_positions(renderer)
    return Text.get_window_extent(annotation, renderer)


def _label(ax, point, place):
    dx, dy, ha, va = place
    leader = {"arrowprops": {"arrowstyle": "-", "color": "#9a9a9a", "linewidth": 0.6, "shrinkA": 1, "shrinkB": 4}} \
        if math.hypot(dx, dy) > 10 else {}
    return ax.annotate(point.label, (point.intensity, point.flop_rate), xytext=(dx, dy), textcoords="offset points",
                       ha=ha, va=va, fontsize=8, color="#222222", zorder=5, **leader)


def _rate(value: float) -> str:
    """A tick of the FLOP/s axis: `10 TFLOP/s`."""
    if value <= 0:
        return ""
    exponent = math.floor(math.log10(value) + 1e-9)
    prefix = {0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}.get(exponent - exponent % 3)
    if prefix is None:
        return f"{value:g}"
    return f"{value / 10 ** (exponent - exponent % 3):g} {prefix}FLOP/s"


# --- the launch timeline ---------------------------------------------------------------------------


def timeline(data: Timeline) -> Figure:
    """One pair of rows per stream, on one time axis: the host's launches above, the GPU's kernels below,
    the GPU's idle gaps shaded."""
    scale, unit = _time_unit(data.span)
    with matplotlib.rc_context(STYLE):
        figure = _figure(TIMELINE_WIDTH, TIMELINE_FRAME + TIMELINE_LANE * len(data.lanes))
        axes = figure.subplots(len(data.lanes), 1, sharex=True, squeeze=False)[:, 0]
        for ax, lane in zip(axes, data.lanes):
            host_row, gpu_row = 1.0, 0.0
            ax.broken_barh([(i.start / scale, (i.end - i.start) / scale) for i in lane.gaps], (gpu_row - 0.32, 0.64),
                           facecolors=IDLE_COLOR, alpha=0.22, hatch="///", edgecolor=IDLE_COLOR, linewidth=0)
            for i in lane.host:
                ax.broken_barh([(i.start / scale, (i.end - i.start) / scale)], (host_row - 0.3, 0.6),
                               facecolors=HOST_COLORS[i.launch % 2], edgecolor="white", linewidth=0.6)
            ax.broken_barh([(i.start / scale, (i.end - i.start) / scale) for i in lane.gpu], (gpu_row - 0.3, 0.6),
                           facecolors=KERNEL_COLOR, edgecolor="white", linewidth=0.6)
            for launch in lane.host:  # each launch's end to its kernel's start: how long it waited in the queue
                kernel = next((k for k in lane.gpu if k.launch == launch.launch), None)
                if kernel is not None:
                    ax.plot([launch.end / scale, kernel.start / scale], [host_row - 0.3, gpu_row + 0.3],
                            color="#888888", linewidth=0.5, zorder=1)
            ax.set_yticks([gpu_row, host_row], ["GPU", "host"])
            ax.set_ylim(-0.75, 1.75)
            ax.set_xlim(0, data.span / scale)
            ax.tick_params(axis="y", length=0)
            for side in ("top", "right", "left"):
                ax.spines[side].set_visible(False)
            ax.set_title(_lane_title(lane), loc="left")
        axes[-1].set_xlabel(f"time since the first launch call ({unit})")
        axes[0].legend(handles=[Patch(color=HOST_COLORS[0], label="host: one launch"),
                                Patch(color=KERNEL_COLOR, label="GPU: one kernel"),
                                Patch(facecolor=IDLE_COLOR, alpha=0.22, hatch="///", edgecolor=IDLE_COLOR,
                                      label="GPU idle")],
                       loc="lower left", bbox_to_anchor=(0.0, 1.16), ncols=3, fontsize=8, frameon=False,
                       borderaxespad=0)
    return figure


def _lane_title(lane) -> str:
    kernels = sorted(set(lane.kernel_times))
    each = " and ".join(units.format_si(k, units.TIME) for k in kernels)
    launch = (f"one graph launch of {units.format_si(lane.launch_cost, units.TIME)}" if lane.graph else
              f"a launch every {units.format_si(lane.launch_cost, units.TIME)}")
    share = f"{lane.busy_share * 100:.3g}"
    return (f"{lane.label} (line {lane.line}): {each} kernels, {launch}; "
            f"GPU busy {share}% of the {units.format_si(lane.total, units.TIME)} stream")


def _time_unit(span: float) -> tuple[float, str]:
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if span >= 2 * scale:
            return scale, unit
    return 1e-9, "ns"
