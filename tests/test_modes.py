"""Modes: what `eager`, `fused` and `compiled` mean is each kind's declaration, applied by one rule. torch.compile
fuses an elementwise chain, a softmax or a norm into one kernel and pattern-matches attention to the fused kernel,
so for those `compiled` is fused; a decode step's `fused` is compiled. A matmul, a stream, a training step and a
collective take no mode."""
from __future__ import annotations

import pytest
from conftest import errors, verdicts

from gpuspec import kinds, model
from gpuspec.api import compile_text
from gpuspec.text import SpecText

H100 = "device H100-SXM\n"


def workload(text: str):
    program = compile_text(SpecText("modes.gpu", H100 + text))
    return program.workloads[-1][2]


def test_compiled_elementwise_work_is_modelled_as_one_fused_kernel():
    compiled = workload("x = bf16[4096, 4096]\nz = x * 2 + 1 compiled\n")
    fused = workload("x = bf16[4096, 4096]\nz = x * 2 + 1 fused\n")
    assert compiled.mode == fused.mode == "fused" and compiled == fused
    assert model.estimate(compiled)["kernels"].number == 1
    assert model.estimate(compiled)["time"].number == pytest.approx(model.estimate(fused)["time"].number)
    assert "fused" in compiled.setting
    assert [v.status for v in verdicts(H100 + "x = bf16[4096, 4096]\nx * 2 + 1 compiled is 1 kernel, 0 round trips\n")] \
        == ["pass", "pass"]


@pytest.mark.parametrize("subject", ["softmax(x) compiled", "layernorm(x) compiled", "attention(q, q, q) compiled"])
def test_row_wise_work_and_attention_take_compiled_as_fused(subject):
    found = workload("x = bf16[8192, 4096]\nq = bf16[1, 8, 512, 64]\n" + subject + "\n")
    assert found.mode == "fused" and model.estimate(found)["kernels"].number == 1


def test_a_file_may_set_any_mode_a_kind_takes():
    assert workload("set mode = compiled\nx = bf16[64]\nx * 2 + 1\n").mode == "fused"
    assert workload("set mode = compiled\nx = bf16[64, 64]\nsoftmax(x)\n").mode == "fused"
    assert workload("set mode = fused\ndecode llama3-8b\n").mode == "compiled"
    assert workload("set mode = fused\na = bf16[64, 64]\na @ a\n").kind == "matmul"  # a matmul has no mode


def test_a_decode_steps_fused_means_compiled():
    fused, compiled = workload("decode llama3-8b fused\n"), workload("decode llama3-8b compiled\n")
    assert fused == compiled and fused.mode == "compiled" and fused.kernels_per_layer == 8
    assert workload("decode llama3-8b\n").kernels_per_layer == 15


@pytest.mark.parametrize("text, code", [
    ("a = bf16[64, 64]\na @ a compiled\n", "matmul-options"),
    ("x = bf16[64]\ny = x * 2\n10 launches of y compiled\n", "stream-options"),
    ("train llama3-8b, context 8 compiled\n", "training-options"),
    ("all_reduce(1 GB) across 8 GPUs compiled\n", "collective-options"),
])
def test_a_kind_without_modes_says_what_it_takes(text, code):
    assert [e.code for e in errors(H100 + text)] == [code]


def test_every_kind_that_takes_modes_takes_every_mode_word_and_means_one_of_its_own():
    words = kinds.mode_words()
    assert words == ("eager", "fused", "compiled")
    for kind in kinds.KINDS:
        if kind.modes:
            assert set(kind.modes) == set(words), kind.name
            assert set(kind.modes.values()) < set(words), kind.name  # two words mean the same
