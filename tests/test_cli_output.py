"""Output that cannot be written: a pipe its reader closed (`gpuspec check | head -1`) keeps the command's own exit
status; standard output on a full device is said on stderr and exits 2 (never 0, never 1, which means a claim
failed), whatever the command; a broken stderr changes nothing."""
from __future__ import annotations

import errno
import importlib.util
import io
import subprocess
import sys

import pytest

from gpuspec.cli import main
from gpuspec.report import EXIT_FAILED, EXIT_INVALID, EXIT_OK

PASSING = "device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2 is ≈ 20 µs\n"
FAILING = PASSING.replace("≈ 20 µs", "≈ 99 µs")
BROKEN = "device H100-SXM\nx = \n"
_DRAWS = importlib.util.find_spec("matplotlib") is not None


class _Full(io.TextIOBase):
    """A stream on a full device: every write fails, as writing to /dev/full does."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


class _Closed(_Full):
    def write(self, text: str) -> int:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")


def _specs(tmp_path):
    for name, text in (("pass.gpu", PASSING), ("fail.gpu", FAILING), ("bad.gpu", BROKEN),
                       ("ugly.gpu", PASSING.replace("x = bf16", "x   =   bf16"))):
        (tmp_path / name).write_text(text, encoding="utf-8")


@pytest.mark.parametrize(("spec", "code"), [("pass.gpu", EXIT_OK), ("fail.gpu", EXIT_FAILED),
                                            ("bad.gpu", EXIT_INVALID)])
@pytest.mark.parametrize("argv", [["check"], ["check", "-v"], ["check", "--format", "json"]])
def test_a_closed_pipe_keeps_the_reports_exit_status(tmp_path, spec, code, argv):
    _specs(tmp_path)
    child = subprocess.Popen([sys.executable, "-m", "gpuspec", *argv, spec], cwd=tmp_path, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    child.stdout.close()  # the reader is gone before gpuspec writes a line: `gpuspec check a.gpu | true`
    err = child.stderr.read().decode()
    assert child.wait(timeout=60) == code
    assert "Traceback" not in err and "Exception ignored" not in err and "internal error" not in err


def _commands(tmp_path):
    pass_gpu, fail_gpu = tmp_path / "pass.gpu", tmp_path / "fail.gpu"
    return [
        ["check", str(pass_gpu)], ["check", str(fail_gpu)], ["check", "-v", "--format", "json", str(fail_gpu)],
        ["explain", f"{pass_gpu}:3"], ["explain", str(pass_gpu)], ["devices"], ["devices", "H100-SXM"],
        ["devices", "H100-SXM", "A100-80GB"], ["models"], ["harness", str(pass_gpu)],
        ["fmt", "--diff", str(tmp_path / "ugly.gpu")],
        ["init"], ["--help"], ["check", "--help"], ["explain", "--help"], ["--version"],
        *([["report", str(pass_gpu), "--out", str(tmp_path / "r.md")],
           ["plot", "roofline", str(pass_gpu), "--out", str(tmp_path / "p.svg")]] if _DRAWS else []),
    ]


def _run(argv) -> int:
    try:
        return main(argv)
    except SystemExit as stop:  # --help, --version
        return stop.code


def test_every_command_says_so_when_standard_output_is_full(tmp_path, monkeypatch, capsys):
    _specs(tmp_path)
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")  # init writes its spec here
    for argv in _commands(tmp_path):
        capsys.readouterr()
        with monkeypatch.context() as patched:
            patched.setattr(sys, "stdout", _Full())
            code = _run(argv)
        err = capsys.readouterr().err
        assert code == EXIT_INVALID, (argv, code, err)
        assert "standard output could not be written (No space left on device)" in err, argv
        assert "Traceback" not in err and "internal error" not in err, argv


def test_a_closed_pipe_in_process_keeps_each_commands_status(tmp_path, monkeypatch, capsys):
    _specs(tmp_path)
    for argv, code in ((["check", str(tmp_path / "fail.gpu")], EXIT_FAILED), (["devices"], EXIT_OK),
                       (["explain", str(tmp_path / "pass.gpu")], EXIT_OK), (["--help"], EXIT_OK),
                       (["check", str(tmp_path / "bad.gpu")], EXIT_INVALID)):
        with monkeypatch.context() as patched:
            patched.setattr(sys, "stdout", _Closed())
            assert _run(argv) == code, argv
        err = capsys.readouterr().err
        assert "Traceback" not in err and "internal error" not in err


def test_a_broken_stderr_changes_no_status(tmp_path, monkeypatch, capsys):
    _specs(tmp_path)
    for argv, code in ((["check", str(tmp_path / "bad.gpu")], EXIT_INVALID), (["devices", "nope"], EXIT_INVALID),
                       (["check", str(tmp_path / "fail.gpu")], EXIT_FAILED)):
        with monkeypatch.context() as patched:
            patched.setattr(sys, "stderr", _Full())
            assert _run(argv) == code, argv


def test_the_streams_are_given_back(tmp_path, capsys):
    _specs(tmp_path)
    before = sys.stdout, sys.stderr
    main(["check", str(tmp_path / "pass.gpu")])
    assert (sys.stdout, sys.stderr) == before
