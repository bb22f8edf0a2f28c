"""What `gpuspec init` gives a project: a starter spec that passes `gpuspec check`, and the pre-commit entry and
GitHub Actions job to copy (printed, never written into the user's own configuration)."""
from __future__ import annotations

import re
from pathlib import Path

from gpuspec.record import Record, record
from gpuspec.version import __version__

SPEC_PATH = "specs/example.gpu"

SPEC = """\
# A starter spec: claims about GPU performance, each checked against the analytical model by `gpuspec check`
# (`gpuspec explain specs/example.gpu` shows how each number is derived). Edit it to say what your code does.
device H100-SXM
set tolerance = 10%

# Scaling a 4096 x 4096 bf16 matrix reads and writes it once: memory-bound.
x = bf16[4096, 4096]
scale = x * 2:
    bytes_moved ≈ 67.1 MB
    time ≈ 20 µs
    memory-bound

# A large matrix multiply does 2·M·N·K floating-point operations: compute-bound.
a = bf16[8192, 8192]
b = bf16[8192, 8192]
c = a @ b:
    flops ≈ 1.1 TFLOP
    compute-bound
"""

# The hooks of .pre-commit-hooks.yaml as a local entry: it runs the gpuspec installed beside pre-commit, so it
# needs no repository address.
PRE_COMMIT = """\
repos:
  - repo: local
    hooks:
      - id: gpuspec-check
        name: gpuspec check
        entry: gpuspec check --allow-nothing-checked
        language: system
        files: \\.(gpu|md)$
      - id: gpuspec-fmt
        name: gpuspec fmt
        entry: gpuspec fmt
        language: system
        files: \\.(gpu|md)$
"""

# `--format github` annotates each failing claim and appends the Markdown report to the job summary
# (GITHUB_STEP_SUMMARY) itself: a second step writing the summary would show the report twice.
_JOB = """\
gpuspec:
  runs-on: ubuntu-latest
  steps:
    - uses: actions/checkout@v4
    - uses: actions/setup-python@v5
      with: {{python-version: "3.12"}}
    - run: {install}
    - run: gpuspec check --format github specs/
"""

# What a CI job must install is where this gpuspec came from: gpuspec has no release on PyPI, so
# `pip install gpuspec` would find nothing (or, one day, another project of that name).
_PLACEHOLDER = "pip install \"gpuspec @ git+<address of the gpuspec repository>@<tag or commit>\""
_SAFE_URL = re.compile(r"[A-Za-z0-9._~:/@+%=-]+")


@record
class Install(Record):
    """The command a CI job runs to install gpuspec, and what the user must know about it (None: nothing)."""

    command: str
    note: str | None = None


def install(direct_url: dict | None, version: str = __version__, here: Path | None = None,
            git_origin=None) -> Install:
    """How a CI runner installs the gpuspec that runs here, from its PEP 610 record (`direct_url`: None when it
    came from a package index). `here` is the project `init` runs in (a checkout of gpuspec itself installs
    with `pip install .`); `git_origin(folder)` gives a local checkout's remote and commit, or None."""
    if direct_url is None:  # from an index: the same release
        return Install(f"pip install gpuspec=={version}")
    url = str(direct_url.get("url", ""))
    vcs = direct_url.get("vcs_info")
    if isinstance(vcs, dict) and _SAFE_URL.fullmatch(url) and not url.startswith("file:"):
        at = vcs.get("commit_id") or vcs.get("requested_revision")
        pinned = f"@{at}" if isinstance(at, str) and _SAFE_URL.fullmatch(at) else ""
        return Install(f"pip install \"gpuspec @ {vcs.get('vcs', 'git')}+{_without_credentials(url)}{pinned}\"")
    if not url.startswith("file:"):
        if _SAFE_URL.fullmatch(url):  # an archive on a server
            return Install(f"pip install \"gpuspec @ {_without_credentials(url)}\"")
        return Install(_PLACEHOLDER, "gpuspec was installed from an address that cannot be written into YAML as it "
                                     "is: put the address of the gpuspec repository in the job")
    from urllib.parse import unquote, urlparse

    folder = Path(unquote(urlparse(url).path))
    if here is not None and _same(folder, here):  # gpuspec's own checkout: the job installs what it checks out
        return Install("pip install .")
    found = git_origin(folder) if git_origin is not None and folder.is_dir() else None
    if found is not None:
        remote, commit = found
        return Install(f"pip install \"gpuspec @ git+{remote}@{commit}\"",
                       f"gpuspec is not on PyPI: the job installs the commit installed here, {commit[:12]}, from "
                       f"{remote} (push it first, or name a tag)")
    return Install(_PLACEHOLDER, f"gpuspec is not on PyPI, and this one was installed from {folder} on this "
                                 "machine, which a CI runner cannot reach: put the address of the gpuspec "
                                 "repository in the job")


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _without_credentials(url: str) -> str:
    """`https://user:token@host/path` as `https://host/path`: a job file is no place for a secret (an ssh URL keeps
    its user name, `git@`, which is no secret, and loses a password)."""
    if url.startswith("ssh://"):
        return re.sub(r"^ssh://([^/@:]*):[^/@]*@", r"ssh://\1@", url)
    return re.sub(r"^([a-z+]+://)[^/@]*@", r"\1", url)


def git_origin(folder: Path) -> tuple[str, str] | None:
    """The `origin` remote of the git checkout at `folder`, as pip takes it (`https://...`, `ssh://git@...`), and
    its HEAD commit; None where there is none, or git cannot say."""
    import subprocess

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=10,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    remote, commit = git("remote", "get-url", "origin"), git("rev-parse", "HEAD")
    if not remote or not commit or not re.fullmatch(r"[0-9a-f]{40,64}", commit):
        return None
    scp = re.fullmatch(r"([\w.-]+@)?([\w.-]+):(?!//)(.+)", remote)  # git@github.com:owner/repo.git
    if scp:
        remote = f"ssh://{scp[1] or ''}{scp[2]}/{scp[3]}"
    remote = _without_credentials(remote)
    if not re.match(r"(https|ssh)://", remote) or not _SAFE_URL.fullmatch(remote):
        return None
    return remote, commit


def installed() -> Install:
    """How a CI runner installs the gpuspec running now (see install)."""
    import importlib.metadata
    import json

    try:
        record_text = importlib.metadata.distribution("gpuspec").read_text("direct_url.json")
        direct_url = json.loads(record_text) if record_text else None
    except (importlib.metadata.PackageNotFoundError, ValueError, OSError):  # run from a folder, uninstalled
        return Install(_PLACEHOLDER, "gpuspec is not on PyPI and is not installed here as a package: put the "
                                     "address of the gpuspec repository in the job")
    return install(direct_url if isinstance(direct_url, dict) else None, here=Path.cwd(), git_origin=git_origin)


def ci_job(how: Install) -> str:
    return _JOB.format(install=how.command)


def instructions(spec_path: str = SPEC_PATH, how: Install | None = None) -> str:
    """What init prints once the spec is written: what to run next, and the two snippets (the CI job installing
    gpuspec as `how` says, by default as the gpuspec running now was installed)."""
    how = how or installed()
    note = f"\n{how.note}\n" if how.note else ""
    return (f"wrote {spec_path}; `gpuspec check {spec_path}` checks it\n\n"
            "pre-commit (add to .pre-commit-config.yaml):\n\n" + PRE_COMMIT
            + "\nGitHub Actions (a job under `jobs:` in .github/workflows/*.yml):\n\n" + ci_job(how) + note)
