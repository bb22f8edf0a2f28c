"""Training steps against hand-worked numbers: Llama 3 8B (8,030,261,248 parameters, 32 layers of 32 heads of 128,
hidden 4,096) on H100s (989.4 TFLOP/s dense bf16)."""
import pytest
from conftest import H100, verdicts

from gpuspec import model
from gpuspec.api import compile_text
from gpuspec.text import SpecText

PARAMS = 8_030_261_248


def step(settings: str):
    program = compile_text(SpecText("t.gpu", H100 + f"s = train llama3-8b, {settings}\n"))
    return model.estimate(program.workloads[0][2])


def test_six_flops_per_parameter_per_token_plus_attention():
    e = step("batch 8, context 4096, gpus 2")
    assert e["tokens"].number == 8 * 4096
    assert e["dense_flops_per_token"].number == 6 * PARAMS
    assert e["attention_flops_per_token"].number == 12 * 32 * 32 * 128 * 4096
    per_token = 6 * PARAMS + 12 * 32 * 32 * 128 * 4096
    assert e["flops"].number == pytest.approx(per_token * 8 * 4096)
    assert e["flops_per_gpu"].number == pytest.approx(per_token * 8 * 4096 / 2)
    assert e["time"].number == pytest.approx(per_token * 8 * 4096 / 2 / 989.4e12)
    assert e["tokens_per_s"].number == pytest.approx(8 * 4096 / e["time"].number)


def test_training_state_and_activations():
    e = step("batch 8, context 4096, gpus 2")
    assert e["state_bytes"].number == 16 * PARAMS
    assert e["activation_bytes"].number == pytest.approx(34 * 4096 * 4096 * 32 * 4)  # four sequences per GPU


def test_the_weights_dtype_picks_the_peak():
    assert step("context 2048, weights fp8")["peak_flop_rate"].number == pytest.approx(1978.9e12)


def test_the_llama_3_budget_in_a_spec():
    spec = H100 + ("s = train llama3.1-405b, batch 2048, context 8192, gpus 16384 observed 400 TFLOP/s:\n"
                   "    observed_mfu ≈ 40.4%\n    observed_time ≈ 6.75 s\n"
                   "s.dense_flops_per_token * 15.6e12 ≈ 3.8e25 FLOP\n")
    assert [v.status for v in verdicts(spec)] == ["pass"] * 5  # with the observed figure's own limits: MFU, memory
