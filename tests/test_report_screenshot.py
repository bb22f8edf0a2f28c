"""scripts/screenshot-report's arguments: each mistake is an exit 2 with its usage and what would do, said before
any browser is looked for or started. (Taking a screenshot needs Chromium, which the tests do not: the script
is a developer's tool, run by hand.)"""
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "screenshot-report"


def run(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True, cwd=cwd, timeout=60)


@pytest.fixture
def report(tmp_path) -> Path:
    path = tmp_path / "report.html"
    path.write_text("<!DOCTYPE html><title>r</title>")
    return path


@pytest.mark.parametrize("argv, words", [
    (["missing.html", "--out", "s.png"], "missing.html: no such file"),
    (["notes.md", "--out", "s.png"], "not an HTML report"),
    (["report.html", "--out", "s.jpg"], "--out s.jpg: the screenshot is a PNG"),
    (["report.html", "--out", "s.png", "--width", "10"], "--width 10: give a width from 320 to 4000"),
    (["report.html", "--out", "s.png", "--filter", "x\"><b"], "a filter is a name of letters"),
    (["report.html", "--out", "s.png", "--height", "0"], "the height 1 to 16000"),
    (["report.html", "--out", "s.png", "--timeout", "0"], "--timeout 0: give 1 to 600 seconds"),
    (["report.html", "--out", "s.png", "--chromium", "no/such/chromium"], "not a program to run"),
    (["report.html"], "the following arguments are required: --out"),
])
def test_a_mistake_in_the_arguments_is_exit_2_saying_what_would_do(report, argv, words):
    (report.parent / "notes.md").write_text("# notes\n")
    done = run(*argv, cwd=report.parent)
    assert done.returncode == 2, done.stderr
    assert words in done.stderr and "usage: screenshot-report" in done.stderr
    assert "Traceback" not in done.stderr and not (report.parent / "s.png").exists()


def test_a_folder_given_as_chromium_is_refused(report):
    done = run("report.html", "--out", "s.png", "--chromium", str(report.parent), cwd=report.parent)
    assert done.returncode == 2 and "not a program to run" in done.stderr


def test_help_names_every_option():
    done = run("--help", cwd=SCRIPT.parent)
    assert done.returncode == 0
    for option in ("--out", "--width", "--filter", "--open", "--top", "--height", "--chromium", "--timeout"):
        assert option in done.stdout
