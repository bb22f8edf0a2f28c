"""Mistakes in using a command print that command's usage, as argparse's own do; `FILE:LINE` past the end of the
file is one error in the same words, with the same status, for explain, harness and plot."""
from __future__ import annotations

import pytest

from gpuspec.cli import EXIT_INVALID, main
from gpuspec.text import line_count

SPEC = "device H100-SXM\na = fp32[1024]\nadd = a + a:\n    time ≈ 2 µs\n"


@pytest.mark.parametrize("argv, usage, words", [
    (["check", "--save-results", "r.json", "specs"], "usage: gpuspec check", "add --measure"),
    (["check", "--update", "--device", "A100-80GB", "specs"], "usage: gpuspec check", "use one or the other"),
    (["check", "--stdin-filename", "post.md", "specs"], "usage: gpuspec check", "add - to the paths"),
    (["check", "--update", "-"], "usage: gpuspec check", "standard input (-) is not one"),
    (["fmt", "-", "specs"], "usage: gpuspec fmt", "alone"),
    (["fmt", "--stdin-filename", "a.md", "specs"], "usage: gpuspec fmt", "give - as the path"),
])
def test_misuse_prints_the_commands_usage_then_the_mistake(capsys, argv, usage, words):
    assert main(argv) == EXIT_INVALID
    err = capsys.readouterr().err
    assert err.startswith(usage)
    (mistake,) = [line for line in err.splitlines() if ": error: " in line]
    assert mistake.startswith(usage.removeprefix("usage: ") + ": error: ") and words in mistake


def test_argparse_errors_print_the_subcommands_usage_too(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["fmt", "--no-such-option", "x"])
    assert stop.value.code == EXIT_INVALID
    assert capsys.readouterr().err.startswith("usage: gpuspec fmt")


def test_line_count_numbers_lines_as_an_editor_does():
    assert [line_count(t) for t in ("", "a", "a\n", "a\nb", "a\nb\n", "\n\n")] == [0, 1, 1, 2, 2, 2]


def _said_by_each(tmp_path, capsys, line: str) -> set[str]:
    """What explain, harness and both plots say of `FILE:line` (each must refuse it, write nothing, not crash)."""
    pytest.importorskip("matplotlib")
    path = tmp_path / "s.gpu"
    path.write_text(SPEC, encoding="utf-8")
    said = set()
    for command in (["explain"], ["harness"], ["plot", "roofline"], ["plot", "timeline"]):
        extra = ["--out", str(tmp_path / "p.svg")] if command[0] == "plot" else []
        assert main([*command, f"{path}:{line}", *extra]) == EXIT_INVALID, command
        captured = capsys.readouterr()
        assert captured.out == "" and "Traceback" not in captured.err
        said.add(captured.err.removeprefix(f"gpuspec {' '.join(command)}: "))
    assert not (tmp_path / "p.svg").exists()
    return said


@pytest.mark.parametrize("line", ["5", "999", "9" * 40])
def test_explain_harness_and_plot_agree_on_a_line_past_the_end(tmp_path, capsys, line):
    path = tmp_path / "s.gpu"
    assert _said_by_each(tmp_path, capsys, line) == {f"{path}:{line}: past the end of the file, which has 4 lines\n"}


def test_the_last_line_is_not_past_the_end(tmp_path, capsys):
    path = tmp_path / "s.gpu"
    path.write_text(SPEC, encoding="utf-8")
    assert main(["explain", f"{path}:4"]) == 0
    assert "add = a + a" in capsys.readouterr().out


def test_a_markdown_line_counts_the_documents_lines(tmp_path, capsys):
    path = tmp_path / "post.md"
    path.write_text("# t\n\n```gpu\n" + SPEC + "```\n", encoding="utf-8")  # 8 lines
    assert main(["explain", f"{path}:7"]) == 0  # the claim under the workload, in the document's numbering
    capsys.readouterr()
    assert main(["explain", f"{path}:8"]) == EXIT_INVALID  # the closing fence
    assert "post.md:8: no workload on this line; the workloads are on line 6 (add)" in capsys.readouterr().err
    assert main(["explain", f"{path}:9"]) == EXIT_INVALID
    assert "which has 8 lines" in capsys.readouterr().err


def test_a_file_name_with_control_characters_is_escaped_in_the_error(tmp_path, capsys):
    path = tmp_path / "a\x1b[2J\x07.gpu"
    path.write_text(SPEC, encoding="utf-8")
    assert main(["explain", f"{path}:50"]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "past the end of the file" in err


@pytest.mark.parametrize("command", [["check", "--measure", "--fake-timer", "--harness-device", "cpu"],
                                     ["calibrate", "--out", "p.json", "--fake-timer"]])
@pytest.mark.parametrize("option", ["--timeout", "--budget"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "0", "1e400", "abc", "1e7", "\x1b[2J"])
def test_seconds_that_are_no_time_to_wait_are_usage_errors(tmp_path, monkeypatch, capsys, command, option, value):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.gpu").write_text(SPEC, encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        main([*command, f"{option}={value}", *(["a.gpu"] if command[0] == "check" else [])])
    assert stop.value.code == EXIT_INVALID
    err = capsys.readouterr().err
    assert err.startswith(f"usage: gpuspec {command[0]}") and "Traceback" not in err and "\x1b" not in err
    (mistake,) = [line for line in err.splitlines() if ": error: " in line]
    assert f"argument {option}: takes a number of seconds above 0 and at most 1000000" in mistake
    assert not (tmp_path / "p.json").exists()


def test_seconds_in_range_are_taken(tmp_path, monkeypatch):
    from gpuspec.cli import _parser

    args = _parser("check").parse_args(["check", "--timeout", "0.5", "--budget", "1e6"])
    assert (args.timeout, args.budget) == (0.5, 1e6)


@pytest.mark.parametrize(("line", "words"), [
    ("0", "{path}:0: lines are numbered from 1"),
    ("1", "{path}:1: no workload on this line; the workloads are on line 3 (add)"),  # the device line
    ("abc", "{path}:abc: LINE must be a line number, 1 or more (FILE:LINE, such as {path}:1), not `abc`"),
    ("-1", "{path}:-1: LINE must be a line number, 1 or more (FILE:LINE, such as {path}:1), not `-1`"),
    ("²", "{path}:²: LINE must be a line number, 1 or more (FILE:LINE, such as {path}:1), not `²`"),
    ("", "{path}:: the line number is missing after the `:` (FILE:LINE, such as {path}:1)"),
    ("3\x1b[2J", "{path}:3\\x1b[2J: LINE must be a line number, 1 or more (FILE:LINE, such as {path}:1), "
                 "not `3\\x1b[2J`"),
])
def test_explain_harness_and_plot_agree_on_a_line_that_names_nothing(tmp_path, capsys, line, words):
    assert _said_by_each(tmp_path, capsys, line) == {words.format(path=tmp_path / "s.gpu") + "\n"}


def test_a_line_with_a_claim_alone_is_explained(tmp_path, capsys):
    path = tmp_path / "s.gpu"
    path.write_text(SPEC + "add.time < 5 µs\n", encoding="utf-8")
    assert main(["explain", f"{path}:5"]) == 0 and "add.time < 5 µs" in capsys.readouterr().out
    assert main(["harness", f"{path}:5"]) == EXIT_INVALID  # no workload there to measure
    assert "no workload on this line" in capsys.readouterr().err


def test_a_file_whose_name_holds_a_colon_is_a_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.gpu:v2").write_text(SPEC, encoding="utf-8")
    assert main(["explain", "s.gpu:v2"]) == 0
    assert main(["explain", "s.gpu:v2:3"]) == 0 and "add = a + a" in capsys.readouterr().out


def test_a_file_that_cannot_be_read_shows_no_empty_line_under_its_error(tmp_path, capsys):
    assert main(["explain", str(tmp_path / "missing.gpu")]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert "cannot read the file" in err and "^" not in err and "\n    \n" not in err
