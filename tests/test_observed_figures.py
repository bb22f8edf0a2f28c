"""`observed ...`: a published or measured figure attached to a workload, and what the model derives from it."""
import attrs
import pytest
from conftest import H100, run, verdicts

from gpuspec import model
from gpuspec.api import compile_text
from gpuspec.fmt import format_text
from gpuspec.harness import workload_key
from gpuspec.text import SpecText

A100 = "device A100-80GB\n"
X = 4096 * 4096 * 2  # bytes of a 4096² bf16 tensor


def workload(text: str, name: str):
    program = compile_text(SpecText("t.gpu", text))
    return next(w for _, statement, w in program.workloads if statement.startswith(name))


def test_an_observed_time_gives_the_bandwidth_and_utilization_it_implies():
    w = workload(H100 + "x = bf16[4096, 4096]\ny = x * 2 observed 25 µs\n", "y")
    e = model.estimate(w)
    assert e["observed_time"].number == pytest.approx(25e-6)
    assert e["observed_bandwidth"].number == pytest.approx(2 * X / 25e-6)
    assert e["observed_mbu"].number == pytest.approx(2 * X / 25e-6 / 3.35e12)
    assert e["observed_flop_rate"].number == pytest.approx(4096 * 4096 / 25e-6)
    assert e["observed_vs_model"].number == pytest.approx(25e-6 / e["time"].number)
    assert "observed_time = observed = 25.0 µs" in e["observed_time"].derivation()


def test_a_token_rate_on_a_decode_step_is_one_step_per_token_of_the_batch():
    w = workload(A100 + "s = decode llama2-7b, batch 4 compiled observed 400 tokens/s\n", "s")
    e = model.estimate(w)
    assert e["observed_time"].number == pytest.approx(4 / 400)
    assert e["observed_tokens_per_s"].number == pytest.approx(400)
    assert e["observed_bandwidth"].number == pytest.approx(e["bytes_moved"].number * 100)
    assert e["observed_mbu"].number == pytest.approx(e["bytes_moved"].number * 100 / 2.039e12)


def test_a_flop_rate_is_per_gpu():
    w = workload(H100 + "t = train llama3-8b, batch 8, context 4096, gpus 2 observed 400 TFLOP/s\n", "t")
    e = model.estimate(w)
    assert e["observed_mfu"].number == pytest.approx(400e12 / 989.4e12)
    assert e["observed_time"].number == pytest.approx(e["flops"].number / 2 / 400e12)


def test_a_collective_bandwidth_is_the_algorithm_bandwidth():
    w = workload(H100 + "ar = all_reduce(8 GB) across 8 GPUs over nvlink observed 275 GB/s\n", "ar")
    e = model.estimate(w)
    assert e["observed_time"].number == pytest.approx(8e9 / 275e9)
    assert e["observed_algbw"].number == pytest.approx(275e9)
    assert e["observed_busbw"].number == pytest.approx(275e9 * 2 * 7 / 8)
    assert "observed_mbu" not in e  # a collective's bytes are not HBM traffic


def test_an_observation_does_not_change_what_is_measured():
    plain = workload(H100 + "x = bf16[4096, 4096]\ny = x * 2\n", "y")
    observed = attrs.evolve(plain, observed=workload(H100 + "x = bf16[4096, 4096]\ny = x * 2 observed 9 µs\n",
                                                     "y").observed)
    assert observed != plain  # two observations imply different things: their estimates are apart
    assert workload_key("y", observed) == workload_key("y", plain)
    assert model.estimate(plain) is not model.estimate(observed)


def test_observed_is_still_a_name_where_no_workload_option_can_follow():
    assert [v.status for v in verdicts(H100 + "observed = 3 ms\nobserved * 2 = 6 ms\n")] == ["pass"]


def test_the_canonical_layout_keeps_the_observation():
    text = A100 + "g = decode llama2-7b,batch 1  observed  107 tokens/s\n"
    assert format_text(text) == A100 + "g = decode llama2-7b, batch 1 observed 107 tokens/s\n"
    assert not run(format_text(text)).diagnostics
