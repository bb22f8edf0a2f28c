"""Shared helpers: check a spec given as text, and find the verdict of one claim."""
from __future__ import annotations

from pathlib import Path

import pytest

from gpuspec.api import check_text

ROOT = Path(__file__).resolve().parent.parent
H100 = "device H100-SXM\n"


# What a CI runner or a user's shell may set that changes gpuspec's output: each test starts without them, and a
# test about one of them sets it itself.
OUTPUT_ENVIRONMENT = ("NO_COLOR", "FORCE_COLOR", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS", "COLUMNS")


@pytest.fixture(autouse=True)
def _plain_output_environment(monkeypatch):
    for name in OUTPUT_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)


def run(text: str):
    """The Report of a spec given as text (a device line is not added)."""
    return check_text(text, "t.gpu")


def verdicts(text: str) -> list:
    report = run(text)
    assert not report.diagnostics, [d.message for d in report.diagnostics]
    return list(report.verdicts)


def only(text: str):
    """The one verdict of a spec that makes exactly one claim."""
    found = verdicts(text)
    assert len(found) == 1, found
    return found[0]


def kill_once_paused(command: list[str], **popen) -> int:
    """Run `command`, kill it with SIGKILL as soon as it prints a line `paused`, and return its exit status."""
    import os
    import signal
    import subprocess

    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, **popen)
    try:
        assert any(line.strip() == "paused" for line in iter(child.stdout.readline, ""))
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
    return child.returncode


def patch_os(monkeypatch, module, **replaced) -> None:
    """Replace functions of `os` as `module` alone sees them: the rest of gpuspec (the cache folder's own writes,
    say, which happen or not by what earlier tests cached) keeps the real ones."""
    import os
    import types

    view = types.SimpleNamespace(**{name: getattr(os, name) for name in dir(os) if not name.startswith("__")})
    for name, function in replaced.items():
        setattr(view, name, function)
    monkeypatch.setattr(module, "os", view)


def check_for_github(spec: Path, summary: Path, capsys) -> tuple[int, str, str]:
    """`gpuspec check --format github SPEC` with GITHUB_STEP_SUMMARY set to `summary`: (exit status, out, err)."""
    import os

    from gpuspec.cli import main

    os.environ["GITHUB_STEP_SUMMARY"] = str(summary)
    try:
        code = main(["check", "--format", "github", str(spec)])
    finally:
        del os.environ["GITHUB_STEP_SUMMARY"]
    out, err = capsys.readouterr()
    return code, out, err


def errors(text: str) -> list:
    return list(run(text).diagnostics)


def pytest_collect_file(parent, file_path: Path):
    """tests/documents/*.md: each gpu block, with the expectations its comments write, is a test item."""
    from document_items import collect

    return collect(parent, file_path, ROOT / "tests" / "documents")


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture(autouse=True, scope="session")
def _private_parse_cache(tmp_path_factory):
    """Tests keep gpuspec's parse cache in a folder of their own, not the user's."""
    import os

    folder = tmp_path_factory.mktemp("cache")
    os.chmod(folder, 0o700)
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old
