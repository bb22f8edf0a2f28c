"""Reports GitHub shows keep to its limits, and count what they leave out in words that fit the count: the Markdown
`check` prints (a PR comment, 65,536 characters) and what `--format github` appends to GITHUB_STEP_SUMMARY (1 MiB a
step), with thousands of failures; the notebook's summary and the left-out lines say `1 error`, `1 more file`."""
from __future__ import annotations

import re

from conftest import check_for_github

from gpuspec.api import check_text
from gpuspec.report import github, markdown, notebook
from gpuspec.report.markdown import LIMIT, SUMMARY_LIMIT, Section, fitted

FAILING, HOLDING = 3000, 500
SPEC = "device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2\n" + "y is ≈ 30 µs\n" * FAILING + "y is ≈ 20 µs\n" * HOLDING


def _report():
    return check_text(SPEC, "specs/big.gpu")


def _rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"\| \S*big\.gpu:", line)]


def test_the_markdown_check_report_fits_a_pr_comment_and_counts_what_it_leaves_out():
    text = markdown.render(_report())
    assert len(text) <= LIMIT  # it was 578 kB
    rows = _rows(text)
    assert all("≈ 30 µs" in row for row in rows)  # every row that holds went first
    left = re.search(r"([\d,]+) more failures \(", text)
    assert left and int(left[1].replace(",", "")) == FAILING - len(rows) and len(rows) > 100
    assert f"{HOLDING} more claims that hold" in text
    assert text.startswith(f"**gpuspec**: {HOLDING} passed, {FAILING} failed")


def test_a_small_report_is_whole():
    text = markdown.render(check_text("device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2:\n    ≈ 30 µs\n"
                                      "    ≈ 20 µs\n", "a.gpu"), whole=True)
    assert "more" not in text and "<summary>1 passed</summary>" in text and "### Failed (1)" in text


def test_the_job_summary_keeps_under_a_mib_with_thousands_of_failures(tmp_path, capsys):
    spec = tmp_path / "big.gpu"
    spec.write_text(SPEC, encoding="utf-8")
    summary = tmp_path / "summary.md"
    earlier = "an earlier command of the step wrote this\n" * 1000
    summary.write_text(earlier, encoding="utf-8")
    code, out, err = check_for_github(spec, summary, capsys)
    assert code == 1 and err == ""
    written = summary.read_bytes()
    assert len(written) <= SUMMARY_LIMIT < 1024 * 1024  # it appended 3.3 MB
    text = written.decode("utf-8")[len(earlier):]
    assert len(text.encode("utf-8")) > SUMMARY_LIMIT // 2  # the room is used, in bytes (µ and ≈ take two and three)
    shown = len(re.findall(r"<summary>.*: ≈ 30 µs \(model\)</summary>", text))
    left = re.search(r"([\d,]+) more derivations", text)
    assert left and int(left[1].replace(",", "")) == FAILING - shown  # the derivations go before any failure row
    assert len(_rows(text)) == FAILING and f"{HOLDING} more claims that hold" in text
    assert out.count("::error ") == FAILING  # the annotations are not cut


def test_the_summary_makes_room_for_what_the_step_wrote_already(tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("x" * (SUMMARY_LIMIT - 20_000), encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    github.render(_report())
    assert len(summary.read_bytes()) <= SUMMARY_LIMIT


def test_a_count_of_one_is_singular():
    rows = ("| a.gpu |", "| " + "b" * 100 + ".gpu |")
    section = Section(("| File |", "| --- |"), rows, 0, "{n} more files", "1 more file")
    text = fitted([section], limit=60)
    assert "| a.gpu |" in text and "1 more file." in text and "files" not in text
    broken = check_text("device H100-SXM\nx = nope\n", "a.gpu")
    assert "0 passed, 0 failed, 1 error<" in notebook.table(broken)
    two = check_text("device H100-SXM\nx = nope\ny = nope\n", "a.gpu")
    assert "0 passed, 0 failed, 2 errors<" in notebook.table(two)
