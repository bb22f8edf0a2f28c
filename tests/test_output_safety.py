"""Output cannot be used to inject: file names and spec text planted with terminal escapes (ESC, OSC, CSI),
bidirectional marks, GitHub workflow commands, @mentions and issue references reach every human format shown,
never acted on; a file name that is not UTF-8 is shown escaped in every format, and every report is written."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from gpuspec.cli import main
from gpuspec.report import markdown
from gpuspec.report.safe import log_line, shown

ROOT = Path(__file__).resolve().parent.parent
OSC = "\x1b]0;owned\x07"
PLANTED = (f"{OSC} \x1b[31mred \x9b31m \x1b]8;;https://evil.example\x1b\\link \u202eevil\u202c \u2066i\u2069 \u061c "
           "::error title=FORGED::planted ##[error]old-style @octocat #1 GH-2 <script>x</script> *b* | c")
# A spec whose failing claim carries the planted text in its statement (a comment on the workload's line) and
# in its quote.
SPEC = ("device H100-SXM\nx = bf16[4096, 4096]\n"
        f"y = x * 2:  # {PLANTED}\n"
        f'    "{PLANTED}"\n'
        "    ≈ 99 µs\n")
NAME = "::error title=FORGED::n ##[error]n @octocat #1 \x1b[31m\u202e\x9b.gpu"

ACTING = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what a terminal acts on (tab and newline aside)
REORDERING = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")  # bidirectional controls
SURROGATE = re.compile("[\ud800-\udfff]")
REGISTERED = {"error", "warning", "notice", "debug", "group", "endgroup", "add-mask", "stop-commands", "echo",
              "set-output", "save-state", "add-path", "set-env", "add-matcher", "remove-matcher"}


def workflow_commands(out: str) -> list[tuple[str, str]]:
    """The workflow commands a GitHub runner would run for `out`, as (command, title): it takes a line that
    starts with `::` after its leading spaces, and else the older `##[command]` anywhere in a line."""
    found = []
    for line in out.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("::") and stripped.find("::", 2) > 0:
            info = stripped[2:stripped.find("::", 2)]
            name, _, properties = info.partition(" ")
            if name in REGISTERED:
                titles = [p[len("title="):] for p in properties.split(",") if p.startswith("title=")]
                found.append((name, titles[0] if titles else ""))
                continue
        if "##[" in line and "]" in line[line.index("##[") :]:
            start = line.index("##[") + 3
            name = line[start:line.index("]", start)].split(" ")[0]
            if name in REGISTERED:
                found.append((name, "##["))
    return found


def assert_shown_not_acted_on(out: str, format: str) -> None:
    assert not ACTING.search(out), repr(ACTING.search(out))
    assert not REORDERING.search(out)
    assert not SURROGATE.search(out)
    commands = workflow_commands(out)
    if format == "github":  # only gpuspec's own annotations
        assert commands and all(title.startswith("gpuspec") for _, title in commands), commands
    elif format in ("text", "markdown"):
        assert commands == [], commands
    if format == "markdown":  # neither a mention nor an issue link; Markdown and HTML shown as text
        assert not re.search(r"@(?=[A-Za-z0-9])", out) and not re.search(r"#(?=\d)", out)
        assert not re.search(r"GH-\d", out, re.I)
        assert "<script>" not in out


@pytest.fixture
def planted(tmp_path, monkeypatch) -> str:
    monkeypatch.chdir(tmp_path)
    (tmp_path / NAME).write_text(SPEC, encoding="utf-8")
    return NAME


def check(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["check", *argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def test_the_planted_text_reaches_the_report_so_the_cases_below_test_something(planted, capsys):
    code, out, _ = check(capsys, "--format", "json", "--", planted)
    assert code == 1
    (failed,) = [r for r in json.loads(out)["results"] if r["status"] == "fail"]
    assert failed["file"] == NAME and PLANTED in failed["statement"] and failed["quote"] == PLANTED


@pytest.mark.parametrize("format", ["text", "github", "junit", "markdown"])
@pytest.mark.parametrize("verbose", [False, True], ids=["", "verbose"])
def test_planted_names_and_spec_text_are_shown_and_never_acted_on(planted, capsys, format, verbose):
    code, out, _ = check(capsys, "--format", format, *(["-v"] if verbose else []), "--", planted)
    assert code == 1
    assert_shown_not_acted_on(out, format)
    if format == "junit":
        ElementTree.fromstring(out)
    if format == "text":  # still readable: the text is there, escaped
        assert "\\x1b]0;owned\\x07" in out and "\\u202eevil" in out and "\\x3a:error title=FORGED::n" in out
        assert "##\\x5berror]old-style" in out


def test_a_planted_spec_line_that_is_a_workflow_command_is_escaped_in_the_error_excerpt(tmp_path, capsys):
    path = tmp_path / "a.gpu"
    for spec, shown_line in (("::error title=FORGED::x", "    \\x3a:error title=FORGED::x"),
                             ("  ::error title=FORGED::x", "      \\x3a:error title=FORGED::x")):
        path.write_text(f"device H100-SXM\n{spec}\n", encoding="utf-8")
        code, out, _ = check(capsys, str(path))
        assert code == 2
        assert workflow_commands(out) == []
        lines = out.splitlines()
        excerpt = next(line for line in lines if "FORGED" in line and "error[" not in line)
        assert excerpt == shown_line  # indented as the spec has it, the first colon escaped
        if not spec.startswith(" "):  # the error is at the colon: the caret points at its escape
            assert lines[lines.index(excerpt) + 1].index("^") == excerpt.index("\\x3a")


@pytest.mark.parametrize("suffix", [".html", ".md"])
def test_the_standalone_report_shows_planted_text_as_text(planted, tmp_path, capsys, suffix):
    pytest.importorskip("matplotlib")
    out = tmp_path / f"report{suffix}"
    assert main(["report", "--out", str(out), "--", planted]) == 1
    written = out.read_text(encoding="utf-8")
    assert_shown_not_acted_on(written, "markdown" if suffix == ".md" else "html")
    assert "<script>" not in written
    if suffix == ".md":
        assert "@\u2060octocat" in written and "#\u20601" in written  # the text is kept, its link broken


def test_markdown_cells_break_mentions_and_issue_references_and_escape_syntax():
    assert markdown.cell("@octocat and @org/team") == "@\u2060octocat and @\u2060org/team"
    assert markdown.cell("see #12, owner/repo#3 and gh-4") == "see #\u206012, owner/repo#\u20603 and gh\u2060-4"
    assert markdown.cell("a@b.c # 1 #x C#") == "a@\u2060b.c # 1 #x C#"  # only what GitHub would link
    assert markdown.cell("<img src=x> [l](u)") == "\\<img src=x\\> \\[l\\](u)"


def test_log_line_escapes_what_a_runner_would_take_for_a_command():
    assert log_line("::error::x") == "\\x3a:error::x"
    assert log_line("  \t::warning::x") == "  \t\\x3a:warning::x"
    assert log_line("a ##[error]b") == "a ##\\x5berror]b"
    assert log_line("a::b ##c [d]") == "a::b ##c [d]"  # only where a runner looks
    assert workflow_commands(log_line("::error::x") + "\n" + log_line("x ##[error]y")) == []
    assert log_line(log_line("::x::y")) == log_line("::x::y")


def test_shown_escapes_controls_bidi_and_the_bytes_of_names_that_are_not_utf8():
    assert shown("a\x1b[31mb\x9b\u202e\u061c") == "a\\x1b[31mb\\x9b\\u202e\\u061c"
    assert shown(os.fsdecode(b"bad\xff.gpu")) == "bad\\xff.gpu"
    assert shown("µs ≈ 20 ✓") == "µs ≈ 20 ✓"
    assert shown(shown("\x1b\u202e")) == shown("\x1b\u202e")


# A file name that is not UTF-8

BAD = os.fsdecode(b"bad\xff.gpu")  # \udcff: the byte 0xff that Python could not decode


@pytest.fixture
def badly_named(tmp_path, monkeypatch) -> str:
    monkeypatch.chdir(tmp_path)
    (tmp_path / BAD).write_text(SPEC.replace(PLANTED, "a comment"), encoding="utf-8")
    return BAD


@pytest.mark.parametrize("format", ["text", "github", "junit", "markdown", "json"])
def test_a_name_that_is_not_utf8_is_shown_escaped_in_every_format(badly_named, capsys, format):
    code, out, _ = check(capsys, "--format", format, badly_named)
    assert code == 1
    assert not SURROGATE.search(out)
    if format == "json":  # data: the name itself, as JSON's escape, which reads back as the same name
        (failed,) = [r for r in json.loads(out)["results"] if r["status"] == "fail"]
        assert os.fsencode(failed["file"]) == b"bad\xff.gpu"
    else:  # for people: the byte as an escape, not the \udcff a last-resort encoder would write
        if format == "markdown":  # where a backslash is written twice to be shown once
            out = out.replace("\\\\", "\\")
        assert "bad\\xff.gpu" in out and "udcff" not in out


@pytest.mark.parametrize("format", ["text", "github", "junit", "markdown", "json"])
def test_a_report_about_a_name_that_is_not_utf8_is_written_to_a_name_that_is_not_utf8(badly_named, tmp_path,
                                                                                       capsys, format):
    output = tmp_path / os.fsdecode(b"out\xfe." + format.encode())
    code, out, _ = check(capsys, "--format", format, "--output", str(output), badly_named)
    assert code == 1 and out == "0 passed, 1 failed\n"
    written = output.read_bytes().decode("utf-8")  # valid UTF-8 throughout
    assert ("bad\\udcff.gpu" if format == "json" else "bad\\xff.gpu") in written.replace("\\\\", "\\")


@pytest.mark.parametrize("suffix", [".html", ".md"])
def test_report_writes_a_report_about_a_name_that_is_not_utf8(badly_named, tmp_path, capsys, suffix):
    pytest.importorskip("matplotlib")
    out = tmp_path / os.fsdecode(b"r\xfe" + suffix.encode())
    assert main(["report", "--out", str(out), badly_named]) == 1
    captured = capsys.readouterr()
    assert "r\\xfe" + suffix in captured.out and not SURROGATE.search(captured.out + captured.err)
    assert "bad\\xff.gpu" in out.read_bytes().decode("utf-8").replace("\\\\", "\\")


def test_a_strict_utf8_terminal_gets_no_unicode_error(badly_named, tmp_path):
    # as in CI, where stdout is UTF-8 with strict errors (not the surrogateescape of a C locale)
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", "PYTHONPATH": str(ROOT)}
    for format in ("text", "json", "junit", "markdown", "github"):
        done = subprocess.run([sys.executable, "-m", "gpuspec", "check", "--format", format, badly_named],
                              capture_output=True, env=env, cwd=tmp_path, timeout=120)
        assert done.returncode == 1, done.stderr.decode("utf-8", "replace")[-2000:]
        assert b"Error" not in done.stderr
        done.stdout.decode("utf-8")


# Every command that prints a path or spec text: explain, fmt, harness, check --update, calibrate

def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out + captured.err


@pytest.fixture
def unformatted(planted, tmp_path) -> str:
    (tmp_path / NAME).write_text(SPEC.replace("x * 2:", "x *   2:"), encoding="utf-8")
    return planted


@pytest.mark.parametrize("command, options, line, code", [
    ("explain", [], "", 0), ("explain", [], ":3", 0), ("fmt", ["--check"], "", 1), ("fmt", ["--diff"], "", 1),
    ("fmt", [], "", 0), ("harness", [], ":1", 2),
])
def test_every_command_shows_planted_names_and_spec_text_and_runs_none(unformatted, capsys, command, options, line,
                                                                       code):
    # explain and fmt escaped control characters but printed `::error` at the start of a line and `##[` anywhere;
    # harness printed the target it was given raw
    found, out = run(capsys, command, *options, unformatted + line)
    assert found == code, out
    assert_shown_not_acted_on(out, "text")
    assert "##\\x5berror]n" in out  # the name, shown
    if command == "explain" or "--diff" in options:
        assert "\\x1b]0;owned\\x07" in out and "##\\x5berror]old-style" in out  # the statement, shown


def test_the_harness_program_prints_as_text_and_keeps_every_string(planted, capsys):
    import ast

    found, out = run(capsys, "harness", planted)
    assert found == 0
    assert_shown_not_acted_on(out, "text")
    tree = ast.parse(out)
    strings = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    assert NAME in strings and any(PLANTED in s for s in strings)  # the same text, written so it cannot act


def test_check_update_shows_a_planted_name_in_its_refusal(planted, tmp_path, capsys):
    os.link(tmp_path / NAME, tmp_path / "other.gpu")  # a file with two names is refused, naming it
    found, out = run(capsys, "check", "--update", planted)
    assert found == 2 and "check --update" in out
    assert_shown_not_acted_on(out, "text")
    assert "##\\x5berror]n" in out


def test_calibrate_shows_the_gpu_name_it_was_given(tmp_path, capsys):
    import importlib.util

    if importlib.util.find_spec("torch") is None:  # looked for, not imported: the check path must not import it
        pytest.skip("calibrate runs its program with torch")
    gpu = "\x1b]0;owned\x07::error title=FORGED::gpu \u202e ##[error]g"
    found, out = run(capsys, "calibrate", "--out", str(tmp_path / "p.json"), "--harness-device", "cpu", "--small",
                     "--fake-timer", "--fake-gpu", gpu)
    assert found == 0, out
    assert_shown_not_acted_on(out, "text")
    assert "profile of \\x1b]0;owned\\x07::error title=FORGED::gpu \\u202e ##\\x5berror]g written to" in out


@pytest.mark.parametrize("command", ["devices", "models"])
def test_a_catalog_name_given_on_the_command_line_is_shown_in_the_error(capsys, command):
    found, out = run(capsys, command, f"{PLANTED}\u202e")
    assert found == 2
    assert_shown_not_acted_on(out, "text")
    assert "##\\x5berror]old-style" in out and "\\x1b]0;owned\\x07" in out  # the name is there, escaped
