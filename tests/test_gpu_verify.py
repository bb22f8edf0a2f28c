"""scripts/gpu-verify: what it carries, how long it takes, and a rehearsal of the whole run without a GPU.

The rehearsal runs the real script (probe, calibrate, check --measure of every bundled spec, table) under the
Triton interpreter with the fake timer, in about a minute and a half on two cores. GPUSPEC_REHEARSAL_PYTHON names
the interpreter it uses (default: this one): a virtual environment with only torch and triton (the GPU image's
versions) shows that the wheels the script carries are all gpuspec needs.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile

import pytest
from conftest import ROOT

from gpuspec import profiles, results

SCRIPT = ROOT / "scripts" / "gpu-verify"
WHEELS = ROOT / "scripts" / "wheels"
PYTHON = os.environ.get("GPUSPEC_REHEARSAL_PYTHON") or sys.executable
MOST_FILES = 8  # what comes back from the GPU machine


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def test_the_wheels_match_their_sums_are_pure_python_and_cover_every_dependency():
    sums = dict(reversed(line.split()) for line in (WHEELS / "SHA256SUMS").read_text().splitlines() if line.strip())
    wheels = sorted(WHEELS.glob("*.whl"))
    assert {w.name for w in wheels} == set(sums)
    for wheel in wheels:
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == sums[wheel.name], wheel.name
        assert wheel.name.endswith("-py3-none-any.whl"), f"{wheel.name} is not pure Python"
        with zipfile.ZipFile(wheel) as archive:
            assert not [n for n in archive.namelist() if n.endswith((".so", ".pyd", ".dylib"))], wheel.name
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {_norm(re.split(r"[<>=!~; \[]", d)[0]) for d in dependencies}
    carried = {_norm(w.name.split("-")[0]) for w in wheels}
    assert names <= carried, names - carried
    assert "mdurl" in carried  # markdown-it-py's own dependency


def test_the_estimate_of_a_gpu_run_is_under_its_limit_and_counts_every_spec():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gpu_verify_estimate as estimate
    finally:
        sys.path.pop(0)
    steps = estimate.estimate(budget=1.5, probe_budget=1.0)
    total = sum(seconds for _, seconds, _ in steps)
    assert total <= estimate.LIMIT <= 8 * 60
    from gpuspec import harness
    from gpuspec.api import load_spec

    measured = {f"check {s.name}" for s in sorted((ROOT / "specs").glob("*.gpu"))
                if harness.plans(load_spec(s).program)[0]}
    assert measured <= {name for name, _, _ in steps}
    # the deadline in the script leaves room under the estimate's limit
    limit = int(re.search(r'limit="\$\{GPUSPEC_LIMIT:-(\d+)\}"', SCRIPT.read_text()).group(1))
    assert limit <= estimate.LIMIT
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "gpu_verify_estimate.py")], capture_output=True,
                          text=True)
    assert done.returncode == 0 and f"{total:6.1f} s" in done.stdout.splitlines()[-1]


def test_tampered_wheels_are_not_used(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "scripts", copy / "scripts")
    wheel = next((copy / "scripts" / "wheels").glob("lark-*.whl"))
    wheel.write_bytes(wheel.read_bytes() + b"planted")
    done = subprocess.run(["bash", str(copy / "scripts" / "gpu-verify"), "--rehearse", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHON": PYTHON})
    assert done.returncode == 2
    assert "do not match SHA256SUMS" in done.stdout
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["log.txt"]


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu-verify") / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUSPEC_")}
    env["PYTHON"] = PYTHON
    done = subprocess.run(["bash", str(SCRIPT), "--rehearse", str(out)], capture_output=True, text=True,
                          timeout=900, env=env, cwd=ROOT)
    return done, out


def test_the_rehearsal_runs_every_step_and_writes_at_most_eight_files(rehearsal):
    done, out = rehearsal
    log = (out / "log.txt").read_text(encoding="utf-8")
    assert done.returncode == 0, log[-3000:] + done.stderr[-2000:]
    files = sorted(p.name for p in out.iterdir())
    assert len(files) <= MOST_FILES
    assert files == ["check.json", "estimate.txt", "log.txt", "probe.json", "profile.json", "results.json",
                     "table.md"]
    for step in ("probe", "gpuspec calibrate", "table"):
        assert re.search(rf"^   {re.escape(step)}: exit code 0 after \d+ s$", log, re.M), step
    assert re.search(r"^   gpuspec check --measure specs/: exit code [01] after \d+ s$", log, re.M)
    assert "triton" in log and "dependencies from" in log


def test_the_rehearsal_table_has_a_row_for_every_workload_measured(rehearsal):
    _, out = rehearsal
    measurements = results.read_results(out / "results.json")
    table = (out / "table.md").read_text(encoding="utf-8")
    rows = [line for line in table.splitlines() if line.startswith("| specs/")]
    ok = [m for m in measurements if m.status == "ok"]
    timed = sum(len([k for k in m.metrics if k in ("time", "busy_time", "step_time", "gpu_time")]) for m in ok)
    assert len(rows) == timed + len(measurements) - len(ok)
    measured_rows = 0
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 12, row
        if cells[2] != "—":  # a measured row: model, measured median, samples and why sampling stopped
            assert cells[4].endswith("µs") and cells[6] == "10.00 µs" and cells[8] == "3" and cells[9] == "noise"
            measured_rows += 1
    assert measured_rows and "Method probe:" in table


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip("|").split("|")]


def test_the_rehearsal_rebinds_every_spec_to_the_fake_h200(rehearsal):
    """The specs are written for the H100-SXM (and one part for the A100-80GB); the rehearsal's GPU is a fake H200,
    as the GPU machine's is real. Rebound, every measured row stands beside the H200's model and calibrated times."""
    done, out = rehearsal
    assert "device H100-SXM" in (ROOT / "specs" / "matmul.gpu").read_text(encoding="utf-8")
    check = json.loads((out / "check.json").read_text(encoding="utf-8"))
    assert check["rebound"]["device"] == "H200" and check["rebound"]["gpu"] == "NVIDIA H200"
    assert check["rebound"]["asked"] == "auto" and check["errors"] == []
    measured = [r for r in check["results"] if r["source"] == "measured"]
    checked = [r for r in measured if r["status"] != "skip"]
    assert checked, "no claim was compared with a measurement"
    # no measurement is set aside for being from another GPU than the spec's device
    assert not [r for r in measured if r["status"] == "skip" and "measured on " in r["message"]]
    for spec in ("norms.gpu", "attention.gpu", "gpu-execution.gpu"):  # written for the H100-SXM, with measured claims
        assert any(r["file"] == f"specs/{spec}" for r in checked), spec
    calibrated = [r for r in check["results"] if r["source"] == "calibrated" and r["status"] != "skip"]
    assert calibrated, "the fake H200's profile was not applied to the rebound specs"
    table = (out / "table.md").read_text(encoding="utf-8")
    assert table.startswith("Measured on NVIDIA H200 ")
    rows = [_cells(line) for line in table.splitlines() if line.startswith("| specs/")]
    timed = [cells for cells in rows if cells[2] != "—"]
    assert {cells[3] for cells in timed} == {"H200"}  # the model device of every measured row
    for cells in timed:  # model, calibrated and measured side by side, and their ratio
        assert cells[4].endswith("µs") and cells[5].endswith("µs") and cells[6].endswith("µs"), cells
        assert cells[11] != "—", cells
    log = (out / "log.txt").read_text(encoding="utf-8")
    assert "--device" not in done.stderr and "unknown-device" not in log


def test_the_rehearsal_profile_and_probe_are_what_gpuspec_reads(rehearsal):
    _, out = rehearsal
    assert profiles.read_profile(out / "profile.json").facts["launch_cost"] > 0
    probe = json.loads((out / "probe.json").read_text(encoding="utf-8"))
    assert not [name for name, answer in probe["questions"].items() if "error" in answer]
    check = json.loads((out / "check.json").read_text(encoding="utf-8"))
    assert {r["source"] for r in check["results"]} >= {"model", "measured", "calibrated"}
