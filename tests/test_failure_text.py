"""Failures that fit on a screen: the lines that decide a failure by default, the whole tree with -v, short
GitHub annotations, and the whole Markdown report appended to the job summary, written safely."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import check_for_github

from gpuspec.api import check_text
from gpuspec.report import github, markdown, text

ROOT = Path(__file__).resolve().parent.parent
SLOW = "device H100-SXM\nx = fp32[4096, 4096]\ny = x * 2:\n    ≈ 30 µs\n"
LEAF = "hbm_bandwidth = 3.35 TB/s [S-HPCT]"


def test_a_failure_shows_the_max_line_and_the_winning_term_only():
    shown = text.render(check_text(SLOW, "a.gpu"))
    assert "    time = max(t_mem, t_issue, kernel_floor) = max(40.1 µs, 501 ns, 2.00 µs) = 40.1 µs\n" \
           "      t_mem = bytes_moved / hbm_bandwidth = 134.2 MB / 3.35 TB/s = 40.1 µs\n" in shown
    assert LEAF not in shown and "t_math = flops" not in shown
    assert "(-v shows each failure's whole derivation)" in shown


def test_verbose_shows_the_whole_tree():
    shown = text.render(check_text(SLOW, "a.gpu"), verbose=True)
    assert LEAF in shown and "t_issue = instructions / issue_rate" in shown and "bytes_moved = bytes_read" in shown
    assert "-v shows" not in shown


def test_a_sum_is_decided_by_its_largest_term():
    spec = "device H100-SXM\nx = fp32[4096, 4096]\ny = x * 2\nz = x * 3\ny.time + z.time + 1 µs ≈ 1 µs\n"
    shown = text.render(check_text(spec, "a.gpu"))
    lines = [line for line in shown.splitlines() if line.startswith("    ") and " = " in line]
    assert lines[-2].lstrip().startswith("y.time + z.time + 1 µs = ")
    assert lines[-1].startswith("      ") and "40.1 µs" in lines[-1]


def test_the_derivation_of_a_failed_equality_has_the_digits_that_show_why():
    # 295.34 fails `= 295.4`: a derivation ending `= 295 FLOP/B` would not show why; it ends as the message says.
    spec = "device H100-SXM\ndevice.tensor_bf16 / device.hbm_bandwidth = 295.4 FLOP/B\n"
    report = check_text(spec, "a.gpu")
    shown = text.render(report)
    assert "= 295.34 FLOP/B, which does not round to 295.4 FLOP/B" in shown
    assert "989.4 TFLOP/s / 3.35 TB/s = 295.34 FLOP/B\n" in shown and "= 295 FLOP/B" not in shown
    assert "= 295.34 FLOP/B" in markdown.render(report, whole=True)
    # an ≈ claim shows its tolerance's interval: the derivation keeps its three digits
    approximate = text.render(check_text("device H100-SXM\ndevice.tensor_bf16 / device.hbm_bandwidth ≈ 250.4 FLOP/B"
                                         "\n", "a.gpu"))
    assert approximate.rstrip().splitlines()[-3].endswith("= 295 FLOP/B")


def test_a_whole_number_claimed_equal_shows_the_fraction_it_turns_on_and_a_named_number_its_every_digit():
    # 123,456,789.5 B does not round to 123,456,789 B: four digits would say 123,456,790, as if it rounded up past it
    report = check_text("big = 123456789.5 B\nbig is = 123456789 B\nr = 562.5 FLOP/B\nr is = 562 FLOP/B\n", "a.gpu")
    shown = text.render(report)
    assert "big = 123456789.5 B, which does not round to 123456789 B" in shown
    assert "r = 562.5 FLOP/B, which does not round to 562 FLOP/B" in shown
    assert "    big = 123456789.5 B\n" in shown and "= 123 MB" not in shown  # the named number as written
    assert "    r = 562.5 FLOP/B\n" in shown and "562.5 FLOP/B = 562" not in shown


def test_explain_shows_each_claims_verdict_in_the_words_of_its_failure(tmp_path):
    from gpuspec.api import explain
    from gpuspec.report.explain import render

    path = tmp_path / "e.gpu"
    path.write_text("device B200\nx = fp8[8192, 8192]\nc = x @ x:\n    ridge_point = 562 FLOP/B\n    tiles = 4096\n"
                    "x * 2 in practice ≈ 40 µs\n")
    block = render(explain(path, 4), {})
    assert "  claims:\n    4:5 fail: ridge_point = 562.5 FLOP/B, which does not round to 562 FLOP/B\n" in block
    assert "tiles" not in block.split("claims:")[1]  # the line asked for alone
    whole = render(explain(path, 3), {})
    assert "4:5 fail: ridge_point" in whole and "5:5 pass: tiles = 4,096" in whole
    real = render(explain(path, 6), {})
    assert "6:19 fail (calibrated): time = 28.30 µs, not ≈ 40 µs (± 10%: 36.0–44.0 µs)" in real


def test_the_readme_shows_what_a_failure_prints():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### When a claim fails"):]
    blocks = re.findall(r"```\n(.*?)```", section, re.S)
    spec, output = blocks[0], blocks[1]
    printed = text.render(check_text(spec, "specs/a.gpu"))
    assert output in printed, printed


def test_a_github_annotation_is_short():
    shown = github.render(check_text(SLOW, "a.gpu"))
    error = next(line for line in shown.splitlines() if line.startswith("::error "))
    message = error.split("::", 2)[2].split("%0A")
    assert message[0].startswith("time = 40.06 µs, not ≈ 30 µs")
    assert message[-2:] == ["time = max(t_mem, t_issue, kernel_floor) = max(40.1 µs, 501 ns, 2.00 µs) = 40.1 µs",
                            "t_mem = bytes_moved / hbm_bandwidth = 134.2 MB / 3.35 TB/s = 40.1 µs"]
    assert len(message) <= 5 and LEAF not in error


def _github(tmp_path, capsys, summary) -> tuple[int, str, str]:
    spec = tmp_path / "a.gpu"
    spec.write_text(SLOW, encoding="utf-8")
    return check_for_github(spec, summary, capsys)


def test_the_job_summary_gets_the_whole_report_appended(tmp_path, capsys):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step's summary\n", encoding="utf-8")
    code, out, err = _github(tmp_path, capsys, summary)
    assert code == 1 and err == ""
    written = summary.read_text(encoding="utf-8")
    assert written.startswith("earlier step's summary\n**gpuspec**: 0 passed, 1 failed")
    assert "<details>" in written and "- hbm\\_bandwidth = 3.35 TB/s \\[S-HPCT\\]" in written
    assert LEAF not in out  # the annotations stay short


def test_a_job_summary_that_is_a_symbolic_link_is_not_followed(tmp_path, capsys):
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n", encoding="utf-8")
    link = tmp_path / "summary.md"
    link.symlink_to(target)
    code, out, err = _github(tmp_path, capsys, link)
    assert code == 1 and target.read_text(encoding="utf-8") == "keep me\n"
    assert "warning: the job summary was not written" in err and "symbolic link" in err and "Traceback" not in err
    assert "::error " in out


@pytest.mark.parametrize("make", ["directory", "missing_folder"])
def test_a_job_summary_that_cannot_be_written_is_a_warning(tmp_path, capsys, make):
    where = tmp_path / "summary"
    if make == "directory":
        where.mkdir()
    else:
        where = tmp_path / "no" / "such" / "summary.md"
    code, out, err = _github(tmp_path, capsys, where)
    assert code == 1 and "warning: the job summary was not written" in err and "Traceback" not in err
    assert "::error " in out


def test_the_markdown_summary_escapes_what_a_user_wrote():
    shown = markdown.render(check_text(SLOW, "@octocat|<b>\x1b.gpu"), whole=True)
    summary = shown[shown.index("<details>"):]
    # raw HTML, where Markdown's backslash escapes are not read: escaped as HTML (`\<b\>` was a <b> tag there)
    assert "<summary>@\u2060octocat|&lt;b&gt;\\x1b.gpu:4: ≈ 30 µs (model)</summary>" in summary, summary
    assert "@octocat" not in summary and "\x1b" not in summary
