"""The device catalog: every device the issue names, every number with a source, dense tensor rates."""
import pytest

from gpuspec import devices

REQUIRED = ("H100-SXM", "H100-PCIe", "H200", "A100-80GB", "A100-40GB", "B200", "L40S", "L4", "RTX-4090")


def test_the_catalog_has_every_required_device():
    assert set(REQUIRED) <= set(devices.catalog())


@pytest.mark.parametrize("name", REQUIRED)
def test_every_number_carries_a_source_that_the_catalog_lists(name):
    references = devices.references()
    for fact in devices.catalog()[name].facts.values():
        assert fact.reference in references, f"{name}.{fact.name} has no listed reference"


@pytest.mark.parametrize("name", REQUIRED)
def test_every_device_has_what_the_elementwise_model_needs(name):
    device = devices.catalog()[name]
    for field in ("sms", "warp_size", "max_threads_per_sm", "max_warps_per_sm", "max_blocks_per_sm",
                  "max_threads_per_block", "hbm_bandwidth", "fp32", "kernel_floor", "l2_size", "memory_size"):
        assert device.fact(field) is not None, f"{name} lacks {field}"


def test_aliases_resolve_to_one_device_ignoring_case():
    assert devices.lookup("H100").name == "H100-SXM"
    assert devices.lookup("h100-sxm5").name == "H100-SXM"
    assert devices.lookup("4090").name == "RTX-4090"
    names = [a.lower() for d in devices.catalog().values() for a in (d.name, *d.aliases)]
    assert len(names) == len(set(names))


def test_tensor_rates_are_dense_not_sparse():
    h100 = devices.lookup("H100-SXM")
    assert h100.fact("tensor_bf16").value == pytest.approx(989.4e12)  # the datasheet's 1979 is 2:4 sparse
    assert h100.fact("tensor_fp8").value == pytest.approx(2 * 989.4e12, rel=1e-3)
    assert devices.lookup("A100-80GB").fact("tensor_bf16").value == pytest.approx(312e12)


def test_lesson_facts():
    h100 = devices.lookup("H100-SXM")
    assert h100.fact("sms").value == 132
    assert h100.fact("hbm_bandwidth").value == 3.35e12
    assert h100.fact("fp32").value == 67e12
    assert h100.fact("max_threads_per_sm").value == 2048


def test_binary_sizes_are_binary():
    assert devices.lookup("H100-SXM").fact("register_file_per_sm").value == 65536 * 4


def test_a_malformed_fact_is_refused():
    with pytest.raises(ValueError):
        devices.parse_fact("hbm_bandwidth", "3.35 TB")
    assert devices.parse_fact("l2_latency", "200..300 cycles").high == 300
