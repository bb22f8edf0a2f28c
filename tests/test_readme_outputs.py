"""README's shown outputs are what gpuspec prints today: the first check's output (files, dots and counts), the
JSON report's example (its result is the real one for that claim; its summary counts what it lists) and the
`[tool.gpuspec]` example (a table gpuspec reads as it is, with every key) and the error shown for an unknown device.
Elsewhere: the failure shown under "When a
claim fails" (tests/test_failure_text.py), the configuration error (tests/test_config.py) and the CI job's install
line (tests/test_cli_init.py)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpuspec.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _block_after(prefix: str) -> list[str]:
    """The lines of the fenced block whose first line starts with `prefix`."""
    found = re.search(r"```[a-z]*\n(" + re.escape(prefix) + r"[^\n]*\n(?:.*?\n)??)```", README, re.S)
    assert found, f"README.md has no block starting {prefix!r}"
    return found.group(1).rstrip("\n").split("\n")


def test_the_first_check_shown_is_what_gpuspec_prints(capsys, monkeypatch):
    command, *shown = _block_after("$ gpuspec check ")
    monkeypatch.chdir(ROOT)
    code = main(command.split()[2:])
    printed = capsys.readouterr().out.rstrip("\n").split("\n")
    assert code == 0
    assert shown == printed, "update README.md's first check output to what the command prints"


def test_the_json_example_is_a_real_result_and_its_summary_counts_what_it_lists(capsys, monkeypatch):
    text = re.search(r"```json\n(\{\n  \"version\".*?\n\})\n```", README, re.S).group(1)
    example = json.loads(text)
    shown = example["results"][0]
    monkeypatch.chdir(ROOT)
    main(["check", "--format", "json", shown["file"]])
    real = json.loads(capsys.readouterr().out)
    matching = [r for r in real["results"] if r["line"] == shown["line"] and r["column"] == shown["column"]
                and r["source"] == shown["source"]]
    assert len(matching) == 1, f"no result at {shown['file']}:{shown['line']}:{shown['column']}"
    for key, value in shown.items():
        if key == "actual":
            assert matching[0][key] == pytest.approx(value, rel=1e-4)
        else:
            assert matching[0][key] == value, key
    assert set(example) == set(real), "the example shows the report's keys"
    statuses = [r["status"] for r in example["results"]]
    assert example["summary"] == {"passed": statuses.count("pass"), "failed": statuses.count("fail"),
                                  "skipped": statuses.count("skip"), "errors": len(example["errors"])}


def test_the_configuration_example_is_read_as_it_is_and_shows_every_key(tmp_path, monkeypatch):
    from gpuspec import config

    table = re.search(r"```toml\n(\[tool\.gpuspec\]\n.*?)```", README, re.S).group(1)
    (tmp_path / "pyproject.toml").write_text(table, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    found = config.load()  # a mistake in it would raise, located
    assert found.keys == set(config.KEYS), "README's [tool.gpuspec] example shows every key"
    assert found.search.markdown_globs == ("docs/**/*.md",) and found.defaults.sources == ("model", "measured")


def test_the_unknown_device_error_shown_is_what_gpuspec_prints(tmp_path, capsys, monkeypatch):
    shown = _block_after("specs/lesson.gpu:1:1: error[unknown-device]")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "lesson.gpu").write_text(shown[1].strip() + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "specs/lesson.gpu"]) == 2
    captured = capsys.readouterr()
    printed = (captured.out + captured.err).rstrip("\n").split("\n")
    assert printed[:len(shown)] == shown, "update README.md's unknown-device error to what gpuspec prints"
