"""Exit statuses: a run that checked nothing is not a pass (5, with a one-line reason), errors win over failures
(2 over 1 over 5), a crash is never a failing claim (3, one line, the traceback only when asked), and printing
many errors reads each document's lines once."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuspec.api import check_text
from gpuspec.cli import main
from gpuspec.diagnostics import Diagnostic
from gpuspec.report import EXIT_FAILED, EXIT_INTERNAL, EXIT_INVALID, EXIT_NOTHING, EXIT_OK, Report, junit
from gpuspec.report import text as text_report
from gpuspec.text import Span

ROOT = Path(__file__).resolve().parent.parent
PASSING = "device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2 is ≈ 20 µs\n"
FAILING = PASSING.replace("≈ 20 µs", "≈ 99 µs")
MEASURED_ONLY = "device H100-SXM\nset sources = measured\nx = bf16[4096, 4096]\ny = x * 2 is ≈ 20 µs\n"


def check(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["check", *[str(a) for a in argv]])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, captured.out, captured.err


def reason(out: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith("nothing checked: ")]
    return line


# Nothing checked: exit 5 and why, in one line

def test_an_empty_folder_checks_nothing(tmp_path, capsys):
    code, out, _ = check(capsys, tmp_path)
    assert code == EXIT_NOTHING
    assert reason(out) == f"nothing checked: no .gpu files or Markdown gpu blocks under {tmp_path}"
    assert out.splitlines()[-1] == "0 passed, 0 failed"


def test_a_folder_without_specs_checks_nothing(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("x*2 is ≈ 20 µs\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("# Prose\n\n```python\nprint(1)\n```\n", encoding="utf-8")
    code, out, _ = check(capsys, tmp_path)
    assert code == EXIT_NOTHING and reason(out).startswith("nothing checked: no .gpu files")


def test_a_markdown_file_of_near_misses_checks_nothing(tmp_path, capsys):
    path = tmp_path / "doc.md"
    path.write_text("# Doc\n\n```GPU\ndevice H100-SXM\nx*2 on 4096² bf16 is ≈ 20 µs\n```\n", encoding="utf-8")
    code, out, _ = check(capsys, path)
    assert code == EXIT_NOTHING
    assert reason(out).startswith(f"nothing checked: no claims in {path} (in ```gpu fences or <!-- gpu --> comments)")


def test_a_markdown_file_whose_gpu_block_makes_no_claim_says_so(tmp_path, capsys):
    path = tmp_path / "doc.md"
    path.write_text("# Doc\n\n```gpu\ndevice H100-SXM\nx = bf16[8]\n```\n", encoding="utf-8")
    code, out, _ = check(capsys, path)
    assert code == EXIT_NOTHING  # it has a gpu block: "no gpu blocks" would send its author looking for the wrong thing
    assert reason(out) == f"nothing checked: no claims in {path} (in ```gpu fences or <!-- gpu --> comments)"


def test_a_spec_without_claims_checks_nothing(tmp_path, capsys):
    path = tmp_path / "a.gpu"
    path.write_text("device H100-SXM\nx = bf16[4096, 4096]\n", encoding="utf-8")
    code, out, _ = check(capsys, path)
    assert code == EXIT_NOTHING and reason(out) == f"nothing checked: no claims in {path}"


def test_measured_claims_with_nothing_measured_check_nothing(tmp_path, capsys):
    path = tmp_path / "a.gpu"
    path.write_text(MEASURED_ONLY, encoding="utf-8")
    code, out, _ = check(capsys, path)
    assert code == EXIT_NOTHING
    assert reason(out).startswith("nothing checked: its one claim was skipped (measured: ")
    assert out.splitlines()[-1] == "0 passed, 0 failed, 1 skipped"


def test_standard_input_without_claims_checks_nothing(tmp_path):
    done = subprocess.run([sys.executable, "-m", "gpuspec", "check", "-"], input="device H100-SXM\n",
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == EXIT_NOTHING
    assert "nothing checked: no claims in standard input" in done.stdout


@pytest.mark.parametrize("format", ["json", "junit", "markdown", "github"])
def test_every_format_exits_5_and_says_why_on_stderr(tmp_path, capsys, format):
    code, out, err = check(capsys, "--format", format, tmp_path)
    assert code == EXIT_NOTHING
    assert err.strip() == f"nothing checked: no .gpu files or Markdown gpu blocks under {tmp_path}"
    if format == "json":
        assert json.loads(out)["summary"] == {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
    if format == "github":  # and an annotation on the run
        assert "::warning title=gpuspec::nothing checked: no .gpu files or Markdown gpu blocks under " in out
    if format == "markdown":
        assert "Nothing checked: no .gpu files or Markdown gpu blocks under" in out


def test_output_to_a_file_still_says_why_on_stderr(tmp_path, capsys):
    code, out, err = check(capsys, "--output", tmp_path / "report.txt", tmp_path)
    assert code == EXIT_NOTHING and out == "0 passed, 0 failed\n" and err.startswith("nothing checked: ")
    assert "nothing checked: " in (tmp_path / "report.txt").read_text(encoding="utf-8")


def test_allow_nothing_checked_exits_0_and_still_says_so(tmp_path, capsys):
    code, out, _ = check(capsys, "--allow-nothing-checked", tmp_path)
    assert code == EXIT_OK and reason(out)
    spec = tmp_path / "a.gpu"
    spec.write_text(FAILING, encoding="utf-8")
    assert check(capsys, "--allow-nothing-checked", spec)[0] == EXIT_FAILED  # it changes nothing else


def test_update_with_nothing_to_check_still_exits_5(tmp_path, capsys):
    path = tmp_path / "a.gpu"
    path.write_text(MEASURED_ONLY, encoding="utf-8")
    assert check(capsys, "--update", path)[0] == EXIT_NOTHING
    assert path.read_text(encoding="utf-8") == MEASURED_ONLY


def test_report_of_nothing_is_written_and_exits_5(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "report.md"
    assert main(["report", "--out", str(out), str(tmp_path)]) == EXIT_NOTHING
    err = capsys.readouterr().err
    assert err.startswith("nothing checked: no .gpu files")
    assert "Nothing checked: no .gpu files" in out.read_text(encoding="utf-8")


def test_the_reason_mentions_warnings_when_there_were_some():
    warning = Diagnostic("near-miss", "```GPU is not a gpu block", Span("doc.md", 3, 1, 3, 7), "write ```gpu")
    report = Report([], [], ["doc.md"], {"doc.md": "# Doc\n\n```GPU\n```\n"}, [warning], ["doc.md"])
    assert report.exit_code == EXIT_NOTHING
    assert report.nothing_checked() == ("nothing checked: no claims in doc.md (in ```gpu fences or <!-- gpu --> "
                                        "comments); 1 warning may say why")
    shown = text_report.render(report)
    assert "doc.md:3:1: warning[near-miss]: ```GPU is not a gpu block" in shown
    assert shown.index("warning[near-miss]") < shown.index("nothing checked")  # the warning is above its mention


# A run asked to measure that measured nothing: exit 5, and why

def _results(tmp_path, status: str = "ok") -> Path:
    """A results file of a workload none of these specs has (or of one whose harness failed)."""
    from gpuspec.results import Measurement, save

    path = tmp_path / "results.json"
    summary = {"median": 2e-5, "p10": 2e-5, "p90": 2e-5, "samples": 3}
    save(path, [Measurement("0123456789abcdef", "other.gpu", 3, "w = v * 2", status,
                            None if status == "ok" else "the harness crashed", {"time": summary} if status == "ok"
                            else {}, {"gpu": "NVIDIA H100 80GB HBM3", "device": "cuda"})])
    return path


def test_results_that_measure_no_claim_check_nothing_though_the_model_holds(tmp_path, capsys):
    spec = tmp_path / "a.gpu"
    spec.write_text(PASSING, encoding="utf-8")
    code, out, _ = check(capsys, spec, "--results", _results(tmp_path))
    assert code == EXIT_NOTHING
    assert (f"nothing measured: every measured claim was skipped (1 claim; the first, {spec}:3: no measurement of "
            "this workload") in out
    assert out.splitlines()[-1] == "1 passed, 0 failed, 1 skipped"
    code, out, err = check(capsys, spec, "--results", _results(tmp_path), "--format", "json")
    assert code == EXIT_NOTHING and json.loads(out)["nothing_checked"].startswith("nothing measured: ")
    assert err.startswith("nothing measured: ")
    assert check(capsys, spec, "--results", _results(tmp_path), "--allow-nothing-checked")[0] == EXIT_OK
    assert check(capsys, spec, "--results", _results(tmp_path), "--require-measure")[0] == EXIT_FAILED
    assert check(capsys, spec)[0] == EXIT_OK  # not asked to measure: the model's pass is a pass


def test_a_failing_claim_still_wins_over_nothing_measured(tmp_path, capsys):
    spec = tmp_path / "a.gpu"
    spec.write_text(FAILING, encoding="utf-8")
    assert check(capsys, spec, "--results", _results(tmp_path, "error"))[0] == EXIT_FAILED


def test_results_for_specs_without_a_measured_claim_check_nothing(tmp_path, capsys):
    spec = tmp_path / "a.gpu"
    spec.write_text("device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2 is 62 waves\n", encoding="utf-8")
    code, out, _ = check(capsys, spec, "--results", _results(tmp_path))
    assert code == EXIT_NOTHING and "nothing measured: no claim is about what a harness measures" in out


# Which status wins

def test_errors_win_over_failures_and_failures_over_nothing(tmp_path, capsys):
    failing, passing, measured = (tmp_path / name for name in ("f.gpu", "p.gpu", "m.gpu"))
    failing.write_text(FAILING, encoding="utf-8")
    passing.write_text(PASSING, encoding="utf-8")
    measured.write_text(MEASURED_ONLY, encoding="utf-8")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert check(capsys, passing)[0] == EXIT_OK
    assert check(capsys, passing, measured)[0] == EXIT_OK  # one claim checked is enough; the rest skipped
    assert check(capsys, measured, failing)[0] == EXIT_FAILED
    assert check(capsys, empty, tmp_path / "missing.gpu")[0] == EXIT_INVALID
    assert check(capsys, failing, tmp_path / "missing.gpu")[0] == EXIT_INVALID


def test_the_exit_codes_are_documented_in_check_help_and_the_readme(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    shown = capsys.readouterr().out
    for code, words in ((0, "holds"), (1, "fails"), (2, "invalid"), (3, "internal error"), (5, "nothing was checked"),
                        (130, "interrupted")):
        assert any(line.split()[:1] == [str(code)] and words in line for line in shown.splitlines()), (code, shown)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for code in (3, 5):
        assert f"\n| {code} |" in readme


# A crash is never exit 1

def _crash(*args, **kwargs):
    raise RuntimeError("a bug \x1b[31m here")


def test_an_internal_error_exits_3_with_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GPUSPEC_DEBUG", raising=False)
    monkeypatch.setattr("gpuspec.api.run_check", _crash)
    spec = tmp_path / "a.gpu"
    spec.write_text(PASSING, encoding="utf-8")
    assert main(["check", str(spec)]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err == ("gpuspec: internal error: RuntimeError: a bug \\x1b[31m here (please report it; GPUSPEC_DEBUG=1 "
                   "shows where)\n")


def test_gpuspec_debug_shows_the_traceback(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GPUSPEC_DEBUG", "1")
    monkeypatch.setattr("gpuspec.api.run_check", _crash)
    assert main(["check", str(tmp_path)]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):") and "in _crash" in err
    assert err.splitlines()[-1].startswith("gpuspec: internal error: RuntimeError")


def test_an_internal_error_in_any_command_exits_3(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("gpuspec.api.explain_program", _crash)
    spec = tmp_path / "a.gpu"
    spec.write_text(PASSING, encoding="utf-8")
    assert main(["explain", str(spec)]) == EXIT_INTERNAL
    assert "internal error" in capsys.readouterr().err


# Printing errors is linear: each document is split into lines once

def test_each_document_is_split_once_however_many_errors(monkeypatch):
    spec = "device H100-SXM\nx = bf16[4096, 4096]\n" + "".join(f"v{i} = x * nothing_{i}\n" for i in range(200))
    report = check_text(spec, "e.gpu")
    assert len(report.diagnostics) == 200
    calls = []
    real = text_report.split
    monkeypatch.setattr(text_report, "split", lambda text: calls.append(len(text)) or real(text))
    shown = text_report.render(report)
    assert calls == [len(spec)] and shown.count("error[") == 200
    assert shown.count("    v199 = x * nothing_199\n") == 1  # each error still shows its own line
    calls.clear()
    junit.render(report)
    assert calls == [len(spec)]
