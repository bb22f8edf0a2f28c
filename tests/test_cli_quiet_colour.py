"""`check -q` (failures, errors and the summary), `-qq` (nothing: the exit status), and colour: on a terminal,
off with NO_COLOR, on with FORCE_COLOR, only on marks and headers, never in machine formats; the text report
never ends in a blank line."""
from __future__ import annotations

import io
import json
import re

import pytest

from gpuspec.cli import EXIT_FAILED, EXIT_INVALID, EXIT_NOTHING, EXIT_OK, main
from gpuspec.report import terminal

PASSING = "device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2 is ≈ 20 µs\n"
FAILING = PASSING.replace("≈ 20 µs", "≈ 99 µs")
BROKEN = "device H10\n"
OUR_CODES = re.compile(r"\x1b\[(?:32|31|33|1;31|0)m")


@pytest.fixture
def files(tmp_path):
    made = {}
    for name, text in (("ok.gpu", PASSING), ("bad.gpu", FAILING), ("err.gpu", BROKEN)):
        made[name] = tmp_path / name
        made[name].write_text(text, encoding="utf-8")
    made["odd"] = tmp_path / "o\x1b[2Jdd.gpu"
    made["odd"].write_text(FAILING, encoding="utf-8")
    return made


def check(capsys, monkeypatch, *argv, env=None) -> tuple[int, str, str]:
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in (env or {}).items():
        monkeypatch.setenv(name, value)
    code = main(["check", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_quiet_drops_the_line_per_file_and_keeps_failures_errors_and_summary(capsys, monkeypatch, files):
    code, full, _ = check(capsys, monkeypatch, files["ok.gpu"], files["bad.gpu"], files["err.gpu"])
    qcode, quiet, _ = check(capsys, monkeypatch, "-q", files["ok.gpu"], files["bad.gpu"], files["err.gpu"])
    assert code == qcode == EXIT_INVALID
    assert f"{files['ok.gpu']} ." in full and str(files["ok.gpu"]) not in quiet
    assert quiet.startswith(f"{files['bad.gpu']}:3:14: fail: ")
    assert "error[unknown-device]" in quiet and quiet.splitlines()[-1] == "1 passed, 1 failed"
    assert full.endswith(quiet)  # the rest as it was


def test_quiet_with_nothing_failing_is_the_summary_alone(capsys, monkeypatch, files):
    assert check(capsys, monkeypatch, "-q", files["ok.gpu"])[:2] == (EXIT_OK, "1 passed, 0 failed\n")


def test_quiet_keeps_a_file_named_like_a_mark_line(capsys, monkeypatch, files):
    code, out, _ = check(capsys, monkeypatch, "-q", files["odd"])
    assert code == EXIT_FAILED and "fail:" in out and "\x1b" not in out and not out.startswith("\n")


def test_qq_prints_nothing_and_the_exit_status_says_it(capsys, monkeypatch, files, tmp_path):
    for path, status in (("ok.gpu", EXIT_OK), ("bad.gpu", EXIT_FAILED), ("err.gpu", EXIT_INVALID)):
        assert check(capsys, monkeypatch, "-qq", files[path]) == (status, "", "")
    assert check(capsys, monkeypatch, "-qq", tmp_path / "empty-folder-does-not-exist") [0] == EXIT_INVALID
    (tmp_path / "none").mkdir()
    assert check(capsys, monkeypatch, "-qq", "--format", "json", tmp_path / "none") == (EXIT_NOTHING, "", "")
    out = tmp_path / "r.json"
    assert check(capsys, monkeypatch, "-qq", "--format", "json", "--output", out, files["bad.gpu"]) == (
        EXIT_FAILED, "", "")
    assert json.loads(out.read_text(encoding="utf-8"))  # the report asked for is still written


def test_quiet_and_verbose_together_is_misuse(capsys, monkeypatch, files):
    code, _, err = check(capsys, monkeypatch, "-q", "-v", files["ok.gpu"])
    assert code == EXIT_INVALID and err.startswith("usage: gpuspec check") and "one or the other" in err


@pytest.mark.parametrize("argv", [(), ("-q",), ("-v",)], ids=["default", "quiet", "verbose"])
def test_forced_colour_marks_only_marks_and_headers(capsys, monkeypatch, files, argv):
    paths = (files["ok.gpu"], files["bad.gpu"], files["err.gpu"], files["odd"])
    _, plain, _ = check(capsys, monkeypatch, *argv, *paths)
    _, colour, _ = check(capsys, monkeypatch, *argv, *paths, env={"FORCE_COLOR": "1"})
    assert colour != plain and OUR_CODES.sub("", colour) == plain
    assert "\x1b" not in OUR_CODES.sub("", colour)  # the file name's escape stays escaped
    coloured_words = set(re.findall(r"\x1b\[[0-9;]+m([^\x1b]*)\x1b\[0m", colour))
    assert coloured_words <= {".", "F", "fail", "error[unknown-device]", "PASS", "FAIL"}
    assert "fail" in coloured_words or "FAIL" in coloured_words


def test_no_color_wins_and_empty_values_count_as_unset(capsys, monkeypatch, files):
    for env in ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, {"FORCE_COLOR": ""}, {}):
        assert "\x1b" not in check(capsys, monkeypatch, files["bad.gpu"], env=env)[1]


def test_colour_follows_the_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True
    assert terminal.wants_colour(Tty(), {}) and not terminal.wants_colour(io.StringIO(), {})
    assert not terminal.wants_colour(Tty(), {"NO_COLOR": "x"}) and not terminal.wants_colour(Tty(), {"TERM": "dumb"})
    assert terminal.wants_colour(io.StringIO(), {"FORCE_COLOR": "1"})
    assert terminal.wants_colour(Tty(), {"NO_COLOR": ""})


@pytest.mark.parametrize("format", ["json", "junit", "github", "markdown"])
def test_machine_formats_are_never_coloured(capsys, monkeypatch, files, format):
    _, out, _ = check(capsys, monkeypatch, "--format", format, files["bad.gpu"], files["err.gpu"],
                      env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in out


def test_colour_never_goes_into_an_output_file(capsys, monkeypatch, files, tmp_path):
    out = tmp_path / "r.txt"
    check(capsys, monkeypatch, "--output", out, files["bad.gpu"], env={"FORCE_COLOR": "1"})
    assert "\x1b" not in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("argv", [(), ("-q",), ("-v",)], ids=["default", "quiet", "verbose"])
@pytest.mark.parametrize("name", ["ok.gpu", "bad.gpu", "err.gpu", "none"])
def test_the_text_report_never_ends_in_a_blank_line(capsys, monkeypatch, files, tmp_path, argv, name):
    (tmp_path / "none").mkdir(exist_ok=True)
    _, out, _ = check(capsys, monkeypatch, *argv, files[name] if name != "none" else tmp_path / "none")
    assert out.endswith("\n") and not out.endswith("\n\n") and not out.startswith("\n")


# --- -v and -vv ------------------------------------------------------------------------------------------------

ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent


@pytest.fixture
def deep(tmp_path):
    """The bundled attention spec with its ratio claim made to fail: a derivation six levels deep."""
    text = (ROOT / "specs" / "attention.gpu").read_text(encoding="utf-8")
    assert "standard.time / flash.time ≈ 4.65×" in text
    path = tmp_path / "attention.gpu"
    path.write_text(text.replace("standard.time / flash.time ≈ 4.65×", "standard.time / flash.time ≈ 9×"),
                    encoding="utf-8")
    return path


def test_verbose_lists_every_claim_and_each_failures_whole_derivation(capsys, monkeypatch, deep):
    _, default, _ = check(capsys, monkeypatch, deep)
    code, verbose, _ = check(capsys, monkeypatch, "-v", deep)
    assert code == EXIT_FAILED
    line = deep.read_text(encoding="utf-8").split("\n").index("standard.time / flash.time ≈ 9×") + 1
    assert verbose.startswith(f"PASS {deep}:") and f"\nFAIL {deep}:{line}:1: standard.time / flash.time ≈ 9×" in verbose
    # the whole tree, down to the count of scores under the softmax's FLOPs (level 5), where the default shows
    # the deciding lines and the tree used to stop at level 3
    assert "\n              scores = batch × heads × seq_q × seq_kv" in verbose
    assert "scores = " not in default and "(-v shows each failure's whole derivation)" in default
    assert "(-v shows" not in verbose
    lines = verbose.split("\n")
    assert not any(_under_a_pass(lines, i) for i, line in enumerate(lines) if line.startswith("    "))  # -vv's


def test_vv_shows_passing_claims_derivations_too(capsys, monkeypatch, deep):
    _, verbose, _ = check(capsys, monkeypatch, "-v", deep)
    code, very, _ = check(capsys, monkeypatch, "-vv", deep)
    assert code == EXIT_FAILED
    lines = very.split("\n")
    passes = [i for i, line in enumerate(lines) if line.startswith("PASS ")]
    assert passes and all(lines[i + 1].startswith("    ") for i in passes if "[model]" in lines[i])
    # without the trees under the PASS lines, -vv is -v
    stripped = [line for i, line in enumerate(lines) if not (line.startswith("    ") and _under_a_pass(lines, i))]
    assert "\n".join(stripped) == verbose.rstrip("\n") + "\n" or "\n".join(stripped) == verbose


def _under_a_pass(lines: list[str], index: int) -> bool:
    while index > 0 and lines[index].startswith("    "):
        index -= 1
    return lines[index].startswith("PASS ")


def test_vv_with_q_is_misuse(capsys, monkeypatch, files):
    code, _, err = check(capsys, monkeypatch, "-qq", "-vv", files["ok.gpu"])
    assert code == EXIT_INVALID and "one or the other" in err


# --- colour on stderr and in explain, each stream on its own ----------------------------------------------------

class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_stderr_is_coloured_when_it_is_a_terminal_whatever_stdout_is(capsys, monkeypatch, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.gpuspec]\nfromat = 'json'\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    terminal_err = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal_err)
    assert main(["check", "x.gpu"]) == EXIT_INVALID
    err = terminal_err.getvalue()
    assert "pyproject.toml:2:1: \x1b[1;31merror[unknown-config-key]\x1b[0m: unknown key `fromat`" in err
    assert OUR_CODES.sub("", err).count("\x1b") == 0 and "fromat" in OUR_CODES.sub("", err)
    assert capsys.readouterr().out == ""
    monkeypatch.setenv("NO_COLOR", "1")
    plain_err = _Terminal()
    monkeypatch.setattr("sys.stderr", plain_err)
    main(["check", "x.gpu"])
    assert "\x1b" not in plain_err.getvalue() and OUR_CODES.sub("", err) == plain_err.getvalue()


def test_a_misused_command_says_error_in_colour_on_a_terminal(monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    err = _Terminal()
    monkeypatch.setattr("sys.stderr", err)
    assert main(["check", "--stdin-filename", "x.md", "specs"]) == EXIT_INVALID
    assert "gpuspec check: \x1b[1;31merror\x1b[0m: --stdin-filename names standard input" in err.getvalue()


def test_explain_colours_its_own_headings_only(capsys, monkeypatch, files):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert main(["explain", str(files["ok.gpu"])]) == EXIT_OK
    plain = capsys.readouterr().out
    monkeypatch.setenv("FORCE_COLOR", "1")
    main(["explain", str(files["ok.gpu"])])
    colour = capsys.readouterr().out
    assert colour != plain and re.sub(r"\x1b\[(?:1|31|0)m", "", colour) == plain
    assert set(re.findall(r"\x1b\[[0-9;]+m([^\x1b]*)\x1b\[0m", colour)) == {"facts used:", "references:"}
    monkeypatch.setenv("NO_COLOR", "1")
    main(["explain", str(files["ok.gpu"])])
    assert capsys.readouterr().out == plain
