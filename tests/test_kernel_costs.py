"""The costs the one kernel floor stood for, split: a kernel's back-to-back gap, the latency of a call timed alone,
and `set timing = ...`, which says how a figure was timed. Every number here is worked by hand."""
from __future__ import annotations

import pytest

from gpuspec import api, devices, harness, published

# A device of one's own with the profile-only facts written out, so that the arithmetic is plain: a kernel run back to
# back costs 1.5 µs beyond its work, a call timed alone 5 µs, and HBM moves 4 TB/s.
MINE = "device mine from H200 with kernel_gap = 1.5 µs, lone_kernel_latency = 5 µs, hbm_bandwidth = 4 TB/s\n" \
       "x = fp32[65536]\ny = fp32[65536]\n"
ADD_BYTES = 3 * 65536 * 4  # x + y: two fp32 inputs read, one output written: 786,432 B
ADD_WORK = ADD_BYTES / 4e12  # 196.6 ns


def _values(text: str) -> list[float]:
    report = api.check_text(text)
    assert not report.diagnostics, report.diagnostics
    return [v.actual.number for v in report.verdicts]


def test_a_kernel_timed_alone_takes_the_lone_latency_and_its_work():
    (time,) = _values(MINE + "x + y is ≈ 5.2 µs\n")
    assert time == pytest.approx(5e-6 + ADD_WORK)  # 5.197 µs


def test_a_kernel_timed_alone_on_a_device_with_no_lone_latency_says_it_was_counted_back_to_back():
    # a device of one's own from a part with no catalog lone latency (the ideal H200 has none): the gap alone
    (value,) = [v.actual for v in api.check_text(
        "device gap_only from H200 with kernel_gap = 1.5 µs, hbm_bandwidth = 4 TB/s\nx = fp32[65536]\n"
        "y = fp32[65536]\nx + y is ≈ 1.7 µs\n").verdicts]
    assert value.number == pytest.approx(1.5e-6 + ADD_WORK)
    assert value.note.startswith("timed alone, but the profile has no lone-kernel latency: counted as back to back")


def test_back_to_back_a_kernel_takes_the_gap_and_its_work():
    (time,) = _values(MINE + "set timing = back_to_back\nx + y is ≈ 1.7 µs\n")
    assert time == pytest.approx(1.5e-6 + ADD_WORK)  # 1.697 µs: RRZE's graphs, a profiler's durations


def test_the_derivation_says_how_the_figure_was_timed():
    # the note over the sum names the cost the first kernel paid: the lone latency, or the gap as every other kernel
    alone = api.check_text(MINE + "x + y is ≈ 5.2 µs\n").verdicts[0].actual
    back = api.check_text(MINE + "set timing = back_to_back\nx + y is ≈ 1.7 µs\n").verdicts[0].actual
    assert alone.note.startswith("timed alone:") and back.note.startswith("back to back:")
    (floor,) = _values(MINE + "set timing = back_to_back\nw = x * 2 + 1\nw.t_floor is ≈ 3 µs\n")
    assert floor == pytest.approx(2 * 1.5e-6)


def test_an_eager_list_timed_alone_pays_the_lone_latency_once_and_the_gap_for_each_later_kernel():
    # x * 2 + 1 eager: two kernels, each reading 262,144 B and writing 262,144 B (0.131 µs at 4 TB/s)
    (time, floor) = _values(MINE + "w = x * 2 + 1\nw.time is ≈ 6.8 µs\nw.t_floor is ≈ 6.5 µs\n")
    each = 2 * 65536 * 4 / 4e12
    assert time == pytest.approx(5e-6 + each + 1.5e-6 + each)  # 6.762 µs
    assert floor == pytest.approx(5e-6 + 1.5e-6)


def test_a_stream_runs_its_kernels_back_to_back_though_the_workload_is_timed_alone():
    # 1,000 graph nodes: each the gap + the work + the catalog's 0.5 µs per node; the lone latency is not repeated
    (busy,) = _values(MINE + "w = x + y\ns = 1000 launches of w as a CUDA graph\ns.busy_time is ≈ 2.2 ms\n")
    assert busy == pytest.approx(1000 * (1.5e-6 + ADD_WORK + 0.5e-6))  # 2.197 ms


def test_the_ideal_model_is_the_same_however_a_figure_was_timed():
    # the catalog has no gap and no lone latency: the kernel floor (2 µs) decides either way
    alone, back = _values("device H200\nx = fp32[65536]\ny = fp32[65536]\nx + y is ≈ 2 µs\n"
                          "set timing = back_to_back\nx + y is ≈ 2 µs\n")
    assert alone == back == pytest.approx(2e-6)
    assert devices.catalog()["H200"].fact("kernel_gap") is None
    assert devices.catalog()["H200"].fact("lone_kernel_latency") is None


def test_the_published_profiles_take_the_gap_from_graphs_and_the_lone_latency_from_nvbench():
    h200 = published.build("H200").facts
    assert h200["kernel_gap"] == pytest.approx(1.285e-6)  # RRZE: 65,536 B / 51 GB/s per node of a CUDA graph
    assert h200["kernel_floor"] == h200["kernel_gap"]  # the same figure, for the kinds that take a floor
    assert h200["lone_kernel_latency"] == pytest.approx(4.279e-6)  # nvbench's cold time of a 64 KiB kernel
    assert published.build("H100-SXM").facts["lone_kernel_latency"] == pytest.approx(4.279e-6)  # H200's, as it is
    assert "lone_kernel_latency" not in published.build("H200", exclude=("cccl-nvbench",)).facts


def test_on_the_published_profile_x_times_2_timed_alone_is_the_lone_latency_plus_the_bytes():
    report = api.check_text("device H100-SXM\nset sources = calibrated\nx = bf16[4096, 4096]\n"
                            "x * 2 is ≈ 26.5 µs\nset timing = back_to_back\nx * 2 is ≈ 23.6 µs\n")
    alone, back = (v.actual.number for v in report.verdicts)
    work = 2 * 2 * 4096 ** 2 / 3015e9  # 22.26 µs at H100-SXM's published 3.015 TB/s
    assert alone == pytest.approx(4.279e-6 + work)  # 26.54 µs
    assert back == pytest.approx(1.3e-6 + work)  # Hazy Research's 1.3 µs per kernel of a graph on H100


def test_timing_takes_its_words_and_names_them_when_it_is_wrong():
    report = api.check_text("device H200\nset timing = back_to_bak\n")
    (error,) = report.diagnostics
    assert error.code == "bad-setting" and "alone or back_to_back" in error.message
    assert "back_to_back" in (error.help or "")
    report = api.check_text("device H200\nset timing = 3 µs\n")
    assert [d.code for d in report.diagnostics] == ["bad-setting"]


def test_a_workload_timed_alone_keeps_the_harness_key_it_had_and_back_to_back_is_another():
    from gpuspec.text import SpecText

    alone = api.compile_text(SpecText("a.gpu", "device H200\nx = fp32[65536]\nx * 2 is ≈ 2 µs\n"))
    back = api.compile_text(SpecText("b.gpu", "device H200\nx = fp32[65536]\nset timing = back_to_back\n"
                                              "x * 2 is ≈ 2 µs\n"))
    (w_alone,), (w_back,) = ([w for _, _, w in program.workloads] for program in (alone, back))
    assert "timing" not in harness._structure(w_alone)
    assert harness.workload_key("", w_alone) != harness.workload_key("", w_back)


# --- L2 residency and the stream's own launch gap ---------------------------------------------------------------

RESIDENT = "device mine from H200 with kernel_gap = 1.5 µs, lone_kernel_latency = 5 µs, hbm_bandwidth = 4 TB/s, " \
           "l2_bandwidth = 10 TB/s, l2_usable = 40 MB, stream_launch_gap = 1 µs, cpp_launch_cost = 1 µs\n" \
           "x = fp32[65536]\ny = fp32[65536]\n"


def test_a_kernel_run_back_to_back_whose_bytes_fit_in_l2_moves_them_at_l2_bandwidth():
    back, alone = _values(RESIDENT + "w = x + y\nset timing = back_to_back\nx + y is ≈ 1.58 µs\n"
                          "set timing = alone\nx + y is ≈ 5.2 µs\n")
    assert back == pytest.approx(1.5e-6 + ADD_BYTES / 10e12)  # 1.579 µs: the data a repeat left in L2
    assert alone == pytest.approx(5e-6 + ADD_BYTES / 4e12)  # after an L2 flush it comes from HBM: 5.197 µs


def test_bytes_beyond_the_usable_l2_come_from_hbm_even_back_to_back():
    (back,) = _values(RESIDENT + "a = fp32[4194304]\nb = fp32[4194304]\nset timing = back_to_back\n"
                      "a + b is ≈ 14 µs\n")
    assert back == pytest.approx(1.5e-6 + 3 * 4194304 * 4 / 4e12)  # 50.3 MB > 40 MB: 14.08 µs


def test_a_kernel_launched_from_a_stream_costs_the_gpu_the_stream_gap_beyond_a_graph_node():
    stream, graph = _values(RESIDENT + "set launched_from = cpp\nw = x + y\n"
                            "s = 1000 launches of w\ns.time is ≈ 2.58 ms\n"
                            "g = 1000 launches of w as a CUDA graph\ng.busy_time is ≈ 2.08 ms\n")
    per_kernel = 1.5e-6 + ADD_BYTES / 10e12  # back to back, from L2: 1.579 µs
    # from the stream: the first launch after 1 µs of host time, then the GPU sets the pace at 2.579 µs a kernel
    assert stream == pytest.approx(1e-6 + 1000 * (per_kernel + 1e-6))
    assert graph == pytest.approx(1000 * (per_kernel + 0.5e-6))  # a graph node: the catalog's 0.5 µs, no stream gap


def test_the_published_l2_and_stream_gap_facts_and_their_second_origin():
    h200 = published.build("H200").facts
    assert h200["l2_bandwidth"] == pytest.approx(9666.0e9)  # RRZE's plateau at 39.5 MiB, not the 1.5 MiB peak
    assert h200["l2_usable"] == pytest.approx(43 * 2**20)
    assert h200["stream_launch_gap"] == pytest.approx(1.182e-6)  # 6.742 - 5.560 µs per kernel at 26 MB
    without = published.build("H200", exclude=("rrze-gpu-benches",)).facts
    assert without["stream_launch_gap"] == pytest.approx(0.957e-6)  # nvbench issue 194: 10.267 - 9.310 µs
    assert "l2_bandwidth" not in without  # no L2 measurement outside RRZE
