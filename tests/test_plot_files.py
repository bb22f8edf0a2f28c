"""`gpuspec plot` and `gpuspec report` end to end: the files they write (valid PNG and SVG of the expected size,
the same bytes on every run, one self-contained report) and their errors (in words, exit 2, no traceback)."""
import base64
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from gpuspec import units
from gpuspec.api import check_text
from gpuspec.cli import main
from gpuspec.report import document

pytest.importorskip("matplotlib")
from gpuspec.plot import draw  # noqa: E402  (after the skip: drawing needs matplotlib)

SPEC = """\
device H100-SXM with launch_cost = 5 µs
x = bf16[4096, 4096]
y = x * 2:
    memory-bound, ≈ 20 µs
v = bf16[4096]
small = v * 2
big = 1000 launches of y
tiny = 1000 launches of small:
    busy_share ≈ 40%
"""


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "lesson.gpu"
    path.write_text(SPEC)
    return str(path)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _svg_size(data: bytes) -> tuple[float, float]:
    root = ElementTree.fromstring(data)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return float(root.get("width").removesuffix("pt")), float(root.get("height").removesuffix("pt"))


def test_the_roofline_is_a_png_of_one_panel_per_device(spec, tmp_path, capsys):
    out = tmp_path / "roofline.png"
    assert main(["plot", "roofline", spec, "--out", str(out)]) == 0
    assert "roofline of 4 workloads on 1 device" in capsys.readouterr().out
    width, height = draw.ROOFLINE_PANEL
    assert _png_size(out.read_bytes()) == (width * draw.DPI, height * draw.DPI)
    other = tmp_path / "two.gpu"
    other.write_text(SPEC + "device A100-80GB\nw = bf16[1024]\nw2 = w * 2\n")
    assert main(["plot", "roofline", str(other), "--out", str(out)]) == 0
    assert _png_size(out.read_bytes()) == (width * draw.DPI, 2 * height * draw.DPI)


def test_the_svg_is_the_same_on_every_run_and_carries_no_date(spec, tmp_path):
    first, second = tmp_path / "a.svg", tmp_path / "b.svg"
    assert main(["plot", "roofline", spec, "--out", str(first)]) == 0
    assert main(["plot", "roofline", spec, "--out", str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()
    assert _svg_size(first.read_bytes()) == (draw.ROOFLINE_PANEL[0] * 72, draw.ROOFLINE_PANEL[1] * 72)
    assert b"<dc:date>" not in first.read_bytes()


def test_the_timeline_is_a_picture_with_a_lane_per_stream(spec, tmp_path, capsys):
    out = tmp_path / "timeline.png"
    assert main(["plot", "timeline", spec, "--out", str(out)]) == 0
    assert "timeline of 2 streams" in capsys.readouterr().out
    height = draw.TIMELINE_FRAME + 2 * draw.TIMELINE_LANE
    assert _png_size(out.read_bytes()) == (round(draw.TIMELINE_WIDTH * draw.DPI), round(height * draw.DPI))
    assert main(["plot", "timeline", f"{spec}:8", "--out", str(tmp_path / "one.svg")]) == 0
    one = (tmp_path / "one.svg").read_bytes()
    assert _svg_size(one)[1] == pytest.approx((draw.TIMELINE_FRAME + draw.TIMELINE_LANE) * 72)


def _fails(argv, capsys, *words):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err
    return err


def test_bad_requests_are_errors_in_words(spec, tmp_path, capsys):
    out = str(tmp_path / "p.png")
    _fails(["plot", "roofline", spec, "--out", str(tmp_path / "p.jpg")], capsys, "p.jpg", ".png or .svg", "`.jpg`")
    _fails(["plot", "timeline", f"{spec}:2", "--out", out], capsys, f"{spec}:2:", "no workload on this line",
           "3 (y)")
    _fails(["plot", "timeline", f"{spec}:3", "--out", out], capsys, f"{spec}:3:", "not a launch stream",
           "7 (big), 8 (tiny)")
    _fails(["plot", "timeline", f"{spec}:400", "--out", out], capsys, f"{spec}:400:",
           "past the end of the file, which has 9 lines")
    _fails(["plot", "roofline", str(tmp_path / "missing.gpu"), "--out", out], capsys, "missing.gpu",
           "cannot read the file")
    empty = tmp_path / "facts.gpu"
    empty.write_text("device H100-SXM\ndevice.sms = 132\n")
    _fails(["plot", "roofline", str(empty), "--out", out], capsys, "facts.gpu", "nothing to put on a roofline")
    _fails(["plot", "roofline", spec, "--out", str(tmp_path / "no" / "such" / "p.png")], capsys, "cannot write")
    _fails(["report", spec, "--out", str(tmp_path / "r.txt")], capsys, ".html or .md", "--format")


def test_a_failed_write_leaves_what_was_there_and_no_partial_file(spec, tmp_path, capsys):
    out = tmp_path / "p.png"
    out.mkdir()  # a folder in the way: the picture cannot be renamed over it
    (out / "kept").write_text("kept")
    _fails(["plot", "roofline", spec, "--out", str(out)], capsys, "cannot write", "p.png")
    assert (out / "kept").read_text() == "kept"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_without_matplotlib_plot_says_how_to_install_it(spec, tmp_path, root):
    code = ("import sys; sys.modules['matplotlib'] = None; from gpuspec.cli import main; "
            f"sys.exit(main(['plot', 'roofline', {spec!r}, '--out', {str(tmp_path / 'p.png')!r}]))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "pip install 'gpuspec[plot]'" in result.stderr
    assert not (tmp_path / "p.png").exists()


# --- the report ------------------------------------------------------------------------------------

FAILING = SPEC + "y is ≈ 30 µs\n"


def test_report_rows_put_failures_first_with_every_source_side_by_side():
    report = check_text(FAILING, "f.gpu")
    rows = document.rows(report)
    assert rows[0].status == "fail" and rows[0].where == "f.gpu:10" and "30 µs" in rows[0].message
    assert [r.status for r in rows[1:]] == ["pass"] * (len(rows) - 1)
    assert [r.where for r in rows[1:]] == sorted((r.where for r in rows[1:]), key=lambda w: int(w.split(":")[1]))
    assert document.sources(report) == ("model",)
    assert rows[0].cells[0].status == "fail" and rows[0].cells[0].text.endswith("✗")


def test_the_html_report_is_one_file_with_the_pictures_inlined(tmp_path, capsys):
    spec = tmp_path / "f.gpu"
    spec.write_text(FAILING)
    out = tmp_path / "report.html"
    assert main(["report", str(spec), "--out", str(out)]) == 1  # a claim fails: check's exit code
    assert "report written to" in capsys.readouterr().out
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "src=\"http" not in page
    first_row = re.search(r'<details class="claim (\w+) f1"><summary><span class="row"><span class="mark"[^>]*>'
                          r'</span><span class="where">(.+?)</span>', page)
    assert (first_row[1], first_row[2].replace("<wbr>", "")) == ("fail", f"{spec}:10")
    images = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page)
    assert len(images) == 2  # the roofline and the launch streams
    for image in images:
        assert _svg_size(base64.b64decode(image))[0] == draw.ROOFLINE_PANEL[0] * 72


def test_the_markdown_report(tmp_path):
    spec = tmp_path / "f.gpu"
    spec.write_text(FAILING)
    out = tmp_path / "report.md"
    assert main(["report", str(spec), "--out", str(out), "--format", "markdown"]) == 1
    text = out.read_text()
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert table[0] == "| Where | Device | Claim | model | Why it fails |"
    where = document.markdown_cell(f"{spec}:10")
    assert table[2].startswith(f"| {where} | H100-SXM | y is ≈ 30 µs | 20.03 µs ✗ | time = 20.03 µs")
    assert "| y = x \\* 2: memory-bound | memory ✓ |" in text
    # the pictures are too large for a PR comment or job summary: named, with where to get them, not inlined
    assert "data:image" not in text and text.count("Not inlined: ") == 2 and "`--format html`" in text


# --- numbers no axis can hold: a located refusal, or a report that says which picture is missing and why ----

TINY_BANDWIDTH = "device H100-SXM with hbm_bandwidth = 1e-305 TB/s\nx = bf16[4096]\nx * 2 is ≈ 2 µs\n"
OVERFLOWING_QUEUE = "device H100-SXM with launch_cost = 1e306 s\nx = bf16[4096]\nsmall = x * 2\n" \
                    "s = 1000 launches of small\n"


def test_a_roofline_no_axis_can_hold_is_refused_with_the_fact_and_its_line(tmp_path, capsys):
    path = tmp_path / "tiny.gpu"
    path.write_text(TINY_BANDWIDTH)
    out = tmp_path / "r.png"
    # the ridge point overflowed: OverflowError in the axis limits, exit 3
    err = _fails(["plot", "roofline", str(path), "--out", str(out)], capsys, f"{path}:3:", "x * 2",
                 "hbm_bandwidth = 1.00e-293 B/s", "outside what a roofline's axes hold")
    assert err.count("\n") == 1 and not out.exists()


def test_a_timeline_of_a_queue_that_overflows_is_refused_naming_the_stream(tmp_path, capsys):
    path = tmp_path / "queue.gpu"
    path.write_text(OVERFLOWING_QUEUE)
    out = tmp_path / "t.svg"
    _fails(["plot", "timeline", str(path), "--out", str(out)], capsys, f"{path}:4:", "`s` has no timeline to draw",
           "overflows")
    assert not out.exists()


@pytest.mark.parametrize("format", ["html", "markdown"])
def test_a_report_says_which_picture_is_not_drawn_and_why(tmp_path, capsys, format):
    path = tmp_path / "tiny.gpu"
    path.write_text(TINY_BANDWIDTH + "small = x * 3\n1000 launches of small is ≈ 1 s\n")
    out = tmp_path / f"r.{'md' if format == 'markdown' else 'html'}"
    assert main(["report", str(path), "--out", str(out)]) == 1  # the claims are checked, and fail
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "internal error" not in captured.err
    page = out.read_text().replace("\\", "")  # Markdown escapes `_` and `*`
    assert "Not drawn: " in page and "hbm_bandwidth = 1.00e-293 B/s" in page and "FILE:LINE" not in page
    drawn = "data:image/svg+xml;base64," if format == "html" else "Not inlined: "
    assert page.count(drawn) == 1  # the launch streams are drawn
    path.write_text(OVERFLOWING_QUEUE + "small is ≈ 2 µs\n")
    assert main(["report", str(path), "--out", str(out)]) == 0  # the stream has no claim to check
    assert "Traceback" not in capsys.readouterr().err
    assert "`s` has no timeline to draw" in out.read_text().replace("\\", "")


# --- what the drawn pictures hold: labels that cover nothing, shared ranges, wrapped titles, zoom notes ----

from matplotlib.text import Text  # noqa: E402

from gpuspec.plot import data, labels, select  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
L4_AND_H100 = SPEC + "device L4\nq = bf16[4096, 4096]\nq2 = q * 2\nq3 = q2 + q\na = bf16[4096, 8192]\n" \
    "b = bf16[8192, 4096]\nm = a @ b\n"


def _drawn_roofline(tmp_path, text=None, folder=None, shared=True):
    if folder is None:
        path = tmp_path / "r.gpu"
        path.write_text(text)
        folder = str(path)
    panels = data.roofline(select.roofline_subjects(select.load_targets([(folder, None)])), shared=shared)
    figure = draw.roofline(panels)
    figure.canvas.draw()
    return panels, figure


def _words(figure, ax) -> list[tuple[str, str, labels.Box]]:
    """Every text in the axes (ceiling captions, ridge labels, point labels) as (gid, text, box without leader)."""
    renderer = figure.canvas.get_renderer()
    found = []
    for text in ax.texts:
        extent = Text.get_window_extent(text, renderer)
        found.append((text.get_gid(), text.get_text(), labels.Box(extent.x0, extent.y0, extent.x1, extent.y1)))
    return found


CLOSE_CEILINGS = "device L4 with tensor_tf32 = 32 TFLOP/s, tensor_fp8 = 130 TFLOP/s\nx = bf16[4096]\ny = x * 2\n"


@pytest.mark.parametrize("which", ["lesson", "bundled specs", "L4 beside H100", "close ceilings"])
def test_no_label_of_a_drawn_roofline_covers_another_and_no_leader_crosses(tmp_path, which):
    if which == "bundled specs":
        panels, figure = _drawn_roofline(tmp_path, folder=str(ROOT / "specs"))
    else:
        text = {"lesson": SPEC, "L4 beside H100": L4_AND_H100, "close ceilings": CLOSE_CEILINGS}[which]
        panels, figure = _drawn_roofline(tmp_path, text)
    renderer = figure.canvas.get_renderer()
    for ax, panel in zip(figure.axes, panels):
        words = _words(figure, ax)
        boxes = [box for _, _, box in words]
        overlapping = [(words[i][1], words[j][1]) for i in range(len(boxes)) for j in range(i + 1, len(boxes))
                       if boxes[i].overlap(boxes[j]) > 0]
        assert overlapping == []
        frame = ax.get_window_extent(renderer)
        points = [(gid, text, box) for gid, text, box in words if gid == "point-label"]
        assert sorted(text for _, text, _ in points) == sorted(p.label for p in panel.points)  # each once
        for _, text, box in points:
            assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1, text
        markers = [ax.transData.transform((p.intensity, p.flop_rate)) for p in panel.points]
        for _, text, box in points:  # no label over a workload's marker (its centre)
            assert not any(box.x0 < x < box.x1 and box.y0 < y < box.y1 for x, y in markers), text
        leaders = [labels.Placed(None, box, (anchor, labels._edge(anchor, box)), 0.0)
                   for text in ax.texts if text.get_gid() == "point-label" and text.arrow_patch is not None
                   for anchor in [tuple(ax.transData.transform(text.xy))]
                   for box in [labels.Box(*Text.get_window_extent(text, renderer).extents)]]
        assert labels.crossings(leaders) == 0
        captions = [text for gid, text, _ in words if gid == "ceiling-label"]
        assert sorted(captions) == sorted(c.caption for c in panel.roofs[0].ceilings)  # one per ceiling, each once
        for text in ax.texts:  # beside its ceiling, or moved with a line back to it
            if text.get_gid() == "ceiling-label":
                middle = Text.get_window_extent(text, renderer).y0 / 2 + Text.get_window_extent(text, renderer).y1 / 2
                at = ax.transData.transform((1.0, text.xy[1]))[1]
                assert abs(middle - at) < 1 or text.arrow_patch is not None, text.get_text()
    if which == "close ceilings":  # 30.3, 32 (tf32), 121 and 130 TFLOP/s: two pairs pushed apart, with lines
        moved = [t for t in figure.axes[0].texts if t.get_gid() == "ceiling-label" and t.arrow_patch is not None]
        assert len(moved) >= 2


def test_the_l4_ceilings_at_30_tflops_are_one_caption(tmp_path):
    panels, figure = _drawn_roofline(tmp_path, L4_AND_H100)
    l4 = figure.axes[1]
    assert panels[1].device == "L4" and l4.get_title(loc="left").startswith("L4")
    captions = [t.get_text() for t in l4.texts if "30.3 TFLOP/s" in t.get_text()]
    assert captions == ["fp32 · fp16 · bf16 30.3 TFLOP/s"]


def test_panels_are_drawn_on_one_range_unless_own_axes_is_asked(tmp_path, capsys):
    _, figure = _drawn_roofline(tmp_path, L4_AND_H100)
    h100, l4 = figure.axes[:2]
    assert h100.get_xlim() == l4.get_xlim() and h100.get_ylim() == l4.get_ylim()
    _, own = _drawn_roofline(tmp_path, L4_AND_H100, shared=False)
    assert own.axes[0].get_ylim() != own.axes[1].get_ylim()
    spec = tmp_path / "r.gpu"
    shared_svg, own_svg = tmp_path / "shared.svg", tmp_path / "own.svg"
    assert main(["plot", "roofline", str(spec), "--out", str(shared_svg)]) == 0
    assert main(["plot", "roofline", str(spec), "--own-axes", "--out", str(own_svg)]) == 0
    assert shared_svg.read_bytes() != own_svg.read_bytes()
    assert _svg_size(own_svg.read_bytes()) == _svg_size(shared_svg.read_bytes())


STREAMS = """\
device H100-SXM
x = bf16[4096]
tiny = x * 2
y = bf16[4096, 4096]
big = y * 2
streamed = 1000 launches of big
10,000 launches of tiny as a CUDA graph
10,000 launches of tiny
"""


def test_a_long_lane_title_wraps_between_words_and_a_zoomed_lane_says_how_much_it_shows(tmp_path):
    path = tmp_path / "s.gpu"
    path.write_text(STREAMS)
    drawn = data.timeline(select.stream_subjects(select.load_targets([(str(path), None)])))
    figure = draw.timeline(drawn)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    width = figure.get_window_extent(renderer).width
    titles = [ax.get_title(loc="left") for ax in figure.axes]
    assert [t.replace("\n", " ") for t in titles] == [draw._lane_title(lane) for lane in drawn.lanes]
    graph = titles[1]
    assert graph.startswith("10,000 launches of tiny as a CUDA graph (line 7): ") and "\n" in graph
    for ax in figure.axes:
        extent = ax.title.get_window_extent(renderer)
        assert 0 <= extent.x0 and extent.x1 <= width  # nothing cut off at the figure's edge
    wrapped = sum(t.count("\n") for t in titles)
    assert figure.get_size_inches()[1] == pytest.approx(draw.TIMELINE_FRAME + 3 * draw.TIMELINE_LANE
                                                        + wrapped * draw.TITLE_LINE)
    notes = [[t.get_text() for t in ax.texts if t.get_gid() == "zoom"] for ax in figure.axes]
    span = units.format_si(drawn.span, units.TIME)
    assert notes == [[f"first {span} of 20.0 ms →"], [f"first {span} of 25.0 ms →"], [f"first {span} of 36.0 ms →"]]
    assert figure.axes[-1].get_xlabel().endswith(f"; the first {span} of each stream")
    path.write_text("device H100-SXM\nx = bf16[4096]\ntiny = x * 2\nfour = 4 launches of tiny\n")
    whole = data.timeline(select.stream_subjects(select.load_targets([(str(path), None)])))
    figure = draw.timeline(whole)
    assert [t for ax in figure.axes for t in ax.texts if t.get_gid() == "zoom"] == []  # all of it is shown
    assert figure.axes[-1].get_xlabel() == "time since the first launch call (µs)"
