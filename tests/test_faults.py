"""Faults: harnesses that crash, hang, run out of memory or are interrupted; files that cannot be written.

A harness's failure fails its own claims with the reason while the others are still measured; Ctrl-C during
`--measure` stops every harness, removes its files, prints what was checked by then and exits 130 (SIGTERM
likewise, exit 143); `fmt` and `--update` stopped
at any step of writing, or on a full disk or a read-only file, leave the file as it was.
"""
from __future__ import annotations

import errno
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import kill_once_paused, patch_os

from gpuspec import files, measure
from gpuspec.api import compile_text
from gpuspec.cli import main
from gpuspec.text import SpecText

ROOT = Path(__file__).resolve().parent.parent
H100 = "NVIDIA H100 80GB HBM3"

# A stand-in for Python: it answers the availability probe with a GPU count, hangs on a spec named slow*.gpu
# (leaving a file named by its pid in PIDS, holding the folder of the harness program it was given), and for any
# other spec writes a report that measured every workload at 20 µs.
FAKE_PYTHON = """\
#!{python}
import ast, json, os, sys, time
if sys.argv[1] == "-c":
    print({gpus})
    sys.exit(0)
tree = ast.parse(open(sys.argv[1], encoding="utf-8").read())
value = {{n.targets[0].id: n.value for n in tree.body
         if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)}}
spec = ast.literal_eval(value["SPEC"])
if os.path.basename(spec).startswith("slow"):
    open(os.path.join({pids!r}, str(os.getpid())), "w").write(os.path.dirname(os.path.abspath(sys.argv[1])))
    time.sleep(300)
    sys.exit(0)
{behaviour}
records = []
for item in value["WORKLOADS"].elts:
    key, line, statement, device = (ast.literal_eval(e) for e in item.elts[:4])
    records.append({{"key": key, "line": line, "statement": statement, "status": "ok",
                    "metrics": {{"time": {{"median": 2e-05, "p10": 2e-05, "p90": 2e-05, "samples": 3}}}}}})
output = sys.argv[sys.argv.index("--output") + 1]
report = {{"version": 1, "provenance": {{"gpu": {gpu!r}, "device": "cuda"}}, "workloads": records}}
json.dump(report, open(output, "w", encoding="utf-8"))
"""
SPEC = "device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2 is ≈ 20 µs\n"


def fake_python(folder: Path, gpus: int = 1, behaviour: str = "") -> tuple[str, Path]:
    pids = folder / "pids"
    pids.mkdir(exist_ok=True)
    path = folder / "fake-python"
    path.write_text(FAKE_PYTHON.format(python=sys.executable, gpus=gpus, pids=str(pids), behaviour=behaviour,
                                       gpu=H100), encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path), pids


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"  # exited, not yet reaped


# --- Ctrl-C during --measure --------------------------------------------------------------------------------

def interrupt(tmp_path: Path, specs: dict[str, str], gpus: int, waiting_for: int, *options: str,
              sent: signal.Signals = signal.SIGINT):
    """Run `gpuspec check --measure` on `specs` with the fake Python, send `sent` (Ctrl-C) once `waiting_for`
    harnesses hang, and return (exit code, stdout, stderr, the pids of the hanging harnesses). The run's temporary
    folder must be empty by then: the harness programs' folders removed."""
    python, pids = fake_python(tmp_path, gpus)
    for name, text in specs.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    argv = ["check", "--measure", "--format", "json", *options, *[str(tmp_path / name) for name in specs]]
    driver = f"import sys; sys.executable = {python!r}\nfrom gpuspec.cli import main\nsys.exit(main({argv!r}))"
    process = subprocess.Popen([sys.executable, "-c", driver], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, encoding="utf-8",
                               env={**os.environ, "TMPDIR": str(temporary)})
    try:
        deadline = time.monotonic() + 120
        while len([p for p in pids.iterdir() if p.read_text()]) < waiting_for:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the harnesses never started"
            time.sleep(0.05)
        harness_folders = [Path(p.read_text()) for p in pids.iterdir()]
        assert all(folder.parent == temporary and folder.is_dir() for folder in harness_folders)
        process.send_signal(sent)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert list(temporary.iterdir()) == [], "a temporary folder was left behind"
    return process.returncode, out, err, [int(p.name) for p in pids.iterdir()]


def test_ctrl_c_while_measuring_stops_the_harness_reports_what_finished_and_exits_130(tmp_path):
    saved = tmp_path / "saved.json"
    code, out, err, pids = interrupt(tmp_path, {"fast.gpu": SPEC, "slow.gpu": SPEC.replace("* 2", "* 3")}, 1, 1,
                                     "--save-results", str(saved))
    assert code == 130, (code, err[-2000:])
    assert "Traceback" not in err
    assert "interrupted: measured 1 of 2 spec files; the claims of the others were not measured" in err
    assert len(pids) == 1 and gone(pids[0]), "the hanging harness is still running"
    results = {(Path(r["file"]).name, r["source"]): r for r in json.loads(out)["results"]}
    assert results["fast.gpu", "model"]["status"] == "pass" and results["slow.gpu", "model"]["status"] == "pass"
    assert results["fast.gpu", "measured"]["status"] == "pass"  # measured before Ctrl-C: 20 µs, as claimed
    assert results["slow.gpu", "measured"]["status"] == "skip"
    assert "measuring was interrupted" in results["slow.gpu", "measured"]["message"]
    # what finished is saved; the spec that was stopped is not saved as a failure
    runs = json.loads(saved.read_text(encoding="utf-8"))["runs"]
    assert [Path(run["spec"]).name for run in runs] == ["fast.gpu"]


@pytest.mark.parametrize("gpus", [1, 2])
def test_sigterm_while_measuring_stops_every_harness_removes_its_files_reports_and_exits_143(tmp_path, gpus):
    saved = tmp_path / "saved.json"
    specs = {"fast.gpu": SPEC, **{f"slow-{i}.gpu": SPEC.replace("* 2", f"* {i + 3}") for i in range(gpus)}}
    code, out, err, pids = interrupt(tmp_path, specs, gpus, gpus, "--save-results", str(saved), sent=signal.SIGTERM)
    assert code == 143, (code, err[-2000:])
    assert "Traceback" not in err
    assert f"interrupted: measured 1 of {gpus + 1} spec files" in err
    assert len(pids) == gpus and all(gone(pid) for pid in pids), "a harness outlived gpuspec"
    results = {(Path(r["file"]).name, r["source"]): r["status"] for r in json.loads(out)["results"]}
    assert results["fast.gpu", "measured"] == "pass"
    assert all(results[f"slow-{i}.gpu", "measured"] == "skip" for i in range(gpus))
    assert [Path(run["spec"]).name for run in json.loads(saved.read_text(encoding="utf-8"))["runs"]] == ["fast.gpu"]


def test_sigterm_outside_measuring_restores_the_handler_it_found(tmp_path, capsys):
    before = signal.getsignal(signal.SIGTERM)
    path = tmp_path / "a.gpu"
    path.write_text(SPEC, encoding="utf-8")
    assert main(["check", str(path)]) == 0
    assert signal.getsignal(signal.SIGTERM) is before


def test_ctrl_c_while_measuring_on_several_gpus_stops_every_harness(tmp_path):
    specs = {f"slow-{i}.gpu": SPEC.replace("* 2", f"* {i + 2}") for i in range(3)}
    code, out, err, pids = interrupt(tmp_path, specs, 2, 2)
    assert code == 130, (code, err[-2000:])
    assert "interrupted: measured 0 of 3 spec files" in err and "Traceback" not in err
    assert len(pids) == 2 and all(gone(pid) for pid in pids), "a harness on another GPU is still running"
    measured = [r for r in json.loads(out)["results"] if r["source"] == "measured"]
    assert len(measured) == 3 and all(r["status"] == "skip" for r in measured)


# --- harnesses that fail: their own claims fail with the reason, the others are measured --------------------

def measure_two(tmp_path: Path, behaviour: str, spec: str = SPEC) -> dict[str, list]:
    """Measure bad.gpu (which behaves as `behaviour` says) and good.gpu, each its own harness program."""
    python, _ = fake_python(tmp_path, behaviour=behaviour)
    programs = [(name, compile_text(SpecText(name, spec.replace("* 2", f"* {i + 2}"))))
                for i, name in enumerate(("bad.gpu", "good.gpu"))]
    found = measure.run_all(programs, measure.Options(device="cuda", timeout=5, python=python))
    return {name: [m for m in found if m.spec == name] for name in ("bad.gpu", "good.gpu")}


BAD = "if os.path.basename(spec) == 'bad.gpu':\n    "


@pytest.mark.parametrize("behaviour, reason", [
    (BAD + "sys.stderr.write('Traceback (most recent call last):\\n  ...\\ntorch.OutOfMemoryError: CUDA out of "
           "memory. Tried to allocate 64.00 GiB. GPU 0 has a total capacity of 79.1 GiB\\n'); sys.exit(1)",
     "the harness ran out of GPU memory: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 GiB."),
    (BAD + "sys.stderr.write('RuntimeError: CUDA error: out of memory\\nCUDA kernel errors might be asynchronously "
           "reported\\n'); sys.exit(1)",
     "the harness ran out of GPU memory: RuntimeError: CUDA error: out of memory"),
    (BAD + "os.kill(os.getpid(), 9)", "the harness was killed by SIGKILL (the system may have run out of memory)"),
    (BAD + "sys.stderr.write('Segmentation fault\\n'); sys.exit(139)", "the harness crashed: Segmentation fault"),
    (BAD + "time.sleep(60)", "the harness ran longer than 5 s and was stopped"),
    (BAD + "open(sys.argv[sys.argv.index('--output') + 1], 'w').write('\\x00garbage'); sys.exit(0)",
     "the harness printed a report gpuspec cannot read"),
], ids=["torch-oom", "cuda-oom", "killed", "crash", "hang", "garbage"])
def test_a_failing_harness_fails_its_own_workloads_with_the_reason_and_the_next_spec_is_measured(
        tmp_path, behaviour, reason):
    found = measure_two(tmp_path, behaviour)
    assert len(found["bad.gpu"]) == 1 and found["bad.gpu"][0].status == "error"
    assert found["bad.gpu"][0].reason.startswith(reason), found["bad.gpu"][0].reason
    assert [m.status for m in found["good.gpu"]] == ["ok"]
    assert found["good.gpu"][0].metrics["time"]["median"] == 2e-05


def test_a_harness_out_of_gpu_memory_fails_its_claims_with_the_reason_in_the_report(tmp_path, capsys,
                                                                                     monkeypatch):
    python, _ = fake_python(tmp_path, behaviour=BAD.replace("== 'bad.gpu'", ".startswith('bad')") + (
        "sys.stderr.write('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB\\n'); sys.exit(1)"))
    monkeypatch.setattr(sys, "executable", python)
    (tmp_path / "bad.gpu").write_text(SPEC, encoding="utf-8")
    (tmp_path / "good.gpu").write_text(SPEC.replace("* 2", "* 3"), encoding="utf-8")
    code = main(["check", "--measure", "--require-measure", "--format", "json", str(tmp_path / "bad.gpu"),
                 str(tmp_path / "good.gpu")])
    results = {(Path(r["file"]).name, r["source"]): r for r in json.loads(capsys.readouterr().out)["results"]}
    assert code == 1
    assert results["bad.gpu", "measured"]["status"] == "fail"
    assert "out of GPU memory" in results["bad.gpu", "measured"]["message"]
    assert results["good.gpu", "measured"]["status"] == "pass"


# One workload of a real harness program runs out of GPU memory: the program reports it, measures the next.
OOM_IN_ONE_WORKLOAD = """\
#!{python}
import runpy, sys
if sys.argv[1] == "-c":
    print(1)
    sys.exit(0)
import torch
script = sys.argv[1]
sys.argv = sys.argv[1:]
program = runpy.run_path(script, run_name="harness")

def out_of_memory():
    raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 64.00 GiB")

key, line, statement, device, _ = program["WORKLOADS"][0]
program["WORKLOADS"][0] = (key, line, statement, device, out_of_memory)
program["main"]()
"""


def test_a_workload_out_of_gpu_memory_inside_a_harness_fails_alone(tmp_path):
    path = tmp_path / "oom-python"
    path.write_text(OOM_IN_ONE_WORKLOAD.format(python=sys.executable), encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    spec = "device H100-SXM\nx = fp32[1024]\na = x * 2 is ≈ 2 µs\nb = x + 1 is ≈ 2 µs\n"
    program = compile_text(SpecText("two.gpu", spec))
    found = measure.run("two.gpu", program, measure.Options(device="cpu", small=True, fake_timer=True, timeout=300,
                                                            python=str(path)))
    assert [m.line for m in found] == [3, 4]
    assert found[0].status == "error"
    assert found[0].reason == "out of GPU memory: CUDA out of memory. Tried to allocate 64.00 GiB"
    assert found[1].status == "ok" and found[1].metrics["time"]["median"] > 0


# --- fmt and --update: stopped at any step of the write, a full disk, a read-only file ----------------------

UNFORMATTED = "device   H100-SXM\nx = bf16[4096,4096]\ny = x*2:\n  62 waves\n  ≈ 30 µs\n"
STEPS = ["mkstemp", "write", "flush", "fsync", "chmod", "replace"]


class _Faulty:
    """A file object whose `write` or `flush` raises: what a full disk or Ctrl-C does half way through."""

    def __init__(self, handle, step: str, raised: BaseException):
        self._handle, self._step, self._raised = handle, step, raised

    def __getattr__(self, name):
        if name == self._step:
            def fail(*args, **kwargs):
                if name == "write":
                    self._handle.write(args[0][: len(args[0]) // 2])  # half of it reached the file
                raise self._raised
            return fail
        return getattr(self._handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._handle.close()


def break_at(monkeypatch, step: str, raised: BaseException) -> None:
    """Make step `step` of files.write_atomically raise `raised`."""
    if step in ("write", "flush"):
        real = os.fdopen
        patch_os(monkeypatch, files, fdopen=lambda *a, **k: _Faulty(real(*a, **k), step, raised))
    elif step == "mkstemp":
        def fail(*args, **kwargs):
            raise raised
        monkeypatch.setattr(files.tempfile, "mkstemp", fail)
    else:
        def fail(*args, **kwargs):
            raise raised
        patch_os(monkeypatch, files, **{step: fail})


def full_disk() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def spec_files(tmp_path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in tmp_path.iterdir()}


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("raised", ["ctrl-c", "full-disk"])
def test_fmt_stopped_at_any_step_of_the_write_leaves_the_file_as_it_was(tmp_path, monkeypatch, capsys, step,
                                                                          raised):
    path = tmp_path / "a.gpu"
    path.write_text(UNFORMATTED, encoding="utf-8")
    before = spec_files(tmp_path)
    break_at(monkeypatch, step, KeyboardInterrupt() if raised == "ctrl-c" else full_disk())
    code = main(["fmt", str(path)])
    err = capsys.readouterr().err
    assert spec_files(tmp_path) == before  # the file as it was, and no temporary file left beside it
    if raised == "ctrl-c":
        assert code == 130 and "interrupted" in err
    else:
        assert code == 2
        assert f"{path}" in err and "No space left on device" in err and "Traceback" not in err


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("raised", ["ctrl-c", "full-disk"])
def test_update_stopped_at_any_step_of_the_write_leaves_the_spec_as_it_was(tmp_path, monkeypatch, capsys, step,
                                                                              raised):
    path = tmp_path / "a.gpu"
    path.write_text(UNFORMATTED, encoding="utf-8")  # ≈ 30 µs fails: --update would write ≈ 20 µs
    before = spec_files(tmp_path)
    break_at(monkeypatch, step, KeyboardInterrupt() if raised == "ctrl-c" else full_disk())
    code = main(["check", "--update", str(path)])
    err = capsys.readouterr().err
    assert spec_files(tmp_path) == before
    if raised == "ctrl-c":
        assert code == 130 and "interrupted" in err
    else:
        assert code == 2 and "No space left on device" in err and "not changed" in err


def test_the_update_without_a_fault_does_change_the_file(tmp_path, capsys):
    """The fault tests above would pass for an --update or fmt that never writes: this one shows they write."""
    path = tmp_path / "a.gpu"
    path.write_text(UNFORMATTED, encoding="utf-8")
    assert main(["check", "--update", str(path)]) == 0
    assert "≈ 20 µs" in path.read_text(encoding="utf-8")
    assert main(["fmt", str(path)]) == 0
    assert path.read_text(encoding="utf-8").startswith("device H100-SXM\nx = bf16[4096, 4096]\n")


def test_fmt_in_a_folder_it_cannot_create_files_in_gives_a_clear_error_and_changes_nothing(tmp_path, capsys,
                                                                                             monkeypatch):
    path = tmp_path / "a.gpu"
    path.write_text(UNFORMATTED, encoding="utf-8")
    break_at(monkeypatch, "mkstemp", PermissionError(errno.EACCES, os.strerror(errno.EACCES)))
    assert main(["fmt", str(path)]) == 2
    assert f"cannot write {path}: Permission denied" in capsys.readouterr().err
    assert spec_files(tmp_path) == {"a.gpu": UNFORMATTED.encode()}


SIGKILL_CHILD = textwrap.dedent("""
    import os, sys, time
    from gpuspec import files
    from gpuspec.cli import main

    step = sys.argv[1]
    real = getattr(os, step)

    def stall(*args):
        result = real(*args) if step == "fsync" else None
        print("paused", flush=True)
        time.sleep(60)
        return result

    setattr(os, step, stall)
    sys.exit(main(sys.argv[2:]))
""")


@pytest.mark.parametrize("command", [["fmt"], ["check", "--update"]], ids=["fmt", "update"])
@pytest.mark.parametrize("step", ["fsync", "replace"])
def test_fmt_and_update_killed_mid_write_leave_the_file_as_it_was(tmp_path, command, step):
    path = tmp_path / "a.gpu"
    path.write_text(UNFORMATTED, encoding="utf-8")
    # `paused` comes after the report, when --update writes
    kill_once_paused([sys.executable, "-c", SIGKILL_CHILD, step, *command, str(path)], cwd=ROOT)
    assert path.read_text(encoding="utf-8") == UNFORMATTED


# --- a full disk while measuring: no file left behind, the claims fail with the reason -----------------------

def test_a_full_disk_while_writing_a_harness_program_fails_its_claims_and_leaves_no_file(tmp_path, monkeypatch):
    program = compile_text(SpecText("full.gpu", SPEC))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(measure.tempfile, "tempdir", str(temporary))
    real, calls = os.write, []

    def write(handle, data):  # the first write gets half of its bytes onto the disk, the next one finds it full
        calls.append(len(data))
        if len(calls) > 1:
            raise full_disk()
        return real(handle, bytes(data[: len(data) // 2]))

    monkeypatch.setattr(measure.os, "write", write)
    python, pids = fake_python(tmp_path)
    found = measure.run_all([("full.gpu", program)], measure.Options(device="cpu", python=python))
    monkeypatch.undo()
    assert len(calls) == 2 and list(pids.iterdir()) == []  # written twice, never run
    assert [m.status for m in found] == ["error"]
    assert found[0].reason.startswith("cannot write the harness program to ")
    assert found[0].reason.endswith(": No space left on device")
    assert list(temporary.iterdir()) == []


def test_a_harness_that_finds_the_disk_full_when_writing_its_report_says_so(tmp_path):
    behaviour = BAD + ("open(sys.argv[sys.argv.index('--output') + 1], 'w').write('{\"vers'); "
                       "sys.stderr.write('Traceback (most recent call last):\\nOSError: [Errno 28] No space left on "
                       "device\\n'); sys.exit(1)")
    found = measure_two(tmp_path, behaviour)
    assert found["bad.gpu"][0].reason == \
        "the harness could not write its report: the disk is full (No space left on device)"
    assert [m.status for m in found["good.gpu"]] == ["ok"]


def test_a_full_disk_while_saving_results_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path, monkeypatch,
                                                                                             capsys):
    python, _ = fake_python(tmp_path)
    monkeypatch.setattr(sys, "executable", python)
    folder = tmp_path / "results"
    folder.mkdir()
    saved = folder / "saved.json"
    saved.write_text('{"version": 1, "runs": []}\n', encoding="utf-8")
    spec = tmp_path / "a.gpu"
    spec.write_text(SPEC, encoding="utf-8")
    break_at(monkeypatch, "write", full_disk())
    code = main(["check", "--measure", "--format", "json", "--save-results", str(saved), str(spec)])
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in out + err
    assert f"cannot write {saved}: No space left on device" in out + err
    assert [p.name for p in folder.iterdir()] == ["saved.json"]
    assert saved.read_text(encoding="utf-8") == '{"version": 1, "runs": []}\n'
    measured = [r for r in json.loads(out)["results"] if r["source"] == "measured"]
    assert [r["status"] for r in measured] == ["pass"]  # measured and checked, only not saved


def test_measurements_a_results_file_cannot_hold_are_an_error_that_keeps_the_old_file(tmp_path, monkeypatch, capsys):
    import attrs

    from gpuspec import results

    python, _ = fake_python(tmp_path)
    monkeypatch.setattr(sys, "executable", python)
    saved = tmp_path / "saved.json"
    saved.write_text('{"version": 1, "runs": []}\n', encoding="utf-8")
    spec = tmp_path / "a.gpu"
    spec.write_text(SPEC, encoding="utf-8")
    # A harness report is checked key by key as it is read, so what reaches save passes its check today; a GPU
    # name longer than a results file holds stands in for anything save's own check refuses (a ResultsError,
    # which ended the run as an internal error, exit 3).
    real_save = results.save
    monkeypatch.setattr(results, "save", lambda path, found: real_save(
        path, [attrs.evolve(m, provenance={**m.provenance, "gpu": "G" * 201}) for m in found]))
    code = main(["check", "--measure", "--format", "json", "--save-results", str(saved), str(spec)])
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in out + err and "internal error" not in err
    (error,) = json.loads(out)["errors"]
    assert error["code"] == "cannot-save-results" and error["message"].startswith(f"cannot save {saved}: ")
    assert "a GPU's name of at most 200 characters" in error["message"]
    assert error["help"] == "the measurements were checked but not saved"
    assert saved.read_text(encoding="utf-8") == '{"version": 1, "runs": []}\n'
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("saved")] == ["saved.json"]
    measured = [r for r in json.loads(out)["results"] if r["source"] == "measured"]
    assert [r["status"] for r in measured] == ["pass"]


@pytest.mark.parametrize("template", ["program.py.jinja", "calibrate.py.jinja"])
def test_a_generated_program_on_a_full_disk_leaves_no_partial_report(tmp_path, template):
    import ast
    import types

    from gpuspec import harness
    from gpuspec.codegen import Code, literal
    from gpuspec.templating import environment

    if template == "program.py.jinja":
        source = harness.render("a.gpu", *harness.plans(compile_text(SpecText("a.gpu", SPEC))))
    else:
        source = environment().get_template(template).render(version=Code("'0'"), launches=literal(10))
    found = next(node for node in ast.parse(source).body
                 if isinstance(node, ast.FunctionDef) and node.name == "write_report")
    output = tmp_path / "report.json"

    def open_on_a_full_disk(path, mode, **kwargs):
        handle = open(path, mode, **kwargs)
        return _Faulty(handle, "write", full_disk())

    namespace = {"args": types.SimpleNamespace(output=str(output)), "os": os, "open": open_on_a_full_disk}
    exec(compile(ast.Module([found], []), template, "exec"), namespace)
    with pytest.raises(OSError):
        namespace["write_report"]('{"version": 1}')
    assert list(tmp_path.iterdir()) == []
    namespace["open"] = open
    namespace["write_report"]('{"version": 1}')
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
