"""Casts (`fp32(x)`, `bf16(y)`), copies and transposes in elementwise expressions: their bytes and kernels by the
elementwise model, hand-worked, and harnesses that launch what the model counts and compute the right values.

Hugging Face's LlamaRMSNorm (huggingface/transformers, src/transformers/models/llama/modeling_llama.py at commit
002272831fba584eb30dca9729c1be456836960a, LlamaRMSNorm.forward) runs, eagerly, eight kernels on a bf16 input:

    hidden_states = hidden_states.to(torch.float32)                             # 1: the cast up
    variance = hidden_states.pow(2).mean(-1, keepdim=True)                      # 2: pow, 3: mean
    hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)   # 4: add, 5: rsqrt, 6: mul
    return self.weight * hidden_states.to(input_dtype)                          # 7: the cast down, 8: mul

The mean is a row reduction, a workload of its own in gpuspec: the chain is written as three elementwise workloads
and a row-wise mean, the mean's keepdim result ([rows, 1], fp32) as a tensor of its own (README: Workloads).
"""
import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, verdicts

from gpuspec import devices, harness, model
from gpuspec.api import compile_text
from gpuspec.kinds.elementwise import Elementwise
from gpuspec.tensors import Apply, Scalar, Tensor, result_dtype, result_shape
from gpuspec.text import SpecText

H100 = devices.lookup("H100-SXM")
N = 4096 * 4096  # elements of the hidden states: 4096 tokens × a hidden size of 4096
ROWS = 4096
BANDWIDTH = 3.35e12

HF_RMSNORM = """device H100-SXM
x = bf16[4096, 4096]
w = bf16[4096]
variance = fp32[4096, 1]
x32 = fp32(x) eager
squares = x32 ^ 2 eager
ms = mean(squares) eager
normed = w * bf16(x32 * rsqrt(variance + 1e-6)) eager
fused = rmsnorm(x) fused
"""


def estimate(expr, mode="eager"):
    return model.estimate(Elementwise(expr, mode, 256, H100))


def test_a_cast_up_is_a_kernel_that_reads_bf16_and_writes_fp32():
    x = Tensor("x", "bf16", (4096, 4096))
    e = estimate(Apply("to_fp32", (x,)))
    assert e["kernels"].number == 1
    assert e["bytes_read"].number == 2 * N and e["bytes_written"].number == 4 * N  # 33.6 MB in, 67.1 MB out
    assert e["flops"].number == 0
    assert e["time"].number == pytest.approx(6 * N / BANDWIDTH)  # 100.7 MB / 3.35 TB/s = 30.0 µs
    assert e["bound"].number == "memory"


def test_a_cast_decides_the_dtype_whatever_promotion_would_say():
    x = Tensor("x", "bf16", (8,))
    w = Tensor("w", "bf16", (8,))
    up = Apply("mul", (Apply("to_fp32", (x,)), Scalar(2.0)))
    assert result_dtype(up) == "fp32"
    assert result_dtype(Apply("mul", (w, Apply("to_bf16", (up,))))) == "bf16"
    # bf16 and fp16 promote to fp32; a cast to fp16 of the sum is fp16
    h = Tensor("h", "fp16", (8,))
    assert result_dtype(Apply("add", (x, h))) == "fp32"
    assert result_dtype(Apply("to_fp16", (Apply("add", (x, h)),))) == "fp16"


def test_in_a_fused_kernel_casts_cost_nothing_but_the_dtype_of_what_is_written():
    x = Tensor("x", "bf16", (4096, 4096))
    written_fp32 = estimate(Apply("mul", (Apply("to_fp32", (x,)), Scalar(2.0))), "fused")
    written_bf16 = estimate(Apply("to_bf16", (Apply("mul", (Apply("to_fp32", (x,)), Scalar(2.0))),)), "fused")
    assert written_fp32["kernels"].number == written_bf16["kernels"].number == 1
    assert written_fp32["bytes_moved"].number == 2 * N + 4 * N
    assert written_bf16["bytes_moved"].number == 2 * N + 2 * N
    assert written_bf16["flops"].number == N  # the multiply; the casts are no arithmetic


def test_a_transpose_reads_and_writes_each_element_once_and_swaps_the_last_two_dimensions():
    x = Tensor("x", "bf16", (8, 4096, 1024))
    t = Apply("transpose", (x,))
    assert result_shape(t) == (8, 1024, 4096)
    e = estimate(t)
    assert e["kernels"].number == 1 and e["flops"].number == 0
    assert e["bytes_read"].number == e["bytes_written"].number == 8 * 4096 * 1024 * 2  # 67.1 MB each way
    assert e["time"].number == pytest.approx(2 * 67_108_864 / BANDWIDTH)  # 134 MB / 3.35 TB/s = 40.1 µs
    copy = estimate(Apply("copy", (x,)))
    assert copy["bytes_moved"].number == e["bytes_moved"].number and copy["flops"].number == 0
    # eager, a transpose written out is a kernel before the multiply; fused, the kernel reads x transposed
    scaled = Apply("mul", (t, Scalar(2.0)))
    assert estimate(scaled)["kernels"].number == 2
    assert estimate(scaled, "fused")["bytes_moved"].number == e["bytes_moved"].number


def test_hugging_face_rmsnorm_is_eight_kernels_and_about_nine_times_the_fused_kernel():
    found = {v.claim.text: v for v in verdicts(HF_RMSNORM + "x32.kernels + squares.kernels + ms.kernels + "
                                                            "normed.kernels = 8\n")}
    assert [v.status for v in found.values()] == ["pass"] * len(found)
    program = compile_text(SpecText("hf.gpu", HF_RMSNORM))
    w = {statement.split(" = ")[0]: workload for _, statement, workload in program.workloads}
    e = {name: model.estimate(workload) for name, workload in w.items()}
    assert [e[n]["kernels"].number for n in ("x32", "squares", "ms", "normed")] == [1, 1, 1, 5]
    # bytes, hand-worked: 2N + 4N (cast up), 4N + 4N (pow), 4N + 4·rows (mean), then the five kernels of the
    # normalize: 4·rows + 4·rows (add eps), the same (rsqrt), 4N + 4·rows + 4N (mul), 4N + 2N (cast down),
    # 2N + 2·4096 + 2N (weight)
    assert e["x32"]["bytes_moved"].number == 6 * N
    assert e["squares"]["bytes_moved"].number == 8 * N
    assert e["ms"]["bytes_moved"].number == 4 * N + 4 * ROWS
    assert e["normed"]["bytes_moved"].number == 8 * ROWS + 8 * ROWS + 8 * N + 4 * ROWS + 6 * N + 4 * N + 2 * 4096
    total_bytes = sum(e[n]["bytes_moved"].number for n in ("x32", "squares", "ms", "normed"))
    assert total_bytes == pytest.approx(36 * N, rel=1e-3)  # 604 MB against the fused kernel's 4N = 67.1 MB
    # each kernel at HBM speed, the two row-sized ones at the 2 µs kernel floor: ≈ 184 µs against 20.0 µs
    total_time = sum(e[n]["time"].number for n in ("x32", "squares", "ms", "normed"))
    floors = 2 * 2e-6
    assert total_time == pytest.approx(floors + (36 * N + 4 * ROWS + 4 * ROWS + 2 * 4096) / BANDWIDTH, rel=1e-9)
    assert total_time == pytest.approx(184.3e-6, rel=1e-3)
    assert e["fused"]["time"].number == pytest.approx(4 * N / BANDWIDTH)
    assert total_time / e["fused"]["time"].number == pytest.approx(9.2, rel=0.01)


# The harness: each cast, copy and transpose as PyTorch runs it (one kernel each, eagerly) and in the one Triton
# kernel, checked against the float32 reference under the interpreter. Shapes not square, so that a transpose read
# along the wrong axis fails.
SPEC = ("device H100-SXM\nx = bf16[24, 40]\nw = bf16[24]\ns = fp16[16, 16]\nvar = fp32[24, 1]\n"
        "up = fp32(x) eager\n"
        "chain = w * bf16(fp32(transpose(x)) * rsqrt(fp32(transpose(x)) * 0 + 2.0)) eager\n"
        "down = bf16(fp32(x) * rsqrt(var + 1e-6)) eager\n"
        "fused_down = bf16(fp32(x) * rsqrt(var + 1e-6)) fused\n"
        "flipped = transpose(x) eager\n"
        "flipped_fused = transpose(x) * 2 + 1 fused\n"
        "both = s + transpose(s) fused\n"
        "copied = copy(x) eager\n"
        "halved = fp16(x) * 2 eager\n")


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    program = compile_text(SpecText("c.gpu", SPEC))
    plans, refused = harness.plans(program)
    assert refused == []
    folder = tmp_path_factory.mktemp("casts")
    script = folder / "c.py"
    script.write_text(harness.render("c.gpu", plans, refused), encoding="utf-8")
    workloads = {str(p["id"]): w for p in plans for _, statement, w in program.workloads
                 if statement == p["raw"]["statement"]}
    calls = []
    for name, w in workloads.items():
        call = f"{name}_fused(*inputs, out)" if w.mode == "fused" else f"{name}_eager(*inputs)"
        setup = f"inputs, shape = {name}_setup(); out = poisoned(shape, torch.float32)" if w.mode == "fused" \
            else f"inputs, shape = {name}_setup()"
        calls.append([name, setup, call])
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


def test_each_harness_launches_as_many_kernels_as_the_model_counts(measured):
    workloads, launched, _ = measured
    # up: the cast; chain: two casts of the two transposes (4), the multiply by 0, the add, the rsqrt, the product,
    # the cast down and the weight (10); down: add, rsqrt, cast up, product, cast down (5)
    counts = {"up": 1, "chain": 10, "down": 5, "fused_down": 1, "flipped": 1, "flipped_fused": 1, "both": 1,
              "copied": 1, "halved": 2}
    for name, count in counts.items():
        assert model.estimate(workloads[name])["kernels"].number == count, name
        assert len(launched[name]) == count, (name, launched[name])


def test_every_cast_and_transpose_computes_the_right_values(measured):
    workloads, _, report = measured
    assert set(report) == set(workloads)
    for name, record in report.items():
        assert record["status"] == "ok", (name, record.get("reason"))


def test_a_transposed_load_reads_along_the_swapped_axes(tmp_path):
    """The check is not blind: the same kernel reading x untransposed gives another result, which fails."""
    program = compile_text(SpecText("t.gpu", "device H100-SXM\nx = bf16[24, 40]\nflipped = transpose(x) * 2 fused\n"))
    plans, refused = harness.plans(program)
    source = harness.render("t.gpu", plans, refused)
    broken = source.replace("offs % cols * rows + offs // cols % rows", "offs % cols + offs // cols * cols")
    assert broken != source
    script, output = tmp_path / "t.py", tmp_path / "t.json"
    script.write_text(broken, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script), "--device", "cpu", "--fake-timer", "--output", str(output)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    [record] = json.loads(output.read_text(encoding="utf-8"))["workloads"]
    assert record["status"] == "wrong" and "differs from the float32 reference" in record["reason"]


def test_a_harness_refuses_what_pytorch_cannot_run_as_modelled():
    spec = ("device H100-SXM\nx = bf16[64, 64]\nv = bf16[32, 64]\nu = bf16[4, 64, 32]\n"
            "a = fp8(x) * 2\n"             # PyTorch does no arithmetic on fp8 tensors
            "b = transpose(v) + u\n"       # a transpose broadcast along the output's leading dimension
            "c = fp8(x * 2)\n")            # the result cast to fp8: measured
    plans, refused = harness.plans(compile_text(SpecText("r.gpu", spec)))
    assert [p["raw"]["statement"] for p in plans] == ["c = fp8(x * 2)"]
    reasons = [reason for _, reason in refused]
    assert "PyTorch does no arithmetic on fp8 tensors" in reasons[0]
    assert "only where it is as large as the output" in reasons[1]


def test_a_long_expression_is_laid_out_over_lines_within_the_line_length():
    chain = " * ".join(f"gelu(fp32(act) * {k})" for k in range(1, 12))
    program = compile_text(SpecText("l.gpu", f"device H100-SXM\nact = bf16[64, 64]\nlong = bf16({chain}) eager\n"))
    plans, refused = harness.plans(program)
    source = harness.render("l.gpu", plans, refused)
    assert max(len(line) for line in source.splitlines()) <= 120
    compile(source, "l.py", "exec")
    assert "    return (\n" in source and "    out = (\n" in source
