"""`gpuspec init`: a starter spec that passes check and is formatted, the pre-commit entry and CI job to copy;
nothing already there is overwritten or followed."""
from __future__ import annotations

import os
from pathlib import Path

from gpuspec import starter
from gpuspec.cli import EXIT_INVALID, EXIT_OK, main

ROOT = Path(__file__).resolve().parent.parent


def init(capsys, folder: Path) -> tuple[int, str, str]:
    old = os.getcwd()
    os.chdir(folder)
    try:
        code = main(["init"])
    finally:
        os.chdir(old)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_init_writes_a_starter_spec_that_passes_check_and_fmt(tmp_path, capsys):
    code, out, err = init(capsys, tmp_path)
    assert (code, err) == (EXIT_OK, "")
    spec = tmp_path / "specs" / "example.gpu"
    assert spec.read_text(encoding="utf-8") == starter.SPEC
    assert out.startswith("wrote specs/example.gpu;")
    assert sorted(p.name for p in spec.parent.iterdir()) == ["example.gpu"]  # no temporary file left
    assert main(["check", "-v", str(spec)]) == EXIT_OK
    assert "5 passed, 0 failed" in capsys.readouterr().out
    assert main(["fmt", "--check", str(spec)]) == EXIT_OK


def test_init_never_overwrites_a_file_and_says_so(tmp_path, capsys):
    (tmp_path / "specs").mkdir()
    mine = tmp_path / "specs" / "example.gpu"
    mine.write_bytes(b"mine \xff\n")
    code, out, err = init(capsys, tmp_path)
    assert code == EXIT_INVALID and out == ""
    assert "specs/example.gpu already exists; it was left as it is" in err
    assert mine.read_bytes() == b"mine \xff\n"
    assert sorted(p.name for p in mine.parent.iterdir()) == ["example.gpu"]


def test_init_does_not_write_through_a_link_even_a_broken_one(tmp_path, capsys):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "example.gpu").symlink_to(tmp_path / "elsewhere.gpu")
    code, _, err = init(capsys, tmp_path)
    assert code == EXIT_INVALID and "already exists" in err
    assert not (tmp_path / "elsewhere.gpu").exists()


def test_init_where_specs_is_a_file_is_an_error_not_a_traceback(tmp_path, capsys):
    (tmp_path / "specs").write_text("not a folder\n", encoding="utf-8")
    code, out, err = init(capsys, tmp_path)
    assert code == EXIT_INVALID and out == ""
    assert err.startswith("gpuspec init: cannot make specs:")
    assert (tmp_path / "specs").read_text(encoding="utf-8") == "not a folder\n"


def test_the_printed_snippets_match_the_shipped_hooks_and_the_readme_job():
    # (no YAML parser is a dependency: the hooks file's own lines are compared)
    shipped = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    for key in ("id", "entry", "files"):
        values = [line.split(":", 1)[1].strip() for line in shipped.splitlines()
                  if line.lstrip("- ").startswith(key + ":")]
        printed = [line.split(":", 1)[1].strip() for line in starter.PRE_COMMIT.splitlines()
                   if line.lstrip("- ").startswith(key + ":")]
        assert printed == values and len(values) == 2
    assert "    - run: gpuspec check --format github specs/\n" in starter.CI
    assert "\t" not in starter.CI + starter.PRE_COMMIT  # YAML refuses tabs
    assert starter.PRE_COMMIT in starter.instructions() and starter.CI in starter.instructions()
