"""Real collectives (the rules a profile's collective facts switch on), against numbers worked out by hand: the caller's
latency, NCCL's ring steps, its two protocols, NVLink SHARP; and the published entries they are measured from."""
import re
import statistics
import tomllib
from pathlib import Path

import pytest
from conftest import only, run

from gpuspec import devices, model, published
from gpuspec.devices import Fact
from gpuspec.kinds.collective import Collective, rules

ROOT = Path(__file__).resolve().parent.parent
K, M, G = 2**10, 2**20, 2**30

# A profile's collective facts, round numbers: one way of the ring 360 GB/s, NVLS's algorithm bandwidth 270 GB/s.
FACTS = {"collective_latency": 40e-6, "collective_graph_latency": 15e-6, "collective_simple_cost": 100e-6,
         "nvlink_bandwidth": 720e9, "nvls_bandwidth": 270e9}


def _device(**changed):
    facts = {**FACTS, **changed}
    made = {name: Fact(name, value, value, devices.FIELDS[name][0], f"{value:g}", note="a test's profile")
            for name, value in facts.items() if value is not None}
    return devices.lookup("H100-SXM").with_facts("H100-SXM (calibrated)", made)


def _time(op, size, gpus=8, launch="eager", algorithm="ring", device=None, link="nvlink"):
    workload = Collective(op, size, gpus, link, device or _device(), algorithm=algorithm, launch=launch)
    return model.estimate(workload)


def test_a_small_all_reduce_is_its_latency_and_its_bytes_at_half_the_bus_bandwidth():
    # 1 MiB across 8 GPUs (set nccl_algorithm = ring): 1.75 MiB = 1,835,008 B each way, 5.097 µs at 360 GB/s; LL doubles it: 40 + 10.19 µs,
    # against Simple's 40 + 100 + 5.10 µs
    e = _time("all_reduce", M)
    assert e["transfer_time"].number == pytest.approx(1835008 / 360e9)
    assert e["time"].number == pytest.approx(40e-6 + 2 * 1835008 / 360e9)
    assert "LL protocol" in e["time"].derivation()


def test_a_large_all_reduce_pays_the_simple_protocols_cost_once():
    # 64 MiB: 117,440,512 B each way, 326.2 µs; Simple 40 + 100 + 326.2 = 466.2 µs beats LL's 40 + 652.4
    e = _time("all_reduce", 64 * M)
    assert e["time"].number == pytest.approx(140e-6 + 117440512 / 360e9)
    # the two meet where the bytes take the Simple cost: 100 µs × 360 GB/s = 36 MB on the wire, 20.57 MB of buffer
    crossing = 100e-6 * 360e9 / 1.75
    below, above = _time("all_reduce", crossing * 0.99)["time"], _time("all_reduce", crossing * 1.01)["time"]
    assert below.inputs[0].number < below.inputs[1].number and above.inputs[1].number < above.inputs[0].number


def test_a_cuda_graph_leaves_the_host_out_and_ring_steps_move_the_latency():
    assert _time("all_reduce", M, launch="graph")["time"].number == pytest.approx(15e-6 + 2 * 1835008 / 360e9)
    # 4 GPUs: 6 ring steps, not 14: 15 − 8 × 0.6 = 10.2 µs; 1.5 MiB each way
    four = _time("all_reduce", M, gpus=4, launch="graph")
    assert four["latency"].number == pytest.approx(10.2e-6)
    assert four["time"].number == pytest.approx(10.2e-6 + 2 * 1.5 * M / 360e9)
    # an all-gather across 8 GPUs: 7 steps: 15 − 7 × 0.6 = 10.8 µs (MSCCL++ measured 12.53 against 16.96 µs)
    assert _time("all_gather", K, launch="graph")["latency"].number == pytest.approx(10.8e-6)
    assert _time("all_gather", K)["latency"].number == pytest.approx(40e-6 - 4.2e-6)


def test_nvlink_sharp_runs_all_reduce_above_four_gpus_at_one_algorithm_bandwidth():
    ring8 = 1.75 * 8 * G / 360e9
    sharp = 8 * G / 270e9  # 31.81 ms, whatever the GPU count
    assert _time("all_reduce", 8 * G, algorithm="auto")["transfer_time"].number == pytest.approx(sharp)
    assert _time("all_reduce", 8 * G, gpus=5, algorithm="auto")["transfer_time"].number == pytest.approx(sharp)
    assert _time("all_reduce", 8 * G)["transfer_time"].number == pytest.approx(ring8)
    # a small one too: 1 MiB at 270 GB/s (3.88 µs) beats the ring's 1.75 MiB at 360 GB/s (5.10 µs)
    assert _time("all_reduce", M, algorithm="auto")["transfer_time"].number == pytest.approx(M / 270e9)
    assert _time("all_reduce", 8 * G, algorithm="nvls")["time"].number == pytest.approx(140e-6 + sharp)
    # 4 GPUs, an all-gather, or PCIe: no NVLS, the ring
    assert _time("all_reduce", 8 * G, gpus=4, algorithm="auto")["transfer_time"].number == pytest.approx(1.5 * 8 * G / 360e9)
    assert _time("all_gather", 8 * G, algorithm="auto")["transfer_time"].number == pytest.approx(7 / 8 * 8 * G / 360e9)
    # where the ring is faster (a profile whose NVLS is slow), auto takes the ring
    slow = _device(nvls_bandwidth=100e9)
    assert _time("all_reduce", 8 * G, algorithm="auto", device=slow)["transfer_time"].number == pytest.approx(ring8)
    # a profile without NVLS: the ring, even when the spec says nvls
    assert _time("all_reduce", 8 * G, algorithm="nvls", device=_device(nvls_bandwidth=None))[
        "transfer_time"].number == pytest.approx(ring8)


def test_the_ideal_model_keeps_its_one_latency_and_the_line_rate():
    catalog = devices.lookup("H100-SXM")
    for launch in ("eager", "graph"):
        e = _time("all_reduce", M, launch=launch, device=catalog)
        assert e["time"].number == pytest.approx(8e-6 + 1835008 / 450e9)
    # a profile without the Simple protocol's cost (a user's own calibration): the old sum, with its numbers
    old = _device(collective_simple_cost=None, nvls_bandwidth=None)
    assert _time("all_reduce", M, device=old)["time"].number == pytest.approx(40e-6 + 1835008 / 360e9)


def test_set_nccl_launch_in_a_spec():
    spec = ("device H100-SXM\nset sources = calibrated\nset nccl_launch = graph\nset nccl_algorithm = ring\n"
            "all_reduce(16 KiB) across 8 GPUs over nvlink is ≈ 15.4 µs\n")
    # H100-SXM's published profile: no graph-timed collective measured, so NCCL's tuning model's 15.0 µs; 16 KiB is
    # 28,672 B each way, twice over at half of ~369 GB/s: about 0.16 µs
    verdict = only(spec)
    assert verdict.status == "pass", verdict
    assert verdict.actual.number == pytest.approx(15e-6 + 2 * 28672 / (published.build("H100-SXM").facts[
        "nvlink_bandwidth"] / 2), rel=1e-6)


@pytest.mark.parametrize("written, words", [
    ("set nccl_launch = grpah", "graph"),
    ("set nccl_launch = 3", "not a number"),
    ("set nccl_launch = graph, eager", "not `graph eager`"),
    ("set nccl_launch = graph eager", "unexpected `eager`"),
    ("set nccl_launch = GRAPH", "eager or graph, not `GRAPH`"),
    ("set nccl_launch = gräph\u202e", "unexpected"),
    ("set nccl_launch = 1e999", "too large"),
])
def test_nccl_launch_refuses_what_it_does_not_know(written, words):
    report = run(f"device H100-SXM\n{written}\nall_reduce(1 GiB) across 8 GPUs over nvlink is ≈ 5 ms\n")
    problems = list(report.diagnostics)
    assert problems and problems[0].span.line == 2 and not report.verdicts, problems
    assert words in problems[0].message + (problems[0].help or ""), problems[0]


# --- The published entries ------------------------------------------------------------------------------------------

def _entries():
    return tomllib.loads((ROOT / "gpuspec" / "catalog" / "published.toml").read_text(encoding="utf-8"))["measurement"]


def test_each_simple_cost_is_what_its_sweep_gives():
    """The rule its `how` states: time − the 32 KiB time − size × 1.75 / the top row's busbw, the median over the rows
    from 64 MiB up to the top row (each entry names its top row: the largest, or the last before NVLS takes over)."""
    sweeps = [e for e in _entries() if e["fact"] == "collective_simple_cost"]
    assert len(sweeps) >= 5
    for entry in sweeps:
        if "sweep_time" in entry:
            times = {size: t * 1e-6 for size, t in entry["sweep_time"]}
        else:
            times = {size: size * 1.75 / (busbw * 1e9) for size, busbw in entry["sweep_busbw"]}
        top = int(re.search(r"the (\d+) GiB busbw", entry["how"]).group(1)) * G
        assert top in times, entry["id"]
        rate = top * 1.75 / times[top]
        rows = [s for s in times if 64 * M <= s < top]
        cost = statistics.median(times[s] - times[32 * K] - s * 1.75 / rate for s in rows)
        assert entry["value"] == pytest.approx(cost * 1e6, abs=0.06), entry["id"]
        assert f"the {len(rows)} rows" in entry["how"], entry["id"]


def test_the_graph_latency_is_measured_where_it_was_and_nccls_own_estimate_elsewhere():
    h200 = published.build("H200")
    assert h200.facts["collective_graph_latency"] == pytest.approx(15.0e-6)
    assert "tuning.cc" in h200.derivations["collective_graph_latency"]["how"]
    # leaving MSCCL++ out leaves A100 without a graph-timed figure
    assert published.build("A100-80GB", exclude=("mscclpp",)).facts["collective_graph_latency"] == pytest.approx(15e-6)
    # the eager latency never takes a graph-timed entry
    cited = {m["id"] for m in published.build("A100-80GB").derivations["collective_latency"]["measurements"]}
    assert cited == {"mle-a100-allreduce-32kib", "azure-a100-allreduce-32kib"}


def test_nvls_bandwidth_is_only_a_parts_own():
    assert "nvls_bandwidth" not in published.build("A100-80GB").facts  # no NVSwitch SHARP
    assert "nvls_bandwidth" not in published.build("H100-PCIe").facts  # its nearest, H100-SXM, has one
    b200 = published.build("B200")
    assert b200.facts["nvls_bandwidth"] == pytest.approx(838.0 / 1.75 * 1e9)


def test_every_collective_figure_fits_the_entries_of_its_origin_and_device():
    entries = _entries()
    device = origin = None
    seen = 0
    for line in (ROOT / "benchmarks" / "accuracy" / "corpus" / "collectives.gpu").read_text().splitlines():
        if line.startswith("device "):
            device = line.split()[1]
        elif line.startswith("# origin: "):
            origin = line.split(": ", 1)[1]
        elif line.startswith("# fits: "):
            listed = line.split(": ", 1)[1].split(", ")
            expected = [e["id"] for e in entries if e["origin"] == origin
                        and (e["device"] == device or device in e.get("stands_for", []))]
            assert listed == (expected or ["none"]), (device, origin)
            seen += 1
    assert seen >= 40



def test_another_kind_takes_a_small_all_reduce_from_the_same_rule():
    # what a decode step's tensor-parallel all-reduces use: 2 GPUs in a CUDA graph take 2 ring steps, 15 − 12 × 0.6
    e = _time("all_reduce", 16 * K)
    assert rules.fixed_cost(e, "all_reduce", 2, graph=True).number == pytest.approx(7.8e-6)
    assert rules.fixed_cost(e, "all_reduce", 8, graph=False).number == pytest.approx(40e-6)
    catalog = _time("all_reduce", 16 * K, device=devices.lookup("H100-SXM"))
    assert rules.fixed_cost(catalog, "all_reduce", 2, graph=True).number == pytest.approx(8e-6)  # the catalog's
