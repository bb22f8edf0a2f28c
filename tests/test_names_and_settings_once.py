"""A device or model a spec defines takes a name of its own (not a catalog entry's, not one defined before it), and
every option, setting and field is written once: what was accepted silently, the last one winning, is an error at
the second, naming the first. The cases as users meet them are in tests/documents/names-and-units.md."""
from __future__ import annotations

import pytest

from gpuspec import devices, llm_catalog
from gpuspec.api import check_text


def errors(text: str, path: str = "t.gpu") -> list[tuple[int, int, str]]:
    report = check_text(text, path)
    assert not report.verdicts, "a spec with errors has no claim judged"
    return [(d.span.line, d.span.column, d.code) for d in report.diagnostics]


def only(text: str):
    report = check_text(text, "t.gpu")
    (error,) = report.diagnostics
    return error


@pytest.mark.parametrize("name", ["tpu-v5e", "TPU-V5E", "v5e", "TPUv5e", "h100-sxm", "H100-SXM"])
@pytest.mark.parametrize("base", ["none", "H100-SXM"])
def test_a_device_defined_with_a_catalog_name_or_alias_is_an_error_at_the_name(name, base):
    error = only(f"device {name} from {base} with sms = 3\n")
    catalog = devices.lookup(name)
    assert (error.code, error.span.line, error.span.column, error.span.end_column) == \
        ("catalog-name", 1, 8, 8 + len(name))
    assert f"the catalog device {catalog.name}" in error.message
    assert "choose another name" in error.help and "overrides a catalog device" in error.help


def test_the_catalog_name_stays_the_catalog_s():
    # the error stands for the definition: `device tpu-v5e` below it is the catalog's TPU, as `device v5e` is
    report = check_text("device tpu-v5e from none with hbm_bandwidth = 1 TB/s\ndevice tpu-v5e\n"
                        "device.hbm_bandwidth = 2 TB/s\n", "t.gpu")
    assert [d.code for d in report.diagnostics] == ["catalog-name"]
    report = check_text("device tpu-v5e\ndevice.hbm_bandwidth = 810 GB/s\ndevice v5e\n"
                        "device.hbm_bandwidth = 810 GB/s\n", "t.gpu")
    assert not report.diagnostics and [v.status for v in report.verdicts] == ["pass", "pass"]


@pytest.mark.parametrize("name", ["llama3-8b", "LLAMA3-8B", "Meta-Llama-3-8B"])
def test_a_model_defined_with_a_catalog_name_is_an_error_at_the_name(name):
    if llm_catalog.lookup(name) is None:
        pytest.skip(f"{name} is not a name of the catalog")
    error = only(f"model {name} from none with params = 5\n")
    assert (error.code, error.span.column, error.span.end_column) == ("catalog-name", 7, 7 + len(name))
    assert "the catalog model llama3-8b" in error.message and "overrides a catalog model" in error.help


def test_a_second_definition_of_a_name_is_an_error_and_the_first_stands():
    text = ("device z from none with sms = 3\ndevice z from none with sms = 4\ndevice Z from H100-SXM\n"
            "model m from llama3-8b with layers = 3\nmodel m from none with params = 5\n")
    assert errors(text) == [(2, 8, "duplicate-name"), (3, 8, "duplicate-name"), (5, 7, "duplicate-name")]
    messages = [d.message for d in check_text(text, "t.gpu").diagnostics]
    assert messages == ["device `z` is already defined on line 1", "device `Z` is already defined on line 1 as `z`",
                        "model `m` is already defined on line 4"]
    # the first definition is the one selected
    report = check_text("device z from none with sms = 3\ndevice z from none with sms = 4\ndevice z\n"
                        "device.sms = 3\n", "t.gpu")
    assert [d.code for d in report.diagnostics] == ["duplicate-name"]
    fine = check_text("device z from H100-SXM with sms = 3\ndevice y from z with sms = 4\ndevice z\ndevice.sms = 3\n"
                      "device z with sms = 5\ndevice.sms = 5\n", "t.gpu")
    assert not fine.diagnostics and [v.status for v in fine.verdicts] == ["pass", "pass"]


def test_a_definition_that_failed_leaves_its_name_free():
    found = errors("device z from H10-SXM with sms = 3\ndevice z from H100-SXM with sms = 4\n")
    assert found == [(1, 1, "unknown-device")]


def test_a_field_set_twice_is_an_error_at_the_second():
    text = "device q from H100-SXM with sms = 3, hbm_bandwidth = 1 TB/s, sms = 4\n" \
           "model n from llama3-8b with layers = 3, layers = 3\n"
    report = check_text(text, "t.gpu")
    assert [(d.span.line, d.span.column, d.code) for d in report.diagnostics] == [
        (1, 62, "duplicate-setting"), (2, 41, "duplicate-setting")]
    assert report.diagnostics[0].message == "`sms = 4` sets `sms` again: `sms = 3` at 1:29 set it already"
    assert report.diagnostics[1].help == "write it once"


@pytest.mark.parametrize("options, column, first", [
    ("eager fused", 17, "eager"),
    ("fused eager", 17, "fused"),
    ("compiled compiled", 20, "compiled"),
    ("with 128 threads with 64 threads", 28, "with 128 threads"),
    ("as a CUDA graph as a CUDA graph", 27, "as a CUDA graph"),
    ("eager with 128 threads fused", 34, "eager"),
])
def test_an_option_written_twice_is_an_error_at_the_second_naming_the_first(options, column, first):
    error = only(f"device H100-SXM\nx = bf16[4096]\ny = x * 2 {options}\n")
    assert (error.code, error.span.line, error.span.column) == ("duplicate-option", 3, column)
    assert f"`{first}`" in error.message and ("(3:11)" in error.message or "at 3:11" in error.message)


def test_tiles_and_across_twice_are_errors_too():
    found = errors("device H100-SXM\na = bf16[64, 64]\nc = a @ a with 64x64 tiles with 128x128 tiles\n"
                   "all_reduce(1 GB) across 8 GPUs across 4 GPUs\n")
    assert found == [(3, 28, "duplicate-option"), (4, 32, "duplicate-option")]


def test_an_option_written_twice_in_markdown_is_located_in_the_document():
    document = "Text.\n\n```gpu\ndevice H100-SXM\nx = bf16[4096]\ny = x * 2 eager fused\n```\n"
    (error,) = check_text(document, "d.md").diagnostics
    assert (error.code, error.span.line, error.span.column) == ("duplicate-option", 6, 17)
    assert "(6:11)" in error.message


@pytest.mark.parametrize("settings, column, message", [
    ("batch 1, batch 64", 32, "`batch 64` sets `batch` again: `batch 1` at 2:23 set it already"),
    ("embedding read, embedding gathered", 39, "`embedding gathered` sets `embedding` again"),
    ("weights int4, weights bf16", 37, "`weights bf16` sets `weights` again"),
    ("15 kernels per layer, 8 kernels per layer", 45, "`8 kernels per layer` sets `kernels_per_layer` again"),
    ("kv fp8, kv fp8", 31, "`kv fp8` sets `kv` again"),
])
def test_a_decode_setting_written_twice_is_an_error_at_the_second(settings, column, message):
    error = only(f"device H100-SXM\nd = decode llama3-8b, {settings}\n")
    assert (error.code, error.span.line, error.span.column) == ("duplicate-setting", 2, column)
    assert message in error.message


def test_a_prefill_s_prompt_is_its_context_and_training_settings_are_once_each():
    error = only("device H100-SXM\nprefill llama3-8b, context 4096, prompt 2048 is ≈ 1 ms\n")
    assert (error.code, error.span.column) == ("duplicate-setting", 34)
    assert "`prompt` is its `context`" in error.message
    error = only("device H100-SXM\ntrain llama3-8b, batch 8, context 8192, gpus 8, gpus 16 is ≈ 1 s\n")
    assert (error.code, error.span.column) == ("duplicate-setting", 49)


def test_many_definitions_and_duplicates_stay_quick_and_located():
    import time

    text = "".join(f"device d{i} from H100-SXM with sms = 3, sms = 4\ndevice d{i} from none with sms = 1\n"
                   f"d{i} = decode llama3-8b, batch 1, batch 2, batch 3\n" for i in range(300))
    start = time.perf_counter()
    report = check_text(text, "many.gpu")
    assert time.perf_counter() - start < 20
    assert len(report.diagnostics) == 900 and all(d.span is not None for d in report.diagnostics)
