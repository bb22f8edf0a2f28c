"""Run harness programs: each spec's program in a subprocess with a timeout, its report read into Measurements.

A crash, a hang or an out-of-memory fails the measurements of that program with the reason; the run goes on.
Ctrl-C stops every harness still running and raises Interrupted with what had finished.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from attrs import field

from gpuspec import harness, results
from gpuspec.files import WriteError
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


def gpu_names(options: Options) -> list[str]:
    """The name the driver gives each GPU the harnesses may run on (what `check --device auto` rebinds to): the
    fake GPU of a rehearsal (--fake-gpu with --fake-timer, which the measurements name too), none on the CPU."""
    if options.fake_timer and options.fake_gpu:
        return [options.fake_gpu]
    return list(_probe(options)[2]) if options.device == "cuda" else []


_PROBES: dict[tuple, tuple[str | None, int, tuple[str, ...]]] = {}


def _probe(options: Options) -> tuple[str | None, int, tuple[str, ...]]:
    key = (options.python, options.device)
    if key not in _PROBES:
        _PROBES[key] = _run_probe(options)
    return _PROBES[key]


def _run_probe(options: Options) -> tuple[str | None, int, tuple[str, ...]]:
    if options.device == "cpu":
        probe = "import torch, triton; print(1)"
    else:
        probe = ("import json, torch, triton, sys\n"
                 "if getattr(torch.version, 'hip', None): print(torch.version.hip); sys.exit(4)\n"
                 "if not torch.cuda.is_available(): sys.exit(3)\n"
                 "n = torch.cuda.device_count()\n"
                 "print(json.dumps([torch.cuda.get_device_name(i) for i in range(n)]))\n"
                 "print(n)")
    try:
        done = subprocess.run([options.python, "-c", probe], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"cannot start Python to measure: {error}", 0, ()
    if done.returncode == 3:
        return "no CUDA device: torch.cuda.is_available() is False on this machine", 0, ()
    if done.returncode == 4:
        return (f"this torch is built for ROCm (HIP {done.stdout.strip()[:40] or 'of unknown version'}), and "
                f"{ROCM_REFUSAL}"), 0, ()
    if done.returncode != 0:
        return "torch and triton are not installed: pip install 'gpuspec[measure]'", 0, ()
    lines = done.stdout.strip().splitlines()
    try:
        count = max(1, int(lines[-1]))
    except (ValueError, IndexError):
        return None, 1, ()
    return None, count, _names(lines[-2] if len(lines) > 1 else "")


ROCM_REFUSAL = ("gpuspec measures NVIDIA GPUs only: its harnesses and calibration are CUDA programs with Triton "
                "kernels written for NVIDIA parts; AMD GPUs (MI300X, MI250X) are model-only in the catalog")


def _names(line: str) -> tuple[str, ...]:
    """The GPU names the probe printed (a JSON list of strings), or none if it printed something else."""
    import json

    try:
        names = json.loads(line)
    except ValueError:
        return ()
    return tuple(names) if isinstance(names, list) and all(isinstance(n, str) for n in names) else ()


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while measuring: every harness was stopped. `finished` holds the measurements of the spec files
    measured to the end, `stopped` those of the others (failed with the reason), `files` how many there were."""

    def __init__(self, finished: list[Measurement], stopped: list[Measurement], done: int, files: int):
        super().__init__()
        self.finished, self.stopped, self.done, self.files = finished, stopped, done, files


def run_all(specs: list[tuple[str, Program]], options: Options, progress=None) -> list[Measurement]:
    """Measure several specs; with several GPUs, spec files spread across them, one program per GPU at a time.
    Raises Interrupted on Ctrl-C, once no harness is left running."""
    gpus = gpu_count(options) if options.device == "cuda" else 1
    jobs = [(path, program) for path, program in specs if program.workloads]
    finished: dict[int, list[Measurement]] = {}

    def one(index: int) -> list[Measurement]:
        path, program = jobs[index]
        if progress:
            progress(f"measuring {path}" + (f" on GPU {index % gpus}" if gpus > 1 else "") + " ...")
        found = run(path, program, options, commit_of(path), gpu=index % gpus if gpus > 1 else None)
        if not _CHILDREN.stopping:
            finished[index] = found
        return found

    try:
        if gpus <= 1 or len(jobs) <= 1:
            for index in range(len(jobs)):
                one(index)
        else:
            from concurrent.futures import ThreadPoolExecutor

            pool = ThreadPoolExecutor(max_workers=gpus)
            try:
                list(pool.map(one, range(len(jobs))))
            except BaseException:  # Ctrl-C reaches this thread only: stop the harnesses the others wait on
                _CHILDREN.stop_all()
                raise
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
    except KeyboardInterrupt:
        _CHILDREN.stop_all()
        done = sorted(finished)
        stopped = [m for index, (path, program) in enumerate(jobs) if index not in finished
                   for m in _failed(path, harness.plans(program)[0], "not measured: measuring was interrupted")]
        raise Interrupted([m for index in done for m in finished[index]], stopped, len(done), len(jobs)) from None
    finally:
        _CHILDREN.stopping = False
    return [m for index in sorted(finished) for m in finished[index]]


class _Children:
    """The harness processes running now, so that Ctrl-C can stop them all, in whichever thread started them."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running: set[subprocess.Popen] = set()
        self.stopping = False

    def start(self, command: list[str], env: dict) -> subprocess.Popen:
        with self.lock:
            if self.stopping:
                raise KeyboardInterrupt
            child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                     errors="replace")
            self.running.add(child)
            return child

    def run(self, command: list[str], timeout: float, env: dict) -> tuple[int, str]:
        """(exit code, standard error) of a harness; TimeoutExpired after killing it at the timeout."""
        child = self.start(command, env)
        try:
            _, stderr = child.communicate(timeout=timeout)
            return child.returncode, stderr
        except BaseException:
            child.kill()
            child.communicate()
            raise
        finally:
            with self.lock:
                self.running.discard(child)

    def stop_all(self) -> None:
        with self.lock:
            self.stopping = True
            running = list(self.running)
        for child in running:
            child.kill()
        for child in running:
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass


_CHILDREN = _Children()


def run(path: str, program: Program, options: Options, commit: str = "unknown",
        gpu: int | None = None) -> list[Measurement]:
    """Measure every workload of one spec; workloads that cannot be measured come back with status error."""
    plans, refused = harness.plans(program)
    if not plans:
        return [Measurement(key, path, 0, "", "error", f"no harness: {reason}") for key, reason in refused]
    source = harness.render(path, plans, refused)
    try:
        folder = Path(tempfile.mkdtemp(prefix="gpuspec-"))
    except OSError as error:
        return _failed(path, plans, f"no temporary folder for the harness program: {_why(error)}")
    try:  # the folder goes, whatever happens: a crash, a full disk, Ctrl-C, SIGTERM
        script, output = folder / "harness.py", folder / "report.json"
        try:
            write_new(script, source.encode("utf-8"))
        except OSError as error:
            return _failed(path, plans, f"cannot write the harness program to {folder}: {_why(error)}")
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
            returncode, stderr = _CHILDREN.run(command, options.timeout, env)
        except subprocess.TimeoutExpired:
            return _failed(path, plans, f"the harness ran longer than {options.timeout:g} s and was stopped")
        except OSError as error:
            return _failed(path, plans, f"the harness could not start: {error}")
        if not output.exists():
            return _failed(path, plans, _crash(returncode, stderr))
        try:
            return results.read_report(output, path)
        except results.ResultsError as error:
            if returncode != 0:  # it died writing its report (a full disk): why it died says more
                return _failed(path, plans, _crash(returncode, stderr))
            return _failed(path, plans, f"the harness printed a report gpuspec cannot read: {error}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def write_new(path: Path, data: bytes) -> None:
    """Write `data` to a new file, or raise OSError and leave no file (not an empty one on a full disk)."""
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(handle, view):]
        os.fsync(handle)
    except BaseException:
        os.close(handle)
        path.unlink(missing_ok=True)
        raise
    os.close(handle)


def _why(error: OSError) -> str:
    return error.strerror or str(error)


def _crash(returncode: int, stderr: str) -> str:
    """Why a harness that wrote no report failed: out of GPU memory, killed by a signal, or its last words."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    if any("No space left on device" in line for line in lines):
        return "the harness could not write its report: the disk is full (No space left on device)"
    memory = next((line for line in reversed(lines) if "out of memory" in line.lower()
                   or "OutOfMemoryError" in line or "CUBLAS_STATUS_ALLOC_FAILED" in line), None)
    if memory:
        return f"the harness ran out of GPU memory: {memory}"
    if returncode < 0 and not lines:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        hint = " (the system may have run out of memory)" if -returncode == signal.SIGKILL else ""
        return f"the harness was killed by {name}{hint}"
    return f"the harness crashed: {lines[-1] if lines else f'exit code {returncode}'}"


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
    """Run the calibration program and save its report as a profile, with the facts gpuspec fits to its sweeps
    (gpuspec.calibration). RuntimeError with the reason if it fails."""
    from gpuspec import calibration, profiles

    source = calibration_source(launches=1000)
    try:
        folder = Path(tempfile.mkdtemp(prefix="gpuspec-"))
    except OSError as error:
        raise RuntimeError(f"no temporary folder for the calibration program: {_why(error)}") from None
    try:
        script, output = folder / "calibrate.py", folder / "report.json"
        try:
            write_new(script, source.encode("utf-8"))
        except OSError as error:
            raise RuntimeError(f"cannot write the calibration program to {folder}: {_why(error)}") from None
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
        except OSError as error:
            raise RuntimeError(f"calibration could not start: {error}") from None
        if not output.exists():
            last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
            raise RuntimeError(f"calibration failed: {last}")
        try:
            return profiles.save(out, calibration.complete(profiles.read_report(output)))
        except profiles.ProfileError as error:
            raise RuntimeError(f"calibration wrote a report gpuspec cannot use: {error}") from None
        except WriteError as error:  # a full disk: the profile as it was, no partial file beside it
            raise RuntimeError(str(error)) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def calibration_source(launches: int) -> str:
    """The calibration program (templates/calibrate.py.jinja), `launches` tiny kernels per launch-cost sample."""
    from gpuspec.version import __version__
    from gpuspec.codegen import Code, literal
    from gpuspec.templating import environment

    return environment().get_template("calibrate.py.jinja").render(version=Code(repr(__version__)),
                                                                    launches=literal(launches))


def probe_source() -> str:
    """The method probe (templates/probe.py.jinja): does a stream hold keep launch latency out of a GPU time, what
    each kind of L2 flush leaves, and what full-width vectors are worth. scripts/gpu-verify runs it on the GPU."""
    from gpuspec.version import __version__
    from gpuspec.codegen import Code
    from gpuspec.templating import environment

    return environment().get_template("probe.py.jinja").render(version=Code(repr(__version__)))
