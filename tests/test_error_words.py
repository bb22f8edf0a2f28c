"""Errors that say what is wrong and what would be right, the same wherever the mistake is written: a cast or a
copy of a constant (inside a tensor expression or alone), int4 where a dtype goes, a link a device lacks (its help
agreeing with the catalog's reason), and the rates a TPU lacks, each with why."""
from __future__ import annotations

import re

import pytest

from gpuspec import devices
from gpuspec.api import check_text


def only(text: str):
    report = check_text(text, "t.gpu")
    (error,) = report.diagnostics
    return error


@pytest.mark.parametrize("statement, column, code, words", [
    ("y = fp32(2.0)", 10, "bad-cast", "`fp32(2.0)` casts a constant, which has no dtype of its own"),
    ("y = bf16(2)", 10, "bad-cast", "`bf16(2)` casts a constant"),
    ("y = float(2 * 3)", 11, "bad-cast", "casts a constant"),
    ("fp16(2) ≈ 2", 6, "bad-cast", "casts a constant"),
    ("v = 2 µs\ny = fp32(v)", 10, "bad-cast", "casts a constant"),
    ("y = copy(2)", 10, "move-operand", "`copy` takes a named tensor (or a workload's result), not a constant"),
    ("y = transpose(device.sms)", 15, "move-operand", "`transpose` takes a named tensor"),
    ("y = x * fp32(2)", 14, "bad-cast", "`fp32(2)` casts a constant, which has no dtype of its own"),
    ("y = x * copy(2)", 14, "move-operand", "not a constant"),
])
def test_a_cast_or_copy_of_a_constant_says_so_alone_or_in_an_expression(statement, column, code, words):
    error = only("device H100-SXM\nx = bf16[4096]\n" + statement + "\n")
    assert (error.code, error.span.column) == (code, column)
    assert words in error.message and error.help


def test_a_cast_of_a_name_not_known_or_failed_says_that_instead():
    assert only("device H100-SXM\ny = fp32(qq)\n").code == "unknown-name"
    report = check_text("device H100-SXM\nv = 2 uss\ny = fp32(v)\n", "t.gpu")
    assert [d.code for d in report.diagnostics] == ["unknown-unit"]


def test_int4_for_the_cache_points_to_int4_weights():
    error = only("device H100-SXM\nd = decode llama3-8b, batch 1, kv int4\n")
    assert (error.code, error.span.column) == ("unknown-dtype", 32)
    assert "weight format" in error.message and "`weights int4`" in error.message
    assert "write `weights int4`" in error.help and "bf16, fp16, fp8, fp32, int8" in error.help
    training = only("device H100-SXM\ntrain llama3-8b, batch 8, context 8192, weights int4 is ≈ 1 s\n")
    assert "decode or prefill step" in training.message and "int4" not in training.help
    assert not check_text("device H100-SXM\ndecode llama3-8b, weights int4 is ≈ 1 ms\n", "t.gpu").diagnostics
    assert "did you mean" in only("device H100-SXM\ndecode llama3-8b, kv int5 is ≈ 1 ms\n").help


def _says_to_set(why: str, field: str) -> bool:
    return re.search(rf"\bset\b[^.;]*\b{field}\b", why) is not None


@pytest.mark.parametrize("name", sorted(n for n, d in devices.catalog().items() if "nvlink_bandwidth" in d.absent))
def test_a_missing_link_s_help_agrees_with_the_catalog_s_reason(name):
    device = devices.catalog()[name]
    why = device.absent["nvlink_bandwidth"]
    for statement in ("all_reduce(1 GB) across 8 GPUs over nvlink is ≈ 1 ms", "decode llama3-8b, batch 1, tp 2 is ≈ 1 ms"):
        error = only(f"device {name}\n{statement}\n")
        assert error.code == "missing-fact" and why in error.message
        if _says_to_set(why, "nvlink_bandwidth"):  # the reason says to set it: so does the help, first
            assert error.help.startswith(f"set it to stand for the link: `device {name} with nvlink_bandwidth")
        else:  # the part has no such link: the help never says to give it one
            assert "nvlink_bandwidth" not in error.help
        if statement.startswith("all_reduce") and device.fact("pcie_bandwidth") is not None:
            assert "write `over pcie`" in error.help


def test_on_the_mi300x_the_collective_s_help_and_note_agree():
    error = only("device MI300X\nall_reduce(1 GB) across 8 GPUs over nvlink is ≈ 1 ms\n")
    assert "set nvlink_bandwidth to stand for it" in error.message
    assert error.help == "set it to stand for the link: `device MI300X with nvlink_bandwidth = ...`; or write " \
                         "`over pcie`"


@pytest.mark.parametrize("field, spec", [
    ("fp32", "x = bf16[4096]\nx * 2 is t_math ≈ 1 µs\n"),
    ("fp64", "x = fp64[4096]\nx * 2 is t_math ≈ 1 µs\n"),
    ("fp32", "device.fp32 = 1 TFLOP/s\n"),
    ("fp16", "device.fp16 = 1 TFLOP/s\n"),
    ("bf16", "device.bf16 = 1 TFLOP/s\n"),
])
def test_a_tpu_says_why_it_has_no_plain_rate(field, spec):
    error = only("device TPU-v5e\n" + spec)
    assert f"device TPU-v5e has no `{field}`: " in error.message and "[S-SB-TPU]" in error.message
    assert "in fp32" in error.message


def test_a_rate_a_tpu_lacks_may_still_be_set():
    report = check_text("device mine from TPU-v5e with fp32 = 10 TFLOP/s\nx = fp32[4096]\n"
                        "x * 2 is t_math ≈ 409.6 ps\n", "t.gpu")
    assert not report.diagnostics and [v.status for v in report.verdicts] == ["pass"]
