"""Every bundled spec and README claim keeps its verdict and value: `gpuspec check specs/ README.md` against a
snapshot of what it gave before a change meant to keep behaviour (a restructuring, a speed-up).

A change that is meant to alter a verdict or a value regenerates the snapshot on purpose:
`python tests/test_snapshot.py --write`, and says why in its commit.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "tests" / "snapshots" / "bundled-specs.json"
KEPT = ("file", "line", "column", "claim", "source", "status", "actual", "unit")


def _current() -> dict:
    out = subprocess.run([sys.executable, "-m", "gpuspec", "check", "specs/", "README.md", "--format", "json"],
                         cwd=ROOT, capture_output=True, text=True)
    report = json.loads(out.stdout)
    return {"summary": report["summary"], "results": [{k: r.get(k) for k in KEPT} for r in report["results"]]}


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-9)
    return a == b


def test_bundled_specs_keep_their_verdicts_and_values():
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    current = _current()
    assert current["summary"] == expected["summary"]
    assert len(current["results"]) == len(expected["results"])
    changed = [(e, c) for e, c in zip(expected["results"], current["results"])
               if any(not _same(e[k], c[k]) for k in KEPT)]
    assert not changed, "\n".join(f"{e['file']}:{e['line']}: {e['claim']}: {e} -> {c}" for e, c in changed[:10])


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    SNAPSHOT.write_text(json.dumps(_current(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
