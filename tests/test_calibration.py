"""What `gpuspec calibrate` makes of its measurements, and what a user's profile means beside the published one.

- The calibration program's own arithmetic (launch facts, the L2 ladder's plateau and usable size), on figures laid
  out like RRZE's and nvbench's published ones, by loading the program as a module with the fake timer.
- gpuspec's fits (gpuspec.calibration): sweeps made by the model's own rules with a known GEMM fixed cost, a known
  attention share and tile overhead, fitted back; the attention fit set against the published profile's on the same
  published figures; the fits' refusals in words.
- The merge (gpuspec.sources.merged): a user's facts replace the published ones, the facts it lacks come from the
  published profile of the same device, facts measured together are never mixed between profiles, and each fact
  and each calibrated value says which profile it came from.
"""
from __future__ import annotations

import copy
import json
import os
import runpy
import sys

import pytest

from gpuspec import calibration, devices, measure, model, profiles, published, schema
from gpuspec.api import Sources, compile_text, run_check
from gpuspec.kinds.attention import rules as attention_rules
from gpuspec.profiles import Profile, ProfileError
from gpuspec.sources import TOGETHER, Calibrated, facts_used, merged
from gpuspec.text import SpecText

H100_GPU = "NVIDIA H100 80GB HBM3"
H100 = devices.catalog()["H100-SXM"]
MIB = 1 << 20


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """The calibration program loaded as a module (its main does not run), on the CPU with the fake timer."""
    path = tmp_path_factory.mktemp("calibration") / "calibrate.py"
    path.write_text(measure.calibration_source(1000), encoding="utf-8")
    saved_argv, saved_env = sys.argv, dict(os.environ)
    sys.argv = [str(path), "--device", "cpu", "--fake-timer"]
    try:
        yield runpy.run_path(str(path), run_name="calibration_program")
    finally:
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)


# --- the program's arithmetic ------------------------------------------------------------------------------------

def test_the_launch_facts_read_graphs_and_streams_as_the_published_profiles_do(program):
    # RRZE's H200: 1.285 µs per node of a graph of small kernels, 1.182 µs more per kernel from a stream
    replay = 3e-6  # what a replay costs whatever its size: the difference of two graphs cancels it
    medians = {"launch": 2.5e-6, "stream": 1.285e-6 + 1.182e-6, "graph_small": replay + 200 * 1.285e-6,
               "graph_large": replay + 400 * 1.285e-6, "graph_launch": 2.1e-6, "lone": 4.3e-6}
    facts = program["launch_facts"](medians, True)
    value = {name: found[0] for name, found in facts.items()}
    assert value["kernel_gap"] == pytest.approx(1.285e-6) and value["kernel_floor"] == value["kernel_gap"]
    assert value["stream_launch_gap"] == pytest.approx(1.182e-6)
    assert value["graph_node_cost"] == 1e-9  # the gap was measured inside a graph: a node adds nothing beyond it
    assert (value["launch_cost"], value["graph_launch_cost"], value["lone_kernel_latency"]) == (2.5e-6, 2.1e-6,
                                                                                                4.3e-6)
    assert set(facts) == {"launch_cost", "graph_launch_cost", "kernel_gap", "kernel_floor", "graph_node_cost",
                          "stream_launch_gap", "lone_kernel_latency"}
    assert "(a graph of 400 tiny kernels, 517 µs − one of 200, 260 µs) / 200" in facts["kernel_gap"][2]
    assert facts["stream_launch_gap"][1] == "1.182 µs"


def test_graphs_of_equal_time_give_an_upper_bound_and_a_stream_no_faster_than_a_graph_one_nanosecond(program):
    medians = {"launch": 2e-6, "stream": 1e-6, "graph_small": 400e-6, "graph_large": 400e-6, "graph_launch": 2e-6,
               "lone": 4e-6}
    facts = program["launch_facts"](medians, True)
    assert facts["kernel_gap"][0] == pytest.approx(1e-6) and "an upper bound" in facts["kernel_gap"][2]
    assert facts["stream_launch_gap"][0] == 1e-9 and "no difference resolved" in facts["stream_launch_gap"][2]


def test_the_l2_ladder_gives_its_plateau_and_the_largest_set_read_at_it(program):
    # shaped like RRZE's H200 ladder: faster near the SM's own partition, a plateau, then HBM past the L2's 50 MiB
    ladder = {4: 10.5, 12.5: 9.9, 25: 9.68, 30: 9.65, 35: 9.63, 40: 9.67, 45: 9.1, 50: 7.5, 75: 4.0}
    bandwidths = {int(size * MIB): rate * 1e12 for size, rate in ladder.items()}
    facts = program["l2_facts"](bandwidths, 50 * MIB, 4 * MIB, 256)
    assert facts["l2_bandwidth"][0] == pytest.approx(9.9e12)  # the median of 4, 12.5 and 25 MiB: they surely fit
    assert facts["l2_usable"][0] == 45 * MIB  # 9.1 is within 10% of 9.9; 7.5 is not
    assert "each read 256 times a call" in facts["l2_bandwidth"][2]
    dip = {**bandwidths, int(30 * MIB): 5e12}  # a set that falls off ends the usable run, whatever follows
    assert program["l2_facts"](dip, 50 * MIB, 4 * MIB, 256)["l2_usable"][0] == 25 * MIB
    assert isinstance(program["l2_facts"]({int(40 * MIB): 1e12}, 50 * MIB, 4 * MIB, 256)["l2_bandwidth"], str)


# --- gpuspec's fits ------------------------------------------------------------------------------------------------

RATES = {"hbm_bandwidth": 3.0e12, "tensor_bf16": 7.0e14, "kernel_floor": 1.3e-6, "exp_rate": 4.0e12}


def report(facts=None, sweeps=None, gpu=H100_GPU) -> dict:
    return {"version": 1, "provenance": {"gpu": gpu}, "facts": dict(RATES if facts is None else facts),
            "sweeps": sweeps or {}, "unmeasured": {}}


def gemm_point(n: int, seconds: float, k: int | None = None) -> dict:
    return {"m": n, "n": n, "k": k or n, "batch": 1, "dtype": "bf16", "seconds": seconds}


def test_the_gemm_fixed_cost_is_what_the_sweep_takes_beyond_the_model_s_time_and_the_profile_gives_it_back():
    roof = Profile(H100_GPU, {k: RATES[k] for k in ("hbm_bandwidth", "tensor_bf16", "kernel_floor")}, {})
    fixed, sizes = 4.0e-6, (256, 512, 1024, 1536, 2048, 8192)
    points = [gemm_point(n, calibration._matmul_time(roof.apply(H100), n, n, n, 1) + fixed + 0.1e-6 * i)
              for i, n in enumerate(sizes)]
    done = calibration.complete(report(sweeps={"gemm": points}))
    # the median of the five points under 50 µs of math (8192³ takes 1.6 ms and says nothing of a fixed cost)
    assert done["facts"]["gemm_fixed_cost"] == pytest.approx(fixed + 0.2e-6)
    how = done["derivations"]["gemm_fixed_cost"]["how"]
    assert "the median over 5 bf16 GEMMs" in how and "8192" not in how and "2048×2048×2048" in how
    # the calibrated model with these facts gives the sweep's own median point back
    applied = Profile(H100_GPU, done["facts"], {}).apply(H100)
    lead = compile_text(SpecText("m.gpu", "device H100-SXM\na = bf16[1024, 1024]\nb = bf16[1024, 1024]\n"
                                          "c = a @ b\n")).workloads[0][2]
    from gpuspec.sources import rebind

    assert model.estimate(rebind(lead, applied))["time"].number == pytest.approx(points[2]["seconds"], rel=1e-9)


def test_no_sweep_point_small_enough_leaves_the_fixed_cost_unmeasured_with_the_reason():
    done = calibration.complete(report(sweeps={"gemm": [gemm_point(8192, 2e-3)]}))
    assert "gemm_fixed_cost" not in done["facts"]
    assert "no point of the GEMM sweep (1 of them) has a roofline time under 50.00 µs" in \
        done["unmeasured"]["gemm_fixed_cost"]


ATTENTION = [(512, False), (1024, False), (4096, False), (1024, True), (4096, True)]


def attention_point(seq: int, causal: bool, seconds: float) -> dict:
    return {"implementation": "flash2", "batch": 16384 // seq, "heads": 16, "seq_q": seq, "seq_kv": seq,
            "head_dim": 128, "causal": causal, "dtype": "bf16", "seconds": seconds}


def modelled_attention(seq: int, causal: bool, facts: dict) -> float:
    """The model's time of PyTorch's flash attention (`fused`: flash2) on an H100 with these profile facts."""
    from gpuspec.sources import rebind

    shape = f"bf16[{16384 // seq}, 16, {seq}, 128]"
    text = (f"device H100-SXM\nq = {shape}\nk = {shape}\nv = {shape}\n"
            f"o = attention(q, k, v{', causal' if causal else ''}) fused\n")
    workload = compile_text(SpecText("a.gpu", text)).workloads[0][2]
    return model.estimate(rebind(workload, Profile(H100_GPU, facts, {}).apply(H100)))["time"].number


def test_the_attention_fit_gives_back_the_share_and_overhead_the_model_s_rule_was_run_with():
    known = {**RATES, "attention_share_flash2": 0.7, "attention_tile_overhead_flash2": 1.5}
    points = [attention_point(seq, causal, modelled_attention(seq, causal, known)) for seq, causal in ATTENTION]
    done = calibration.complete(report(sweeps={"attention": points}))
    assert done["facts"]["attention_share_flash2"] == pytest.approx(0.7, rel=1e-9)
    assert done["facts"]["attention_tile_overhead_flash2"] == pytest.approx(1.5, rel=1e-9)
    assert "share 0.700, overhead 1.50 key blocks" in done["derivations"]["attention_share_flash2"]["how"]
    # and the profile then predicts the times it was fitted to
    for (seq, causal), point in zip(ATTENTION, points):
        assert modelled_attention(seq, causal, done["facts"]) == pytest.approx(point["seconds"], rel=1e-9)


def test_the_attention_fit_is_the_published_profiles_fit_on_the_same_figures():
    """The published flash2 forward times on H100-SXM, fitted here with the published profile's own rates, give the
    published profile's share and overhead."""
    profile = published.build("H100-SXM")
    entries = [m for m in published.measurements() if m.fact == "attention_time"
               and m.get("implementation") == "flash2" and m.device == "H100-SXM"]
    assert len(entries) >= 10
    rows = []
    for dtype in ("fp16", "bf16"):  # each figure at its own dtype's rate, as the published fit takes it
        points = [{"batch": int(m.get("batch")), "heads": int(m.get("heads")), "seq_q": int(m.get("seq_q")),
                   "seq_kv": int(m.get("seq_kv")), "head_dim": int(m.get("head_dim")), "causal": bool(m.get("causal")),
                   "seconds": published._attention_seconds(m)} for m in entries if m.get("dtype") == dtype]
        rows += calibration.attention_rows(points, profile.facts[f"tensor_{dtype}"], profile.facts["exp_rate"],
                                           int(H100.fact("sms").value))
    share, overhead = calibration.line_fit(rows)
    assert share == pytest.approx(profile.facts["attention_share_flash2"], rel=1e-9)
    assert overhead == pytest.approx(profile.facts["attention_tile_overhead_flash2"], rel=1e-9)


@pytest.mark.parametrize("change, words", [
    (lambda r: r["facts"].pop("exp_rate"), "needs the profile's own exp_rate, which it did not measure"),
    (lambda r: r["provenance"].update(gpu="NVIDIA GH200 480GB"), "the catalog has no entry for this GPU"),
    (lambda r: r["sweeps"].update(attention=r["sweeps"]["attention"][:1]), "two or more key-block counts per tile"),
    (lambda r: [p.update(seconds=1e-9) for p in r["sweeps"]["attention"]], "a profile holds a finite number of a "
                                                                            "share of the tiled attention rate"),
], ids=["no-exp-rate", "unknown-gpu", "one-point", "absurd-share"])
def test_an_attention_fit_that_cannot_be_made_leaves_both_facts_unmeasured_with_the_reason(change, words):
    points = [attention_point(seq, causal, 1e-3 * seq / 512) for seq, causal in ATTENTION]
    hostile = report(sweeps={"attention": points})
    change(hostile)
    done = calibration.complete(hostile)
    for fact in ("attention_share_flash2", "attention_tile_overhead_flash2"):
        assert fact not in done["facts"] and words in done["unmeasured"][fact], done["unmeasured"][fact]
    assert done["unmeasured"]["attention_share_flash2"] == done["unmeasured"]["attention_tile_overhead_flash2"]


@pytest.mark.parametrize("key, value, words", [
    ("sweeps", {"gemm": [gemm_point(256, float("nan"))]}, "`sweeps.gemm[0].seconds` is NaN"),
    ("sweeps", {"attention": [{"seq_q": 512}]}, "`sweeps.attention[0].implementation` is missing"),
    ("sweeps", {"gemm": "fast"}, '`sweeps.gemm` is "fast"; it must be a list of GEMM sweep points'),
    ("facts", {"tensor_bf16": float("inf")}, "`facts.tensor_bf16` is Infinity"),
    ("unmeasured", {"tensor_fp8": 3}, "`unmeasured.tensor_fp8` is 3"),
    ("provenance", "H100", '`provenance` is "H100"'),
])
def test_a_report_the_fits_cannot_read_is_refused_naming_the_key(key, value, words):
    hostile = report(sweeps={"gemm": [gemm_point(256, 1e-5)]})
    hostile[key] = value
    with pytest.raises(ProfileError) as refused:
        calibration.complete(hostile)
    assert words in str(refused.value) and str(refused.value).startswith("the calibration measured what a profile "
                                                                         "cannot hold: "), str(refused.value)


def test_a_report_that_is_not_an_object_is_refused():
    with pytest.raises(ProfileError, match="the calibration report is a list, not an object"):
        calibration.complete([])


# --- a user's profile beside the published one ------------------------------------------------------------------

def own(facts: dict, path: str = "mine.json", gpu: str = H100_GPU) -> Profile:
    return Profile(gpu, facts, {"gpu": gpu}, path, {name: {"how": "timed here"} for name in facts},
                   name=f"your profile {path}")


def test_a_user_s_facts_replace_the_published_ones_and_the_rest_come_from_the_published_profile():
    public = published.build("H100-SXM")
    mine = own({"hbm_bandwidth": 2.9e12, "tensor_bf16": 6.5e14})
    both = merged(mine, public)
    assert both.facts["hbm_bandwidth"] == 2.9e12 and both.facts["tensor_bf16"] == 6.5e14
    assert set(both.facts) == set(public.facts) | set(mine.facts)  # no published fact is lost
    for name in public.facts:
        if name not in mine.facts:
            assert both.facts[name] == public.facts[name] and both.how(name) == public.how(name)
            assert both.origin(name) == "published profile of H100-SXM"
    assert both.origin("hbm_bandwidth") == "your profile mine.json" and both.how("hbm_bandwidth") == "timed here"
    # each fact of the device cites its profile, as a catalog fact cites its source, with how it was derived there
    applied = both.apply(H100)
    gap = applied.fact("kernel_gap")
    assert gap.reference == "published profile of H100-SXM" and gap.note == public.how("kernel_gap")
    assert (applied.fact("hbm_bandwidth").reference, applied.fact("hbm_bandwidth").note) == (
        "your profile mine.json", "timed here")


@pytest.mark.parametrize("group", TOGETHER, ids=lambda g: g[0])
def test_facts_measured_together_never_mix_a_user_s_with_the_published_ones(group):
    public = published.build("H200")
    for name in group:
        if name not in public.facts:
            continue
        both = merged(own({name: public.facts[name] * 1.1}, gpu="NVIDIA H200"), public)
        assert [other for other in group if other in both.facts] == [name], (name, group)


def test_an_old_style_profile_of_a_floor_and_a_node_cost_keeps_the_ideal_kernel_rules():
    """A profile that gives kernel_floor and graph_node_cost (what a kernel costs at least, and a graph node) takes
    no kernel_gap from the published profile: its floor is what the elementwise rules use."""
    mine = own({"kernel_floor": 3e-6, "graph_node_cost": 1.3e-6, "hbm_bandwidth": 3e12})
    calibrated = Calibrated(mine)
    assert "kernel_gap" not in calibrated.profile.facts and "stream_launch_gap" not in calibrated.profile.facts
    workload = compile_text(SpecText("e.gpu", "device H100-SXM\nx = bf16[1024]\ny = x * 2\n")).workloads[0][2]
    assert calibrated.estimate(workload)["time"].number == pytest.approx(3e-6)  # the floor, not a gap + work


def test_a_profile_of_a_gpu_the_catalog_lacks_is_its_own_facts_alone():
    mine = own({"hbm_bandwidth": 3e12}, gpu="NVIDIA GH200 480GB")
    calibrated = Calibrated(mine)
    assert calibrated.profile.facts == {"hbm_bandwidth": 3e12} and calibrated.published is None


def test_a_calibrated_value_names_the_profiles_of_the_facts_it_used(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"version": 1, "gpu": H100_GPU, "facts": {"hbm_bandwidth": 3e12, "sms": 132}}),
                    encoding="utf-8")
    with pytest.raises(ProfileError):  # sms is no profile fact: refused at its key, never merged
        profiles.read_profile(path)
    profiles.save(path, {"provenance": {"gpu": H100_GPU}, "facts": {"hbm_bandwidth": 3e12, "kernel_gap": 1.2e-6,
                                                                     "kernel_floor": 1.2e-6,
                                                                     "lone_kernel_latency": 5e-6}})
    spec = tmp_path / "s.gpu"
    spec.write_text("device H100-SXM\nset sources = calibrated\nx = bf16[4096, 4096]\nx * 2 is ≈ 27 µs\n"
                    "a = bf16[4096, 4096]\nb = bf16[4096, 4096]\na @ b is ≈ 200 µs\n", encoding="utf-8")
    verdicts = {v.claim.span.line: v for v in run_check([str(spec)], Sources(profile=str(path))).verdicts}
    # the elementwise time rests on its own bandwidth and lone-kernel latency only
    assert verdicts[4].profile == f"your profile {path}"
    assert verdicts[4].actual.number == pytest.approx(5e-6 + 2 * 2 * 4096 ** 2 / 3e12)
    # the matmul's on the published bf16 rate and GEMM fixed cost too
    assert verdicts[7].profile == (f"your profile {path}; gemm_fixed_cost, tensor_bf16 from the published profile of "
                                   "H100-SXM")
    assert facts_used(verdicts[7].actual, Calibrated(profiles.read_profile(path)).profile) >= {"gemm_fixed_cost",
                                                                                                "tensor_bf16"}


def test_the_report_and_the_derivation_say_which_profile_each_fact_came_from(tmp_path, capsys):
    from gpuspec.cli import main

    path = tmp_path / "mine.json"
    profiles.save(path, {"provenance": {"gpu": H100_GPU}, "facts": {"hbm_bandwidth": 3e12},
                         "derivations": {"hbm_bandwidth": {"value": "3 TB/s", "how": "a copy timed here"}}})
    spec = tmp_path / "s.gpu"
    spec.write_text("device H100-SXM\nset sources = calibrated\nx = bf16[4096, 4096]\nx * 2 is ≈ 40 µs\n",
                    encoding="utf-8")
    label = f"your profile {path}; lone_kernel_latency from the published profile of H100-SXM"
    assert main(["check", str(spec), "--profile", str(path), "--format", "json"]) == 1
    (result,) = json.loads(capsys.readouterr().out)["results"]
    assert result["profile"] == label and result["source"] == "calibrated"
    assert main(["check", "-v", str(spec), "--profile", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"ideal 20.03 µs; a real H100-SXM: ≈ 26.65 µs ({label})" in out
    # the whole derivation cites each fact's profile, with how it was derived there
    assert f"hbm_bandwidth = 3.00 TB/s [your profile {path}] (a copy timed here)" in out
    how = published.build("H100-SXM").how("lone_kernel_latency")
    assert f"lone_kernel_latency = 4.28 µs [published profile of H100-SXM] ({how})" in out


def test_a_profile_with_hostile_values_never_reaches_the_merge(tmp_path):
    """A profile's facts are checked where it is read: a NaN, a negative, an absurd share, a fact both measured and
    not, each refused at its key, so no merged profile holds one."""
    good = {"version": 1, "gpu": H100_GPU, "facts": {"hbm_bandwidth": 3e12}, "unmeasured": {}}
    for key, value, words in (
            ("facts", {"kernel_gap": float("nan")}, "`facts.kernel_gap` is NaN"),
            ("facts", {"stream_launch_gap": -1e-6}, "`facts.stream_launch_gap` is -1e-06"),
            ("facts", {"attention_share_flash2": 500.0}, "`facts.attention_share_flash2` is 500.0"),
            ("unmeasured", {"hbm_bandwidth": "later"}, "`unmeasured.hbm_bandwidth` names a fact the profile also "
                                                       "measures")):
        hostile = copy.deepcopy(good)
        hostile[key] = value if key == "unmeasured" else {**hostile[key], **value}
        path = tmp_path / "hostile.json"
        path.write_text(json.dumps(hostile), encoding="utf-8")
        with pytest.raises(ProfileError) as refused:
            profiles.read_profile(path)
        assert words in str(refused.value), str(refused.value)


def test_every_fact_the_rules_read_has_a_range_in_the_schema():
    """Each profile-only fact the real-hardware rules take is a fact a profile may hold, checked at its key."""
    for name in ("kernel_gap", "lone_kernel_latency", "stream_launch_gap", "l2_bandwidth", "l2_usable",
                 "gemm_fixed_cost", "decode_bandwidth", "model_op_cost", "cpp_launch_cost", "collective_latency",
                 "collective_graph_latency", "collective_simple_cost", "nvls_bandwidth", "nvlink_bandwidth_ring",
                 "exp_rate", *(f"attention_{part}_{impl}" for part in ("share", "tile_overhead")
                               for impl in ("flash2", "flash3", "cudnn", "triton"))):
        assert name in schema.FACTS and name in devices.FIELDS, name
    assert attention_rules.TILE_ROWS == attention_rules.KEY_BLOCK  # the fit's key blocks per tile assume it
