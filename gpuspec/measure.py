"""Run harness programs: each spec's program in a subprocess with a timeout, its report read into Measurements.

A crash, a hang or an out-of-memory fails the measurements of that program with the reason; the run goes on.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from attrs import field

from gpuspec import harness, results
from gpuspec.program import Program
from gpuspec.record import Record, record
from gpuspec.results import Measurement


@record
class Options(Record):
    """How to run harnesses: on which device, how long at most, and the testing switches."""

    device: str = "cuda"          # or "cpu": kernels run under the Triton interpreter
    timeout: float = 600.0        # seconds for one spec's program
    budget: float = 2.0           # seconds of sampling per workload
    small: bool = False           # shrink every tensor (for interpreter runs)
    fake_timer: bool = False      # check results but report a fixed time (for tests)
    fake_gpu: str | None = None   # report this GPU in the provenance (for tests with the fake timer)
    python: str = field(factory=lambda: sys.executable)


def availability(options: Options) -> str | None:
    """None when the harnesses can run, else why not (torch missing, no CUDA device)."""
    return _probe(options)[0]


def gpu_count(options: Options) -> int:
    """How many GPUs the harnesses can spread over (1 on the CPU)."""
    return _probe(options)[1]


_PROBES: dict[tuple, tuple[str | None, int]] = {}


def _probe(options: Options) -> tuple[str | None, int]:
    key = (options.python, options.device)
    if key not in _PROBES:
        _PROBES[key] = _run_probe(options)
    return _PROBES[key]


def _run_probe(options: Options) -> tuple[str | None, int]:
    if options.device == "cpu":
        probe = "import torch, triton; print(1)"
    else:
        probe = ("import torch, triton, sys\n"
                 "if not torch.cuda.is_available(): sys.exit(3)\n"
                 "print(torch.cuda.device_count())")
    try:
        done = subprocess.run([options.python, "-c", probe], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"cannot start Python to measure: {error}", 0
    if done.returncode == 3:
        return "no CUDA device: torch.cuda.is_available() is False on this machine", 0
    if done.returncode != 0:
        return "torch and triton are not installed: pip install 'gpuspec[measure]'", 0
    try:
        return None, max(1, int(done.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return None, 1


def run_all(specs: list[tuple[str, Program]], options: Options, progress=None) -> list[Measurement]:
    """Measure several specs; with several GPUs, spec files spread across them, one program per GPU at a time."""
    gpus = gpu_count(options) if options.device == "cuda" else 1
    jobs = [(path, program) for path, program in specs if program.workloads]

    def one(index: int) -> list[Measurement]:
        path, program = jobs[index]
        if progress:
            progress(f"measuring {path}" + (f" on GPU {index % gpus}" if gpus > 1 else "") + " ...")
        return run(path, program, options, commit_of(path), gpu=index % gpus if gpus > 1 else None)

    if gpus <= 1 or len(jobs) <= 1:
        return [m for i in range(len(jobs)) for m in one(i)]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=gpus) as pool:
        return [m for found in pool.map(one, range(len(jobs))) for m in found]


def run(path: str, program: Program, options: Options, commit: str = "unknown",
        gpu: int | None = None) -> list[Measurement]:
    """Measure every workload of one spec; workloads that cannot be measured come back with status error."""
    plans, refused = harness.plans(program)
    if not plans:
        return [Measurement(key, path, 0, "", "error", f"no harness: {reason}") for key, reason in refused]
    source = harness.render(path, plans, refused)
    with tempfile.TemporaryDirectory(prefix="gpuspec-") as folder:
        script, output = Path(folder) / "harness.py", Path(folder) / "report.json"
        script.write_text(source, encoding="utf-8")
        command = [options.python, str(script), "--device", options.device, "--budget", str(options.budget),
                   "--commit", commit, "--output", str(output)]
        command += ["--small"] if options.small else []
        command += ["--fake-timer"] if options.fake_timer else []
        env = dict(os.environ)
        if options.fake_gpu:
            env["GPUSPEC_FAKE_GPU"] = options.fake_gpu
        if gpu is not None:
            env["CUDA_VISIBLE_DEVICES"] = str(gpu)  # this program sees one GPU of several
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=options.timeout, env=env)
        except subprocess.TimeoutExpired:
            return _failed(path, plans, f"the harness ran longer than {options.timeout:g} s and was stopped")
        except OSError as error:
            return _failed(path, plans, f"the harness could not start: {error}")
        if not output.exists():
            last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
            return _failed(path, plans, f"the harness crashed: {last}")
        try:
            return results.from_report(json.loads(output.read_text(encoding="utf-8")), path)
        except (json.JSONDecodeError, results.ResultsError) as error:
            return _failed(path, plans, f"the harness printed a report gpuspec cannot read: {error}")


def _failed(path: str, plans: list[dict], reason: str) -> list[Measurement]:
    return [Measurement(plan["raw"]["key"], path, plan["raw"]["line"], plan["raw"]["statement"], "error", reason)
            for plan in plans]


def commit_of(path: str) -> str:
    """The git commit of the folder holding `path`, or 'unknown'."""
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10,
                              cwd=str(Path(path).resolve().parent))
        return done.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def calibrate(out: str, options: Options) -> "object":
    """Run the calibration program and save its report as a profile. RuntimeError with the reason if it fails."""
    from gpuspec import __version__
    from gpuspec import calibrate as profiles
    from gpuspec.codegen import Code, literal
    from gpuspec.templating import environment

    source = environment().get_template("calibrate.py.jinja").render(version=Code(repr(__version__)),
                                                                      launches=literal(1000))
    with tempfile.TemporaryDirectory(prefix="gpuspec-") as folder:
        script, output = Path(folder) / "calibrate.py", Path(folder) / "report.json"
        script.write_text(source, encoding="utf-8")
        command = [options.python, str(script), "--device", options.device, "--budget", str(options.budget),
                   "--output", str(output)]
        command += ["--small"] if options.small else []
        command += ["--fake-timer"] if options.fake_timer else []
        env = dict(os.environ)
        if options.fake_gpu:
            env["GPUSPEC_FAKE_GPU"] = options.fake_gpu
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=options.timeout, env=env)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"calibration ran longer than {options.timeout:g} s and was stopped") from None
        if not output.exists():
            last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
            raise RuntimeError(f"calibration failed: {last}")
        return profiles.save(out, json.loads(output.read_text(encoding="utf-8")))
