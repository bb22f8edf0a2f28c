"""The launch queue: the host enqueues one launch per launch cost, the GPU runs kernels in order as they arrive."""
import pytest
from conftest import only, verdicts

from gpuspec.model import launches

US = 1e-6


def test_big_kernels_keep_the_gpu_busy():
    # 20 µs kernels launched every 5 µs: after the first launch the GPU never waits.
    t = launches.run([20 * US], 1000, 5 * US, window=1.0)
    assert t.total == pytest.approx(5 * US + 1000 * 20 * US)
    assert t.busy == pytest.approx(1000 * 20 * US)
    assert t.host == pytest.approx(1000 * 5 * US)


def test_tiny_kernels_leave_the_gpu_waiting_on_the_host():
    # 2 µs kernels launched every 5 µs: each waits for its launch; the GPU is busy 2 µs of every 5.
    t = launches.run([2 * US], 1000, 5 * US, window=1.0)
    assert t.total == pytest.approx(1000 * 5 * US + 2 * US)
    assert t.busy / t.total == pytest.approx(2000 / 5002)


def test_the_general_queue_matches_the_closed_form():
    uniform = launches.run([2 * US], 50, 5 * US, window=3 * US)
    mixed = launches.run([2 * US, 2 * US + 1e-18], 25, 5 * US, window=3 * US)  # not uniform: simulated
    assert mixed.total == pytest.approx(uniform.total)
    assert mixed.utilization == pytest.approx(uniform.utilization)


def test_a_queue_that_backs_up_and_drains():
    # A 30 µs kernel, then four 1 µs kernels, launched every 5 µs: the tiny ones queue behind the big one.
    t = launches.run([30 * US, 1 * US, 1 * US, 1 * US, 1 * US], 1, 5 * US, window=1.0)
    assert t.total == pytest.approx(5 * US + 30 * US + 4 * US)


def test_sampled_utilization_counts_windows_with_any_kernel():
    # Kernels of 2 µs every 5 µs: every window of 10 µs holds a kernel (100%), though the GPU is busy 40%.
    t = launches.run([2 * US], 1000, 5 * US, window=10 * US)
    assert t.utilization == pytest.approx(1.0, abs=1e-3)
    # Windows of 1 µs: only those a kernel touches count.
    fine = launches.run([2 * US], 1000, 5 * US, window=1 * US)
    assert 0.38 < fine.utilization < 0.62


def test_a_graph_replaces_launches_by_one_launch_and_a_cost_per_node():
    t = launches.run([2 * US], 1000, 5 * US, window=1.0, graph_launch=2.5 * US, node_cost=0.5 * US)
    assert t.total == pytest.approx(2.5 * US + 1000 * 2.5 * US)
    assert t.host == pytest.approx(2.5 * US)


SPEC = """device H100-SXM with launch_cost = 5 µs
x = bf16[4096, 4096]
v = bf16[4096]
big = x * 2
small = v * 2
"""


def test_stream_metrics_in_a_spec():
    found = verdicts(SPEC + "s = 1000 launches of small:\n    busy_share ≈ 40%\n    utilization = 100%\n"
                     "    overhead-bound\n    5 ms\n    host_time = 5 ms\n")
    assert [v.status for v in found] == ["pass"] * 5
    assert only(SPEC + "s = 1000 launches of big is memory-bound").status == "pass"


def test_a_stream_as_a_cuda_graph():
    verdict = only(SPEC + "s = 1000 launches of small as a CUDA graph is 1 launches")
    assert verdict.status == "pass"


def test_the_sample_window_is_a_setting():
    assert only(SPEC + "set sample_window = 1 µs\ns = 1000 launches of small is utilization < 70%").status == "pass"


def test_a_stream_repeats_every_kernel_of_a_row_wise_attention_or_matmul_workload():
    from conftest import H100, verdicts

    spec = H100 + ("x = bf16[32, 1024]\ns = softmax(x) eager\nm = bf16[64, 64]\nmm = m @ m\n"
                   # three kernels per softmax, each on the 2 µs floor, launched every 3.6 µs: the host sets the pace
                   "1000 launches of s is kernels = 3000, launches = 3000, overhead-bound, ≈ 10.802 ms ± 0.1%\n"
                   "100 launches of mm is 100 kernels, ≈ 362 µs ± 0.1%\n")
    assert [v.status for v in verdicts(spec)] == ["pass"] * 6
