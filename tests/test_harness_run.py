"""Running generated harness programs: on the CPU under the Triton interpreter, with the fake timer.

Each program run costs seconds (torch and the interpreter start up), so the tests share a few runs through
module-scoped fixtures. The runner's faults are played by small scripts standing in for Python.
"""
from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import platform
import stat
import subprocess
import sys

import pytest
from conftest import ROOT

from gpuspec import __version__, harness, measure, results
from gpuspec.api import compile_text, load_spec
from gpuspec.codegen import Code
from gpuspec.text import SpecText

LESSON = ROOT / "specs" / "gpu-execution.gpu"
FAKE_SECONDS = 1e-5
METRICS = {"elementwise": {"time"}, "stream": {"time", "host_time"}, "decode": {"step_time"}}  # what a CPU run measures


def run_program(source: str, folder) -> dict:
    script, output = folder / "harness.py", folder / "report.json"
    script.write_text(source, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "GPUSPEC_FAKE_GPU"}
    done = subprocess.run([sys.executable, str(script), "--device", "cpu", "--small", "--fake-timer", "--output",
                           str(output)], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(output.read_text(encoding="utf-8"))


def by_statement(report: dict) -> dict[str, dict]:
    return {w["statement"].split(" = ")[0]: w for w in report["workloads"]}


# --- the lesson, measured with the fake timer ---------------------------------------------------------------

@pytest.fixture(scope="module")
def lesson(tmp_path_factory):
    program = load_spec(LESSON).program
    plans, refused = harness.plans(program)
    report = run_program(harness.render(str(LESSON), plans, refused), tmp_path_factory.mktemp("lesson"))
    return plans, report


def test_every_workload_of_the_lesson_runs_ok_in_order(lesson):
    plans, report = lesson
    assert [(w["key"], w["line"], w["statement"]) for w in report["workloads"]] == \
        [(p["raw"]["key"], p["raw"]["line"], p["raw"]["statement"]) for p in plans]
    assert [w["status"] for w in report["workloads"]] == ["ok"] * len(plans)
    assert all("reason" not in w for w in report["workloads"])
    assert report["refused"] == [] and report["spec"] == str(LESSON) and report["version"] == 1


def test_each_kind_reports_its_metrics_with_three_fake_samples(lesson):
    plans, report = lesson
    kinds = [str(p["kind"]) for p in plans]
    assert {"elementwise", "stream", "decode"} <= set(kinds)
    for kind, record in zip(kinds, report["workloads"]):
        assert record["kind"] == kind
        assert set(record["metrics"]) == METRICS[kind], record["statement"]
        for summary in record["metrics"].values():
            assert summary["samples"] == 3
            assert summary["median"] == summary["p10"] == summary["p90"] == FAKE_SECONDS
            assert summary["minimum"] == summary["maximum"] == FAKE_SECONDS


def test_the_report_carries_its_provenance(lesson):
    _, report = lesson
    p = report["provenance"]
    assert datetime.datetime.fromisoformat(p["date"]).tzinfo is not None
    assert abs(datetime.datetime.now(datetime.timezone.utc) - datetime.datetime.fromisoformat(p["date"])) < \
        datetime.timedelta(minutes=30)
    assert p["gpuspec"] == __version__
    assert p["torch"] == importlib.metadata.version("torch")
    assert p["triton"] == importlib.metadata.version("triton")
    assert p["python"] == platform.python_version()
    assert p["device"] == "cpu" and p["interpreter"] is True
    assert p["fake_timer"] is True and p["small"] is True
    assert p["gpu"] is None  # no GPU, and none faked


def test_the_report_reads_back_as_measurements(lesson):
    plans, report = lesson
    found = results.from_report(report, str(LESSON))
    assert [m.key for m in found] == [p["raw"]["key"] for p in plans]
    assert all(m.status == "ok" and m.reason is None and m.spec == str(LESSON) for m in found)
    assert found[0].metrics["time"]["median"] == FAKE_SECONDS
    assert found[0].gpu == "cpu (no GPU)"


# --- correct first: a wrong kernel is never timed ------------------------------------------------------------

FUNCTIONS = """\
device H100-SXM
set mode = fused
x = fp32[16, 256]
h = fp16[16, 256]
bias = fp32[256]
x_ptr = fp32[16, 256]
twice = x * 2 is ≈ 2 µs
f_exp = exp(x) is ≈ 2 µs
f_log = log(x) is ≈ 2 µs
f_sqrt = sqrt(x) is ≈ 2 µs
f_rsqrt = rsqrt(x) is ≈ 2 µs
f_relu = relu(x) is ≈ 2 µs
f_gelu = gelu(x) is ≈ 2 µs
f_silu = silu(x) is ≈ 2 µs
f_sigmoid = sigmoid(x) is ≈ 2 µs
f_tanh = tanh(x) is ≈ 2 µs
f_erf = erf(x) is ≈ 2 µs
f_abs = abs(x) - 1 is ≈ 2 µs
f_max = max(x, bias) is ≈ 2 µs
f_min = min(x, bias) is ≈ 2 µs
f_pow = (x + 1) ^ 3 / 2 is ≈ 2 µs
f_bias = x * 2 + bias is ≈ 2 µs
f_eager = sigmoid(x) * bias - x eager is ≈ 2 µs
h_exp = exp(h) * 2 + 1 is ≈ 2 µs
h_gelu = gelu(h) is ≈ 2 µs
h_tanh = tanh(h) - h / 4 eager is ≈ 2 µs
h_bias = silu(h) * x + bias is ≈ 2 µs
clamp = max(x, 0.0) is ≈ 2 µs
mixed = exp(h) + x eager is ≈ 2 µs
shadow = x_ptr + x is ≈ 2 µs
"""
MATCHING = ["f_exp", "f_log", "f_sqrt", "f_rsqrt", "f_relu", "f_gelu", "f_silu", "f_sigmoid", "f_tanh", "f_erf",
            "f_abs", "f_max", "f_min", "f_pow", "f_bias", "f_eager", "h_exp", "h_gelu", "h_tanh", "h_bias"]


@pytest.fixture(scope="module")
def functions(tmp_path_factory):
    """The FUNCTIONS program, with the Triton code of `twice` (x * 2, fused) made wrong on purpose."""
    program = compile_text(SpecText("functions.gpu", FUNCTIONS))
    plans, refused = harness.plans(program)
    assert refused == []
    twice = next(p for p in plans if p["raw"]["statement"].startswith("twice"))
    assert str(twice["triton_expr"]) == "x * 2.0" and str(twice["mode"]) == "fused"
    twice["triton_expr"] = Code("x * 3.0")
    report = run_program(harness.render("functions.gpu", plans, refused), tmp_path_factory.mktemp("functions"))
    return by_statement(report)


def test_wrong_kernel_is_wrong_with_the_reason_and_is_not_timed(functions):
    record = functions["twice"]
    assert record["status"] == "wrong"
    assert "float32 reference" in record["reason"]
    assert "metrics" not in record


def test_a_wrong_kernel_leaves_the_other_workloads_of_its_program_running(functions):
    assert set(functions) == {line.split(" = ")[0] for line in FUNCTIONS.splitlines()[6:]}
    assert all(functions[name]["status"] == "ok" for name in MATCHING)
    assert all(set(functions[name]["metrics"]) == {"time"} for name in MATCHING)


@pytest.mark.parametrize("name", MATCHING)
def test_each_function_matches_its_float32_reference_under_the_interpreter(functions, name):
    record = functions[name]
    assert record["status"] == "ok", record.get("reason")
    assert "reason" not in record


def test_max_of_a_tensor_and_a_constant_matches_its_reference(functions):
    # `max(x, 0.0)` is written in the README's list of functions; the eager reference must accept a constant
    record = functions["clamp"]
    assert record["status"] == "ok", record.get("reason")
    assert "reason" not in record


def test_eager_mixed_precision_is_checked_at_the_precision_it_computes_in(functions):
    # exp(h) runs in fp16 in eager PyTorch, then adds an fp32 tensor: the result is fp32, but its error is fp16's
    record = functions["mixed"]
    assert record["status"] == "ok", record.get("reason")
    assert "reason" not in record


def test_a_tensor_named_like_another_tensors_length_parameter_is_measured(functions):
    # tensors `x` and `x_ptr`: x's pointer in the kernel (`x_ptr` for a tensor of any other name) must not be the
    # loaded values of the tensor x_ptr
    record = functions["shadow"]
    assert record["status"] == "ok", record.get("reason")
    assert "reason" not in record


INDEXES = """\
device H100-SXM
x = bf16[64, 4096]
bias = bf16[4096]
s = fp32[1]
odd = fp32[96, 100]
r = fp32[100]
scaled = x * s + 1 fused is ≈ 2 µs
rows = x + bias fused is ≈ 2 µs
uneven = odd * r - 1 fused is ≈ 2 µs
mixed = odd * s + r eager is ≈ 2 µs
"""


def test_each_way_a_kernel_indexes_its_inputs_is_right_under_the_interpreter(tmp_path):
    # one element loaded once (s), a row repeated along the leading dimension (bias, r: modulo a compile-time
    # length), the output's own shape (x, odd: the offsets); and n a multiple of BLOCK (no mask) or not (odd's 100)
    plans, refused = harness.plans(compile_text(SpecText("indexes.gpu", INDEXES)))
    kinds = {p["raw"]["statement"].split(" = ")[0]: [t["index"] for t in p["inputs"]] for p in plans}
    assert kinds == {"scaled": ["same", "scalar"], "rows": ["same", "rows"], "uneven": ["same", "rows"],
                     "mixed": ["same", "scalar", "rows"]}
    source = harness.render("indexes.gpu", plans, refused)
    assert "s = tl.load(s_ptr).to(tl.float32)" in source
    assert "bias = tl.load(bias_ptr + offs % bias_len, mask=mask).to(tl.float32)" in source
    assert "bias_len=bias.numel()" in source and "bias_len: tl.constexpr" in source
    report = by_statement(run_program(source, tmp_path))
    assert {name: record["status"] for name, record in report.items()} == dict.fromkeys(kinds, "ok"), \
        {name: record.get("reason") for name, record in report.items()}


# --- inputs in each function's domain: a right kernel is reported right ---------------------------------------

def domain_spec() -> tuple[str, list[str]]:
    """Every function and operator, alone and on a difference (whose sign the inputs must choose), in fp32 fused
    and bf16 eager; expressions whose inputs must lie in a narrow range (x ^ 0.5, log(x - 1), 1 / (x - y)); and a
    tensor of 2^31 elements, whose kernel computes its offsets in int64 (run small here)."""
    from gpuspec.tensors import UNARY_FUNCTIONS

    cases = {}
    for f in sorted(UNARY_FUNCTIONS):
        cases[f"u_{f}"] = ("-x" if f == "neg" else f"{f}(x)") + " fused"
        cases[f"b_{f}"] = ("-b" if f == "neg" else f"{f}(b)") + " eager"
        cases[f"d_{f}"] = ("-(x - y)" if f == "neg" else f"{f}(x - y)") + " fused"
    cases.update({
        "add": "x + y", "sub": "x - y fused", "mul": "x * y eager", "div": "x / y", "rdiv": "1 / x",
        "bdiv": "b / c eager", "pow_half": "x ^ 0.5", "pow_frac": "b ^ 2.5 eager", "pow_3": "x ^ 3",
        "pow_10": "x ^ 10", "pow_negative": "x ^ (0 - 1)", "pow_tensor": "x ^ y fused", "pow_base": "2 ^ x fused",
        "pow_diff": "(x - y) ^ 0.5", "pow_big": "x ^ 1000", "max": "max(x, y)", "min": "min(x, 0.5)",
        "log_shift": "log(x - 1)", "sqrt_shift": "sqrt(x - 3)", "log_below": "log(3 - x)", "log_neg": "log(-x)",
        "rsqrt_square": "rsqrt(x * x)", "circle": "sqrt(1 - x * x) eager", "div_diff": "1 / (x - y)",
        "div_shift": "x / (y - 1) eager", "log_ratio": "log(x / y)", "exp_big": "exp(h * 100) eager",
        "ints": "sqrt(i) * x", "log_half": "log(x / 2 - 3)", "constants": "sqrt(2) * x + max(x, 1 - 2)",
        "wide": "sqrt(big) + 1 fused",  # int64 offsets
    })
    head = ["device H100-SXM", "x = fp32[16, 256]", "y = fp32[16, 256]", "b = bf16[16, 256]", "c = bf16[256]",
            "h = fp16[16, 256]", "i = int32[16, 256]", "big = fp32[65536, 32768]"]
    return "\n".join(head + [f"{k} = {v} is ≈ 2 µs" for k, v in cases.items()]) + "\n", list(cases)


@pytest.fixture(scope="module")
def domains_report(tmp_path_factory):
    text, names = domain_spec()
    plans, refused = harness.plans(compile_text(SpecText("domains.gpu", text)))
    assert refused == []
    return names, by_statement(run_program(harness.render("domains.gpu", plans, refused),
                                           tmp_path_factory.mktemp("domains")))


def test_every_function_and_operator_on_inputs_in_its_domain_is_right_under_the_interpreter(domains_report):
    names, found = domains_report
    assert set(found) == set(names)
    wrong = {name: found[name].get("reason") for name in names if found[name]["status"] != "ok"}
    assert wrong == {}


# --- the runner's faults -----------------------------------------------------------------------------------

SMALL_SPEC = """\
device H100-SXM
x = fp32[1024]
a = x * 2 is ≈ 2 µs
b = exp(x) + 1 fused is ≈ 2 µs
"""


@pytest.fixture(scope="module")
def small():
    program = compile_text(SpecText("small.gpu", SMALL_SPEC))
    plans, _ = harness.plans(program)
    return program, [(p["raw"]["key"], p["raw"]["line"], p["raw"]["statement"]) for p in plans]


def fake_python(folder, name: str, body: str) -> str:
    """An executable script standing in for Python: it receives the harness's path and arguments."""
    path = folder / name
    path.write_text(f"#!{sys.executable}\nimport sys, time\n{body}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def assert_every_workload_failed(found, expected, reason_start: str):
    assert [(m.key, m.line, m.statement) for m in found] == expected
    assert all(m.status == "error" for m in found)
    assert all(m.reason.startswith(reason_start) for m in found), [m.reason for m in found]
    assert all(m.metrics == {} for m in found)


def test_a_harness_that_hangs_is_stopped_at_the_timeout(small, tmp_path):
    program, expected = small
    python = fake_python(tmp_path, "hang", "time.sleep(60)")
    started = datetime.datetime.now()
    found = measure.run("small.gpu", program, measure.Options(device="cpu", timeout=2, python=python))
    assert datetime.datetime.now() - started < datetime.timedelta(seconds=20)
    assert_every_workload_failed(found, expected, "the harness ran longer than 2 s and was stopped")


def test_a_harness_that_crashes_fails_with_its_last_stderr_line(small, tmp_path):
    program, expected = small
    python = fake_python(tmp_path, "crash", "sys.stderr.write('Traceback (most recent call last):\\n  ...\\n"
                                            "RuntimeError: CUDA error: an illegal memory access\\n')\nsys.exit(1)")
    found = measure.run("small.gpu", program, measure.Options(device="cpu", timeout=30, python=python))
    assert_every_workload_failed(found, expected,
                                 "the harness crashed: RuntimeError: CUDA error: an illegal memory access")


def test_a_harness_that_exits_silently_without_a_report_fails_with_its_exit_code(small, tmp_path):
    program, expected = small
    python = fake_python(tmp_path, "quiet", "sys.exit(5)")
    found = measure.run("small.gpu", program, measure.Options(device="cpu", timeout=30, python=python))
    assert_every_workload_failed(found, expected, "the harness crashed: exit code 5")


WRITE_OUTPUT = "open(sys.argv[sys.argv.index('--output') + 1], 'w').write({!r})"


@pytest.mark.parametrize("garbage, detail", [
    ("{not json at all", "Expecting property name"),
    (json.dumps({"version": 2, "provenance": {}, "workloads": []}), "version 1"),
    (json.dumps({"version": 1, "provenance": {}, "workloads": [{"key": "k", "line": 3, "statement": "s",
                                                                "status": "great"}]}),
     '`workloads[0].status` is "great"'),
    (json.dumps({"version": 1, "provenance": {}, "workloads": [{"key": "k", "line": 3, "statement": "s",
                                                                "status": "ok", "metrics": {"time": 5}}]}),
     "`workloads[0].metrics.time` is 5; it must be a timing summary"),
])
def test_a_harness_that_writes_garbage_fails_as_an_unreadable_report(small, tmp_path, garbage, detail):
    program, expected = small
    python = fake_python(tmp_path, "garbage", WRITE_OUTPUT.format(garbage))
    found = measure.run("small.gpu", program, measure.Options(device="cpu", timeout=30, python=python))
    assert_every_workload_failed(found, expected, "the harness printed a report gpuspec cannot read")
    assert all(detail in m.reason for m in found), found[0].reason


def test_a_python_that_cannot_start_fails_every_workload(small, tmp_path):
    program, expected = small
    found = measure.run("small.gpu", program, measure.Options(device="cpu", python=str(tmp_path / "no-python")))
    assert_every_workload_failed(found, expected, "the harness could not start")


def test_the_harness_is_given_the_options_it_was_asked_for(small, tmp_path):
    program, expected = small
    argv_file = tmp_path / "argv.json"
    body = ("import json, os\n"
            f"json.dump([sys.argv[1:], os.environ.get('GPUSPEC_FAKE_GPU')], open({str(argv_file)!r}, 'w'))\n"
            "sys.exit(1)")
    python = fake_python(tmp_path, "spy", body)
    options = measure.Options(device="cpu", budget=0.5, small=True, fake_timer=True, fake_gpu="NVIDIA H100",
                              python=python)
    measure.run("small.gpu", program, options, commit="abc123")
    argv, fake_gpu = json.loads(argv_file.read_text())
    assert argv[0].endswith("harness.py")
    pairs = dict(zip(argv[1::2], argv[2::2]))
    assert pairs["--device"] == "cpu" and pairs["--budget"] == "0.5" and pairs["--commit"] == "abc123"
    assert "--small" in argv and "--fake-timer" in argv and "--output" in argv
    assert fake_gpu == "NVIDIA H100"


@pytest.mark.parametrize("body, reason", [
    ("sys.exit(3)", "no CUDA device"),
    ("sys.exit(1)", "torch and triton are not installed"),
])
def test_availability_says_why_measuring_cannot_run(tmp_path, body, reason):
    python = fake_python(tmp_path, "probe", body)
    assert reason in measure.availability(measure.Options(device="cuda", python=python))
    assert measure.availability(measure.Options(device="cpu", python=fake_python(tmp_path, "ok", "sys.exit(0)"))) \
        is None
    assert measure.availability(measure.Options(python=str(tmp_path / "missing"))).startswith(
        "cannot start Python to measure")


# --- row-wise operations and attention run and pass their float32 checks ------------------------------------

ROWWISE_AND_ATTENTION = (
    "device H100-SXM\nx = bf16[8192, 4096]\n"
    + "".join(f"{op}(x) {mode} is 1 kernels\n" for op in ("sum", "mean", "amax", "softmax", "layernorm", "rmsnorm")
              for mode in ("eager", "fused"))
    + "q = bf16[2, 32, 1024, 128]\nk = bf16[2, 8, 1024, 128]\nv = bf16[2, 8, 1024, 128]\nm = fp16[1, 4, 512, 64]\n"
    "attention(q, k, v) eager is 3 kernels\nattention(q, k, v) fused is 1 kernels\n"
    "attention(m, m, m) fused is 1 kernels\nattention(m, m, m) eager is 3 kernels\n")


def test_rowwise_and_attention_harnesses_run_ok(tmp_path):
    program = compile_text(SpecText("r.gpu", ROWWISE_AND_ATTENTION))
    plans, refused = harness.plans(program)
    report = run_program(harness.render("r.gpu", plans, refused), tmp_path)
    assert len(report["workloads"]) == 16
    for w in report["workloads"]:
        assert w["status"] == "ok", (w["statement"], w.get("reason"))
        assert w["kind"] in ("rowwise", "attention") and w["metrics"]["time"]["median"] == FAKE_SECONDS


def test_prefill_and_decode_steps_run_ok(tmp_path):
    spec = ("device H100-SXM\nfirst = prefill llama2-7b, batch 1, prompt 2048 compiled as a CUDA graph is ≈ 1 ms\n"
            "grouped = prefill llama3-8b, batch 2, prompt 512 is ≈ 1 ms\n"
            "cached = decode llama3-8b, batch 1, context 4096, kv fp8 is ≈ 1 ms\n")
    plans, refused = harness.plans(compile_text(SpecText("p.gpu", spec)))
    assert refused == []
    report = by_statement(run_program(harness.render("p.gpu", plans, refused), tmp_path))
    assert set(report) == {"first", "grouped", "cached"}
    for name, record in report.items():
        assert record["status"] == "ok", (name, record.get("reason"))
        launched = dict(record["metrics"]["step_time"]["kernels"])
        # two layers in a small run: 7 matmuls each, and causal attention in a prefill
        assert launched["aten::mm"] == 14, (name, launched)
        assert launched.get("aten::_scaled_dot_product_flash_attention_for_cpu", 0) == (2 if name != "cached" else 0)


# --- causal, fp8 and Triton attention: each checked against the float32 eager reference ------------------------

CAUSAL_AND_FP8 = (
    "device H100-SXM\nq = bf16[1, 4, 16, 64]\nk = bf16[1, 2, 48, 64]\nsquare = fp16[1, 2, 40, 64]\n"
    "q8 = fp8[1, 4, 24, 64]\nk8 = fp8[1, 2, 56, 64]\n"
    "shorter = attention(q, k, k, causal) fused\nshorter_eager = attention(q, k, k, causal) eager\n"
    "same = attention(square, square, square, causal) fused\nfp8 = attention(q8, k8, k8) fused\n"
    "fp8_causal = attention(q8, k8, k8, causal) fused\nset attention_implementation = triton\n"
    "tri = attention(q, k, k, causal) fused\ntri_plain = attention(square, square, square) fused\n"
    "set attention_implementation = flash3\nrefused = attention(q, k, k) fused\n")


def test_causal_fp8_and_triton_attention_harnesses_run_ok(tmp_path):
    plans, refused = harness.plans(compile_text(SpecText("c.gpu", CAUSAL_AND_FP8)))
    assert [reason for _, reason in refused] == ["FlashAttention-3 is not part of PyTorch: measure it with its own "
                                                 "benchmark"]
    report = by_statement(run_program(harness.render("c.gpu", plans, refused), tmp_path))
    for name, record in report.items():
        assert record["status"] == "ok", (name, record.get("reason"))
    assert report["shorter_eager"]["backend"].startswith("math")
    assert report["shorter"]["backend"] != report["fp8"]["backend"]
    for name in ("fp8", "fp8_causal", "tri", "tri_plain"):
        assert report[name]["backend"] == f"triton ({name}_kernel)"


def test_a_wrong_causal_alignment_fails_the_check(tmp_path):
    """The check catches a mask aligned at the top left (PyTorch's is_causal) where the spec means bottom right."""
    plans, refused = harness.plans(compile_text(SpecText("w.gpu", "device H100-SXM\nq = bf16[1, 2, 16, 64]\n"
                                                         "k = bf16[1, 2, 48, 64]\nw = attention(q, k, k, causal) fused\n")))
    source = harness.render("w.gpu", plans, refused)
    wrong = source.replace("attn_mask=mask", "is_causal=True")
    assert wrong != source
    report = by_statement(run_program(wrong, tmp_path))
    assert report["w"]["status"] == "wrong"
