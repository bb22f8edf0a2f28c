"""What `gpuspec init` gives a project: a starter spec that passes `gpuspec check`, and the pre-commit entry and
GitHub Actions job to copy (printed, never written into the user's own configuration)."""
from __future__ import annotations

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

CI = f"""\
gpuspec:
  runs-on: ubuntu-latest
  steps:
    - uses: actions/checkout@v4
    - uses: actions/setup-python@v5
      with: {{python-version: "3.12"}}
    - run: pip install gpuspec=={__version__}
    - run: gpuspec check --format github specs/
    - run: gpuspec check --format markdown --output "$GITHUB_STEP_SUMMARY" specs/
      if: always()
"""


def instructions(spec_path: str = SPEC_PATH) -> str:
    """What init prints once the spec is written: what to run next, and the two snippets."""
    return (f"wrote {spec_path}; `gpuspec check {spec_path}` checks it\n\n"
            "pre-commit (add to .pre-commit-config.yaml):\n\n" + PRE_COMMIT
            + "\nGitHub Actions (a job under `jobs:` in .github/workflows/*.yml):\n\n" + CI)
