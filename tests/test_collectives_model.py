"""Ring collectives against hand-worked numbers: 8 H100s over NVLink (900 GB/s both ways, 450 GB/s each way)."""
import pytest
from conftest import H100, only, verdicts

from gpuspec import devices, model
from gpuspec.kinds.collective import Collective

D = devices.lookup("H100-SXM")


def ring(op, size, gpus=8, link="nvlink"):
    return model.estimate(Collective(op, size, gpus, link, D))


def test_all_reduce_sends_two_n_minus_one_over_n_of_the_buffer():
    e = ring("all_reduce", 1e9)
    assert e["wire_bytes"].number == pytest.approx(2 * 7 / 8 * 1e9)
    assert e["transfer_time"].number == pytest.approx(1.75e9 / 450e9)
    assert e["time"].number == pytest.approx(8e-6 + 1.75e9 / 450e9)  # the catalog's fixed latency first
    assert e["busbw"].number == pytest.approx(1.75e9 / (8e-6 + 1.75e9 / 450e9))


def test_all_gather_and_reduce_scatter_send_half_of_that():
    assert ring("all_gather", 1e9)["wire_bytes"].number == pytest.approx(7 / 8 * 1e9)
    assert ring("reduce_scatter", 1e9)["transfer_time"].number * 2 == \
        pytest.approx(ring("all_reduce", 1e9)["transfer_time"].number)


def test_a_small_collective_costs_its_latency():
    e = ring("all_reduce", 16 * 1024)
    assert e["transfer_time"].number < 1e-7 < 8e-6 < e["time"].number


def test_two_gpus_over_pcie():
    e = ring("all_reduce", 1e9, gpus=2, link="pcie")
    assert e["link_bandwidth"].number == pytest.approx(64e9)
    assert e["transfer_time"].number == pytest.approx(1e9 / 64e9)


def test_collectives_in_a_spec():
    spec = H100 + "ar = all_reduce(1 GB) across 8 GPUs over nvlink:\n    ≈ 3.9 ms\n    busbw ≈ 450 GB/s\n"
    assert [v.status for v in verdicts(spec)] == ["pass", "pass"]
    assert only(H100 + "all_gather(2 GiB) across 4 GPUs is wire_share = 0.75").status == "pass"


def test_a_collective_of_a_named_tensor_moves_the_tensors_bytes():
    """all_gather(t) of a bf16 [4096, 4096] tensor is all_gather(33,554,432 B): 4096 × 4096 × 2 B, the gathered
    result, as the sized form means it; a workload's result is a tensor too (c = a @ b: 64 × 48 × 2 B)."""
    from gpuspec.api import compile_text
    from gpuspec.text import SpecText

    program = compile_text(SpecText("c.gpu", "device H100-SXM\nt = bf16[4096, 4096]\na = bf16[64, 32]\n"
                                             "b = bf16[32, 48]\nc = a @ b\nall_gather(t) across 8 GPUs\n"
                                             "all_reduce(c) across 2 GPUs\n"))
    named, result = [w for _, _, w in program.workloads if w.kind == "collective"]
    assert named.size == 4096 * 4096 * 2 == 33_554_432
    assert model.estimate(named)["time"].number == pytest.approx(ring("all_gather", 33_554_432)["time"].number)
    assert result.size == 64 * 48 * 2
