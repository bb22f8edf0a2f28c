"""`gpuspec plot` and `gpuspec report` end to end: the files they write (valid PNG and SVG of the expected size,
the same bytes on every run, one self-contained report) and their errors (in words, exit 2, no traceback)."""
import base64
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

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
    _fails(["plot", "timeline", f"{spec}:400", "--out", out], capsys, f"{spec}:400:", "past the end of the file, which has 9 lines")
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
    first_row = re.search(r'<tr class="(\w+)"><td class="where">([^<]+)</td>', page)
    assert first_row.groups() == ("fail", f"{spec}:10")
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
    assert table[0] == "| Where | Claim | model | Why it fails |"
    where = document.markdown_cell(f"{spec}:10")
    assert table[2].startswith(f"| {where} | y is ≈ 30 µs | 20.03 µs ✗ | time = 20.03 µs")
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
