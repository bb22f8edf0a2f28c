"""Searching folders for specs: hidden folders, virtual environments and node_modules are left alone unless named;
a folder that cannot be read is a located error and the search goes on; a folder named that the excludes skip
whole is said to be excluded, and by which key."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gpuspec.api import spec_files
from gpuspec.cli import main
from gpuspec.report import EXIT_FAILED, EXIT_INVALID, EXIT_NOTHING

FAILING = "device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2 is ≈ 99 µs\n"
LEFT_ALONE = (".git/objects", ".venv/lib", ".hidden", "sub/.cache", "node_modules/pkg", "env/lib", "sub/node_modules")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """specs/a.gpu, and a copy of it in each folder a search leaves alone (env/ is a virtual environment)."""
    monkeypatch.chdir(tmp_path)
    for folder in ("specs", *LEFT_ALONE):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "a.gpu").write_text(FAILING, encoding="utf-8")
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    (tmp_path / "venv-like").mkdir()  # a name alone makes no virtual environment
    (tmp_path / "venv-like" / "b.gpu").write_text(FAILING, encoding="utf-8")
    return tmp_path


def files(capsys, *argv: str) -> tuple[int, list[str]]:
    code = main(["check", "--format", "json", *argv])
    return code, sorted({result["file"] for result in json.loads(capsys.readouterr().out)["results"]})


def test_a_search_leaves_hidden_folders_environments_and_node_modules_alone(tree, capsys):
    assert files(capsys) == (EXIT_FAILED, ["specs/a.gpu", "venv-like/b.gpu"])
    assert files(capsys, ".") == (EXIT_FAILED, ["specs/a.gpu", "venv-like/b.gpu"])
    assert [str(p) for p in spec_files(["."])[0]] == ["specs/a.gpu", "venv-like/b.gpu"]


@pytest.mark.parametrize("folder", [".git", ".venv/lib", "sub/.cache", "node_modules", "env"])
def test_a_folder_left_alone_is_searched_when_named(tree, capsys, folder):
    code, found = files(capsys, folder)
    assert code == EXIT_FAILED and found and all(name.startswith(folder.rstrip("/") + "/") for name in found)


def test_a_hidden_folder_inside_a_named_one_is_still_left_alone(tree, capsys):
    assert files(capsys, "sub") == (EXIT_NOTHING, [])


def test_an_unreadable_folder_is_a_located_error_and_the_search_goes_on(tree, capsys, monkeypatch):
    locked = tree / "specs" / "locked"
    locked.mkdir()
    (locked / "c.gpu").write_text(FAILING, encoding="utf-8")
    scandir = os.scandir

    def refusing(path="."):
        if Path(os.fsdecode(path)).resolve() == locked.resolve():
            raise PermissionError(13, "Permission denied", os.fsdecode(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    code = main(["check", "--format", "json", "specs", "venv-like"])
    data = json.loads(capsys.readouterr().out)
    assert code == EXIT_INVALID
    assert sorted({r["file"] for r in data["results"]}) == ["specs/a.gpu", "venv-like/b.gpu"]
    (error,) = data["errors"]
    assert error["code"] == "unreadable-folder"
    assert error["message"] == ("cannot read the folder specs/locked: Permission denied; what it holds is not "
                                "checked")


@pytest.mark.skipif(not Path("/proc/1").is_dir(), reason="a Linux /proc")
def test_a_folder_of_the_system_is_errors_in_words_not_an_internal_error(tmp_path, capsys):
    code = main(["check", "/proc/1/task"])
    captured = capsys.readouterr()
    assert code in (EXIT_NOTHING, EXIT_INVALID)
    assert "internal error" not in captured.err + captured.out and "Traceback" not in captured.err + captured.out


def test_a_path_that_cannot_be_looked_at_is_an_error_not_a_crash(tree, capsys):
    code = main(["check", "specs/a.gpu\x00x", "specs"])
    captured = capsys.readouterr()
    assert code == EXIT_INVALID and "no such file or folder: specs/a.gpu\\x00x" in captured.out
    assert "internal error" not in captured.err


def test_a_folder_named_that_the_table_excludes_says_so_and_by_which_key(tree, capsys):
    (tree / "pyproject.toml").write_text('[tool.gpuspec]\nexclude = ["specs"]\n', encoding="utf-8")
    assert main(["check", "specs"]) == EXIT_NOTHING
    out = capsys.readouterr().out
    assert ("pyproject.toml:2:1: warning[excluded]: specs is not searched: `exclude` of [tool.gpuspec] excludes it "
            "(`specs`)\n    exclude = [\"specs\"]\n") in out
    assert "nothing checked: no .gpu files or Markdown gpu blocks under specs; 1 warning may say why" in out
    assert main(["check", "specs/a.gpu"]) == EXIT_FAILED  # a file named is still checked
    capsys.readouterr()
    assert main(["check", "--exclude", "sp*", "specs"]) == EXIT_NOTHING
    assert "warning[excluded]: specs is not searched: --exclude excludes it (`sp*`)" in capsys.readouterr().out
