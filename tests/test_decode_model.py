"""The decode step against hand-worked numbers: Llama 3 8B on an H100, the lesson's section 6."""
import pytest
from conftest import only, run

from gpuspec import devices, llm_catalog, model
from gpuspec.kinds.decode import DecodeStep

H100 = devices.lookup("H100-SXM")
LLAMA3_8B = llm_catalog.lookup("llama3-8b")
PARAMS = 8_030_261_248


def step(batch=1, context=0, mode="eager", graph=False, per_layer=15, weights="bf16", device=H100):
    return model.estimate(DecodeStep(LLAMA3_8B, device, batch, context, mode, graph, per_layer, weights, weights,
                                     1 / 6))


def test_the_catalog_knows_llama3_8b():
    assert LLAMA3_8B.fact("params").value == PARAMS
    assert LLAMA3_8B.fact("layers").value == 32
    assert llm_catalog.lookup("Meta-Llama-3-8B").name == "llama3-8b"


def test_launches_and_launch_time():
    e = step()
    assert e["launches"].number == 32 * 15 == 480
    assert e["launch_time"].number == pytest.approx(480 * H100.fact("launch_cost").value)


def test_weights_and_their_read_time():
    e = step()
    assert e["weight_bytes"].number == PARAMS * 2
    assert e["t_weights"].number == pytest.approx(PARAMS * 2 / 3.35e12)  # 4.79 ms
    embedding = 128_256 * 4096 * 2
    assert e["weights_read"].number == PARAMS * 2 - embedding


def test_kv_cache_bytes():
    e = step(batch=4, context=4096)
    per_token = 2 * 32 * 8 * 128 * 2  # K and V, layers, KV heads, head size, bf16
    assert e["kv_bytes_per_token"].number == per_token == 131_072
    assert e["kv_bytes"].number == per_token * 4096 * 4


def test_flops_count_two_per_parameter_and_the_attention():
    e = step(batch=2, context=1000)
    assert e["flops"].number == 2 * PARAMS * 2 + 4 * 32 * 32 * 128 * 1000 * 2


def test_serial_overhead_share_follows_the_launches():
    e = step()
    assert e["overhead_share_serial"].number == pytest.approx(
        e["launch_time"].number / (e["launch_time"].number + e["gpu_time"].number))


def test_the_queue_hides_launches_when_kernels_take_longer_than_launches():
    slow_host = H100.with_facts("slow", {"launch_cost": devices.parse_fact("launch_cost", "20 µs")})
    hidden, exposed = step(), step(device=slow_host)
    assert hidden["overhead_share"].number < 0.01
    assert exposed["step_time"].number == pytest.approx(480 * 20e-6, rel=0.05)  # the host sets the pace
    assert exposed["bound"].number == "overhead"


def test_a_cuda_graph_launches_once():
    e = step(graph=True)
    assert e["launches"].number == 1
    assert e["kernels"].number == 480
    assert e["overhead_share_serial"].number < 0.05


def test_batch_one_is_memory_bound_and_large_batches_compute_bound():
    e = step()
    assert e["bound"].number == "memory"
    batch = e["compute_bound_batch"].number
    assert 250 < batch < 300  # about the ridge: 989 TFLOP/s / 3.35 TB/s × 2 B / 2 FLOP
    assert step(batch=batch + 10)["bound"].number == "compute"
    assert step(batch=batch - 10)["bound"].number == "memory"


def test_tokens_per_second():
    e = step(batch=8)
    assert e["tokens_per_s"].number == pytest.approx(8 / e["step_time"].number)


def test_fp8_weights_halve_the_bytes_and_use_the_fp8_peak():
    e = step(weights="fp8")
    assert e["weight_bytes"].number == PARAMS
    assert e["peak_flop_rate"].number == H100.fact("tensor_fp8").value


def test_decode_in_a_spec():
    spec = "device H100-SXM with launch_cost = 5 µs\nd = decode llama3-8b, batch 1:\n    480 launches\n" \
           "    launch_time = 2.4 ms\n    weight_bytes = 16 GB\n    t_weights ≈ 4.8 ms\n"
    assert [v.status for v in run(spec).verdicts] == ["pass"] * 4


def test_models_defined_in_a_spec():
    spec = "device H100\nmodel deep from llama3-8b with layers = 64\ndecode deep is 960 launches"
    assert only(spec).status == "pass"


def tp_step(tp, batch=1):
    model70 = llm_catalog.lookup("llama3-70b")
    return model.estimate(DecodeStep(model70, H100, batch, 0, "compiled", True, 8, "bf16", "bf16", 1 / 6, tp))


def test_tensor_parallelism_splits_weights_cache_and_flops_per_gpu():
    one, eight = tp_step(1), tp_step(8)
    assert eight["weights_read"].number == pytest.approx(one["weights_read"].number / 8)
    assert eight["flops"].number == pytest.approx(one["flops"].number / 8)
    assert eight["compute_bound_batch"].number == one["compute_bound_batch"].number


def test_tensor_parallelism_all_reduces_twice_per_layer():
    e = tp_step(8, batch=4)
    per_all_reduce = 8e-6 + 2 * 7 / 8 * (4 * 8192 * 2) / 450e9  # latency + ring transfer at 450 GB/s one way
    assert e["comm_time"].number == pytest.approx(2 * 80 * per_all_reduce)
    assert e["step_time"].number == pytest.approx(e["gpu_time"].number + e["launch_time"].number, rel=0.01)
    assert tp_step(1)["comm_time"].number == 0


def test_model_flop_and_bandwidth_utilization():
    e = step(batch=8)
    assert e["mfu"].number == pytest.approx(e["flops"].number / e["step_time"].number / H100.fact("tensor_bf16").value)
    assert e["mbu"].number == pytest.approx(e["bytes_moved"].number / e["step_time"].number / 3.35e12)
    assert 0 < e["mfu"].number < e["mbu"].number < 1  # decode at batch 8 is memory-bound


def test_a_prefill_runs_the_whole_prompt_through_every_matmul():
    e = model.estimate(DecodeStep(LLAMA3_8B, H100, 1, 2048, "compiled", True, 8, "bf16", "bf16", 1 / 6, 1,
                                  "prefill"))
    assert e["tokens"].number == 2048
    attention = 4 * 32 * 32 * 128 * (2048 * 2049 / 2)  # causal: S(S + 1)/2 query-key pairs per head
    assert e["flops"].number == pytest.approx(2 * PARAMS * 2048 + attention)
    assert e["bound"].number == "compute"
    assert e["tokens_per_s"].number == pytest.approx(2048 / e["step_time"].number)


def _spec_step(text: str):
    from gpuspec import api
    from gpuspec.text import SpecText

    program = api.compile_text(SpecText("d.gpu", "device A100-80GB\n" + text + "\n"))
    (_, _, workload), = program.workloads
    return model.estimate(workload)


def test_attention_reads_the_cache_once_unless_the_code_copies_it_or_runs_math_sdpa():
    # Llama 3.1 8B, one token of cache per layer: 8 KV heads of 128, K and V, bf16 = 4,096 B read once
    plain = _spec_step("w = decode llama3.1-8b, batch 1, context 1000")
    assert plain["attention_bytes"].number == plain["kv_bytes"].number == 32 * 1000 * 4096
    # kv_repeat 4: the 4,096 B read and 16,384 B of copies written, then the 32 heads' 16,384 B read by attention
    copied = _spec_step("w = decode llama3.1-8b, batch 1, context 1000, kv_repeat 4")
    assert copied["attention_bytes"].number == 32 * 1000 * (4096 + 16384 + 16384)
    # and math SDPA over the 32 heads: K and V read (16,384 B) into fp32 copies (32,768 B), the K copy scaled
    # (16,384 B read and written) and both copies read again (32,768 B)
    math_sdpa = _spec_step("w = decode llama3.1-8b, batch 1, context 1000, attention math, kv_repeat 4")
    per_token = 4096 + 16384 + 16384 + 32768 + 2 * 16384 + 32768
    assert math_sdpa["attention_bytes"].number == 32 * 1000 * per_token == 32 * 1000 * 135168
    # an fp32 cache needs no fp32 copy: Llama 2 7B (32 KV heads), math SDPA: K scaled, then both read
    fp32 = _spec_step("w = decode llama2-7b, batch 1, context 1000, weights fp32, attention math")
    assert fp32["attention_bytes"].number == 32 * 1000 * (2 * 32 * 128 * 4 + 2 * 32 * 128 * 4)
    # the attention kernel moves them: at 100k tokens of cache, the step takes ~their time at the HBM bandwidth more
    long_plain = _spec_step("w = decode llama3.1-8b, batch 1, context 100000")
    long_math = _spec_step("w = decode llama3.1-8b, batch 1, context 100000, attention math, kv_repeat 4")
    extra = (long_math["attention_bytes"].number - long_plain["attention_bytes"].number) / 2.039e12
    assert long_math["gpu_time"].number - long_plain["gpu_time"].number == pytest.approx(extra, rel=1e-6)
    assert long_math["bytes_moved"].number == long_plain["bytes_moved"].number  # what a step must move, unchanged


def test_host_ops_and_the_attention_settings_appear_in_the_setting():
    e = _spec_step("w = decode llama3.1-8b, batch 1, context 96, host_ops 2739, attention math, kv_repeat 4 eager")
    assert "2,739 host ops a step, math attention, K and V heads copied 4 times" in e.workload.setting
    # the ideal model has no model_op_cost: host_ops changes nothing there
    bare = _spec_step("w = decode llama3.1-8b, batch 1, context 96, attention math, kv_repeat 4 eager")
    assert e["step_time"].number == bare["step_time"].number


def test_int4_weights_are_half_a_byte_and_their_groups_scales():
    # Llama 3 8B in int4 groups of 64: 0.5 B + 4 B / 64 = 0.5625 B a weight, 8,030,261,248 x 0.5625 = 4.52 GB, read
    # at 3.35 TB/s in 1.348 ms on an H100; the default group of 128 is 0.53125 B; the cache stays bf16
    spec = ("device H100-SXM\nstep = decode llama3-8b, batch 1, context 4096, weights int4, group_size 64:\n"
            "    bytes_per_weight = 0.5625 B\n    weight_bytes ≈ 4.517 GB ± 0.1%\n    t_weights ≈ 1.348 ms ± 0.1%\n"
            "    kv_bytes_per_token = 128 KiB\n    peak_flop_rate = 989.4 TFLOP/s\n"
            "decode llama3-8b, batch 1, weights int4 is bytes_per_weight = 0.53125 B\n")
    report = run(spec)
    assert not report.diagnostics, [d.message for d in report.diagnostics]
    assert [v.status for v in report.verdicts] == ["pass"] * 6
    derivation = report.verdicts[0].actual.derivation()
    assert "0.500 B + 0.0625 B" in derivation and "int4 weight-only" in derivation


@pytest.mark.parametrize("settings, code, words", [
    ("weights bf16, group_size 64", "group-size-int4", "`group_size` is the number of int4 weights"),
    ("weights int4, group_size 0", "expected-whole-number", "group_size must be a whole number of at least 1"),
    ("weights int4, group_size 1e400", "bad-number", "this number is too large"),
    ("weights int4, kv int4", "unknown-dtype", "`int4` is not a dtype"),
])
def test_int4_settings_that_say_nothing_true_are_located_errors(settings, code, words):
    report = run(f"device H100-SXM\ndecode llama3-8b, batch 1, {settings} is bytes_per_weight = 1 B\n")
    (error,) = report.diagnostics
    assert error.span.line == 2 and words in error.message + (error.help or "")
    assert not code or error.code == code


def test_an_int4_step_is_modelled_and_its_harness_refused_in_words():
    from gpuspec import harness
    from gpuspec.api import compile_text
    from gpuspec.text import SpecText

    text = "device H100-SXM\ns = decode llama3-8b, batch 1, weights int4 compiled is memory-bound\n"
    assert [v.status for v in run(text).verdicts] == ["pass"]
    found, refused = harness.plans(compile_text(SpecText("a.gpu", text)))
    assert found == [] and len(refused) == 1
    assert "int4 weights need a scaled matmul it does not run" in refused[0][1]
