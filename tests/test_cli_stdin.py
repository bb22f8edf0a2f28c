"""Standard input: `check --stdin-filename NAME -` reads it as the file NAME would be read (Markdown by a .md
name), `fmt -` formats it to standard output, `explain -` explains it; bad bytes and odd names are located."""
from __future__ import annotations

import subprocess
import sys

SPEC = "device H100-SXM\na = fp32[1024]\nadd=a+a:\n    time ≈ 1 ms\n"
POST = "# A post\n\nSome prose.\n\n```gpu\n" + SPEC + "```\n"


def gpuspec(*args: str, stdin: bytes) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "gpuspec", *args], input=stdin, capture_output=True, timeout=120)
    assert b"Traceback" not in done.stdout + done.stderr
    return done


def test_markdown_on_stdin_is_read_as_markdown_under_its_name():
    done = gpuspec("check", "--stdin-filename", "post.md", "-", stdin=POST.encode())
    assert done.returncode == 1, done.stderr
    assert b"post.md:9:5: fail: add=a+a:" in done.stdout  # the document's own line numbers
    # without the name, the same bytes are a spec, and the fence is a syntax error
    plain = gpuspec("check", "-", stdin=POST.encode())
    assert plain.returncode == 2
    assert b"<stdin>:3:6: error[syntax]" in plain.stdout


def test_a_gpu_name_reads_stdin_as_a_spec():
    done = gpuspec("check", "--stdin-filename", "kernels/add.gpu", "-", stdin=SPEC.encode())
    assert done.returncode == 1
    assert b"kernels/add.gpu:4:5: fail: add=a+a:" in done.stdout


def test_bytes_that_are_not_utf8_on_stdin_are_located_under_the_name():
    done = gpuspec("check", "--stdin-filename", "post.md", "-", stdin=b"# t\n\n```gpu\ndevice \xff\n```\n")
    assert done.returncode == 2
    assert b"post.md:4:8: error[unreadable]: byte 0xff is not UTF-8 text" in done.stdout


def test_a_name_with_control_characters_is_shown_escaped():
    done = gpuspec("check", "--stdin-filename", "p\x1b[31m\x07.gpu", "-", stdin=SPEC.encode())
    assert done.returncode == 1
    assert b"\x1b" not in done.stdout and b"\x07" not in done.stdout
    assert b"fail: add=a+a:" in done.stdout


def test_stdin_filename_without_dash_and_update_of_stdin_are_refused():
    lone = gpuspec("check", "--stdin-filename", "post.md", "specs", stdin=b"")
    assert lone.returncode == 2 and b"add - to the paths" in lone.stderr
    update = gpuspec("check", "--update", "-", stdin=SPEC.encode())
    assert update.returncode == 2 and b"standard input (-) is not one" in update.stderr


def test_fmt_dash_writes_the_formatted_spec_to_stdout():
    done = gpuspec("fmt", "-", stdin=SPEC.encode())
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == SPEC.replace("add=a+a:", "add = a + a:")
    check = gpuspec("fmt", "--check", "-", stdin=SPEC.encode())
    assert (check.returncode, check.stdout) == (1, b"would reformat <stdin>\n")
    clean = gpuspec("fmt", "--check", "-", stdin=done.stdout)
    assert (clean.returncode, clean.stdout) == (0, b"")
    diff = gpuspec("fmt", "--diff", "--stdin-filename", "a.gpu", "-", stdin=SPEC.encode())
    assert diff.returncode == 1 and b"+add = a + a:" in diff.stdout and b"-add=a+a:" in diff.stdout


def test_fmt_dash_formats_markdown_gpu_blocks_and_keeps_the_prose():
    done = gpuspec("fmt", "--stdin-filename", "post.md", "-", stdin=POST.encode())
    assert done.returncode == 0
    assert done.stdout.decode() == POST.replace("add=a+a:", "add = a + a:")


def test_fmt_dash_keeps_crlf_line_breaks():
    done = gpuspec("fmt", "-", stdin=SPEC.replace("\n", "\r\n").encode())
    assert done.stdout == SPEC.replace("add=a+a:", "add = a + a:").replace("\n", "\r\n").encode()


def test_fmt_dash_refuses_bad_bytes_and_other_paths():
    bad = gpuspec("fmt", "-", stdin=b"device H100-SXM\nx = \xfe\n")
    assert bad.returncode == 2 and bad.stdout == b""
    assert b"<stdin>:2:5: byte 0xfe is not UTF-8 text" in bad.stderr
    mixed = gpuspec("fmt", "-", "specs", stdin=b"")
    assert mixed.returncode == 2 and b"alone" in mixed.stderr


def test_explain_dash_explains_stdin():
    done = gpuspec("explain", "-", stdin=SPEC.encode())
    assert done.returncode == 0
    assert b"<stdin>:3: add=a+a:" in done.stdout
    assert b"elements = 1,024" in done.stdout


def test_explain_reads_markdown_on_stdin_under_its_name():
    done = gpuspec("explain", "--stdin-filename", "post.md", "-", stdin=POST.encode())
    assert done.returncode == 0, done.stderr
    assert b"post.md:8: add=a+a:" in done.stdout  # the document's own line
    one = gpuspec("explain", "--stdin-filename", "post.md", "-:8", stdin=POST.encode())
    assert one.returncode == 0 and one.stdout == done.stdout
    plain = gpuspec("explain", "-", stdin=POST.encode())  # without the name: a spec, whose fence does not parse
    assert plain.returncode == 2 and b"<stdin>:3:6: error[syntax]" in plain.stderr


def test_explain_shows_the_line_of_an_error_on_stdin_and_a_line_past_its_end():
    done = gpuspec("explain", "--stdin-filename", "post.md", "-", stdin=POST.replace("H100-SXM", "H10").encode())
    assert done.returncode == 2 and b"post.md:6:1: error[unknown-device]" in done.stderr
    assert b"\n    device H10\n" in done.stderr  # the line, read once from standard input
    beyond = gpuspec("explain", "--stdin-filename", "post.md", "-:99", stdin=POST.encode())
    assert beyond.returncode == 2 and b"post.md:99: past the end of the file, which has 10 lines" in beyond.stderr


def test_explain_stdin_filename_without_dash_is_misuse():
    done = gpuspec("explain", "--stdin-filename", "post.md", "specs/matmul.gpu", stdin=b"")
    assert done.returncode == 2 and done.stderr.startswith(b"usage: gpuspec explain")
    assert b"give - as the file" in done.stderr
