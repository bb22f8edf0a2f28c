"""Proof compiled for the target: every Triton kernel the bundled specs generate (and those of the calibration and
probe programs) compiled for sm_90 and sm_80 without a GPU, and the memory-bound ones shown to move whole 16-byte
vectors: 128-bit global loads and stores in the PTX (ld.global.v4.b32 or .v2.b64) and, with the cuobjdump that
ships with triton, in the SASS (LDG.E.128, STG.E.128), with no run-time division left in the indexing.

Compiling is a few seconds a kernel, so the kernels compile once, in one subprocess, for the whole module.
"""
from __future__ import annotations

import ast
import json
import math
import os
import subprocess
import sys

import pytest
from conftest import ROOT

from gpuspec import harness, measure
from gpuspec.api import compile_text, load_spec
from gpuspec.text import SpecText

TARGETS = (90, 80)
# The interpreter that compiles: GPUSPEC_REHEARSAL_PYTHON names another (the GPU image's triton), as the rehearsal
# tests do; it needs torch and triton, nothing of gpuspec.
PYTHON = os.environ.get("GPUSPEC_REHEARSAL_PYTHON") or sys.executable
# Triton's names for the element types a harness passes, from the torch dtype the plan holds.
TRITON_TYPES = {"torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.float32": "fp32", "torch.float64": "fp64",
                "torch.float8_e4m3fn": "fp8e4nv", "torch.int8": "i8", "torch.int16": "i16", "torch.int32": "i32",
                "torch.int64": "i64", "torch.uint8": "u8", "torch.bool": "i1"}
ITEM_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "fp64": 8, "fp8e4nv": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
              "u8": 1, "i1": 1}
# Workloads the bundled specs do not have: an input repeated along rows, a scalar, mixed widths, fp8, 2^31 elements.
EXTRA = """device H100-SXM
x = bf16[4096, 4096]
bias = bf16[4096]
s = fp32[1]
h = fp16[2048, 1024]
f = fp32[2048, 1024]
e = fp8[8192, 1024]
big = bf16[65536, 32768]
rows = x + bias fused:
    1 kernels
scaled = x * s + 1 fused:
    1 kernels
mixed = h * f + f fused:
    1 kernels
quarter = e * 2 fused:
    1 kernels
wide = big * 2 fused:
    1 kernels
"""


def shape(code) -> tuple[int, ...]:
    return tuple(ast.literal_eval(str(code)))


def elementwise_job(program: str, plan: dict) -> dict:
    """How the harness launches this plan's kernel on the full-size tensors, as a compile job: the pointer types,
    n as i32 or i64, the rows' lengths and BLOCK and EVEN as constants, and what Triton would find divisible by 16
    (torch's allocations are 256-byte aligned; n when it is a multiple of 16)."""
    n = math.prod(shape(plan["out_shape"]))
    signature, constexprs, divisible = {}, {}, []
    for t in plan["inputs"]:
        signature[str(t["ptr"])] = "*" + TRITON_TYPES[str(t["dtype"])]
        divisible.append(str(t["ptr"]))
        if t["index"] == "rows":
            constexprs[str(t["len"])] = math.prod(shape(t["shape"]))
    signature["out_ptr"] = "*" + TRITON_TYPES[str(plan["out_dtype"])]
    signature["n"] = "i64" if n > 2**31 - 1 else "i32"
    divisible.append("out_ptr")
    if n % 16 == 0:
        divisible.append("n")
    block = int(str(plan["block"]))
    constexprs.update(BLOCK=block, EVEN=n % block == 0)
    # sm_80 has no fp8: Triton refuses e4m3 there, as the GPU would
    targets = [t for t in TARGETS if t >= 89 or "fp8e4nv" not in " ".join(signature.values())]
    return {"program": program, "kernel": f"{plan['id']}_kernel", "signature": signature, "constexprs": constexprs,
            "divisible": divisible, "num_warps": int(str(plan["num_warps"])), "targets": targets,
            "plan": {"statement": plan["raw"]["statement"] if "raw" in plan else str(plan["id"]),
                     "indexes": [t["index"] for t in plan["inputs"]],
                     "in_bytes": [ITEM_BYTES[TRITON_TYPES[str(t["dtype"])]] for t in plan["inputs"]],
                     "rows_bytes": [math.prod(shape(t["shape"])) * ITEM_BYTES[TRITON_TYPES[str(t["dtype"])]]
                                    for t in plan["inputs"]],
                     "per_thread": block // (32 * int(str(plan["num_warps"]))),
                     "out_bytes": ITEM_BYTES[TRITON_TYPES[str(plan["out_dtype"])]]}}


def rowwise_jobs(program: str, plan: dict) -> list[dict]:
    """Each kernel of a row-wise plan as the harness launches it on the full-size rows: x and the statistics in
    x's dtype, LENGTH and BLOCK (the whole row for a fused kernel, steps of at most CHUNK for a pass)."""
    from gpuspec.kinds.rowwise.harness import CHUNK

    length = shape(plan["size"].split(" else ")[-1])[-1]
    element = TRITON_TYPES[str(plan["dtype"])]
    jobs = []
    for kernel in plan["kernels"]:
        pointers = ["x_ptr", *(f"{r}_ptr" for r in kernel["reads"]), f"{kernel['writes']}_ptr"]
        whole = 1 << (length - 1).bit_length()
        block = whole if kernel["held"] else min(whole, CHUNK)
        jobs.append({"program": program, "kernel": str(kernel["name"]),
                     "signature": dict.fromkeys(pointers, "*" + element), "constexprs": {"LENGTH": length,
                                                                                      "BLOCK": block},
                     "divisible": pointers, "num_warps": min(16, max(4, block // 2048)) if kernel["held"] else 4,
                     "targets": list(TARGETS),
                     "plan": {"statement": plan["raw"]["statement"], "rowwise": str(kernel["label"]),
                              "row_bytes": length * ITEM_BYTES[element]}})
    return jobs


def elementwise_plans(plans: list[dict]) -> list[dict]:
    found = []
    for plan in plans:
        if str(plan["kind"]) == "elementwise":
            found.append(plan)
        elif str(plan["kind"]) == "stream":
            found.append(dict(plan["kernel"], raw=plan["raw"]))
    return found


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    folder = tmp_path_factory.mktemp("programs")
    jobs = []
    specs = [(spec.stem, load_spec(spec).program) for spec in sorted((ROOT / "specs").glob("*.gpu"))]
    specs.append(("extra", compile_text(SpecText("extra.gpu", EXTRA))))
    for name, program in specs:
        plans, refused = harness.plans(program)
        path = folder / f"{name}.py"
        path.write_text(harness.render(f"{name}.gpu", plans, refused), encoding="utf-8")
        jobs += [elementwise_job(str(path), plan) for plan in elementwise_plans(plans)]
        for plan in plans:
            if str(plan["kind"]) == "rowwise":
                jobs += rowwise_jobs(str(path), plan)
    calibration, probe = folder / "calibrate.py", folder / "probe.py"
    calibration.write_text(measure.calibration_source(1000), encoding="utf-8")
    probe.write_text(measure.probe_source(), encoding="utf-8")
    pointers = lambda *names, kind: {n: kind for n in names}  # noqa: E731
    jobs += [
        {"program": str(calibration), "kernel": "matmul_kernel", "signature": pointers("a_ptr", "b_ptr", "c_ptr",
                                                                                        kind="*bf16"),
         "constexprs": {"N": 8192, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "UPCAST": False},
         "divisible": ["a_ptr", "b_ptr", "c_ptr"], "num_warps": 4, "targets": list(TARGETS), "plan": {"name": "matmul"}},
        {"program": str(calibration), "kernel": "chase_kernel",
         "signature": {**pointers("next_ptr", "out_ptr", kind="*i64"), "start": "i32"},
         "constexprs": {"STEPS": 131_071}, "divisible": ["next_ptr", "out_ptr"], "num_warps": 1,
         "targets": list(TARGETS), "plan": {"name": "chase"}},
        {"program": str(calibration), "kernel": "l2_read_kernel",
         "signature": {**pointers("x_ptr", "out_ptr", kind="*fp32"), "programs": "i32"},
         "constexprs": {"CHUNK": 4096, "PASSES": 256, "BLOCK": 1024}, "divisible": ["x_ptr", "out_ptr"],
         "num_warps": 4, "targets": list(TARGETS), "plan": {"name": "l2 read"}},
        {"program": str(calibration), "kernel": "exp_kernel", "signature": pointers("x_ptr", "out_ptr", kind="*fp32"),
         "constexprs": {"ROUNDS": 256, "BLOCK": 1024}, "divisible": ["x_ptr", "out_ptr"], "num_warps": 4,
         "targets": list(TARGETS), "plan": {"name": "exp"}},
        {"program": str(calibration), "kernel": "hold_kernel", "signature": {"flag_ptr": "*i32", "spins": "i32"},
         "constexprs": {}, "divisible": ["flag_ptr"], "num_warps": 1, "targets": list(TARGETS),
         "plan": {"name": "hold"}},
        {"program": str(probe), "kernel": "vector_kernel", "signature": {"x_ptr": "*bf16", "out_ptr": "*bf16",
                                                                          "n": "i32"},
         "constexprs": {"BLOCK": 2048}, "divisible": ["x_ptr", "out_ptr", "n"], "num_warps": 4,
         "targets": list(TARGETS), "plan": {"name": "probe vectorised", "per_thread": 16}},
        {"program": str(probe), "kernel": "one_per_thread_kernel",
         "signature": {"x_ptr": "*bf16", "len_x": "i32", "out_ptr": "*bf16", "n": "i32"},
         "constexprs": {"BLOCK": 256}, "divisible": ["x_ptr", "len_x", "out_ptr", "n"], "num_warps": 8,
         "targets": list(TARGETS), "plan": {"name": "probe one per thread", "per_thread": 1}},
    ]
    done = subprocess.run([PYTHON, str(ROOT / "tests" / "compile_for_target.py")],
                          input=json.dumps([{k: v for k, v in job.items() if k != "plan"} for job in jobs]),
                          capture_output=True, text=True, timeout=1800, cwd=folder)
    assert done.returncode == 0, done.stderr[-4000:]
    found = {}
    for result in json.loads(done.stdout):
        found.setdefault(result["job"], {})[result["target"]] = result
    return jobs, found


def by_name(compiled, name):
    jobs, found = compiled
    return next(found[i] for i, job in enumerate(jobs) if job["plan"].get("name") == name)


def test_every_generated_kernel_compiles_for_sm90_and_sm80(compiled):
    jobs, found = compiled
    statements = {job["plan"].get("statement") for job in jobs} - {None}
    assert {"rows = x + bias fused:", "wide = big * 2 fused:"} <= {s.split("\n")[0] for s in statements}
    assert sum(job["kernel"].endswith("_kernel") and "plan" in job for job in jobs) == len(jobs)
    for index, job in enumerate(jobs):
        assert set(found[index]) == set(job["targets"]), job["kernel"]
        assert 90 in job["targets"]


def test_elementwise_kernels_move_whole_16_byte_vectors_in_ptx_and_sass(compiled):
    jobs, found = compiled
    for index, job in enumerate(jobs):
        plan = job["plan"]
        if "indexes" not in plan:
            continue
        vector_inputs = sum(kind != "scalar" and plan["per_thread"] * size % 16 == 0 and row % 16 == 0
                            for kind, size, row in zip(plan["indexes"], plan["in_bytes"], plan["rows_bytes"]))
        scalars = plan["indexes"].count("scalar")
        for target, result in found[index].items():
            where = (plan["statement"].split("\n")[0], f"sm_{target}")
            ptx, sass = result["ptx"], result["sass"]
            wide_loads = ptx["ld.global.v4.b32"] + ptx["ld.global.v2.b64"]
            wide_stores = ptx["st.global.v4.b32"] + ptx["st.global.v2.b64"]
            # every vector input: per thread, its bytes in 16-byte loads
            assert wide_loads >= vector_inputs and wide_loads >= 1, (where, ptx)
            assert ptx["ld.global.scalar"] <= scalars, (where, ptx)
            assert wide_stores == max(1, plan["per_thread"] * plan["out_bytes"] // 16), (where, ptx)
            assert ptx["st.global.scalar"] == 0, (where, ptx)
            if sass is not None:
                assert sass["LDG.128"] == wide_loads and sass["STG.128"] == wide_stores, (where, sass)
                assert sass["LDG.narrow"] <= scalars and sass["STG.narrow"] == 0, (where, sass)
                assert sass["runtime_division"] == 0, (where, sass)


def test_the_vectorised_form_needs_a_fraction_of_the_instructions_per_element(compiled):
    old, new = by_name(compiled, "probe one per thread"), by_name(compiled, "probe vectorised")
    for target in TARGETS:
        assert old[target]["ptx"]["ld.global.v4.b32"] == 0 and old[target]["ptx"]["ld.global.scalar"] == 1
        assert new[target]["ptx"]["ld.global.v4.b32"] == 2 and new[target]["ptx"]["st.global.v4.b32"] == 2
        if old[target]["sass"] is None:
            continue
        before = old[target]["sass"]["instructions"] / 1  # one element per thread
        after = new[target]["sass"]["instructions"] / 16
        assert old[target]["sass"]["runtime_division"] > 0  # `offs % len` with len known only at run time
        assert after * 4 < before, (target, before, after)
    jobs, found = compiled
    lesson = next(i for i, job in enumerate(jobs) if job["plan"].get("statement", "").startswith("z_fused"))
    for target in TARGETS:  # the lesson's x * 2 + 1 as generated: as lean as the probe's hand-written one
        sass = found[lesson][target]["sass"]
        if sass is not None:
            assert sass["instructions"] <= new[target]["sass"]["instructions"] + 4, (target, sass)


def test_the_stream_hold_reads_its_flag_past_every_cache(compiled):
    for target, result in by_name(compiled, "hold").items():
        assert result["ptx"]["ld.volatile"] >= 1, (target, result["ptx"])


def test_the_calibration_kernels_compile_with_compile_time_loop_bounds(compiled):
    for name in ("matmul", "chase", "l2 read", "exp"):
        assert set(by_name(compiled, name)) == set(TARGETS)


def test_the_l2_ladder_reads_past_l1_and_the_exp_kernel_runs_on_the_special_function_units(compiled):
    for target, result in by_name(compiled, "l2 read").items():
        ptx = result["ptx"]  # every load of the working set is .cg (L2 only), in whole 16-byte vectors
        assert ptx["ld.global.cg"] >= 1 and ptx["ld.global.cg"] == ptx["ld.global.v4.b32"], (target, ptx)
    for target, result in by_name(compiled, "exp").items():
        assert result["ptx"]["ex2.approx"] >= 1, (target, result["ptx"])


def test_rowwise_kernels_compile_and_read_their_rows_in_16_byte_vectors(compiled):
    jobs, found = compiled
    rowwise = [(i, job["plan"]) for i, job in enumerate(jobs) if "rowwise" in job["plan"]]
    # norms.gpu: sum, amax, mean, softmax (3 passes, and fused), layernorm (3, 1), rmsnorm (2, 1), a small softmax
    assert len(rowwise) >= 18
    for index, plan in rowwise:
        for target, result in found[index].items():
            ptx = result["ptx"]
            if plan["row_bytes"] % 16 == 0:  # every row starts on a 16-byte boundary: whole vectors
                assert ptx["ld.global.v4.b32"] + ptx["ld.global.v2.b64"] >= 1, (plan, target, ptx)
