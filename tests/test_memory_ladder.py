"""The memory ladder: capacities per SM and per chip, latencies as ranges, and ratios between them."""
from conftest import H100, only

from gpuspec import devices

D = devices.lookup("H100-SXM")


def test_capacities():
    assert D.fact("register_file_per_sm").value == 256 * 1024
    assert D.fact("shared_memory_per_sm").value == 228 * 1024
    assert D.fact("l2_size").value == 50e6
    assert D.fact("memory_size").value == 80e9


def test_latencies_are_ranges_ordered_down_the_ladder():
    order = ["register_latency", "shared_memory_latency", "l2_latency", "hbm_latency"]
    highs = [D.fact(name).high for name in order]
    lows = [D.fact(name).low for name in order]
    assert all(a < b for a, b in zip(highs, lows[1:]))


def test_the_lessons_ratios():
    assert only(H100 + "device.memory_size / device.register_file_per_sm = 305,176×").status == "pass"
    assert only(H100 + "80 GB / 256 KB = 312,500×").status == "pass"
    assert only(H100 + "device.sms * device.register_file_per_sm = 34.6 MB").status == "pass"
    assert only(H100 + "device.memory_size / (device.sms * device.register_file_per_sm) = 2,312×").status == "pass"


def test_a_latency_range_against_a_point_claim():
    assert only(H100 + "device.l2_latency ≈ 200 cycles").status == "fail"  # textbook; measured 260–291
    assert only(H100 + "device.l2_latency = 200–300 cycles").status == "pass"
