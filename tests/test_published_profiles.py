"""Published profiles: built from catalog/published.toml by the rules in gpuspec/published.py, checked against
numbers worked out by hand from that file's entries."""
import json

import pytest

from gpuspec import devices, profiles, published, schema


def test_every_measurable_catalog_device_has_a_profile_that_a_profile_file_could_hold():
    assert set(published.measurable()) == {n for n, d in devices.catalog().items() if not d.model_only}
    assert "V100" in published.measurable()  # it borrows the A100-40GB's shares, and says so
    for name in published.measurable():
        data = published.data(name)
        schema.PROFILE.check(data, "")  # the same check `profiles.read_profile` makes
        assert data["facts"]["hbm_bandwidth"] > 0 and data["derivations"]["hbm_bandwidth"]["how"]
        for fact, how in data["derivations"].items():
            assert how["how"], fact


@pytest.mark.parametrize("name", ["MI300X", "MI250X", "TPU-v5e"])
def test_a_model_only_device_has_no_published_profile_and_says_why(name):
    # No published measurement is of an AMD GPU or a TPU, and an NVIDIA part's share of its datasheet would say
    # nothing about another vendor's memory system: the calibrated source skips these devices with the reason.
    assert name not in published.measurable() and published.bundled(name) is None
    with pytest.raises(profiles.ProfileError, match="model-only"):
        published.build(name)
    from gpuspec.api import check_text

    report = check_text(f"device {name}\nx = bf16[4096, 4096]\nx * 2 in practice ≈ 20 µs\n", "m.gpu")
    (verdict,) = [v for v in report.verdicts if v.source == "calibrated"]
    assert verdict.status == "skip" and "is model-only" in verdict.reason and "--profile" in verdict.reason


def test_v100_borrows_the_a100_40gb_share_of_its_datasheet():
    # A100-40GB: RRZE scale 1382, triad 1375, ... of 1555 GB/s; V100 has no measurement of its own.
    v100, a100 = published.build("V100"), published.build("A100-40GB")
    assert v100.facts["hbm_bandwidth"] == pytest.approx(a100.facts["hbm_bandwidth"] / 1555e9 * 900e9)
    assert "A100-40GB is nearest" in v100.derivations["hbm_bandwidth"]["how"]


def test_hbm_bandwidth_is_the_median_of_the_read_and_write_kernels():
    # A100-80GB: RRZE scale 1737, triad 1794, the 288 MB scale loop 1699 (init and read are left out): median 1737
    profile = published.build("A100-80GB")
    assert profile.facts["hbm_bandwidth"] == pytest.approx(1737e9)
    cited = {m["id"] for m in profile.derivations["hbm_bandwidth"]["measurements"]}
    assert cited == {"rrze-a100-80gb-stream-scale", "rrze-a100-80gb-stream-triad", "rrze-a100-80gb-scale-288mb"}


def test_a_device_without_measurements_takes_a_siblings_share_and_says_so():
    # L4: the L40's scale 800, triad 831, 272 MB scale 763 of 864 GB/s: median share 800/864, times 300 GB/s
    profile = published.build("L4")
    assert profile.facts["hbm_bandwidth"] == pytest.approx(800 / 864 * 300e9)
    assert "no measurement on L4" in profile.derivations["hbm_bandwidth"]["how"]


def test_tensor_rates_and_their_derivation_from_the_bf16_share():
    h100 = published.build("H100-SXM")
    # MAMF 794.5, cuBLAS 8192³ 797.8 and 12288³ 822.8 TFLOP/s: median 797.8
    assert h100.facts["tensor_bf16"] == pytest.approx(797.8e12)
    # no fp16 GEMM: the bf16 GEMMs count for it (one tensor-core path, the same 989.4 peak)
    assert h100.facts["tensor_fp16"] == pytest.approx(797.8e12)
    assert "bf16 GEMMs: fp16 and bf16 share" in h100.derivations["tensor_fp16"]["how"]
    # measured rates already run at the card's clock: no clock entry is cited
    assert all("clock" not in m["id"] for m in h100.derivations["tensor_bf16"]["measurements"])
    # an FP8 GEMM has no other dtype standing for it; int8 has no GEMM anywhere: the bf16 share of its peak
    assert h100.facts["tensor_fp8"] == pytest.approx(1402.6e12)
    assert h100.facts["tensor_int8"] == pytest.approx(797.8 / 989.4 * 1978.9e12)
    assert "no int8 GEMM measured: the bf16 share" in h100.derivations["tensor_int8"]["how"]


# RRZE's roofline kernel at its compute-bound end on the two L40 boards: 1710 MHz at 300 W, 2205 MHz at 355 W, 142 SMs
L40_CLOCKS = ((1710e6, 300 / 142), (2205e6, 355 / 142))


def _scaled_clock(power_per_sm: float, boost: float) -> float:
    """The median of the L40 clocks scaled by power per SM, each at most the boost (two entries: their mean)."""
    return sum(min(boost, clock * power_per_sm / theirs) for clock, theirs in L40_CLOCKS) / 2


def test_a_power_limited_part_takes_a_siblings_share_per_clock_times_its_own_sustained_clock():
    # The L20 (92 SMs, 275 W, 2520 MHz): 2419 and 2636 -> 2520 MHz, median 2470 MHz; its GEMMs 114.40 and 113.45 of
    # 119.5 TFLOP/s. The L4 (58 SMs, 72 W, 2040 MHz): 1005 and 1095 MHz, median 1050 MHz, 51.5% of its boost.
    l20 = _scaled_clock(275 / 92, 2520e6) / 2520e6
    per_clock = (114.40 / 119.5 / l20 + 113.45 / 119.5 / l20) / 2
    l4 = _scaled_clock(72 / 58, 2040e6) / 2040e6
    assert l4 == pytest.approx(0.515, abs=0.001)
    profile = published.build("L4")
    assert profile.facts["tensor_bf16"] == pytest.approx(per_clock * l4 * 121e12)
    assert profile.facts["tensor_bf16"] == pytest.approx(60.6e12, rel=0.002)  # half the 121 TFLOP/s datasheet
    how = profile.derivations["tensor_bf16"]
    assert "L4's clock: 1050 MHz of its 2040 MHz boost (51.5%)" in how["how"]
    assert {m["id"] for m in how["measurements"]} == {
        "leetcuda-l20-torch-fp16-4096x16384x2048", "leetcuda-l20-cublas-fp16-4096x16384x2048",
        "rrze-l40-gpu0-roofline-clock", "rrze-l40-gpu1-roofline-clock"}
    assert how["origins"] == ["leetcuda", "rrze-gpu-benches"]
    # fp8: no Ada FP8 GEMM; the nearest measured ones are Hopper's (70.9% and 77.6%, no clock of theirs binds)
    assert profile.facts["tensor_fp8"] == pytest.approx((0.709 + 1535.0 / 1978.9) / 2 * l4 * 242.5e12, rel=1e-3)
    # the L40S: 1995 and 2174 MHz, 82.7% of 2520
    l40s = _scaled_clock(350 / 142, 2520e6) / 2520e6
    assert published.build("L40S").facts["tensor_bf16"] == pytest.approx(per_clock * l40s * 362.05e12)


def test_a_sustained_clock_is_held_to_the_boost_and_one_under_the_power_limit_says_nothing():
    # RTX 4090: 450 W over 128 SMs scales both L40 clocks past 2520 MHz: it keeps its boost. nvbench's 2615 MHz ran
    # under an fp32 load whose power is not stated (power_bound false): not cited.
    l20 = _scaled_clock(275 / 92, 2520e6) / 2520e6
    profile = published.build("RTX-4090")
    assert profile.facts["tensor_bf16"] == pytest.approx((114.40 + 113.45) / 2 / 119.5 / l20 * 165.15e12)
    assert "nvbench-rtx4090-fp32-clock" not in {m["id"] for m in profile.derivations["tensor_bf16"]["measurements"]}
    assert "2520 MHz of its 2520 MHz boost (100.0%)" in profile.derivations["tensor_bf16"]["how"]


def test_a_part_with_its_own_power_bound_clock_scales_the_siblings_share_by_it():
    # H100 PCIe: no GEMM of its own; the SXM family's median share 797.8 / 989.4 (no clock of theirs binds: H200's
    # 1980 MHz ran at 400 of 700 W), times Chips and Cheese's 1395 of 1755 MHz at its 350 W limit.
    profile = published.build("H100-PCIe")
    assert profile.facts["tensor_bf16"] == pytest.approx(797.8 / 989.4 * 1395 / 1755 * 756e12)
    how = profile.derivations["tensor_bf16"]["how"]
    assert "no clock of theirs binds" in how and "1395 MHz sustained of its 1755 MHz boost (79.5%" in how
    assert "rrze-h200-roofline-clock" not in {m["id"] for m in profile.derivations["tensor_bf16"]["measurements"]}
    # the ideal model keeps the datasheet peak
    assert devices.catalog()["H100-PCIe"].fact("tensor_bf16").value == pytest.approx(756e12)


def test_the_clock_rule_falls_back_when_its_sources_are_left_out():
    # without RRZE no power-bound Ada clock is left: the L20's share is taken at the L4's boost clock, and says so
    alone = published.build("L4", exclude=("rrze-gpu-benches",))
    assert alone.facts["tensor_bf16"] == pytest.approx((114.40 + 113.45) / 2 / 119.5 * 121e12)
    assert "at L4's boost clock (no power-bound clock" in alone.derivations["tensor_bf16"]["how"]
    # without LeetCUDA no Ada GEMM is left: the nearest measured (Hopper's) share, still times the L4's own clock
    hopper = published.build("L4", exclude=("leetcuda",))
    l4 = _scaled_clock(72 / 58, 2040e6) / 2040e6
    assert hopper.facts["tensor_bf16"] == pytest.approx(797.8 / 989.4 * l4 * 121e12)
    assert "H100-SXM is nearest" in hopper.derivations["tensor_bf16"]["how"]
    # without Chips and Cheese the H100 PCIe has no clock of its own, and no sibling's binds: the share as it is
    pcie = published.build("H100-PCIe", exclude=("chips-and-cheese",))
    assert pcie.facts["tensor_bf16"] == pytest.approx(797.8 / 989.4 * 756e12)


@pytest.mark.parametrize("keys", [{"power_limit": 0}, {"power_limit": "300"}, {"sms": float("nan")},
                                  {"power_limit": True}, {"sms": -142}, {"boost_clock": float("inf")}])
def test_a_clock_entry_with_unusable_power_or_sms_is_left_out_not_divided_by(monkeypatch, keys):
    entries = [dict(e) for e in published.catalog_data("published")["measurement"]]
    for e in entries:
        if e["id"].startswith("rrze-l40-gpu"):
            e.update(keys)
    monkeypatch.setattr(published, "catalog_data", lambda name: {"measurement": entries})
    monkeypatch.setattr(published, "_shipped", lambda device: None)  # built from published.toml as it is
    published.measurements.cache_clear()
    published._cached.cache_clear()
    try:
        profile = published.build("L4")
        rate = profile.facts["tensor_bf16"]
        assert rate == pytest.approx((114.40 + 113.45) / 2 / 119.5 * 121e12)  # no clock left: the boost
        assert all("rrze-l40" not in m["id"] for m in profile.derivations["tensor_bf16"]["measurements"])
    finally:
        published.measurements.cache_clear()
        published._cached.cache_clear()


def test_gemm_fixed_cost_by_hand():
    # B200's one sweep point, learn-cuda bf16 2048³ at 1077.67 TFLOP/s: 2·2048³ / 1077.67e12 = 15.94 µs observed.
    # The model at the achievable rate (median of 1745.0 and 1414.29 = 1579.6 TFLOP/s): (2048/128)² = 256 tiles on
    # 148 SMs, 2 waves started, each tile 2·128·128·2048 FLOP / (1579.6e12 / 148) = 6.288 µs: 12.58 µs.
    b200 = published.build("B200")
    assert b200.facts["tensor_bf16"] == pytest.approx((1745.0e12 + 1414.29e12) / 2)
    tile = 2 * 128 * 128 * 2048 / (b200.facts["tensor_bf16"] / 148)
    assert b200.facts["gemm_fixed_cost"] == pytest.approx(2 * 2048 ** 3 / 1077.67e12 - 2 * tile)
    assert b200.facts["gemm_fixed_cost"] == pytest.approx(3.37e-6, rel=0.01)


def test_a_lone_gemm_takes_its_fixed_cost_on_a_calibrated_device_and_never_in_the_ideal_model():
    report = _check("device H100-SXM\nset sources = model, calibrated\na = bf16[1024, 1024]\na @ a is ≈ 9 µs\n")
    ideal, real = sorted(report.verdicts, key=lambda v: v.source != "model")
    # ideal: 64 tiles, one wave, 2·128·128·1024 FLOP / (989.4 TFLOP/s / 132) = 4.48 µs
    assert ideal.actual.number == pytest.approx(2 * 128 * 128 * 1024 / (989.4e12 / 132), rel=1e-3)
    # calibrated: the same at 797.8 TFLOP/s (5.55 µs), plus H100-SXM's published fixed cost (3.8 µs)
    h100 = published.build("H100-SXM")
    expected = 2 * 128 * 128 * 1024 / (797.8e12 / 132) + h100.facts["gemm_fixed_cost"]
    assert real.actual.number == pytest.approx(expected, rel=1e-6) and real.status == "pass"
    assert "fixed cost" in real.actual.derivation() or real.actual.rule == "{0} + {1}"


def test_collective_facts():
    a100 = published.build("A100-80GB")
    # ring busbw at 16 GiB (ml-engineering) 234.89, 8 GiB (Azure) 231.58, 1 GiB (MSCCL++) 231.45: median 231.58 of 300
    assert a100.facts["nvlink_bandwidth"] == pytest.approx(231.58 / 300 * 600e9)
    # called eagerly: 43.83 µs (ml-engineering) and 41.86 (Azure) at 32 KiB; in a CUDA graph: MSCCL++'s 16.96 at 1 KiB
    assert a100.facts["collective_latency"] == pytest.approx((43.83e-6 + 41.86e-6) / 2)
    assert a100.facts["collective_graph_latency"] == pytest.approx(16.96e-6)
    assert a100.facts["collective_simple_cost"] == pytest.approx((167.5e-6 + 126.1e-6) / 2)  # the two sweeps


def test_leaving_an_origin_out_removes_its_numbers():
    whole = published.build("H200")
    without = published.build("H200", exclude=("rrze-gpu-benches",))
    assert "rrze-gpu-benches" in whole.derivations["kernel_floor"]["origins"]
    assert "kernel_floor" not in without.facts or "rrze-gpu-benches" not in without.derivations["kernel_floor"][
        "origins"]
    for how in without.derivations.values():
        assert "rrze-gpu-benches" not in how["origins"]
        assert all("rrze" not in m["id"] for m in how["measurements"])


def test_a_second_source_for_the_back_to_back_cost_stands_in_where_rrze_is_left_out():
    h200 = published.build("H200", exclude=("rrze-gpu-benches",))
    assert h200.facts["kernel_floor"] == pytest.approx(1.3e-6)  # Hazy Research's H100 graphs, same SM design
    assert h200.derivations["kernel_floor"]["origins"] == ["hazy-megakernel"]
    assert published.build("H200").facts["kernel_floor"] == pytest.approx(1.285e-6)  # RRZE's own H200 first
    # no Ampere part has a second source: every device's median stands in (Hazy's H100 alone), and says so
    a100 = published.build("A100-80GB", exclude=("rrze-gpu-benches",))
    assert a100.facts["kernel_gap"] == pytest.approx(1.3e-6)
    assert "the median over every device measured" in a100.derivations["kernel_gap"]["how"]


def test_a_launch_latency_no_device_of_the_chain_measured_is_every_devices_median_and_a_lone_call_pays_it():
    # nvbench's cold times: H200 4.279 µs, B200 6.2 µs; neither A100 nor its nearest measured one: the median,
    # 5.2395 µs. Without it a call timed alone (the default) would silently be counted as back to back.
    a100 = published.build("A100-80GB")
    assert a100.facts["lone_kernel_latency"] == pytest.approx((4.279e-6 + 6.2e-6) / 2)
    assert "the median over every device measured (B200, H200)" in a100.derivations["lone_kernel_latency"]["how"]
    from conftest import verdicts

    (verdict,) = [v for v in verdicts("device A100-80GB\nx = bf16[4096, 4096]\nx * 2 in practice ≈ 44 µs\n")
                  if v.source == "calibrated"]
    work = 2 * 4096 * 4096 * 2 / a100.facts["hbm_bandwidth"]
    assert verdict.actual.number == pytest.approx(a100.facts["lone_kernel_latency"] + work)
    assert verdict.actual.note.startswith("timed alone: ")


def test_a_published_profile_says_why_it_lacks_each_fact_it_lacks():
    for name in published.measurable():
        data = published.data(name)
        assert set(data["facts"]) | set(data["unmeasured"]) == set(schema.FACTS), name
        assert not set(data["facts"]) & set(data["unmeasured"]), name
        assert all(reason for reason in data["unmeasured"].values()), name
    h100 = published.data("H100-SXM")["unmeasured"]
    assert h100["graph_launch_cost"].startswith("no source times one graph launch")  # published.toml's [[missing]]
    assert "the catalog's 2.500 µs stands" not in h100["graph_launch_cost"]
    a100 = published.data("A100-80GB")["unmeasured"]
    assert a100["tensor_fp8"] == "the catalog gives A100-80GB no tensor_fp8 (the part has none, or no source states it)"
    assert a100["hbm_latency"] == ("no published measurement on A100-80GB or its nearest measured devices: the "
                                   "catalog's 551 cycles stands")
    assert published.build("A100-80GB").unmeasured == a100


def test_an_unknown_device_is_refused_in_words():
    with pytest.raises(profiles.ProfileError, match="not a catalog device"):
        published.build("H900")
    assert published.bundled("H900") is None


# --- the calibrated source without a profile of one's own ----------------------------------------------------------

# x * 2 on bf16[4096, 4096], on H100-SXM's published profile, timed alone: lone_kernel_latency (4.279 µs, nvbench's
# cold time of a 64 KiB kernel on H200, the nearest measured) + the bytes at the achievable 3.015 TB/s.
REAL_X2 = 4.279e-6 + 2 * 2 * 4096 ** 2 / 3015e9


def _check(text: str):
    from gpuspec import api

    return api.check_text(text)


def test_a_claim_that_asks_for_calibrated_is_checked_against_the_published_profile():
    report = _check("device H100-SXM\nset sources = model, calibrated\nx = bf16[4096, 4096]\nx * 2 is ≈ 26.5 µs\n")
    calibrated = [v for v in report.verdicts if v.source == "calibrated"]
    assert [v.status for v in calibrated] == ["pass"]
    # timed alone (the default): 67.1 MB moved at H100-SXM's published 3.015 TB/s (median of 3142.7, 3000, 3010,
    # 3020 GB/s) = 22.26 µs, plus the lone-kernel latency H200's nvbench cold run gives, 4.279 µs
    assert calibrated[0].actual.number == pytest.approx(REAL_X2)
    assert calibrated[0].profile == "published profile of H100-SXM"
    model = [v for v in report.verdicts if v.source == "model"]
    assert [v.status for v in model] == ["fail"]  # the roofline says 20.0 µs


def test_the_published_profile_judges_nothing_unless_asked():
    report = _check("device H100-SXM\nx = bf16[4096, 4096]\nx * 2 is ≈ 20 µs\n")
    assert [(v.source, v.status) for v in report.verdicts] == [("model", "pass")]


def test_a_model_failure_shows_what_a_real_device_takes():
    from gpuspec.report import text

    report = _check("device H100-SXM\nx = bf16[4096, 4096]\nx * 2 is ≈ 30 µs\n")
    (verdict,) = report.verdicts
    assert verdict.realistic.number == pytest.approx(REAL_X2)
    shown = "\n".join(text.failure(verdict))
    assert "ideal 20.03 µs; a real H100-SXM: ≈ 26.54 µs (published profile of H100-SXM)" in shown


@pytest.mark.parametrize("claim", ["x * 2 is ≈ 30 µs", "x * 2 in practice ≈ 40 µs"])
def test_every_report_format_shows_the_ideal_value_beside_the_real_one(claim):
    from gpuspec.report import github, junit, markdown

    report = _check(f"device H100-SXM\nx = bf16[4096, 4096]\n{claim}\n")
    line = "ideal 20.03 µs; a real H100-SXM: ≈ 26.54 µs (published profile of H100-SXM)"
    assert line in markdown.render(report)
    assert line in junit.render(report)
    assert line in github.render(report)


def test_a_device_of_ones_own_has_no_published_profile_and_the_claim_says_why():
    report = _check("device mine from H100-SXM with sms = 100\nset sources = calibrated\nx = bf16[4096, 4096]\n"
                    "x * 2 is ≈ 22 µs\n")
    (verdict,) = report.verdicts
    assert verdict.status == "skip" and "no published profile" in verdict.reason


def test_a_profile_of_ones_own_replaces_the_published_one_fact_by_fact(tmp_path):
    import json

    from gpuspec import api

    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"version": profiles.VERSION, "gpu": "NVIDIA H100 80GB HBM3",
                                "facts": {"hbm_bandwidth": 2.5e12}}), encoding="utf-8")
    spec = tmp_path / "s.gpu"
    spec.write_text("device H100-SXM\nset sources = calibrated\nx = bf16[4096, 4096]\nx * 2 is ≈ 31 µs\n",
                    encoding="utf-8")
    report = api.run_check([str(spec)], api.Sources(profile=str(path)))
    (verdict,) = report.verdicts
    # its own bandwidth; the lone kernel's latency, which it lacks, from the published profile
    lone = published.build("H100-SXM").facts["lone_kernel_latency"]
    assert verdict.status == "pass" and verdict.actual.number == pytest.approx(lone + 2 * 2 * 4096 ** 2 / 2.5e12)
    assert verdict.profile == f"your profile {path}; lone_kernel_latency from the published profile of H100-SXM"


# --- `in practice`: claims about real hardware ----------------------------------------------------------------------

PRACTICE = """device H100-SXM
x = bf16[4096, 4096]
x * 2 in practice ≈ 26.5 µs
y = x * 3 is ≈ 20 µs:
    in practice ≈ 30 µs
"""


def test_a_claim_in_practice_is_checked_against_calibrated_and_measured_not_the_model():
    report = _check(PRACTICE)
    by_line = {}
    for verdict in report.verdicts:
        by_line.setdefault(verdict.claim.span.line, []).append((verdict.source, verdict.status))
    assert by_line[3] == [("calibrated", "pass"), ("measured", "skip")]  # the model's 20.0 µs judges nothing here
    assert by_line[4] == [("model", "pass")]  # `is`: the ideal claim, as before
    assert by_line[5] == [("calibrated", "fail"), ("measured", "skip")]


def test_a_failing_claim_in_practice_shows_the_ideal_value_beside_the_real_one():
    from gpuspec.report import text

    report = _check(PRACTICE)
    (failed,) = [v for v in report.verdicts if v.status == "fail"]
    assert failed.ideal.number == pytest.approx(2 * 2 * 4096 ** 2 / 3.35e12)
    shown = "\n".join(text.failure(failed))
    assert "ideal 20.03 µs; a real H100-SXM: ≈ 26.54 µs (published profile of H100-SXM)" in shown


def test_in_practice_is_parsed_into_the_claim_and_kept_by_the_cache_and_the_formatter():
    from gpuspec import fmt
    from gpuspec.parse import parse
    from gpuspec.text import SpecText

    spec = parse(SpecText("p.gpu", PRACTICE))
    claims = [c for s in spec.statements if hasattr(s, "claims") for c in s.claims.items]
    assert [c.practice for c in claims] == [True, False, True]
    assert fmt.format_text(PRACTICE) == PRACTICE


@pytest.mark.parametrize("text", ["x * 2 in practice\n", "x * 2 in practise ≈ 3 µs\n", "x * 2 in ≈ 3 µs\n"])
def test_in_practice_without_claims_or_misspelt_is_a_syntax_error_in_words(text):
    report = _check("device H100-SXM\nx = bf16[4096, 4096]\n" + text)
    assert report.diagnostics and all(d.span is not None and d.span.line == 3 for d in report.diagnostics)
    assert not report.verdicts


LLAMA2_7B_READ = 6_738_415_616 * 2 - 32_000 * 4096 * 2  # its bf16 weights less the embedding table it gathers from
LLAMA31_8B_READ = 8_030_261_248 * 2 - 128_256 * 4096 * 2
KV_PER_TOKEN = {"llama2-7b": 2 * 32 * 32 * 128 * 2, "llama3.1-8b": 2 * 32 * 8 * 128 * 2}  # K and V, layers, heads, dim


def _graphed_step(weights_read: float, kv: float, bandwidth: float, floor: float) -> float:
    """A batch-1 step of 32 layers as one CUDA graph with no kernel cost: the weights at the bandwidth, each layer's
    attention reading its share of the cache (at least the kernel floor), the graph's launch (the catalog's 2.5 µs)
    and 256 graph nodes of 1 ns (32 layers x 8 kernels)."""
    return weights_read / bandwidth + 32 * max(kv / 32 / bandwidth, floor) + 2.5e-6 + 256 * 1e-9


def test_decode_kernels_stream_at_the_achievable_bandwidth_plus_a_cost_each_worked_out_by_hand():
    a100 = published.build("A100-80GB")
    bandwidth = a100.facts["hbm_bandwidth"]  # the median of the A100 stream kernels: 1.737 TB/s
    # torchao's compiled bf16 steps on an A100: Llama 2 7B 9.3127 ms, Llama 3 8B 10.4559 ms (context 208 each)
    floor = a100.facts["kernel_floor"]  # RRZE's back-to-back kernel on an A100: 1.337 µs
    llama2 = _graphed_step(LLAMA2_7B_READ, 208 * KV_PER_TOKEN["llama2-7b"], bandwidth, floor)
    llama3 = _graphed_step(8_030_261_248 * 2 - 128_256 * 4096 * 2, 208 * 2 * 32 * 8 * 128 * 2, bandwidth, floor)
    costs = [(9.3127e-3 - llama2) / 256, (10.4559e-3 - llama3) / 256]  # 256 streaming kernels: 7 matmuls + attention
    assert a100.facts["decode_kernel_cost"] == pytest.approx(sum(costs) / 2)  # the median of two: ~6.7 µs
    assert "ao-a100-llama2-7b-bf16-decode: (9.313 ms − " in a100.derivations["decode_kernel_cost"]["how"]
    report = _check("device A100-80GB\nset sources = model, calibrated\n"
                    "decode llama2-7b, batch 1, context 208 compiled as a CUDA graph is step_time ≈ 9.3 ms\n")
    ideal, real = sorted(report.verdicts, key=lambda v: v.source != "model")
    assert real.actual.number == pytest.approx(llama2 + 256 * a100.facts["decode_kernel_cost"])
    assert real.status == "pass"
    assert devices.catalog()["A100-80GB"].fact("decode_kernel_cost") is None  # the ideal model: bytes at HBM alone
    peak = (LLAMA2_7B_READ + 208 * KV_PER_TOKEN["llama2-7b"]) / 2.039e12
    assert peak < ideal.actual.number < peak * 1.03  # and the catalog kernel floor, graph launch and nodes


def test_attention_exponentials_are_a_third_roof_on_a_calibrated_device_only():
    spec = ("device H100-SXM\nset sources = model, calibrated\nset attention_implementation = flash3\n"
            "q = bf16[1, 16, 16384, 128]\nattention(q, q, q) fused is ≈ 3.5 ms\n")
    ideal, real = sorted(_check(spec).verdicts, key=lambda v: v.source != "model")
    scores = 16 * 16384 ** 2
    flops = 4 * scores * 128 + 6 * scores
    assert ideal.actual.number == pytest.approx(flops / 989.4e12)  # the ideal model: the tensor roof alone
    exp_rate = 16 * 132 * 1.98e9  # the programming guide's 16 exp per clock per SM, 132 SMs, 1980 MHz
    facts = published.build("H100-SXM").facts
    assert facts["exp_rate"] == pytest.approx(exp_rate)
    # calibrated: FlashAttention-3's tiles, each key block's exponentials after its matmuls at the GEMM rate;
    # 2,048 tiles, 16 on the busiest of 132 SMs, each 128 key blocks and the fitted overhead
    t_block = 128 * 128 * (4 * 128 + 6) / 797.8e12 + 128 * 128 / exp_rate
    share, overhead = facts["attention_share_flash3"], facts["attention_tile_overhead_flash3"]
    assert real.actual.number == pytest.approx(16 * 132 * (128 + overhead) * t_block / share)
    assert real.status == "pass"  # tritonbench's FA3 measured 3.54 ms


def test_at_head_size_64_the_exponentials_take_nearly_as_long_as_the_matmuls():
    # per score: 4 × 64 matmul FLOPs + 6 softmax FLOPs at the GEMM rate, one exponential on the SFUs. At the
    # profile's 797.8 TFLOP/s the exponentials are 0.73 of the math; at the datasheet's 989.4, 0.92 (at head
    # size 128, 0.37 and 0.46)
    exp_rate = 16 * 132 * 1.98e9
    math, exp = (4 * 64 + 6) / 797.8e12, 1 / exp_rate
    assert exp / math == pytest.approx(0.728, abs=0.001)
    assert exp / (4 * 64 / 989.4e12) == pytest.approx(0.924, abs=0.001)
    spec = ("device H100-SXM\nset sources = model, calibrated\nset attention_implementation = flash3\n"
            "q = bf16[1, 32, 8192, 64]\nattention(q, q, q) fused is ≈ 1 ms\n")
    real = next(v for v in _check(spec).verdicts if v.source == "calibrated")
    facts = published.build("H100-SXM").facts
    share, overhead = facts["attention_share_flash3"], facts["attention_tile_overhead_flash3"]
    tiles, blocks = 32 * 8192 // 128, 8192 // 128  # 2,048 tiles of 128 queries, each over 64 key blocks
    busiest = -(-tiles // 132)  # 16
    assert real.actual.number == pytest.approx(busiest * 132 * (blocks + overhead) * 128 * 128 * (math + exp) / share)


# --- who launches a stream ------------------------------------------------------------------------------------------

STREAM = "device H200\nb = fp64[4096]\ns = b * 0.25 with 256 threads per block\n"


def test_a_stream_launched_from_cpp_takes_the_cpp_launch_cost():
    # 30,000 launches of a tiny kernel are host-bound: 30,000 × the host's cost per launch, then the last kernel
    eager = _check(STREAM + "30000 launches of s is ≈ 108 ms\n")
    cpp = _check(STREAM + "set launched_from = cpp\n30000 launches of s is ≈ 75 ms\n")
    assert eager.verdicts[0].actual.number == pytest.approx(30000 * 3.6e-6 + 2e-6)  # the catalog's PyTorch op
    assert cpp.verdicts[0].actual.number == pytest.approx(30000 * 2.5e-6 + 2e-6)  # the catalog's C++ launch
    real = _check(STREAM + "set launched_from = cpp\n30000 launches of s in practice ≈ 75.6 ms\n")
    calibrated = real.verdicts[0]
    assert calibrated.source == "calibrated" and calibrated.status == "pass"
    # RRZE's H200 C++ loop, 2.52 µs a launch; the last kernel: the back-to-back gap, the stream's own gap, and its
    # 65,536 B from L2 (RRZE's 9,666 GB/s plateau)
    last = 1.285e-6 + 1.182e-6 + 65536 / 9666e9
    assert calibrated.actual.number == pytest.approx(30000 * 2.52e-6 + last)


@pytest.mark.parametrize("value, words", [("rust", "not `rust`"), ("cpp, pytorch", "not `cpp pytorch`"),
                                          ("3 µs", "not a number"), ("CPP", "not `CPP`")])
def test_launched_from_refuses_what_it_does_not_know_in_words(value, words):
    report = _check(STREAM + f"set launched_from = {value}\n30000 launches of s is ≈ 75 ms\n")
    (problem,) = report.diagnostics
    assert problem.code == "bad-setting" and words in problem.message and problem.span.line == 4
    assert "pytorch or cpp" in problem.message


def test_a_stream_from_cpp_is_not_measured_by_a_python_harness_and_a_pytorch_stream_keeps_its_key():
    from gpuspec import api, harness
    from gpuspec.text import SpecText

    eager = api.compile_text(SpecText("a.gpu", STREAM + "30000 launches of s is ≈ 108 ms\n"))
    cpp = api.compile_text(SpecText("b.gpu", STREAM + "set launched_from = cpp\n30000 launches of s is ≈ 75 ms\n"))
    [(_, _, stream)] = [w for w in eager.workloads if w[2].kind == "stream"]
    [(_, _, from_cpp)] = [w for w in cpp.workloads if w[2].kind == "stream"]
    assert "launched_from" not in harness._structure(stream)  # the key a saved result of it was filed under
    assert harness.workload_key("", stream) != harness.workload_key("", from_cpp)
    _, refused = harness.plans(cpp)
    assert any("launches from Python" in reason for _, reason in refused)


def test_quantized_kernels_take_their_own_cost_and_the_bf16_one_where_none_was_measured():
    h100 = published.build("H100-SXM")
    bandwidth = h100.facts["hbm_bandwidth"]
    kv = 208 * KV_PER_TOKEN["llama3.1-8b"]
    floor = h100.facts["kernel_floor"]
    # torchao on an H100: int8 weight-only 5.0289 ms, fp8 weight-only 5.6035 ms (Llama 3.1 8B, context 208)
    for fact, step in (("decode_kernel_cost_int8", 5.0289e-3), ("decode_kernel_cost_fp8", 5.6035e-3)):
        read = 8_030_261_248 - 128_256 * 4096
        assert h100.facts[fact] == pytest.approx((step - _graphed_step(read, kv, bandwidth, floor)) / 256), fact
    # bf16: the median of torchao's 7.8802 ms step and SGLang's 7.6336 ms one (context 1500)
    torchao = (7.8802e-3 - _graphed_step(LLAMA31_8B_READ, kv, bandwidth, floor)) / 256
    sglang = (7.6336e-3 - _graphed_step(LLAMA31_8B_READ, 1500 * KV_PER_TOKEN["llama3.1-8b"], bandwidth, floor)) / 256
    assert h100.facts["decode_kernel_cost"] == pytest.approx((torchao + sglang) / 2)  # ~11.2 and ~10.1 µs
    int8 = _check("device H100-SXM\nset sources = calibrated\ndecode llama3.1-8b, batch 1, context 208, weights int8, "
                  "kv bf16 compiled as a CUDA graph is step_time ≈ 5.0 ms\n").verdicts[0]
    assert int8.actual.number == pytest.approx(5.0289e-3) and int8.status == "pass"  # its own step, in sample
    # torchao left out: SGLang's bf16 step on an H100 (131 tokens/s at context 1500) is the device's own, and with no
    # quantized step anywhere its cost stands in for int8 and fp8 weights too, and says why
    left = published.build("H100-SXM", exclude=("torchao",))
    assert left.facts["decode_kernel_cost"] == pytest.approx(sglang)
    assert left.facts["decode_kernel_cost_int8"] == left.facts["decode_kernel_cost"]
    assert left.derivations["decode_kernel_cost"]["origins"] == ["pytorch-blog-gemlite"]
    assert left.derivations["decode_kernel_cost_int8"]["how"].startswith("no int8 weight-only decode step measured")
    # and SGLang left out too: no Hopper step at all, so the vLLM A100 40GB step's cost, taken as it is
    neither = published.build("H100-SXM", exclude=("torchao", "pytorch-blog-gemlite"))
    assert neither.derivations["decode_kernel_cost"]["origins"] == ["vllm-sweep-jm"]
    assert "the median over every device measured (A100-40GB)" in neither.derivations["decode_kernel_cost"]["how"]
    assert published.build("A100-40GB").facts["decode_kernel_cost_int8"] == pytest.approx(
        published.build("A100-80GB").facts["decode_kernel_cost_int8"])  # the nearest device's own quantized steps


def test_an_eager_decode_step_pays_the_model_codes_host_cost_per_op_it_dispatches():
    # torchao's eager runs on an A100: 43.54 ms / 4,067 ops = 10.706 µs, 42.25 ms / 4,067 = 10.389 µs: median 10.5475
    spec = ("device A100-80GB\nset sources = calibrated\n"
            "decode llama2-7b, batch 1, context 208, host_ops 4067 eager is launch_time ≈ 42.9 ms\n"
            "decode llama2-7b, batch 1, context 208, host_ops 4067 eager is step_time ≈ 42.9 ms\n"
            "decode llama2-7b, batch 1, context 208 eager is launch_cost ≈ 10.5 µs\n"
            "decode llama2-7b, batch 1, context 208 compiled is launch_cost ≈ 3.6 µs\n")
    launch_time, step, one_op, compiled = _check(spec).verdicts
    assert launch_time.actual.number == pytest.approx(4067 * 10.5475e-6) and launch_time.status == "pass"
    assert step.actual.number == pytest.approx(4067 * 10.5475e-6, rel=1e-3)  # the host sets the pace
    assert one_op.actual.number == pytest.approx(10.5475e-6)  # host_ops not stated: one op per kernel
    assert "host_ops not stated" in one_op.actual.note
    assert compiled.actual.number == pytest.approx(3.57e-6)  # compiled code launches at a bare op's cost
    ideal = _check(spec.replace("set sources = calibrated", "set sources = model")).verdicts[0]
    assert ideal.actual.number == pytest.approx(480 * 3.6e-6)  # the ideal model: the catalog's PyTorch op a kernel


def test_the_host_cost_per_op_comes_from_two_implementations_that_agree_within_a_fifth():
    # bitsandbytes' transformers run on an H100: 24.4 ms a token over 2,739 ops = 8.908 µs; torchao's: 10.706, 10.389
    assert published.build("H100-SXM").facts["model_op_cost"] == pytest.approx(8.908e-6)  # its own device first
    assert published.build("A100-80GB").facts["model_op_cost"] == pytest.approx(10.5475e-6)
    assert published.build("A100-80GB", exclude=("torchao",)).facts["model_op_cost"] == pytest.approx(8.908e-6)
    h200 = published.build("H200")  # no own entry: the median of the three standing for it
    assert h200.facts["model_op_cost"] == pytest.approx(10.389e-6)
    assert h200.derivations["model_op_cost"]["origins"] == ["bitsandbytes-bench", "torchao"]


def test_a_published_profile_written_out_is_a_profile_file_that_keeps_its_derivations(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "gpuspec.published", "A100-80GB", "--exclude", "torchao"],
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    path = tmp_path / "a100.json"
    path.write_bytes(done.stdout)
    loaded = profiles.read_profile(path)
    assert loaded.facts == published.build("A100-80GB", exclude=("torchao",)).facts
    # torchao's numbers left out: the A100 40GB's vLLM step stands in (the same chip), its cost taken as it is
    a100_40 = published.build("A100-40GB").facts["hbm_bandwidth"]
    vllm = _graphed_step(LLAMA31_8B_READ, 1088 * KV_PER_TOKEN["llama3.1-8b"], a100_40, 1.337e-6)
    assert loaded.facts["decode_kernel_cost"] == pytest.approx((13.333e-3 - vllm) / 256)
    assert loaded.derivations["decode_kernel_cost"]["origins"] == ["vllm-sweep-jm"]
    assert "decode_bandwidth" not in loaded.facts
    applied = loaded.apply(devices.catalog()["A100-80GB"])
    assert "the median of 3 measurement(s)" in applied.fact("hbm_bandwidth").note


@pytest.mark.parametrize("name", [name for name, device in devices.catalog().items() if not device.model_only])
def test_a_published_profile_written_out_names_a_gpu_its_device_is_found_by(name, tmp_path):
    # A profile file names the GPU it was measured on as the driver does; one written out and given back with
    # --profile must be of its own device, or every calibrated claim would be skipped as "measured on another GPU".
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(published.data(name)), encoding="utf-8")
    assert profiles.read_profile(path).device_name() == name


@pytest.mark.parametrize("derivations", [[1, 2], {"hbm_bandwidth": "text"}, {"hbm_bandwidth": {"how": 5}}])
def test_odd_derivations_in_a_profile_file_change_nothing_but_the_note(tmp_path, derivations):
    import json

    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"version": profiles.VERSION, "gpu": "NVIDIA A100-SXM4-80GB",
                                "facts": {"hbm_bandwidth": 1.7e12}, "derivations": derivations}), encoding="utf-8")
    applied = profiles.read_profile(path).apply(devices.catalog()["A100-80GB"])
    assert applied.fact("hbm_bandwidth").value == 1.7e12
    assert applied.fact("hbm_bandwidth").note is None  # no derivation it can show: the profile it came from alone
    assert applied.fact("hbm_bandwidth").reference == f"your profile {path}"


def test_the_command_refuses_what_it_does_not_know():
    import subprocess
    import sys

    for args in (["H900"], ["H200", "--exclude", "nope"]):
        done = subprocess.run([sys.executable, "-m", "gpuspec.published", *args], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 2 and "Traceback" not in done.stderr and "no " in done.stderr
    done = subprocess.run([sys.executable, "-m", "gpuspec.published", "MI300X"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "MI300X has no published profile: it is model-only (an AMD GPU" in done.stderr


# --- NCCL's algorithm -----------------------------------------------------------------------------------------------

def test_a_collective_takes_the_bus_efficiency_of_its_nccl_algorithm():
    h200 = published.build("H200")
    # ring runs: 367.61, 365.6, 363.3 GB/s busbw of 450: median 365.6 / 450
    assert h200.facts["nvlink_bandwidth_ring"] == pytest.approx(365.6 / 450 * 900e9)
    assert h200.facts["nvlink_bandwidth"] == h200.facts["nvlink_bandwidth_ring"]  # NVLS runs are not a ring's
    # NVLS on 8 GPUs: busbw 482.26, 473.1, 475, 479.98, as algorithm bandwidths (/ 1.75): 275.58, 270.34, 271.43,
    # 274.27: median (271.43 + 274.27) / 2
    assert h200.facts["nvls_bandwidth"] == pytest.approx((475 + 479.98) / 2 / 1.75 * 1e9)
    times = {}
    for algorithm in ("auto", "ring", "nvls"):
        report = _check(f"device H200\nset sources = calibrated\nset nccl_algorithm = {algorithm}\n"
                        "all_reduce(8 GiB) across 8 GPUs over nvlink is transfer_time ≈ 40 ms\n")
        times[algorithm] = report.verdicts[0].actual.number
    wire = 2 * 7 / 8 * 8 * 2 ** 30
    assert times["ring"] == pytest.approx(wire / (365.6 / 450 * 450e9))
    assert times["nvls"] == pytest.approx(8 * 2 ** 30 / h200.facts["nvls_bandwidth"])  # the buffer at NVLS's algbw
    assert times["auto"] == times["nvls"]  # the faster of the two
    ideal = _check("device H200\nset nccl_algorithm = ring\n"
                   "all_reduce(8 GiB) across 8 GPUs over nvlink is transfer_time ≈ 40 ms\n").verdicts[0]
    assert ideal.actual.number == pytest.approx(wire / 450e9)  # the ideal model: the line rate, whatever the algorithm


def test_nccl_algorithm_refuses_what_it_does_not_know():
    report = _check("device H200\nset nccl_algorithm = tree\nall_reduce(1 GiB) across 8 GPUs over nvlink is ≈ 5 ms\n")
    (problem,) = report.diagnostics
    assert problem.code == "bad-setting" and "auto, ring or nvls, not `tree`" in problem.message


@pytest.mark.parametrize("entry, words", [
    ({"id": "x", "device": "H200"}, "measurement 1 (x): missing fact, value, unit, origin, source, conditions, how"),
    ({"id": "y", "device": "H200", "fact": "hbm_bandwidth", "value": 1, "unit": "furlongs", "origin": "o",
      "source": "s", "conditions": "c", "how": "h"}, "measurement 1 (y): unknown unit 'furlongs'"),
    *[({"id": "z", "device": "H200", "fact": "decode_step_time", "value": 5, "unit": "ms", "origin": "o",
        "source": "s", "conditions": "c", "how": "h", "model": "llama3-8b", "context": 208, **bad},
       f"measurement 1 (z): {words}") for bad, words in (
        ({"model": "llama-9b"}, "`model` must name a catalog model (one of "),
        ({"model": 7}, "`model` must name a catalog model (one of "),
        ({"context": -1}, "`context` must be a whole number of tokens from 0 to 10,000,000"),
        ({"context": 2.5}, "`context` must be a whole number of tokens from 0 to 10,000,000"),
        ({"context": True}, "`context` must be a whole number of tokens from 0 to 10,000,000"),
        ({"context": 10**400}, "`context` must be a whole number of tokens from 0 to 10,000,000"),
        ({"weights": "int3"}, "`weights` must be a dtype (one of "),
        ({"kv": "bf61"}, "`kv` must be a dtype (one of "),
        ({"kernels_per_layer": 0}, "`kernels_per_layer` must be a whole number from 1 to 1,000"),
        ({"graph": "yes"}, "`graph` must be true or false"))],
])
def test_a_malformed_published_entry_is_named_in_words(monkeypatch, entry, words):
    monkeypatch.setattr(published, "catalog_data", lambda name: {"measurement": [entry]})
    monkeypatch.setattr(published, "_shipped", lambda device: None)  # built from published.toml as it is
    published.measurements.cache_clear()
    try:
        with pytest.raises(profiles.ProfileError) as raised:
            published.measurements()
        assert str(raised.value).startswith(f"catalog/published.toml: {words}")
    finally:
        published.measurements.cache_clear()


def _step(text: str, profile):
    """gpu_time of the one workload in `text` on H100-SXM, bound to `profile` (or the catalog device)."""
    import tempfile
    from pathlib import Path

    from gpuspec import api, model
    from gpuspec.sources import rebind

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.gpu"
        path.write_text("device H100-SXM\n" + text + "\n")
        (_, _, workload), = api.load_spec(path).program.workloads
    device = workload.device if profile is None else profile.apply(workload.device)
    return model.estimate(rebind(workload, device))["gpu_time"].number


def test_a_prefills_weight_gemms_are_timed_by_their_shapes_on_a_calibrated_device_only():
    from gpuspec import model
    from gpuspec.kinds.matmul import Matmul, default_tile
    from gpuspec.tensors import Tensor

    whole = published.build("H100-SXM")
    assert whole.facts["gemm_fixed_cost"] == pytest.approx(3.816e-6, rel=1e-3)  # XLA's sm_90 sweep
    device = whole.apply(devices.catalog()["H100-SXM"])

    def gemm(k, n, m=128):  # a lone bf16 GEMM of that shape, as the matmul kind times it on this profile
        return model.estimate(Matmul(Tensor("a", "bf16", (m, k)), Tensor("b", "bf16", (k, n)), default_tile(m, n),
                                     device, tile_written=False))["time"].number

    # Llama 2 7B, 128 tokens: q, k, v, o [4096 x 4096]; gate, up [4096 x 11008]; down [11008 x 4096]; and the
    # output layer [4096 x 32000] over the 32 layers; attention and the norms are a few µs a layer
    layer = 4 * gemm(4096, 4096) + 2 * gemm(4096, 11008) + gemm(11008, 4096) + gemm(4096, 32000) / 32
    prefill = "w = prefill llama2-7b, batch 1, prompt 128 compiled"
    gemms = 32 * layer
    assert gemms < _step(prefill, whole) < gemms + 32 * 20e-6
    without = profiles.Profile(whole.gpu, {k: v for k, v in whole.facts.items() if k != "gemm_fixed_cost"}, {},
                               "the profile without gemm_fixed_cost")
    assert _step(prefill, without) < 0.6 * gemms  # without a size sweep: the roofline, the weights split evenly
    decode = "w = decode llama2-7b, batch 1, context 208 compiled as a CUDA graph"
    assert _step(decode, whole) == pytest.approx(_step(decode, without))  # decode kernels take decode_kernel_cost
    assert devices.catalog()["H100-SXM"].fact("gemm_fixed_cost") is None  # the ideal model has none to add


# --- attention: the tiled-kernel rule fitted per implementation ------------------------------------------------------

def test_the_attention_line_fit_recovers_a_share_and_an_overhead_by_hand():
    from gpuspec.published import _line_fit

    # time per tile-unit y = (key blocks + 1.5) / 0.8 at 4, 16 and 128 key blocks
    share, overhead = _line_fit([(x, (x + 1.5) / 0.8) for x in (4, 16, 128)])
    assert share == pytest.approx(0.8) and overhead == pytest.approx(1.5)
    # a negative intercept is no overhead: the line through the origin, y = x / share
    share, overhead = _line_fit([(4, 4.0), (8, 9.0)])
    # weights 1 / y²: slope = Σ w·x·y / Σ w·x² = (16/16 + 72/81) / (16/16 + 64/81)
    assert overhead == 0 and share == pytest.approx((1 + 64 / 81) / (1 + 72 / 81))


def test_attention_facts_name_their_figures_and_leave_an_origin_out():
    from gpuspec import published

    full = published.data("H100-SXM")
    for name in ("flash2", "flash3", "cudnn", "triton"):
        how = full["derivations"][f"attention_share_{name}"]
        assert how["measurements"] and f"{name} on H100-SXM" in how["how"]
    assert set(full["derivations"]["attention_share_flash3"]["origins"]) == {"flashattention3-paper",
                                                                              "pytorch-benchmark"}
    left = published.data("H100-SXM", ("flashattention3-paper",))
    assert left["derivations"]["attention_share_flash3"]["origins"] == ["pytorch-benchmark"]
    assert left["facts"]["attention_share_flash3"] != full["facts"]["attention_share_flash3"]
    # cuDNN on H100 without the paper: H200's cuDNN frontend runs, the nearest sibling
    assert "H200's" in left["derivations"]["attention_share_cudnn"]["how"]


def test_a_device_without_attention_figures_borrows_only_the_overhead():
    from gpuspec import published

    a100 = published.data("A100-80GB", ("flash-decoding-blog",))
    assert "attention_share_flash2" not in a100["facts"]  # no share: the rule runs at the tensor rate
    assert "median of the tile overheads" in a100["derivations"]["attention_tile_overhead_flash2"]["how"]


def test_a_fact_borrowed_over_several_steps_names_each_step_with_its_own_reason():
    # L4 has no decode measurement; neither has L40S or H100-PCIe: H100-SXM's share is taken, and the derivation
    # says how it was reached, each NEAREST reason beside the step it is about
    how = published.data("L4")["derivations"]["decode_kernel_cost"]["how"]
    assert "H100-SXM's (through the nearest of each part: L40S for L4 (the same Ada AD10x design" in how
    assert "; H100-PCIe for L40S (" in how and "; H100-SXM for H100-PCIe (the same GH100 SM design" in how
    assert "; then " not in how


@pytest.mark.parametrize("setting, words", [
    ("host_ops 1e400", "this number is too large"),
    ("host_ops 2.5", "host_ops must be a whole number of at least 1, not `2.5`"),
    ("kv_repeat 99999999999999999999999", "copying each KV head"),
    ("attention 3", "attention is fused or math, not `3`"),
])
def test_hostile_model_code_settings_are_located_errors(setting, words):
    report = _check(f"device A100-80GB\nset sources = calibrated\ndecode llama3.1-8b, batch 1, {setting} eager is "
                    "step_time ≈ 1 s\n")
    (problem,) = report.diagnostics
    assert words in problem.message and problem.span.line == 3 and not report.verdicts


def test_a_huge_host_op_count_is_a_huge_finite_time_on_a_real_device():
    report = _check("device A100-80GB\nset sources = calibrated\n"
                    "decode llama3.1-8b, batch 1, host_ops 1e308 eager is step_time ≈ 1 s\n")
    (verdict,) = report.verdicts
    assert verdict.status == "fail" and verdict.actual.number == pytest.approx(1e308 * 10.5475e-6, rel=1e-3)


def test_a_compiled_tp_decode_step_all_reduces_at_an_engines_one_shot_cost():
    # vLLM's and TensorRT-LLM's one-shot all-reduce on 2 H100s: 10.0 µs (512 KiB) and 6.9826 µs (72 KiB): 8.4913 µs
    h100 = published.build("H100-SXM")
    assert h100.facts["tp_allreduce_latency"] == pytest.approx(8.4913e-6)
    assert published.build("H200").facts["tp_allreduce_latency"] == pytest.approx(8.4913e-6)  # its nearest's
    a100 = published.build("A100-80GB")  # no A100 engine measured: the Hopper kernels' latency, and it says so
    assert a100.facts["tp_allreduce_latency"] == pytest.approx(8.4913e-6)
    assert "the median over every device measured (H100-SXM)" in a100.derivations["tp_allreduce_latency"]["how"]
    link = h100.facts["nvlink_bandwidth"] / 2
    one_token = 8192 * 2  # Llama 3.1 70B's hidden size, bf16 activations
    spec = ("device H100-SXM\nset sources = model, calibrated\n"
            "decode llama3.1-70b, batch 1, context 1000, tp 2 compiled as a CUDA graph is comm_time ≈ 1.4 ms\n"
            "decode llama3.1-70b, batch 1, context 1000, tp 2 eager is comm_time ≈ 6.4 ms\n")
    graph, graph_ideal, eager, eager_ideal = sorted(_check(spec).verdicts, key=lambda v: (v.claim.span.line, v.source))
    # 2 all-reduces a layer x 80 layers, each its fixed cost and 2(n-1)/n of the activations at half the link
    assert graph.actual.number == pytest.approx(160 * (8.4913e-6 + one_token / link))
    # an eager step's all-reduces are NCCL's, as the collective kind times all_reduce(16 KiB) across 2 GPUs eagerly
    nccl = _check("device H100-SXM\nset sources = calibrated\n"
                  "all_reduce(16384 B) across 2 GPUs over nvlink is ≈ 30 µs\n").verdicts[0].actual.number
    assert eager.actual.number == pytest.approx(160 * nccl) and nccl > 2 * 8.4913e-6
    assert graph_ideal.actual.number == eager_ideal.actual.number  # the ideal model: the catalog's latency for both


def test_a_calibrated_prefill_with_8_bit_weights_attends_at_the_16_bit_tensor_rate():
    from gpuspec import api, model
    from gpuspec.kinds.decode import rules
    from gpuspec.sources import rebind
    from gpuspec.text import SpecText

    h100 = published.build("H100-SXM")
    device = h100.apply(devices.catalog()["H100-SXM"])
    program = api.compile_text(SpecText("p.gpu", "device H100-SXM\nw = prefill llama2-7b, batch 1, prompt 2048, "
                                                 "weights fp8 compiled\n"))
    (_, _, workload), = program.workloads
    e = model.estimate(rebind(workload, device))
    runs = rules._kernel_pattern(e)
    assert len(runs) == 8 and all(count == 1 for _, count in runs)  # seven shaped GEMMs, then attention
    # causal attention of one layer: 4 × 32 heads × 128 × 2048 × 2049 / 2 FLOPs at H100's achievable bf16 rate
    flops = 4 * 32 * 128 * 2048 * 2049 / 2
    assert runs[-1][0] == pytest.approx(flops / h100.facts["tensor_bf16"])
    assert runs[-1][0] > flops / h100.facts["tensor_fp8"] * 1.5  # not the fp8 rate the weights' GEMMs take


def test_the_shipped_profiles_are_what_published_toml_gives_now():
    # gpuspec/catalog/published/*.json.xz, read in place of building a profile at every start (compared by content:
    # xz's bytes may differ between library versions)
    import lzma

    from gpuspec.resources import data_dir

    shipped = sorted(path.name for path in (data_dir("catalog") / published.SHIPPED).glob("*.json.xz"))
    assert shipped == sorted(f"{name}.json.xz" for name in published.measurable())
    for name in published.measurable():
        found = json.loads(lzma.decompress(published.shipped_path(name).read_bytes()))
        assert found == json.loads(lzma.decompress(published.shipped_bytes(name))), \
            f"{name}: run python scripts/generate_published_profiles.py"
        assert published.data(name) == found["profile"]
