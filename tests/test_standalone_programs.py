"""Generated programs are standalone: an image-like rehearsal of the GPU machine.

The GPU machine has torch, triton and the standard library, and neither gpuspec nor lark (nor attrs, Jinja or
markdown-it). Each program (every bundled spec's harness, the calibration program and the probe) is rendered,
copied alone to a fresh folder and run there by an interpreter in which importing any of those raises ImportError,
under the Triton interpreter with --small and the fake timer; its report must be valid and complete.

GPUSPEC_REHEARSAL_PYTHON names the interpreter that runs them (default: this one), so the same tests rehearse the
GPU image's versions (for example a virtual environment with triton 3.6 and numpy 2.4).
"""
from __future__ import annotations

import ast
import inspect
import json
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import ROOT

from gpuspec import calibration, harness, measure, profiles, results, schema, timing
from gpuspec.api import load_spec
from gpuspec.templating import timing_rules

PYTHON = os.environ.get("GPUSPEC_REHEARSAL_PYTHON") or sys.executable
SPECS = sorted((ROOT / "specs").glob("*.gpu"))
# What the GPU machine lacks: the program must not need any of it.
ABSENT = ("gpuspec", "lark", "attrs", "jinja2", "markdown_it", "mdurl", "hypothesis", "pytest")

# Runs a program as its own __main__ with every import finder wrapped so that the absent packages are not found,
# as on a machine where they are not installed: `import lark` raises ModuleNotFoundError and
# importlib.util.find_spec("lark") is None (torch asks that way), whatever sys.path or an installed .pth would find.
GUARD = textwrap.dedent("""\
    import runpy, sys
    ABSENT = set(sys.argv[1].split(","))

    class Without:
        def __init__(self, finder):
            self.finder = finder

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ABSENT:
                return None
            find = getattr(self.finder, "find_spec", None)
            return find(name, path, target) if find else None

        def __getattr__(self, attribute):
            return getattr(self.finder, attribute)

    sys.meta_path[:] = [Without(finder) for finder in sys.meta_path]
    for name in list(sys.modules):
        if name.split(".")[0] in ABSENT:
            del sys.modules[name]
    sys.argv = sys.argv[2:]
    runpy.run_path(sys.argv[0], run_name="__main__")
    """)


def rehearse(source: str, folder: Path, *options: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """`source` alone in `folder`, run there under the guard (cwd the folder; PYTHONPATH and gpuspec's own
    variables cleared), with the Triton interpreter, --small and the fake timer."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "program.py"
    script.write_text(source, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSPEC_", "PYTHON"))}
    env["TRITON_INTERPRET"] = "1"
    command = [PYTHON, "-c", GUARD, ",".join(ABSENT), str(script), "--device", "cpu", "--small", "--fake-timer",
               *options]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=timeout, env=env)


def rendered(spec: Path) -> tuple[str, list[dict], list]:
    program = load_spec(spec).program
    plans, refused = harness.plans(program)
    return harness.render(str(spec), plans, refused), plans, refused


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Every bundled spec's program, rehearsed (two at a time: the machine has two cores): spec -> (plans,
    refused, report, stderr)."""
    base = tmp_path_factory.mktemp("rehearsal")

    def one(spec: Path):
        source, plans, refused = rendered(spec)
        folder = base / spec.stem
        done = rehearse(source, folder, "--output", str(folder / "report.json"))
        assert done.returncode == 0, f"{spec.name}: {done.stderr[-3000:]}"
        return spec, (plans, refused, json.loads((folder / "report.json").read_text(encoding="utf-8")), done.stderr)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, SPECS))


def test_the_guard_really_blocks_gpuspec_and_lark(tmp_path):
    probe = "import importlib, importlib.util, sys\nimport torch\n" + "".join(
        f"assert importlib.util.find_spec({name!r}) is None\n"
        f"try:\n    importlib.import_module({name!r})\n    print('imported', {name!r})\n"
        f"except ModuleNotFoundError:\n    print('blocked', {name!r})\n" for name in ABSENT)
    done = rehearse(probe, tmp_path)
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stdout.splitlines() if line.startswith(("blocked", "imported"))] == \
        [f"blocked {name}" for name in ABSENT]
    # without the guard the same interpreter does find gpuspec (the editable install): the guard is what blocks it
    if PYTHON == sys.executable:
        found = subprocess.run([PYTHON, "-c", "import gpuspec, lark; print('found')"], cwd=tmp_path,
                               capture_output=True, text=True)
        assert found.stdout.strip() == "found", found.stderr


def test_no_program_template_imports_gpuspec():
    for path in (ROOT / "templates").glob("*.jinja"):
        text = path.read_text(encoding="utf-8")
        assert "import gpuspec" not in text and "from gpuspec" not in text, path.name


def test_every_bundled_spec_has_a_program_that_runs_alone_and_reports_every_workload(reports):
    assert {spec.name for spec in reports} == {spec.name for spec in SPECS}
    for spec, (plans, refused, report, _) in reports.items():
        schema.REPORT.check(report, "")
        assert report["spec"] == str(spec) and report["version"] == 1
        assert [w["key"] for w in report["workloads"]] == [p["raw"]["key"] for p in plans], spec.name
        assert [r["key"] for r in report["refused"]] == [key for key, _ in refused], spec.name
        for workload in report["workloads"]:
            assert workload["status"] == "ok", (spec.name, workload["statement"], workload.get("reason"))
            assert workload["metrics"], (spec.name, workload["statement"])
        read = results.from_report(report, str(spec))
        assert [m.key for m in read if m.status == "ok"] == [p["raw"]["key"] for p in plans]
        assert [m.key for m in read if m.status != "ok"] == [key for key, _ in refused]
        provenance = report["provenance"]
        assert provenance["interpreter"] is True and provenance["fake_timer"] is True
        assert provenance["stream_hold"] == "none" and provenance["l2_flush"] is None  # no GPU: nothing to hold


def test_each_metric_says_how_it_was_taken_why_sampling_stopped_and_what_ran(reports):
    for spec, (_, _, report, _) in reports.items():
        for workload in report["workloads"]:
            for name, summary in workload["metrics"].items():
                where = (spec.name, workload["statement"], name)
                assert summary["stopped_by"] in timing.STOP_REASONS, where
                assert summary["samples"] == 3 and summary["dropped"] == {}, where  # the fake timer's fixed count
                assert summary["warmup_calls"] >= 1, where
                assert summary["method"].startswith("fake timer"), where
                assert summary["kernels"] and all(count >= 1 for _, count in summary["kernels"]), where


def test_attention_records_the_backend_its_mode_forces(reports):
    _, _, report, _ = reports[ROOT / "specs" / "attention.gpu"]
    backends = {w["statement"]: w["backend"] for w in report["workloads"]}
    fused = [b for s, b in backends.items() if "fused" in s]
    eager = [b for s, b in backends.items() if "eager" in s]
    assert fused and eager, backends
    fp8 = [b for s, b in backends.items() if "fused" in s and "q8" in s]  # specs/attention.gpu's fp8 q, k, v
    assert fp8 and all(b.startswith("triton") for b in fp8)  # PyTorch has no fp8 flash kernel: the program's own
    assert set(fused) - set(fp8) == {"flash"}  # on the CPU: PyTorch's flash kernel for the CPU, never the math fallback
    assert all(b.startswith("math") for b in eager)
    for workload in report["workloads"]:
        names = " ".join(name for name, _ in workload["metrics"]["time"]["kernels"])
        if workload["backend"] == "flash":
            assert "flash_attention" in names and "attention_math" not in names
        elif workload["backend"].startswith("triton"):
            assert "scaled_dot_product" not in names and "aten::bmm" not in names
        else:
            assert "aten::bmm" in names and "aten::baddbmm" in names and "scaled_dot_product" not in names


def test_the_calibration_program_runs_alone_and_its_report_makes_a_profile(tmp_path):
    source = measure.calibration_source(launches=1000)
    done = rehearse(source, tmp_path / "run", "--output", str(tmp_path / "run" / "report.json"))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))
    profile = profiles.save(tmp_path / "profile.json", calibration.complete(report))
    assert set(profile.facts) == {"hbm_bandwidth", "launch_cost", "graph_launch_cost", "graph_node_cost",
                                  "kernel_floor", "kernel_gap", "stream_launch_gap", "lone_kernel_latency",
                                  "tensor_bf16", "tensor_fp16", "tensor_tf32", "l2_bandwidth", "l2_usable",
                                  "exp_rate"}
    assert profile.facts["launch_cost"] == pytest.approx(1e-5 / 10)  # the fake 10 µs over 10 small launches
    # no GPU named: the fits, which take the SMs and tiles from the GPU's catalog entry, say why they are not made
    for fact in ("gemm_fixed_cost", "attention_share_flash2", "attention_tile_overhead_flash2"):
        assert "the catalog has no entry for this GPU" in profile.unmeasured[fact]
    sweeps = report["sweeps"]
    assert [p["m"] for p in sweeps["gemm"]] == [16, 32] and {p["dtype"] for p in sweeps["gemm"]} == {"bf16"}
    assert [(p["seq_q"], p["causal"]) for p in sweeps["attention"]] == [(128, False), (256, True)]
    ladder = [p["working_set"] for p in sweeps["l2_read"]]
    assert ladder == sorted(ladder) and ladder[-1] > 64 << 10  # from inside the (rehearsal's 64 KiB) L2 to beyond
    # the latency walks visit every node of their working set once per sample
    walks = [report["samples"][name] for name in ("l2_latency", "hbm_latency")]
    for summary in walks:
        assert summary["loads"] * summary["stride_bytes"] == summary["working_set_bytes"]
    assert walks[1]["working_set_bytes"] > walks[0]["working_set_bytes"]


def test_the_probe_program_runs_alone_and_answers_each_question(tmp_path):
    source = measure.probe_source()
    done = rehearse(source, tmp_path / "run", "--output", str(tmp_path / "run" / "probe.json"))
    assert done.returncode == 0, done.stderr[-3000:]
    probe = json.loads((tmp_path / "run" / "probe.json").read_text(encoding="utf-8"))
    assert set(probe["questions"]) == {"stream_hold", "l2_flush", "vector_width", "clocks"}
    hold = probe["questions"]["stream_hold"]
    assert set(hold["tiny_kernel"]) == {"held", "not_held", "leak_s"}
    flush = probe["questions"]["l2_flush"]
    for where in ("inside_l2", "beyond_l2"):
        assert set(flush[where]) == {"none", "write", "read", "rotate", "working_set_bytes", "rotating_copies"}
        assert all(flush[where][kind]["samples"] == 3 for kind in ("none", "write", "read", "rotate"))
    assert flush["beyond_l2"]["working_set_bytes"] > flush["inside_l2"]["working_set_bytes"]
    width = probe["questions"]["vector_width"]
    assert set(width) >= {"one_element_per_thread", "vectorised"}
    assert width["vectorised"]["checked"] is True and width["one_element_per_thread"]["checked"] is True


# --- the timing rules a program carries are gpuspec.timing's ------------------------------------------------

def carried_rules(source: str) -> ast.FunctionDef:
    found = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "timing_rules"]
    assert len(found) == 1
    return found[0]


def test_every_program_carries_gpuspec_timing_word_for_word():
    own = Path(timing.__file__).read_text(encoding="utf-8").replace("from __future__ import annotations\n", "", 1)
    programs = [rendered(spec)[0] for spec in SPECS] + [measure.calibration_source(1000), measure.probe_source()]
    for source in programs:
        function = carried_rules(source)
        # the body, less the import and the return (over several lines) that name the rules
        lines = source.splitlines()[function.lineno:function.body[-2].lineno - 1]
        body = textwrap.dedent("\n".join(lines))
        assert body.strip("\n") == own.strip("\n")
        assert ast.unparse(function.body[-1]).startswith("return types.SimpleNamespace(")


def test_the_carried_rules_behave_as_gpuspec_timing_does():
    namespace: dict = {}
    code = str(timing_rules())
    exec(compile(code, "<carried>", "exec"), namespace)  # gpuspec's own file, as the programs carry it
    carried = namespace["timing_rules"]()
    public = {n for n, v in vars(timing).items() if not n.startswith("_") and getattr(v, "__module__", None) in
              (timing.__name__, None) and not inspect.ismodule(v)}
    assert public - {"annotations"} <= set(vars(carried))
    times = [3e-6, 1e-6, 2e-6, 9e-6, 2.5e-6, 2e-6]
    assert carried.summarize(times).to_dict() == timing.summarize(times).to_dict()
    assert carried.l2_flush_bytes(50e6) == timing.l2_flush_bytes(50e6)
    assert carried.rotating_buffers(10e6, 50e6) == timing.rotating_buffers(10e6, 50e6)
    assert carried.throttled(900.0, 1980.0) == timing.throttled(900.0, 1980.0)

    def play(module):
        clock = iter(x * 1e-3 for x in range(10_000))
        samples = iter([module.Sample(1e-3, 1980.0), module.Sample(2e-3, 700.0, "throttled")] * 100)
        return module.measure(lambda: next(samples), module.RelativeNoise(min_samples=5, min_time=0),
                              warmup=2, warmup_time=0.004, clock=lambda: next(clock)).to_dict()

    mine, theirs = play(carried), play(timing)
    mine.pop("wall_seconds"), theirs.pop("wall_seconds")
    assert mine == theirs and mine["dropped"] == {"throttled": 5}


def test_a_changed_timing_module_is_refused_rather_than_carried_wrong(monkeypatch, tmp_path):
    from gpuspec import templating

    fake = tmp_path / "timing.py"
    fake.write_text("x = 1\n", encoding="utf-8")  # no __future__ line: the carried copy could no longer be exact
    monkeypatch.setattr(templating.timing, "__file__", str(fake))
    templating.timing_rules.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="__future__"):
            templating.timing_rules()
    finally:
        monkeypatch.undo()
        templating.timing_rules.cache_clear()
    assert "def timing_rules():" in str(templating.timing_rules())


def test_a_program_copied_anywhere_still_has_everything(tmp_path):
    # the folder the program runs from holds nothing else: no gpuspec, no timing.py beside it
    source, *_ = rendered(ROOT / "specs" / "matmul.gpu")
    folder = tmp_path / "elsewhere"
    done = rehearse(source, folder, "--output", str(folder / "out.json"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in folder.iterdir()) == ["out.json", "program.py"]
    assert [w["status"] for w in json.loads((folder / "out.json").read_text(encoding="utf-8"))["workloads"]] == \
        ["ok"] * 5  # the five matmuls of specs/matmul.gpu
