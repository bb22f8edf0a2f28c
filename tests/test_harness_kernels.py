"""A harness measures what the model models, kernel by kernel: the kernels one call of a workload's timed function
launches, counted with torch.profiler on the CPU (tests/count_launches.py), are the model's kernels.

Row-wise workloads are the model's own kernels, each a Triton kernel named after the model's label for it (the
max pass, the exp-and-sum pass, ...): eager is the multi-pass form with the row statistics through memory, fused is
one kernel. Attention, elementwise work and matmuls are PyTorch's kernels (or the one fused Triton kernel), as many
as the model counts. The results are right too: each workload passes its float32 check under the interpreter."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

from gpuspec import codegen, harness, model
from gpuspec.kinds.rowwise import ROWWISE_OPS
from gpuspec.kinds.rowwise.rules import kernels as rowwise_kernels
from gpuspec.api import compile_text
from gpuspec.text import SpecText

# Rows of 96 (not a power of two: masked loads) and of 5,000 (longer than a pass's 2,048-element step: its loop
# turns three times; a fused kernel holds 8,192 values, 5,000 of them the row's).
ROWS = {"x": ((4, 96), "bf16", "torch.bfloat16"), "w": ((3, 5000), "fp32", "torch.float32")}
SPEC = ("device H100-SXM\nx = bf16[4, 96]\nw = fp32[3, 5000]\n"
        + "".join(f"{op}_{mode}_{t} = {op}({t}) {mode}\n" for t in ROWS for op in ROWWISE_OPS
                  for mode in ("eager", "fused"))
        + "q = bf16[1, 4, 16, 32]\nk = bf16[1, 2, 16, 32]\n"
        "standard = attention(q, k, k) eager\nflash = attention(q, k, k) fused\n"
        "y = x * 2 + exp(x) eager\nz = x * 2 + exp(x) fused\n"
        "bias = bf16[96]\ns = fp32[1]\nfunctions = silu(x) * gelu(x) - max(x, 0.5) eager\n"
        "mixed = (x + bias) ^ 3 / s + sqrt(2) * tanh(x) eager\n"
        "a = bf16[64, 32]\nb = bf16[32, 48]\nc = a @ b\n")


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """(the program's workloads by name, what each timed call launched, the program's own report)."""
    program = compile_text(SpecText("k.gpu", SPEC))
    plans, refused = harness.plans(program)
    assert refused == []
    folder = tmp_path_factory.mktemp("kernels")
    script = folder / "k.py"
    script.write_text(harness.render("k.gpu", plans, refused), encoding="utf-8")
    workloads = {str(p["id"]): w for p in plans for _, statement, w in program.workloads
                 if statement == p["raw"]["statement"]}
    calls = []
    for name, w in workloads.items():
        if w.kind == "rowwise":
            shape, _, dtype = ROWS[w.x.name]
            calls.append([name, f"x = random_input({shape}, {dtype})", f"{name}_op(x)"])
    calls += [
        ["standard", "q = random_input((1, 4, 16, 32), torch.bfloat16); k = random_input((1, 2, 16, 32), "
                     "torch.bfloat16)", "standard_eager(q, k, k)"],
        ["flash", "", "flash_fused(q, k, k)"],
        ["y", "inputs, shape = y_setup()", "y_eager(*inputs)"],
        ["z", "inputs, shape = z_setup(); out = poisoned(shape, torch.bfloat16)", "z_fused(*inputs, out)"],
        ["functions", "inputs, shape = functions_setup()", "functions_eager(*inputs)"],
        ["mixed", "inputs, shape = mixed_setup()", "mixed_eager(*inputs)"],
        ["c", "a = random_input((64, 32), torch.bfloat16); b = random_input((32, 48), torch.bfloat16)",
         "torch.matmul(a, b)"],
    ]
    env = {k: v for k, v in os.environ.items() if k != "GPUSPEC_FAKE_GPU"}
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "count_launches.py"), str(script), json.dumps(calls)],
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("LAUNCHED "))
    launched = json.loads(line.removeprefix("LAUNCHED "))
    output = folder / "report.json"
    done = subprocess.run([sys.executable, str(script), "--device", "cpu", "--fake-timer", "--output", str(output)],
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    report = {w["statement"].split(" = ")[0]: w for w in json.loads(output.read_text(encoding="utf-8"))["workloads"]}
    return workloads, launched, report


def test_each_rowwise_harness_launches_the_models_kernels_by_name_and_nothing_else(measured):
    workloads, launched, _ = measured
    rowwise = {name: w for name, w in workloads.items() if w.kind == "rowwise"}
    assert len(rowwise) == 24
    for name, w in rowwise.items():
        expected = [f"triton::{name}_{codegen.words(k.label)}_kernel" for k in rowwise_kernels(w)]
        assert launched[name] == expected, name
        assert len(expected) == model.estimate(w)["kernels"].number


@pytest.mark.parametrize("op, passes", [("softmax", ["max_pass", "exp_and_sum_pass", "normalize_pass"]),
                                        ("layernorm", ["mean_pass", "variance_pass", "normalize_pass"]),
                                        ("rmsnorm", ["mean_of_squares_pass", "normalize_pass"])])
def test_eager_norms_are_the_textbook_passes_and_fused_is_one_kernel(measured, op, passes):
    _, launched, _ = measured
    assert launched[f"{op}_eager_x"] == [f"triton::{op}_eager_x_{p}_kernel" for p in passes]
    assert launched[f"{op}_fused_x"] == [f"triton::{op}_fused_x_{op}_fused_kernel"]


# functions: silu, gelu, the product, a clamp, the difference; mixed: the sum with a row broadcast, the power, the
# quotient by a one-element fp32 tensor, tanh, its product with the constant √2 (folded), the sum
@pytest.mark.parametrize("name, count", [("standard", 3), ("flash", 1), ("y", 3), ("z", 1), ("c", 1),
                                         ("functions", 5), ("mixed", 6)])
def test_other_kinds_launch_as_many_kernels_as_the_model_counts(measured, name, count):
    workloads, launched, _ = measured
    assert model.estimate(workloads[name])["kernels"].number == count
    assert len(launched[name]) == count, launched[name]
    if name == "z":
        assert launched[name] == ["triton::z_kernel"]


def test_every_workload_passes_its_float32_check(measured):
    workloads, _, report = measured
    assert set(report) == set(workloads)
    for name, record in report.items():
        assert record["status"] == "ok", (name, record.get("reason"))


def test_a_row_too_long_to_hold_on_chip_is_refused_for_fused_and_measured_eager():
    program = compile_text(SpecText("l.gpu", "device H100-SXM\nx = fp32[2, 40000]\nsoftmax(x) fused is ≈ 2 µs\n"
                                             "softmax(x) eager is ≈ 2 µs\nsum(x) fused is ≈ 2 µs\n"))
    plans, refused = harness.plans(program)
    assert [p["raw"]["statement"] for p in plans] == ["softmax(x) eager is ≈ 2 µs", "sum(x) fused is ≈ 2 µs"]
    [(_, reason)] = refused
    assert "rows of 40,000 elements" in reason and "one-pass kernel the model times" in reason


def test_the_longest_names_make_identifiers_for_the_longest_kernel_names():
    name = "a_workload_named_at_length_beyond_forty_characters"
    program = compile_text(SpecText("n.gpu", f"device H100-SXM\nx = bf16[8, 64]\n{name} = rmsnorm(x) eager\n"
                                             f"{name[:41]}long = x * 2\n"))
    plans, refused = harness.plans(program)
    assert refused == []
    rows, twice = plans
    assert str(rows["id"]) == "a_workload_named_at_length_beyond_forty"  # cut to 40 characters, less the last _
    assert str(twice["id"]) == "a_workload_named_at_length_beyond_forty2"  # cut to the same name: numbered
    assert [str(k["name"]) for k in rows["kernels"]] == [
        "a_workload_named_at_length_beyond_forty_mean_of_squares_pass_kernel",
        "a_workload_named_at_length_beyond_forty_normalize_pass_kernel"]
    compile(harness.render("n.gpu", plans, refused), "n.py", "exec")


def test_inputs_named_as_the_functions_that_use_them_are_renamed_and_measured(tmp_path):
    spec = ("device H100-SXM\nrandom_input = fp32[256]\ny_kernel = fp32[256]\ncompare = fp32[256]\n"
            "y = random_input * 2 + y_kernel - compare fused is ≈ 2 µs\n")
    plans, refused = harness.plans(compile_text(SpecText("s.gpu", spec)))
    assert refused == []
    assert [str(t["name"]) for t in plans[0]["inputs"]] == ["random_input2", "y_kernel2", "compare2"]
    script, output = tmp_path / "s.py", tmp_path / "s.json"
    script.write_text(harness.render("s.gpu", plans, refused), encoding="utf-8")
    done = subprocess.run([sys.executable, str(script), "--device", "cpu", "--fake-timer", "--output", str(output)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    [record] = json.loads(output.read_text(encoding="utf-8"))["workloads"]
    assert record["status"] == "ok", record.get("reason")
