"""Drawing the pictures `data` works out, with matplotlib (the `plot` extra): the roofline and the launch
timeline, as PNG or SVG bytes that are the same on every run."""
from __future__ import annotations

import io
import math

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from gpuspec import units
from gpuspec.plot import labels
from gpuspec.plot.data import RooflinePanel, Timeline

DPI = 120                   # PNG pixels per inch: a 10-inch picture is 1200 pixels wide
ROOFLINE_PANEL = (10.0, 6.0)  # inches per device
POINT_SIZE, LABEL_SIZE, CAPTION_SIZE = 7, 8, 7.5  # points: a workload's marker, its label, a ceiling's caption
RINGS = (7, 12, 19, 28, 40, 54, 70, 90)  # points from a workload to where its label may go, nearest first
CAPTION_GAP = 4  # points between the axes' right edge and a ceiling's caption
LEADER_FROM = 10  # points: a label further out than this is joined to its workload by a line
LABELLED = 40  # labels a panel places, at most; further points are drawn unlabelled and the legend counts them
TIMELINE_WIDTH, TIMELINE_LANE, TIMELINE_FRAME = 10.0, 2.3, 0.9  # inches: width, per stream, axis and title
TITLE_WIDTH, TITLE_LINE = 9.2, 0.18  # inches: a lane title's line at most (the axes' width), and each line more

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
    ax.set_title(f"{panel.device}: the roofline{bandwidth}", loc="left", parse_math=False)
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
            ax.plot([ridge], [ceiling.flop_rate], "D", color=color, markersize=4 if ceiling.used else 3, zorder=3,
                    gid="ridge-point")
            if roof.source == "model":  # its caption beside the right edge, where no workload is drawn
                ax.annotate(ceiling.caption, (1.0, ceiling.flop_rate), xycoords=ax.get_yaxis_transform(),
                            xytext=(CAPTION_GAP, 0), textcoords="offset points", ha="left", va="center",
                            fontsize=CAPTION_SIZE, color=color, annotation_clip=False, gid="ceiling-label")
            if roof.source == "model" and ceiling.used:
                # a dotted drop to the axis: where the workloads of this peak turn compute-bound
                ax.plot([ridge, ridge], [panel.y_limits[0], ceiling.flop_rate], ":", color=color,
                        linewidth=0.9, zorder=1)
                ax.annotate(f"ridge {ridge:.3g} FLOP/B", (ridge, panel.y_limits[0]),
                            xytext=(3, 3), textcoords="offset points", rotation=90, ha="left", va="bottom",
                            fontsize=7.5, color=color, gid="ridge-label")
    for point in panel.points:
        ax.plot([point.intensity], [point.flop_rate], SOURCE_MARKERS[point.source],
                color=BOUND_COLORS.get(point.bound, "#333333"), markersize=POINT_SIZE, markeredgecolor="white",
                markeredgewidth=0.8, zorder=4, gid="point")
    ax.legend(handles=_legend(panel), loc="upper left", bbox_to_anchor=(0.0, -0.11), borderaxespad=0,
              fontsize=8, frameon=False, ncols=5)


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
    if len(panel.points) > LABELLED:
        handles.append(Line2D([], [], linestyle="", label=f"({len(panel.points) - LABELLED} points unlabelled)"))
    return handles


def _place_labels(ax, panel: RooflinePanel) -> None:
    """The ceilings' captions beside the right edge, each at its ceiling's height or moved just enough that
    none overlaps another (labels.spread; a moved one gets a short line to its ceiling); then each point's label
    where it covers least (labels.place), with a leader line when set further out. In pixels of the laid-out
    figure."""
    renderer = ax.figure.canvas.get_renderer()
    scale = ax.figure.dpi / 72  # pixels per point
    frame = ax.get_window_extent(renderer)
    captions = [t for t in ax.texts if t.get_gid() == "ceiling-label"]
    wanted = [ax.transData.transform((1.0, t.xy[1]))[1] for t in captions]
    heights = [t.get_window_extent(renderer).height for t in captions]
    for caption, centre, moved in zip(captions, wanted, labels.spread(wanted, heights, frame.y0, frame.y1 + 8)):
        if abs(moved - centre) > 0.5:  # drawn again, moved, with a line from its ceiling's end
            caption.remove()
            ax.annotate(caption.get_text(), caption.xy, xycoords=ax.get_yaxis_transform(),
                        xytext=(CAPTION_GAP + 6, (moved - centre) / scale), textcoords="offset points", ha="left",
                        va="center", fontsize=CAPTION_SIZE, color=caption.get_color(), annotation_clip=False,
                        gid="ceiling-label", arrowprops={"arrowstyle": "-", "color": caption.get_color(),
                                                         "linewidth": 0.6, "shrinkA": 1, "shrinkB": 0})
    area = labels.Box(frame.x0 + 2, frame.y0 + 2, frame.x1 - 2, frame.y1 - 2)
    fixed = [_box(Text.get_window_extent(t, renderer)) for t in ax.texts]  # without a caption's line
    lines = _segments(ax)
    markers = []
    for line in ax.lines:
        if line.get_linestyle() in ("None", "", " ") and line.get_marker() not in ("None", "", None):
            half = (line.get_markersize() / 2 + 1) * scale
            for x, y in ax.transData.transform(line.get_xydata()):
                markers.append(labels.Box(x - half, y - half, x + half, y + half))
    around = labels.ring(tuple(r * scale for r in RINGS))
    shown = panel.points[:LABELLED]
    asked = [(p.label, (p.intensity, p.flop_rate), around, LEADER_FROM * scale) for p in shown]
    for point, where in zip(shown, _placed(ax, renderer, asked, LABEL_SIZE, area, markers, lines, fixed)):
        _annotate(ax, point.label, (point.intensity, point.flop_rate), where, scale, LABEL_SIZE, "#222222",
                  "point-label")


def _placed(ax, renderer, wanted, size, area, markers, lines, fixed) -> list:
    """labels.place for (text, data point, places, leader distance) tuples, each text measured as matplotlib
    lays it out at `size` (its box is as tall as its font's line, whatever its letters)."""
    asked = []
    for text, xy, places, leader in wanted:
        probe = ax.text(0, 0, text, fontsize=size, parse_math=False)
        extent = Text.get_window_extent(probe, renderer)
        probe.remove()
        anchor = tuple(ax.transData.transform(xy))
        asked.append(labels.Wanted(anchor, extent.width, extent.height, places, leader))
    return labels.place(asked, area, markers, lines, fixed)


def _annotate(ax, text, xy, where, scale, size, color, gid):
    place = where.place
    leader = {"arrowprops": {"arrowstyle": "-", "color": "#9a9a9a", "linewidth": 0.6, "shrinkA": 0, "shrinkB": 4}} \
        if where.leader is not None else {}
    return ax.annotate(text, xy, xytext=(place.dx / scale, place.dy / scale), textcoords="offset points",
                       ha=place.ha, va=place.va, fontsize=size, color=color, zorder=5, gid=gid,
                       parse_math=False, **leader)  # a `$` in what a user wrote is a dollar sign, not TeX


def _segments(ax) -> list:
    """The drawn lines of the axes (roofs, ceilings, drops) as segments in pixels."""
    found = []
    for line in ax.lines:
        if line.get_linestyle() in ("None", "", " "):
            continue
        xy = ax.transData.transform(line.get_xydata())
        found.extend((tuple(a), tuple(b)) for a, b in zip(xy, xy[1:]))
    return found


def _box(extent) -> labels.Box:
    return labels.Box(extent.x0, extent.y0, extent.x1, extent.y1)


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
    the GPU's idle gaps shaded. A lane that shows only the start of its stream says so at its right end; a
    title too long for one line wraps between words."""
    scale, unit = _time_unit(data.span)
    with matplotlib.rc_context(STYLE):
        measure = FigureCanvasAgg(Figure(figsize=(TIMELINE_WIDTH, 1), dpi=DPI)).get_renderer()
        titles = [_wrapped(_lane_title(lane), TITLE_WIDTH * DPI, matplotlib.rcParams["axes.titlesize"], measure)
                  for lane in data.lanes]
        extra = sum(title.count("\n") for title in titles)
        figure = _figure(TIMELINE_WIDTH, TIMELINE_FRAME + TIMELINE_LANE * len(data.lanes) + TITLE_LINE * extra)
        axes = figure.subplots(len(data.lanes), 1, sharex=True, squeeze=False)[:, 0]
        for ax, lane, title in zip(axes, data.lanes, titles):
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
            ax.set_title(title, loc="left", parse_math=False)
            zoom = data.zoom(lane)
            if zoom:  # the stream goes on past the span: say how much of it is shown, where it is cut off
                ax.text(1.0, 1.0, f"{zoom} →", transform=ax.transAxes, ha="right", va="top", fontsize=8,
                        color="#444444", gid="zoom")
        zoomed = [data.zoom(lane) for lane in data.lanes if data.zoom(lane)]
        shown = f"; the first {units.format_si(data.span, units.TIME)} of each stream" if zoomed else ""
        axes[-1].set_xlabel(f"time since the first launch call ({unit}){shown}")
        # above every title, in the figure's margin: a lane's title may take two lines
        figure.legend(handles=[Patch(color=HOST_COLORS[0], label="host: one launch"),
                               Patch(color=KERNEL_COLOR, label="GPU: one kernel"),
                               Patch(facecolor=IDLE_COLOR, alpha=0.22, hatch="///", edgecolor=IDLE_COLOR,
                                     label="GPU idle")],
                      loc="outside upper left", ncols=3, fontsize=8, frameon=False)
    return figure


def _lane_title(lane) -> str:
    kernels = sorted(set(lane.kernel_times))
    each = " and ".join(units.format_si(k, units.TIME) for k in kernels)
    launch = (f"one graph launch of {units.format_si(lane.launch_cost, units.TIME)}" if lane.graph else
              f"a launch every {units.format_si(lane.launch_cost, units.TIME)}")
    share = f"{lane.busy_share * 100:.3g}"
    return (f"{lane.name} ({lane.place or f'line {lane.line}'}): {each} kernels, {launch}; "
            f"GPU busy {share}% of the {units.format_si(lane.total, units.TIME)} stream")


def _wrapped(text: str, width: float, size: float, renderer) -> str:
    """`text` in lines no wider than `width` pixels at `size` points, broken between words only (a word
    longer than a line stands alone on its line)."""
    font = FontProperties(size=size)
    lines: list[str] = []
    for word in text.split(" "):
        trial = f"{lines[-1]} {word}" if lines else word
        if lines and renderer.get_text_width_height_descent(trial, font, ismath=False)[0] <= width:
            lines[-1] = trial
        else:
            lines.append(word)
    return "\n".join(lines)


def _time_unit(span: float) -> tuple[float, str]:
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if span >= 2 * scale:
            return scale, unit
    return 1e-9, "ns"
