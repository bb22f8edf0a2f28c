"""Replays of a CUDA graph (`N launches of G`, G = `K launches of W as a CUDA graph`) and a sync per launch
(`set sync = per_launch`), against hand-worked numbers and against the queue played out launch by launch.

The H100 catalog's launch costs: an eager PyTorch launch 3.6 µs, a graph launch 2.5 µs, 0.5 µs of GPU time per graph
node, a 2 µs kernel floor (gpuspec/catalog/devices.toml, with their sources). `v * 2` on 4096 bf16 numbers moves
16 kB: its kernel takes the 2 µs floor.
"""
import json
import math
import subprocess
import sys
from fractions import Fraction

import pytest
from conftest import verdicts
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuspec import harness, model
from gpuspec.api import compile_text
from gpuspec.model import launches
from gpuspec.text import SpecText

HEAD = "device H100-SXM\nv = bf16[4096]\nsmall = v * 2\ng = 20 launches of small as a CUDA graph\n"


def workloads(text: str) -> dict:
    program = compile_text(SpecText("r.gpu", text))
    return {statement.split(" = ")[0]: w for _, statement, w in program.workloads}


def test_a_graph_replayed_a_hundred_times_costs_one_graph_launch_a_replay():
    e = model.estimate(workloads(HEAD + "r = 100 launches of g\n")["r"])
    assert e["launches"].number == 100 and e["kernels"].number == 2_000
    assert e["launch_cost"].number == pytest.approx(2.5e-6)
    assert e["host_time"].number == pytest.approx(100 * 2.5e-6)             # 250 µs of host work
    assert e["busy_time"].number == pytest.approx(100 * 20 * (2e-6 + 0.5e-6))  # 5 ms: 20 nodes of 2.5 µs a replay
    # the GPU is the slower side: the first replay starts after its launch, then they run back to back
    assert e["time"].number == pytest.approx(2.5e-6 + 100 * 50e-6)           # 5.0025 ms
    assert e["utilization"].number == 1.0


def test_with_a_sync_per_launch_nothing_overlaps():
    e = model.estimate(workloads(HEAD + "set sync = per_launch\nr = 100 launches of g\n")["r"])
    assert e["time"].number == pytest.approx(100 * (2.5e-6 + 50e-6))        # 5.25 ms: launch, then the replay
    assert e["busy_time"].number == pytest.approx(5e-3)
    assert e["busy_share"].number == pytest.approx(50 / 52.5)
    assert "nothing overlaps" in e["time"].note


def test_an_eager_stream_with_a_sync_per_launch_pays_host_and_gpu_one_after_the_other():
    w = workloads(HEAD + "s = 1000 launches of small\nset sync = per_launch\nt = 1000 launches of small\n")
    ahead, synced = model.estimate(w["s"]), model.estimate(w["t"])
    assert ahead["time"].number == pytest.approx(1000 * 3.6e-6 + 2e-6)     # the host sets the pace: 3.602 ms
    assert synced["time"].number == pytest.approx(1000 * (3.6e-6 + 2e-6))  # 5.6 ms
    assert synced["host_time"].number == ahead["host_time"].number         # the same launches
    assert synced["bound"].number == "overhead"
    assert "a sync per launch" in synced["time"].note


def test_within_a_launch_of_several_kernels_host_and_gpu_still_overlap():
    """y = v * 2 + exp(v) eager is three kernels: launched at 3.6, 7.2 and 10.8 µs, each 2 µs, each starting when
    launched: a launch ends at 12.8 µs, and with a sync the next begins then."""
    w = workloads(HEAD + "y = v * 2 + exp(v) eager\nset sync = per_launch\nt = 50 launches of y\n")
    assert model.estimate(w["t"])["time"].number == pytest.approx(50 * 12.8e-6)


def test_the_claims_of_a_replayed_graph_read_as_written():
    spec = HEAD + "set sync = per_launch\nr = 100 launches of g:\n    ≈ 5.25 ms, 100 launches, 2,000 kernels\n" \
                  "    busy_share ≈ 95%\n    overhead-bound\n"
    found = [v for v in verdicts(spec) if v.source == "model"]
    assert [v.status for v in found] == ["pass"] * 5, [(v.claim.text, v.status) for v in found]


def played_out_synced(pattern: list[float], repeats: int, cost: float) -> tuple[Fraction, Fraction]:
    """(total, busy) launching every kernel, each repeat starting once the one before has ended."""
    cost_, now, busy = Fraction(cost), Fraction(0), Fraction(0)
    for _ in range(repeats):
        end, start_of_repeat = now, now
        for index, duration in enumerate(pattern, 1):
            start = max(end, start_of_repeat + index * cost_)
            end = start + Fraction(duration)
            busy += Fraction(duration)
        now = end
    return now, busy


UNIT = 2.0**-20


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=6), st.integers(1, 8), st.integers(0, 30),
       st.integers(1, 50))
def test_the_synced_closed_form_matches_the_queue_played_out(pattern, repeats, cost, window):
    times = [d * UNIT for d in pattern]
    total, busy = played_out_synced(times, repeats, cost * UNIT)
    found = launches.run(times, repeats, cost * UNIT, window * UNIT, synced=True)
    assert found.total == float(total)
    assert found.busy == pytest.approx(float(busy), rel=1e-12)
    assert 0.0 <= found.utilization <= 1.0


def test_huge_replay_counts_and_graphs_are_computed_not_played_out():
    spec = ("device H100-SXM\nv = bf16[4096]\nsmall = v * 2\nbig = 100,000 launches of small as a CUDA graph\n"
            "set sync = per_launch\nr = 1e15 launches of big\n")
    e = model.estimate(workloads(spec)["r"])
    assert e["kernels"].number == pytest.approx(1e20)
    assert e["time"].number == pytest.approx(1e15 * (2.5e-6 + 100_000 * 2.5e-6))
    assert math.isfinite(e["busy_share"].number)


def test_a_sync_changes_nothing_for_one_graph_launch():
    w = workloads(HEAD + "set sync = per_launch\nh = 20 launches of small as a CUDA graph\n")
    assert model.estimate(w["h"])["time"].number == pytest.approx(model.estimate(w["g"])["time"].number)


def test_harnesses_replay_the_graph_and_wait_after_each_launch(tmp_path):
    spec = HEAD + "r = 100 launches of g\nset sync = per_launch\ns = 1000 launches of small\nq = 10 launches of g\n"
    program = compile_text(SpecText("h.gpu", spec))
    plans, refused = harness.plans(program)
    assert refused == []
    source = harness.render("h.gpu", plans, refused)
    assert "captured.replay" in source and "torch.cuda.synchronize()" in source
    script, output = tmp_path / "h.py", tmp_path / "h.json"
    script.write_text(source, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script), "--device", "cpu", "--small", "--fake-timer", "--output",
                           str(output)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    records = {w["statement"].split(" = ")[0]: w for w in json.loads(output.read_text(encoding="utf-8"))["workloads"]}
    for name in ("r", "s", "q"):
        assert records[name]["status"] == "ok", records[name].get("reason")
        assert set(records[name]["metrics"]) >= {"time", "host_time"}


def test_a_harness_refuses_replays_of_more_launches_than_it_captures():
    spec = ("device H100-SXM\nv = bf16[4096]\nsmall = v * 2\nbig = 1,000 launches of small as a CUDA graph\n"
            "r = 1,000 launches of big\n")
    plans, refused = harness.plans(compile_text(SpecText("b.gpu", spec)))
    assert [p["raw"]["statement"] for p in plans][-1].startswith("big")
    [(_, reason)] = refused
    assert "1M launches" in reason or "1,000,000 launches" in reason


def test_the_timeline_picture_refuses_replays_and_synced_streams_in_words(tmp_path):
    spec = tmp_path / "p.gpu"
    spec.write_text(HEAD + "r = 100 launches of g\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "gpuspec", "plot", "timeline", f"{spec}:5", "--out",
                           str(tmp_path / "p.png")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "`r` replays a CUDA graph" in done.stderr
