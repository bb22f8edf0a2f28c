"""Hostile input beyond the spec text: results files that are truncated, of another version, from another GPU or
full of escape codes and paths outside the project; spec paths built to escape into a shell or a report; folders
whose links loop or lead outside. Each is refused or shown as text, with a clear message.

(Spec text that tries to escape into generated harness code is in test_harness_render.py.)
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from gpuspec import harness
from gpuspec.api import compile_text
from gpuspec.cli import main
from gpuspec.text import SpecText

ROOT = Path(__file__).resolve().parent.parent
SPEC = "device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2 is ≈ 20 µs\n"
ESCAPES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x9b]")  # what a terminal would act on (not \t or \n)


def results_for(spec: Path, gpu: str = "NVIDIA H100 80GB HBM3", **changes) -> dict:
    """A results file that measured the workload of `spec` at 20 µs on `gpu`."""
    program = compile_text(SpecText(str(spec), spec.read_text(encoding="utf-8")))
    (span, statement, workload), = program.workloads
    measurement = {"key": harness.workload_key(statement, workload), "line": span.line, "statement": statement,
                   "status": "ok", "reason": None,
                   "metrics": {"time": {"median": 2e-05, "p10": 2e-05, "p90": 2e-05, "samples": 3}}}
    measurement.update(changes)
    return {"version": 1, "runs": [{"spec": str(spec), "provenance": {"gpu": gpu, "device": "cuda"},
                                    "measurements": [measurement]}]}


@pytest.fixture
def spec(tmp_path) -> Path:
    path = tmp_path / "a.gpu"
    path.write_text(SPEC, encoding="utf-8")
    return path


def check(capsys, *argv):
    code = main(["check", *argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, captured.out


def measured(out: str) -> dict:
    return next(r for r in json.loads(out)["results"] if r["source"] == "measured")


def test_a_results_file_from_this_gpu_is_used(spec, tmp_path, capsys):
    """The base of the cases below: a well-formed results file does give a measured verdict."""
    results = tmp_path / "r.json"
    results.write_text(json.dumps(results_for(spec)), encoding="utf-8")
    code, out = check(capsys, str(spec), "--results", str(results), "--format", "json")
    assert code == 0 and measured(out)["status"] == "pass" and measured(out)["actual"] == pytest.approx(2e-05)


@pytest.mark.parametrize("share", [0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
def test_a_truncated_results_file_is_refused_naming_the_file(spec, tmp_path, capsys, share):
    text = json.dumps(results_for(spec), indent=1)
    results = tmp_path / "r.json"
    results.write_text(text[: int(len(text) * share)], encoding="utf-8")
    code, out = check(capsys, str(spec), "--results", str(results))
    assert code == 2
    assert re.search(rf"^{re.escape(str(results))}:1:1: error\[bad-results\]: {re.escape(str(results))} is not JSON "
                     r"\(line \d+, column \d+\)", out, re.M), out


@pytest.mark.parametrize("data", [
    {"version": 2, "runs": []}, {"version": "1", "runs": []}, {"runs": []}, [], {"version": 1, "runs": {}},
    {"version": 1, "profile": {}, "facts": {}},
], ids=["version-2", "version-as-text", "no-version", "a-list", "runs-not-a-list", "a-profile"])
def test_a_results_file_of_another_version_or_kind_is_refused(spec, tmp_path, capsys, data):
    results = tmp_path / "r.json"
    results.write_text(json.dumps(data), encoding="utf-8")
    code, out = check(capsys, str(spec), "--results", str(results))
    assert code == 2 and f"error[bad-results]: {results} is not a gpuspec results file of version 1" in out


@pytest.mark.parametrize("change", [{"status": "great"}, {"line": "three"}, {"metrics": {"time": "fast"}},
                                    {"key": None, "line": None}])
def test_a_results_file_with_a_malformed_measurement_is_refused(spec, tmp_path, capsys, change):
    results = tmp_path / "r.json"
    results.write_text(json.dumps(results_for(spec, **change)), encoding="utf-8")
    code, out = check(capsys, str(spec), "--results", str(results))
    assert code == 2 and "error[bad-results]" in out


def test_a_results_file_from_another_gpu_is_not_compared_and_says_so(spec, tmp_path, capsys):
    results = tmp_path / "r.json"
    results.write_text(json.dumps(results_for(spec, gpu="NVIDIA A100-SXM4-80GB")), encoding="utf-8")
    code, out = check(capsys, str(spec), "--results", str(results), "--format", "json")
    verdict = measured(out)
    # the model's claim holds, but a run given results measured nothing: exit 5, and why
    assert code == 5 and verdict["status"] == "skip"
    assert verdict["message"].startswith("measured on NVIDIA A100-SXM4-80GB, not H100-SXM: 20.0 µs measured, "
                                         "where the model predicts"), verdict["message"]
    assert json.loads(out)["nothing_checked"].startswith("nothing measured: every measured claim was skipped "
                                                         f"(1 claim; the first, {spec}:3: measured on NVIDIA A100")


HOSTILE_TEXT = "\x1b[2J\x1b]0;owned\x07\r\n::error file=x::injected\u202e\x9b31m"

AUDIT = """
import json, sys
opened = []
sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" else None)
from gpuspec.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print("\\nOPENED " + json.dumps(opened))
sys.exit(code)
"""


@pytest.mark.parametrize("format", ["text", "github", "junit", "markdown", "json"])
def test_paths_and_text_in_a_results_file_are_never_opened_and_are_shown_as_text(spec, tmp_path, format):
    outside = tmp_path.parent / "outside-the-project.gpu"
    data = results_for(spec, gpu="NVIDIA H100 " + HOSTILE_TEXT, statement=HOSTILE_TEXT, status="error",
                       reason="out of memory" + HOSTILE_TEXT)
    data["runs"][0]["spec"] = str(outside)
    data["runs"].append({**data["runs"][0], "spec": "../../../../../../etc/shadow"})
    results = tmp_path / "r.json"
    results.write_text(json.dumps(data), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", AUDIT, "check", str(spec), "--results", str(results), "-v",
                           "--format", format], cwd=ROOT, capture_output=True, text=True, encoding="utf-8",
                          timeout=120)
    out, _, opened = done.stdout.rpartition("\nOPENED ")
    opened = json.loads(opened)
    # the one measurement is a harness error: nothing measured, exit 5
    assert "Traceback" not in done.stderr and done.returncode == 5, done.stderr[-2000:]
    assert not [p for p in opened if "shadow" in p or "outside-the-project" in p]
    assert str(results) in opened  # the audit hook does see the files gpuspec opens
    if format in ("text", "github", "markdown"):  # for people: escape codes and direction marks are shown
        assert not ESCAPES.search(out), repr(out[:2000])
        assert "\u202e" not in out  # a right-to-left override would reorder what follows it on the screen
    if format == "github":
        assert all(line.startswith(("::", "1 passed")) and "\n" not in line for line in out.splitlines())
        assert not any(line.startswith("::error file=x") for line in out.splitlines())
    if format == "junit":
        ElementTree.fromstring(out)
    if format == "json":  # data for tools: the text as it was, in well-formed JSON
        assert json.loads(out)["summary"]["skipped"] == 1


@pytest.mark.parametrize("name", ["$(touch pwned).gpu", "a;touch pwned.gpu", "`touch pwned`.gpu",
                                  "a'b\"c.gpu", "::error file=x::y.gpu", "line\nbreak.gpu", "<t>&amp;.gpu",
                                  "a|b|c.gpu", "-rf.gpu", "\u202eupg.gpu"])
@pytest.mark.parametrize("format", ["text", "github", "junit", "markdown"])
def test_a_spec_path_built_to_escape_stays_a_path(tmp_path, monkeypatch, capsys, name, format):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(SPEC.replace("≈ 20 µs", "≈ 99 µs"), encoding="utf-8")  # a failure: shown
    code = main(["check", "--format", format, "--", name])
    out = capsys.readouterr().out
    assert code == 1
    assert not (tmp_path / "pwned").exists()
    if format != "junit":  # JUnit is data for tools: it keeps the name, and is well-formed XML (below)
        assert not ESCAPES.search(out) and "\u202e" not in out
    if format == "junit":
        ElementTree.fromstring(out)
    if format == "github":
        lines = out.splitlines()
        assert len(lines) == 2 and lines[0].startswith("::error file=") and lines[1] == "0 passed, 1 failed"
    if format == "markdown":
        rows = [line for line in out.splitlines() if line.startswith("|")]
        assert len({line.count("|") - line.count("\\|") for line in rows}) <= 1, rows


def test_a_folder_whose_links_loop_or_lead_outside_is_searched_once_and_only_inside(tmp_path, capsys):
    inside, outside = tmp_path / "project", tmp_path / "elsewhere"
    inside.mkdir()
    outside.mkdir()
    (inside / "a.gpu").write_text(SPEC, encoding="utf-8")
    (outside / "b.gpu").write_text(SPEC, encoding="utf-8")
    (inside / "loop").symlink_to("..", target_is_directory=True)
    (inside / "self").symlink_to(".", target_is_directory=True)
    (inside / "out").symlink_to(outside, target_is_directory=True)
    code, out = check(capsys, str(inside), "--format", "json")
    assert code == 0
    assert {r["file"] for r in json.loads(out)["results"]} == {str(inside / "a.gpu")}


def test_gpuspec_never_runs_a_shell():
    for path in (ROOT / "gpuspec").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for forbidden in ("shell=True", "os.system(", "os.popen(", "os.exec", "os.spawn", "eval(", "exec("):
            assert forbidden not in text, f"{path.relative_to(ROOT)} uses {forbidden}"
    for path in (ROOT / "templates").glob("*.jinja"):
        text = path.read_text(encoding="utf-8")
        for forbidden in ("shell=True", "os.system(", "os.popen(", "eval(", "exec("):
            assert forbidden not in text, f"{path.relative_to(ROOT)} uses {forbidden}"


@pytest.mark.parametrize("command", [["check"], ["fmt"], ["fmt", "--check"], ["explain"], ["check", "--update"]])
def test_a_pipe_planted_where_a_spec_is_named_is_refused_in_words_and_never_waited_on(tmp_path, capsys, command):
    # reading a FIFO blocks until someone writes to it: gpuspec would hang for ever on one named on its command line
    import os

    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this system")
    fifo = tmp_path / "post.md"
    os.mkfifo(fifo)
    assert main([*command, str(fifo)]) == 2
    err = capsys.readouterr()
    said = err.out + err.err
    assert "not a regular file (a pipe, a device or a socket)" in said and "Traceback" not in said
    assert "\n    ^" not in said  # an unread file has no line to show under its error


def test_a_pipe_planted_in_a_folder_is_left_alone(tmp_path, capsys):
    import os

    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this system")
    os.mkfifo(tmp_path / "x.gpu")
    os.mkfifo(tmp_path / "y.md")
    (tmp_path / "ok.gpu").write_text("device H100-SXM\nx*2 on 4096² bf16 is ≈20µs\n", encoding="utf-8")
    assert main(["check", str(tmp_path)]) == 0
    assert "1 passed, 0 failed" in capsys.readouterr().out
