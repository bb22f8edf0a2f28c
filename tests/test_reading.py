"""Spec text is read one way by every command: a lone CR, CRLF and LF each end a line (as for a reader and
CommonMark), positions count lines that way, a byte-order mark is dropped and kept, and a file is one file
however it is named (two spellings, a symlink, a hard link). File names that are not UTF-8 are shown escaped."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuspec.api import read, run_check, spec_files
from gpuspec.files import WriteError
from gpuspec.text import (
    SpecText,
    UnreadableText,
    decode,
    escaped,
    masked,
    newline_of,
    normalized,
    read_file,
    read_leniently,
    split_lines,
    write_back,
)

# Holds on an A100 (108 SMs), fails on an H100 (132): which device is in force decides the verdict.
ON_A100 = "device.sms = 108\n"


def gpuspec(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """The command line in a child process, as a user runs it; stdout and stderr as bytes."""
    return subprocess.run([sys.executable, "-m", "gpuspec", *args], cwd=cwd, input=stdin, capture_output=True,
                          timeout=120)


# --- Line breaks ------------------------------------------------------------------------------------------

def test_each_of_lf_crlf_and_a_lone_cr_ends_a_line_and_nothing_else_does():
    assert normalized("a\nb\r\nc\rd") == "a\nb\nc\nd"
    assert normalized("a\r\r\nb") == "a\n\nb"  # CR, then CRLF: two breaks
    assert normalized("a\u2028b\x0bc\x0cd\x85e") == "a\u2028b\x0bc\x0cd\x85e"
    assert split_lines("a\rb\r\nc\n") == (["a", "b", "c", ""], ["\r", "\r\n", "\n", ""])
    assert split_lines("no break") == (["no break"], [""])


def test_the_line_break_a_text_is_written_with_is_its_most_common_one():
    assert newline_of("a\r\nb\r\nc\nd") == "\r\n"
    assert newline_of("a\rb\rc\r\n") == "\r"
    assert newline_of("a\nb\r\n") == "\n"  # a tie: the first
    assert newline_of("one line") == "\n"


def test_spec_text_always_has_lf_line_breaks_however_it_is_made():
    assert SpecText("a.gpu", "x\ry\r\nz").text == "x\ny\nz"
    assert SpecText("a.gpu", "x\ry") == SpecText("a.gpu", "x\ny")


def test_a_lone_cr_ends_a_comment_so_the_line_after_it_is_read(tmp_path):
    # Before, `check` read `# note\rdevice A100-80GB` as one comment (the H100 stayed in force) while `fmt`
    # split it into two lines: the same file meant two things.
    path = tmp_path / "a.gpu"
    path.write_bytes(b"device H100-SXM\n# note\rdevice A100-80GB\n" + ON_A100.encode())
    report = run_check([str(path)])
    assert not report.diagnostics
    assert [v.status for v in report.verdicts] == ["pass"]
    assert report.verdicts[0].claim.span.line == 4


def test_the_verdict_is_the_same_before_and_after_fmt_for_a_lone_cr_before_a_device_line(tmp_path):
    path = tmp_path / "a.gpu"
    original = b"device H100-SXM\r# A100 from here on\rdevice A100-80GB\rdevice.sms  =  108\r"
    path.write_bytes(original)
    before = gpuspec("check", "a.gpu", cwd=tmp_path)
    assert before.returncode == 0, before.stdout + before.stderr
    assert gpuspec("fmt", "a.gpu", cwd=tmp_path).returncode == 0
    assert path.read_bytes() == original.replace(b"  =  ", b" = ")  # lone CRs kept, layout canonical
    after = gpuspec("check", "a.gpu", cwd=tmp_path)
    assert after.returncode == 0 and after.stdout == before.stdout


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_positions_count_lines_the_same_way_for_every_line_break(tmp_path, newline):
    path = tmp_path / "a.gpu"
    path.write_bytes(newline.join(["device H100-SXM", "# a comment", "x = bf16[4096]", "y = x * bogus", ""]).encode())
    result = gpuspec("check", "--format", "json", "a.gpu", cwd=tmp_path)
    [error] = json.loads(result.stdout)["errors"]
    assert (error["line"], error["column"]) == (4, 9)
    text = gpuspec("check", "a.gpu", cwd=tmp_path).stdout.decode()
    assert "a.gpu:4:9: error[unknown-name]" in text
    assert "\n    y = x * bogus\n            ^^^^^\n" in text  # the line, without a stray CR, and the caret under it


def test_a_syntax_error_after_lone_crs_is_on_the_line_a_reader_sees(tmp_path):
    path = tmp_path / "a.gpu"
    path.write_bytes(b"device H100-SXM\r\rx = bf16[4096]\ry = x *\r")
    report = run_check([str(path)])
    [error] = report.diagnostics
    assert error.code == "syntax" and error.span.line == 4


def test_standard_input_is_read_the_way_a_file_is(tmp_path):
    data = b"\xef\xbb\xbfdevice H100-SXM\r# c\rdevice A100-80GB\r\n" + ON_A100.encode()
    (tmp_path / "a.gpu").write_bytes(data)
    from_file = gpuspec("check", "-v", "a.gpu", cwd=tmp_path)
    from_stdin = gpuspec("check", "-v", "-", cwd=tmp_path, stdin=data)
    assert from_file.returncode == from_stdin.returncode == 0
    assert from_stdin.stdout == from_file.stdout.replace(b"a.gpu", b"<stdin>")


def test_a_bad_byte_on_standard_input_is_at_its_line_and_column(tmp_path):
    result = gpuspec("check", "-", cwd=tmp_path, stdin=b"device H100-SXM\rx = \xff\n")
    assert result.returncode == 2
    assert b"<stdin>:2:5: error[unreadable]: byte 0xff is not UTF-8 text" in result.stdout


def test_explain_and_harness_count_lines_as_check_does(tmp_path):
    path = tmp_path / "a.gpu"
    path.write_bytes(b"device H100-SXM\rx = bf16[4096]\ry = x * 2\rz = x * 3 fused\r")
    explained = gpuspec("explain", "a.gpu:4", cwd=tmp_path)
    assert explained.returncode == 0, explained.stderr
    assert b"x * 3" in explained.stdout and b"x * 2" not in explained.stdout
    harness = gpuspec("harness", "a.gpu:3", cwd=tmp_path)
    assert harness.returncode == 0, harness.stderr
    assert b"x * 2" in harness.stdout and b"x * 3" not in harness.stdout


def test_decode_keeps_the_line_breaks_as_written_and_drops_and_remembers_a_byte_order_mark():
    read = decode(b"\xef\xbb\xbfa\r\nb\rc", "f.gpu")
    assert read.bom and read.written == "a\r\nb\rc" and read.text == "a\nb\nc"
    assert read.spec().text == "a\nb\nc"
    assert not decode(b"a", "f.gpu").bom


def test_bad_bytes_and_nul_are_located_on_the_lines_a_reader_sees():
    with pytest.raises(UnreadableText) as bad:
        decode(b"one\rtwo\r\nthr\xffee", "f.gpu")
    assert (bad.value.line, bad.value.column) == (3, 4)
    with pytest.raises(UnreadableText) as nul:
        decode(b"one\rtw\0o", "f.gpu")
    assert (nul.value.line, nul.value.column) == (2, 3)


def test_read_leniently_shows_what_decodes_with_the_same_lines(tmp_path):
    path = tmp_path / "a.gpu"
    path.write_bytes(b"\xef\xbb\xbfa\rb\xff\0\r\nc")
    assert read_leniently(path) == "a\nb\ufffd\ufffd\nc"
    assert read_leniently(tmp_path / "missing.gpu") == ""


# --- One file, one identity ---------------------------------------------------------------------------------

SPEC = "device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2 is 62 waves\n"


def test_a_file_named_twice_is_checked_once(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "a.gpu").write_text(SPEC, encoding="utf-8")
    (tmp_path / "link.gpu").symlink_to(folder / "a.gpu")
    os.link(folder / "a.gpu", tmp_path / "hard.gpu")
    files, problems = spec_files([str(folder), str(folder / ".." / "d" / "a.gpu"), str(tmp_path / "link.gpu"),
                                  str(tmp_path / "hard.gpu"), str(folder / "a.gpu")])
    assert not problems
    assert files == [folder / "a.gpu"]  # the first spelling
    report = run_check([str(folder), str(folder / ".." / "d" / "a.gpu"), str(tmp_path / "link.gpu"),
                        str(tmp_path / "hard.gpu")])
    assert len(report.verdicts) == 1 and report.files == (str(folder / "a.gpu"),)


def test_distinct_files_with_the_same_text_are_both_checked(tmp_path):
    for name in ("a.gpu", "b.gpu"):
        (tmp_path / name).write_text(SPEC, encoding="utf-8")
    assert len(run_check([str(tmp_path)]).verdicts) == 2


# --- Writing back -------------------------------------------------------------------------------------------

def test_write_back_writes_through_a_symlink_and_keeps_the_link(tmp_path):
    target = tmp_path / "target.gpu"
    target.write_bytes(b"\xef\xbb\xbfold\r\n")
    link = tmp_path / "link.gpu"
    link.symlink_to(target)
    write_back(read_file(link), "new\r\n")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() == b"\xef\xbb\xbfnew\r\n"


def test_write_back_refuses_a_file_with_several_hard_links_and_changes_neither(tmp_path):
    first = tmp_path / "a.gpu"
    first.write_text("old\n", encoding="utf-8")
    os.link(first, tmp_path / "b.gpu")
    with pytest.raises(WriteError, match="2 hard links"):
        write_back(read_file(first), "new\n")
    assert first.read_text() == (tmp_path / "b.gpu").read_text() == "old\n"
    assert first.stat().st_ino == (tmp_path / "b.gpu").stat().st_ino


def test_write_back_refuses_a_file_that_changed_since_it_was_read(tmp_path):
    path = tmp_path / "a.gpu"
    path.write_text("old\n", encoding="utf-8")
    read = read_file(path)
    path.write_text("someone else's edit\n", encoding="utf-8")
    with pytest.raises(WriteError, match="changed while gpuspec was working on it"):
        write_back(read, "new\n")
    assert path.read_text() == "someone else's edit\n"


# --- Names that are not UTF-8 -------------------------------------------------------------------------------

def test_escaped_shows_the_bytes_of_a_name_that_is_not_utf8_and_the_result_encodes():
    name = os.fsdecode(b"bad\xff\xe2\x80\xae.gpu")
    shown = escaped(name)
    assert shown == "bad\\xff\\u202e.gpu"
    shown.encode("utf-8")  # no surrogate left
    assert masked(name) == "bad\ufffd\ufffd.gpu"
    assert escaped("\ud800") == "\\ud800"


NOT_UTF8 = b"bad\xff\xe2\x80\xae"  # a byte that is not UTF-8, then a right-to-left override


@pytest.fixture
def odd_name(tmp_path) -> tuple[Path, str]:
    if sys.platform == "darwin":
        pytest.skip("macOS refuses file names that are not UTF-8")
    name = os.fsdecode(NOT_UTF8 + b".gpu")
    (tmp_path / name).write_text("device H100-SXM\nx*2 on 4096² bf16 is ≈ 200 µs, 62 waves\n", encoding="utf-8")
    return tmp_path, name


@pytest.mark.parametrize("args", [
    ["check"], ["check", "-v"], ["check", "--format", "json"], ["check", "--format", "junit"],
    ["check", "--format", "markdown"], ["check", "--format", "github"], ["check", "--output", "out.txt"],
    ["explain"], ["fmt", "--check"], ["fmt", "--diff"], ["fmt"], ["check", "--update"],
], ids=lambda a: "-".join(x.strip("-") for x in a))
def test_a_file_name_that_is_not_utf8_is_shown_escaped_by_every_command(odd_name, args):
    folder, name = odd_name
    result = gpuspec(*args, name, cwd=folder)
    out = result.stdout + result.stderr
    assert b"Traceback" not in out and b"UnicodeEncodeError" not in out, out
    assert result.returncode in (0, 1), out
    if "--output" in args:
        out = (folder / "out.txt").read_bytes()
        out.decode("utf-8")
    assert b"\xff" not in out  # never the raw byte (it is not UTF-8)
    if args[-1] != "json":  # JSON escapes the name its own way (\udcff); every human format shows the byte
        assert "\u202e".encode() not in out, out
        assert b"bad\\xff" in out or b"bad\\\\xff" in out, out


def test_update_and_fmt_write_a_file_whose_name_is_not_utf8(odd_name):
    folder, name = odd_name
    assert gpuspec("check", "--update", name, cwd=folder).returncode == 0
    text = (folder / name).read_text(encoding="utf-8")
    assert "≈ 20 µs" in text
    (folder / name).write_text("device  H100-SXM\n", encoding="utf-8")
    result = gpuspec("fmt", name, cwd=folder)
    assert result.returncode == 0 and result.stdout == b"reformatted bad\\xff\\u202e.gpu\n"
    assert (folder / name).read_text(encoding="utf-8") == "device H100-SXM\n"


def test_reading_a_markdown_file_returns_the_document_and_its_warnings(tmp_path):
    path = tmp_path / "doc.md"
    path.write_bytes(b"# T\r\r```GPU\rdevice H100-SXM\r```\r")
    source = read(path)
    assert source.document == "# T\n\n```GPU\ndevice H100-SXM\n```\n"
    [warning] = source.warnings
    assert (warning.code, warning.span.line, warning.span.column) == ("near-miss", 3, 4)


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1e"])
def test_a_character_some_editors_show_as_a_line_break_is_refused_in_spec_text(tmp_path, char):
    # `# note<U+2028>device A100-80GB` looks like two lines in some editors and is one comment: refused, located.
    path = tmp_path / "a.gpu"
    path.write_text(f"device H100-SXM\n# note{char}device A100-80GB\n" + ON_A100, encoding="utf-8")
    report = run_check([str(path)])
    [error] = report.diagnostics
    assert (error.code, error.span.line, error.span.column) == ("line-separator", 2, 7)
    assert escaped(char) in error.message and not report.verdicts


def test_such_a_character_in_markdown_prose_is_fine_and_in_a_block_is_located_in_the_document(tmp_path):
    path = tmp_path / "doc.md"
    path.write_text("Prose\u2028with a separator.\n\n- item\n\n  ```gpu\n  device H100-SXM  # a\u2028b\n  ```\n",
                    encoding="utf-8")
    [error] = run_check([str(path)]).diagnostics
    assert (error.code, error.span.line, error.span.column) == ("line-separator", 6, 23)
    path.write_text("Prose\u2028with a separator.\n\n```gpu\ndevice H100-SXM\ndevice.sms = 132\n```\n", encoding="utf-8")
    report = run_check([str(path)])
    assert not report.diagnostics and [v.status for v in report.verdicts] == ["pass"]
