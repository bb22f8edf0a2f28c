"""The measuring pipeline end to end: measure with the fake timer, save and load results, combine machines,
calibrate, and the reasons a measured or calibrated claim is skipped. Harness runs are shared per module."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpuspec import harness, measure, profiles, published, results
from gpuspec.api import Sources, load_spec, run_check
from gpuspec.cli import main
from gpuspec.measure import Options
from gpuspec.results import Measurement

H100_GPU = "NVIDIA H100 80GB HBM3"
H200_GPU = "NVIDIA H200"
FAKE_SECONDS = 1e-5
BYTES_MOVED = 2 * 4096 * 4096 * 2  # x*2 on 4096² bf16: read and write 2 bytes per element
# What calibration measures without a GPU clock to turn latencies into cycles, and with the fake timer's times (which
# put the attention fit out of a profile's range): every fact one GPU can measure but those.
MEASURED = {"hbm_bandwidth", "launch_cost", "graph_launch_cost", "graph_node_cost", "kernel_floor", "kernel_gap",
            "stream_launch_gap", "lone_kernel_latency", "tensor_bf16", "tensor_fp16", "tensor_tf32", "l2_bandwidth",
            "l2_usable", "exp_rate", "gemm_fixed_cost"}

SPEC = """\
device H100-SXM
x*2 on 4096² bf16 is ≈ 10 µs
x*2 on 4096² bf16 is ≈ 20 µs
x*2 on 4096² bf16 is 62 waves
device.hbm_bandwidth = 3.35 TB/s
device H200
x*2 on 4096² bf16 is ≈ 10 µs
device H100-SXM
set sources = model, measured
x*2 on 4096² bf16 is 63 waves started
"""
TEN, TWENTY, WAVES, FACT, H200_TEN, WAVES_STARTED = 2, 3, 4, 5, 7, 10  # the claims' lines


def fake(gpu: str) -> Options:
    return Options(device="cpu", small=True, fake_timer=True, fake_gpu=gpu)


def table(report) -> dict[tuple[int, str], object]:
    """Verdicts by (line, source); a line holds one claim in these specs."""
    found = {}
    for v in report.verdicts:
        assert (v.claim.span.line, v.source) not in found
        found[(v.claim.span.line, v.source)] = v
    return found


def sources_of(report, line: int) -> list[str]:
    return [v.source for v in report.verdicts if v.claim.span.line == line]


def fields(m: Measurement) -> tuple:
    return (m.key, m.spec, m.line, m.statement, m.status, m.reason, m.metrics, m.provenance)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("pipeline")


@pytest.fixture(scope="module")
def spec(folder):
    path = folder / "claims.gpu"
    path.write_text(SPEC, encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def h100(folder, spec):
    """The spec measured with the fake timer on a fake H100, its results saved."""
    saved = str(folder / "h100.json")
    return run_check([spec], Sources(measure=fake(H100_GPU), save_results=saved)), saved


@pytest.fixture(scope="module")
def h200(folder, spec):
    saved = str(folder / "h200.json")
    return run_check([spec], Sources(measure=fake(H200_GPU), save_results=saved)), saved


# --- measured verdicts --------------------------------------------------------------------------------------

def test_measured_fake_time_passes_the_claim_the_model_fails_and_the_other_way_round(h100):
    report, _ = h100
    verdicts = table(report)
    assert not report.diagnostics
    assert (verdicts[(TEN, "model")].status, verdicts[(TEN, "measured")].status) == ("fail", "pass")
    assert (verdicts[(TWENTY, "model")].status, verdicts[(TWENTY, "measured")].status) == ("pass", "fail")
    assert verdicts[(TEN, "model")].actual.number == pytest.approx(20.03e-6, rel=1e-3)


def test_measured_values_are_the_fake_times(h100):
    report, _ = h100
    verdicts = table(report)
    for line in (TEN, TWENTY):
        assert verdicts[(line, "measured")].actual.number == FAKE_SECONDS
        assert "median of 3 samples" in verdicts[(line, "measured")].actual.note
        assert H100_GPU in verdicts[(line, "measured")].actual.note


def test_claims_on_metrics_no_harness_measures_get_only_the_model(h100):
    report, _ = h100
    assert sources_of(report, WAVES) == ["model"]
    assert sources_of(report, FACT) == ["model"]  # a device fact is calibrated, never measured


def test_a_file_that_names_the_measured_source_gets_a_skip_naming_the_metric(h100):
    report, _ = h100
    verdicts = table(report)
    assert sources_of(report, WAVES_STARTED) == ["model", "measured"]
    skipped = verdicts[(WAVES_STARTED, "measured")]
    assert skipped.status == "skip" and skipped.actual is None
    assert "`waves_started` is not measured" in skipped.reason and "(measured: time)" in skipped.reason


def test_a_measurement_from_another_gpu_is_not_compared_and_shows_the_models_prediction_there(h200):
    report, _ = h200
    verdicts = table(report)
    for line in (TEN, TWENTY):
        skipped = verdicts[(line, "measured")]
        assert skipped.status == "skip" and skipped.actual is None
        assert skipped.reason.startswith(f"measured on {H200_GPU}, not H100-SXM")
        # the same workload on an H200, as the model predicts it (the H200 claim's model verdict)
        on_h200 = verdicts[(H200_TEN, "model")].actual.format()
        assert on_h200 == "14.0 µs"
        assert f"10.0 µs measured, where the model predicts {on_h200} on H200" in skipped.reason
    assert verdicts[(H200_TEN, "measured")].status == "pass"  # the H200 claim is compared with the H200 run


# --- results files -----------------------------------------------------------------------------------------

def test_saved_results_hold_every_workload_with_its_provenance(h100, spec):
    _, saved = h100
    found = results.read_results(saved)
    program = load_spec(spec).program
    plans, _ = harness.plans(program)
    assert [m.key for m in found] == [p["raw"]["key"] for p in plans]
    assert all(m.status == "ok" and m.spec == spec for m in found)
    assert all(m.metrics["time"]["median"] == FAKE_SECONDS for m in found)
    assert {m.gpu for m in found} == {H100_GPU}
    assert found[0].provenance["fake_timer"] is True and found[0].provenance["interpreter"] is True


def test_loading_saved_results_gives_back_every_field(h100, tmp_path):
    _, saved = h100
    first = results.read_results(saved)
    results.save(tmp_path / "again.json", first)
    again = results.read_results(tmp_path / "again.json")
    assert [fields(m) for m in again] == [fields(m) for m in first]


def test_save_then_load_keeps_wrong_and_failed_measurements_from_several_machines(tmp_path):
    one = {"gpu": H100_GPU, "date": "2025-01-01T00:00:00+00:00", "host": "a"}
    two = {"gpu": H200_GPU, "date": "2025-01-02T00:00:00+00:00", "host": "b"}
    summary = {"median": 2e-5, "p10": 1e-5, "p90": 3e-5, "samples": 9}
    written = [
        Measurement("k1", "a.gpu", 3, "y = x * 2:  # “quoted” µs", "ok", None, {"time": summary}, one),
        Measurement("k2", "a.gpu", 5, "z = exp(x)", "wrong", "result differs from the float32 reference", {}, one),
        Measurement("k3", "a.gpu", 7, "w = x / 0", "error", "the harness crashed: boom", {}, one),
        Measurement("k1", "a.gpu", 3, "y = x * 2:  # “quoted” µs", "ok", None, {"time": summary}, two),
        Measurement("k4", "b.gpu", 1, "v * 2", "ok", None, {"time": summary, "busy_time": summary}, two),
    ]
    results.save(tmp_path / "r.json", written)
    assert [fields(m) for m in results.read_results(tmp_path / "r.json")] == [fields(m) for m in written]
    assert [len(ms) for ms in results.by_key(written).values()] == [2, 1, 1, 1]


def test_checking_against_saved_results_alone_gives_the_same_measured_verdicts(h100, spec, monkeypatch):
    report, saved = h100

    def no_measuring(*args, **kwargs):
        raise AssertionError("--results alone must not measure")

    monkeypatch.setattr(measure, "run", no_measuring)
    monkeypatch.setattr(measure, "availability", no_measuring)
    again = run_check([spec], Sources(results=(saved,)))
    assert not again.diagnostics

    def measured(r):
        return [(v.claim.span.line, v.status, v.actual.number if v.actual else None, v.reason)
                for v in r.verdicts if v.source == "measured"]

    assert measured(again) == measured(report)
    assert len(measured(again)) == 4


@pytest.mark.parametrize("order", [("h100", "h200"), ("h200", "h100")])
def test_results_from_two_machines_combine_each_claim_using_its_own_gpu(h100, h200, spec, order):
    files = {"h100": h100[1], "h200": h200[1]}
    verdicts = table(run_check([spec], Sources(results=tuple(files[name] for name in order))))
    assert verdicts[(TEN, "measured")].status == "pass", verdicts[(TEN, "measured")].reason
    assert verdicts[(TWENTY, "measured")].status == "fail", verdicts[(TWENTY, "measured")].reason
    assert verdicts[(H200_TEN, "measured")].status == "pass", verdicts[(H200_TEN, "measured")].reason
    assert H200_GPU in verdicts[(H200_TEN, "measured")].actual.note


def test_results_option_given_before_the_spec_path_still_checks_the_spec(h100, spec, capsys):
    _, saved = h100
    try:
        code = main(["check", "--format", "json", "--results", saved, spec])
    except SystemExit as error:  # argparse gave every argument after --results to --results
        code = error.code
    out = capsys.readouterr()
    assert code == 1, out.err
    assert any(r["source"] == "measured" for r in json.loads(out.out)["results"])


def test_saving_results_without_measuring_is_a_usage_error(spec, tmp_path, capsys):
    assert main(["check", spec, "--save-results", str(tmp_path / "r.json")]) == 2
    assert "--save-results saves what --measure measures" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


# --- without a GPU ------------------------------------------------------------------------------------------

@pytest.fixture
def no_cuda(monkeypatch, tmp_path):
    """A spec whose model claim holds, on a machine where CUDA sees no device."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    # measure caches what its probe found per Python and device: probe afresh under this environment
    monkeypatch.setattr(measure, "_PROBES", {}, raising=False)
    path = tmp_path / "gpu.gpu"
    path.write_text("device H100-SXM\nx*2 on 4096² bf16 is ≈ 20 µs\n", encoding="utf-8")
    return str(path)


def test_measuring_without_a_cuda_device_skips_measured_claims_with_the_reason(no_cuda):
    report = run_check([no_cuda], Sources(measure=Options(device="cuda")))
    verdicts = table(report)
    assert verdicts[(2, "model")].status == "pass"
    assert verdicts[(2, "measured")].status == "skip"
    assert "no CUDA device" in verdicts[(2, "measured")].reason
    # the model's claim holds, but a run asked to measure that measured nothing is no pass: exit 5, and why
    assert report.exit_code == 5
    assert report.nothing_checked().startswith("nothing measured: every measured claim was skipped (1 claim; the "
                                               f"first, {no_cuda}:2: no CUDA device")


def test_require_measure_turns_a_claim_that_cannot_be_measured_into_a_failure(no_cuda, capsys):
    assert main(["check", no_cuda, "--measure", "--require-measure"]) == 1
    out = capsys.readouterr().out
    assert "no CUDA device" in out and "1 passed, 1 failed" in out


# --- calibration -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def profile(folder):
    path = str(folder / "profile.json")
    code = main(["calibrate", "--out", path, "--harness-device", "cpu", "--small", "--fake-timer",
                 "--fake-gpu", H100_GPU])
    assert code == 0
    return path


def test_calibrate_writes_a_profile_of_every_fact_one_gpu_measures(profile):
    loaded = profiles.read_profile(profile)
    assert set(loaded.facts) == MEASURED and MEASURED <= set(profiles.FACTS)
    assert loaded.gpu == H100_GPU and loaded.device_name() == "H100-SXM"
    # with the fake timer every sample is 10 µs: a 1 MiB copy reads and writes 2 MiB in that time
    assert loaded.facts["hbm_bandwidth"] == pytest.approx(2 * (1 << 20) / FAKE_SECONDS)
    assert loaded.facts["launch_cost"] == pytest.approx(FAKE_SECONDS / 10)  # 10 launches per small sample
    assert loaded.facts["tensor_bf16"] == pytest.approx(2 * 64 ** 3 / FAKE_SECONDS)
    assert loaded.facts["kernel_gap"] == loaded.facts["kernel_floor"] == loaded.facts["launch_cost"]
    assert loaded.facts["graph_node_cost"] == loaded.facts["stream_launch_gap"] == 1e-9  # nothing beyond the gap
    assert all(value > 0 for value in loaded.facts.values())
    # every fact a profile may hold is measured, or not measured with the reason
    assert set(loaded.facts) | set(loaded.unmeasured) == set(profiles.FACTS)
    assert not set(loaded.facts) & set(loaded.unmeasured)
    assert "several GPUs" in loaded.unmeasured["nvls_bandwidth"]
    assert loaded.unmeasured["attention_share_flash2"] == loaded.unmeasured["attention_tile_overhead_flash2"]
    assert "a profile holds a finite number of a share" in loaded.unmeasured["attention_share_flash2"]
    for fact in loaded.facts:  # each with how it was derived
        assert loaded.derivations[fact]["how"] and loaded.derivations[fact]["value"]


def test_a_profile_adds_calibrated_verdicts_that_use_its_ceilings(profile, spec):
    own = profiles.read_profile(profile)
    bandwidth, lone = own.facts["hbm_bandwidth"], own.facts["lone_kernel_latency"]
    report = run_check([spec], Sources(profile=profile))
    verdicts = table(report)
    time = verdicts[(TEN, "calibrated")].actual
    # a call timed alone: the lone kernel's latency, then its bytes at the measured bandwidth
    assert time.number == pytest.approx(lone + BYTES_MOVED / bandwidth)
    assert verdicts[(TEN, "calibrated")].status == "fail"
    assert verdicts[(TEN, "calibrated")].profile == f"your profile {profile}"  # every fact it used is its own
    fact = verdicts[(FACT, "calibrated")]
    assert fact.actual.number == pytest.approx(bandwidth) and fact.status == "fail"
    assert sources_of(report, WAVES) == ["model"]  # waves depend on no ceiling a profile measures


def test_a_profile_of_another_gpu_skips_with_the_reason(profile, spec, tmp_path):
    report = run_check([spec], Sources(profile=profile))
    skipped = table(report)[(H200_TEN, "calibrated")]
    assert skipped.status == "skip" and skipped.reason == f"the profile was measured on {H100_GPU}, not H200"
    other = tmp_path / "h200-profile.json"
    profiles.save(other, {"provenance": {"gpu": H200_GPU}, "facts": {"hbm_bandwidth": 4e12}})
    verdicts = table(run_check([spec], Sources(profile=str(other))))
    assert verdicts[(TEN, "calibrated")].reason == f"the profile was measured on {H200_GPU}, not H100-SXM"
    # the profile's bandwidth; the lone kernel's latency, which it lacks, from H200's published profile
    lone = published.build("H200").facts["lone_kernel_latency"]
    calibrated = verdicts[(H200_TEN, "calibrated")]
    assert calibrated.actual.number == pytest.approx(lone + BYTES_MOVED / 4e12)
    assert calibrated.profile == f"your profile {other}; lone_kernel_latency from the published profile of H200"


@pytest.mark.parametrize("option, text", [
    ("--profile", "not json"),
    ("--profile", json.dumps({"version": 1, "facts": {"hbm_bandwidth": -1}})),
    ("--profile", json.dumps({"version": 1, "facts": {"sms": 132}})),
    ("--results", "not json"),
    ("--results", json.dumps({"version": 1, "runs": [{"spec": "x", "provenance": {}, "measurements": [{}]}]})),
    ("--results", json.dumps({"version": 7, "runs": []})),
])
def test_a_malformed_profile_or_results_file_is_invalid_input_naming_the_file(spec, tmp_path, capsys, option, text):
    bad = tmp_path / "bad file.json"
    bad.write_text(text, encoding="utf-8")
    assert main(["check", spec, option, str(bad)]) == 2
    out = capsys.readouterr().out
    assert f"{bad}:1:1: error[bad-{option[2:]}]" in out


def test_a_missing_profile_is_invalid_input_naming_the_file(spec, tmp_path, capsys):
    assert main(["check", spec, "--profile", str(tmp_path / "nowhere.json")]) == 2
    assert f"cannot read {tmp_path / 'nowhere.json'}" in capsys.readouterr().out


# --- the check path stays light ----------------------------------------------------------------------------

def test_checking_with_results_and_a_profile_imports_neither_torch_nor_triton(h100, profile, spec):
    _, saved = h100
    argv = ["check", "--format", "json", spec, "--profile", profile, "--results", saved]
    code = ("import contextlib, io, json, sys\n"
            "from gpuspec.cli import main\n"
            "out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n"
            f"    code = main({argv!r})\n"
            "sources = sorted({r['source'] for r in json.loads(out.getvalue())['results']})\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'triton'))\n"
            "print(json.dumps([code, sources, heavy]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    code, sources, heavy = json.loads(done.stdout)
    assert code == 1 and sources == ["calibrated", "measured", "model"]
    assert heavy == []


# --- what is measured follows from the model's rules ---------------------------------------------------------

RULES_SPEC = """\
device H100-SXM
a = bf16[512, 512]
b = bf16[512, 512]
c = a @ b:
    flop_utilization ≈ 2.7%
x = bf16[4096]
y = x * 2
s = 50 launches of y:
    host_time ≈ 10 µs
    launch_time ≈ 10 µs
    idle_share < 50%
step = decode llama3-8b, batch 1, context 64, kernels_per_layer 10:
    tokens_per_s ≈ 100,000 tokens/s
    kernels_per_layer = 10
"""
FLOP_UTILIZATION, HOST_TIME, LAUNCH_TIME, IDLE_SHARE, TOKENS_PER_S, PER_LAYER = 5, 9, 10, 11, 13, 14


@pytest.fixture(scope="module")
def ruled(folder):
    path = folder / "rules.gpu"
    path.write_text(RULES_SPEC, encoding="utf-8")
    report = run_check([str(path)], Sources(measure=fake(H100_GPU)))
    assert not report.diagnostics, report.diagnostics
    program = load_spec(str(path)).program
    return table(report), {text.split(" ")[0]: w for _, text, w in program.workloads}


def test_a_matmuls_flop_utilization_is_measured_from_its_measured_time(ruled):
    from gpuspec import model

    verdicts, workloads = ruled
    measured = verdicts[(FLOP_UTILIZATION, "measured")]
    e = model.estimate(workloads["c"])
    expected = e["flops"].number / FAKE_SECONDS / e["peak_flop_rate"].number
    assert measured.status == "pass" and measured.actual.number == pytest.approx(expected)
    rate = measured.actual.inputs[0]  # achieved_flop_rate = flops / time, with the measured time
    assert rate.name == "achieved_flop_rate" and rate.inputs[1].name == "time"
    assert rate.inputs[1].number == FAKE_SECONDS and "median of 3 samples" in rate.inputs[1].note
    # the model's own verdict is there too, from the model's time
    assert verdicts[(FLOP_UTILIZATION, "model")].actual.number != pytest.approx(expected)


def test_a_streams_host_time_is_measured(ruled):
    verdicts, _ = ruled
    for line in (HOST_TIME, LAUNCH_TIME):
        measured = verdicts[(line, "measured")]
        assert measured.status == "pass" and measured.actual.number == FAKE_SECONDS, measured.reason
    assert verdicts[(HOST_TIME, "model")].actual.number != FAKE_SECONDS


def test_a_metric_that_needs_a_leaf_the_run_did_not_measure_is_skipped_naming_what_was(ruled):
    verdicts, _ = ruled
    # the GPU's busy time comes from a CUDA graph: a run without CUDA measures the stream's time and host time only
    skipped = verdicts[(IDLE_SHARE, "measured")]
    assert skipped.status == "skip" and skipped.reason == "`idle_share` is not measured (measured: host_time, time)"


def test_a_decode_steps_rates_follow_from_its_measured_step_time(ruled):
    verdicts, _ = ruled
    measured = verdicts[(TOKENS_PER_S, "measured")]
    assert measured.status == "pass" and measured.actual.number == pytest.approx(1 / FAKE_SECONDS)
    assert (PER_LAYER, "measured") not in verdicts  # a count no harness measures gets the model alone


def test_which_metrics_a_measurement_supplies_follows_from_the_rules():
    from gpuspec import model
    from gpuspec.api import compile_text
    from gpuspec.text import SpecText

    program = compile_text(SpecText("m.gpu", RULES_SPEC))
    w = {text.split(" ")[0]: workload for _, text, workload in program.workloads}
    behind = model.leaves_behind
    assert behind(w["c"], "flop_utilization") == behind(w["c"], "achieved_bandwidth") == {"time"}
    assert behind(w["c"], "waves_started") == behind(w["c"], "bound") == frozenset()  # no measured time in them
    assert behind(w["s"], "idle_share") == {"time", "busy_time"}
    assert behind(w["s"], "launch_time") == {"host_time"}
    assert behind(w["s"], "bound") == {"host_time", "busy_time"}
    assert behind(w["s"], "utilization") == frozenset()  # sampled windows: the queue's, not measured
    assert behind(w["step"], "tokens_per_s") == {"step_time"}
    assert behind(w["step"], "overhead_share") == {"step_time", "gpu_time"}
    assert behind(w["step"], "time") == {"step_time"}  # stops at the leaf: its own rule's inputs do not count
    assert behind(w["step"], "kv_bytes") == frozenset()


def test_the_decode_harness_builds_from_the_models_list_of_a_layers_kernels(monkeypatch):
    from gpuspec import model
    from gpuspec.api import compile_text
    from gpuspec.kinds.decode import rules
    from gpuspec.text import SpecText

    def built(per_layer: int):
        program = compile_text(SpecText("d.gpu", f"device H100-SXM\ndecode llama3-8b, kernels_per_layer {per_layer}"
                                                 " is ≈ 10 ms\n"))
        plan = harness.plans(program)[0][0]
        step = program.workloads[0][2]
        return plan, step

    for per_layer in (2, 7, 8, 9, 15, 40):
        plan, step = built(per_layer)
        layer = rules.layer_kernels(per_layer)
        assert (int(plan["weight_kernels"]), 1, int(plan["small_kernels"])) == \
            (layer.weights, layer.attention, layer.small)
        assert layer.weights + layer.attention + layer.small == per_layer
    # one kernel a layer reads the weights and the cache in the model; the harness has no such kernel
    program = compile_text(SpecText("d.gpu", "device H100-SXM\ndecode llama3-8b, kernels_per_layer 1 is ≈ 10 ms\n"))
    assert harness.plans(program)[0] == []
    # one list: a model with four weight matmuls a layer changes the model's queue and the harness alike
    monkeypatch.setattr(rules, "WEIGHT_MATMULS", ("qkv", "o", "gate_up", "down"))
    plan, step = built(8)
    assert int(plan["weight_kernels"]) == 4 and int(plan["small_kernels"]) == 3
    pattern = rules._kernel_pattern(model.measured_estimate(step, {}))
    assert [count for _, count in pattern] == [4, 1, 3]


def test_a_figure_timed_back_to_back_is_measured_back_to_back(tmp_path):
    # `set timing = back_to_back` gives the workload a key of its own and a harness that times many calls between
    # two events without flushing L2, as the figure was timed; the default is one call after a flush
    path = tmp_path / "b2b.gpu"
    path.write_text("device H100-SXM\nx*2 on 4096² bf16 is ≈ 20 µs\nset timing = back_to_back\n"
                    "x*2 on 4096² bf16 is ≈ 20 µs\nsoftmax(x) on 4096² bf16 fused is ≈ 20 µs\n", encoding="utf-8")
    plans, refused = harness.plans(load_spec(str(path)).program)
    assert not refused and [p["raw"]["line"] for p in plans] == [2, 4, 5]
    assert len({p["raw"]["key"] for p in plans}) == 3  # the same x*2, timed two ways: two measurements
    source = harness.render(str(path), plans, refused)
    measured = source.split("\ndef measure_")[1:]
    assert [("cold=False, repeat=100)" in body) for body in measured] == [False, True, True]
    saved = str(tmp_path / "r.json")  # and the program runs: each measured as asked, under the interpreter
    run_check([str(path)], Sources(measure=fake(H100_GPU), save_results=saved))
    assert [m.status for m in results.read_results(saved)] == ["ok"] * 3
