"""Causal and fp8 attention, the implementation setting and the tiled-kernel rule, against hand-worked numbers on an
H100 (132 SMs, 989.4 TFLOP/s dense bf16 and fp16, 1978.9 fp8, 3.35 TB/s)."""
import pytest
from conftest import H100, errors, verdicts

from gpuspec import devices, model
from gpuspec.devices import Fact
from gpuspec.kinds.attention import Attention
from gpuspec.kinds.attention.rules import key_blocks, score_count
from gpuspec.tensors import Tensor
from gpuspec.units import COUNT, PER_SECOND

D = devices.lookup("H100-SXM")
PEAK, FP8_PEAK, SMS = D.fact("tensor_bf16").value, D.fact("tensor_fp8").value, 132


def est(mode="fused", b=1, h=16, kvh=16, sq=4096, skv=4096, d=128, dtype="bf16", causal=False, impl="auto",
        device=D):
    q, k = Tensor("q", dtype, (b, h, sq, d)), Tensor("k", dtype, (b, kvh, skv, d))
    return model.estimate(Attention(q, k, k, mode, device, causal=causal, implementation=impl))


def with_facts(**facts):
    return D.with_facts("H100-SXM (test)", {name: Fact(name, v, v, PER_SECOND if name == "exp_rate" else COUNT,
                                                         f"{v:g}") for name, v in facts.items()})


def test_causal_scores_are_the_lower_triangle_aligned_at_the_bottom_right():
    assert score_count(4096, 4096, True) == 4096 * 4097 // 2 == 8_390_656
    assert score_count(2, 5, True) == 4 + 5  # query 0 sees keys 0..3, query 1 all five
    assert score_count(1, 300, True) == 300 == score_count(1, 300, False)  # a decode step's query sees every key
    e = est(causal=True)
    assert e["scores"].number == 16 * 8_390_656
    assert e["flops"].number == (4 * 128 + 6) * 16 * 8_390_656  # the fused kernel skips the masked scores
    assert e["time"].number == pytest.approx((4 * 128 + 6) * 16 * 8_390_656 / PEAK)
    assert e["bytes_read"].number == 3 * 16 * 4096 * 128 * 2  # the mask changes no traffic


def test_eager_causal_computes_every_score_and_reads_the_mask_once():
    e, plain = est("eager", causal=True), est("eager")
    every = 16 * 4096 * 4096
    assert e["scores"].number == every
    assert e["flops"].number == plain["flops"].number + every  # the mask added to each score
    assert e["bytes_read"].number == plain["bytes_read"].number + 4096 * 4096 * 2  # [seq_q, seq_kv] bf16, broadcast


def test_fp8_attention_runs_at_the_fp8_rate_and_writes_bf16():
    e = est(dtype="fp8")
    assert e["peak_flop_rate"].number == FP8_PEAK
    assert e["bytes_read"].number == 3 * 16 * 4096 * 128  # one byte per element
    assert e["bytes_written"].number == 16 * 4096 * 128 * 2  # o in bf16
    assert e["time"].number == pytest.approx((4 * 128 + 6) * 16 * 4096**2 / FP8_PEAK)


def test_key_blocks_per_tile():
    assert key_blocks(512, 512, False) == 4 * 4
    assert key_blocks(512, 512, True) == 1 + 2 + 3 + 4
    assert key_blocks(1, 256, False) == 2  # one query pads a whole tile and runs both blocks
    assert key_blocks(256, 1024, True) == 7 + 8  # 768 keys before the first query: tile 0 needs 1 + 6 blocks
    assert key_blocks(300, 300, True) == 1 + 2 + 3  # the last, partial tile runs every block
    assert key_blocks(128, 1024, True) == 8


def test_the_tiled_kernel_by_hand():
    device = with_facts(exp_rate=4e12, attention_tile_overhead_flash3=2.0, attention_share_flash3=0.5)
    e = est(sq=16384, skv=16384, impl="flash3", device=device)
    # 16 heads × 128 tiles = 2,048 tiles; the busiest of 132 SMs runs 16; each tile 128 key blocks + 2
    t_block = 128 * 128 * (4 * 128 + 6) / PEAK + 128 * 128 / 4e12
    assert e["time"].number == pytest.approx(16 * 132 * 130 * t_block / 0.5)
    # causal: the blocks up to each tile's diagonal, (1 + ... + 128) / 128 = 64.5 per tile on average
    causal = est(sq=16384, skv=16384, impl="flash3", causal=True, device=device)
    assert causal["time"].number == pytest.approx(16 * 132 * (64.5 + 2) * t_block / 0.5)


def test_a_decode_step_pads_a_tile_and_a_few_tiles_leave_sms_idle():
    device = with_facts(exp_rate=4e12, attention_tile_overhead_flash2=1.0)  # no share: the tensor rate as it is
    e = est(b=1, h=16, kvh=2, sq=1, skv=65536, impl="flash2", device=device)
    t_block = 128 * 128 * (4 * 128 + 6) / PEAK + 128 * 128 / 4e12
    # 16 tiles on 132 SMs: one round; each tile runs 512 key blocks and its overhead, however many SMs idle
    assert e["time"].number == pytest.approx(1 * 132 * (512 + 1) * t_block)
    # auto is PyTorch's flash backend: FlashAttention-2's facts
    assert est(b=1, h=16, kvh=2, sq=1, skv=65536, device=device)["time"].number == e["time"].number
    # without the implementation's facts the rule does not apply (the ideal model: t_mem here)
    assert est(b=1, h=16, kvh=2, sq=1, skv=65536, impl="flash2")["bound"].number == "memory"


def test_flash_decoding_adds_its_reduction_kernel():
    e = est(b=1, h=16, kvh=2, sq=1, skv=65536, impl="flash_decoding")
    assert e["kernels"].number == 2
    assert e["time"].number == pytest.approx(e["t_mem"].number + D.fact("kernel_floor").value)


def test_causal_fp8_and_implementations_in_a_spec():
    spec = H100 + ("q = bf16[1, 16, 4096, 128]\nq8 = fp8[1, 16, 4096, 128]\nset attention_implementation = flash3\n"
                   "a = attention(q, q, q, causal) fused:\n    flops ≈ 69.5 GFLOP\n    1 kernels\n"
                   "attention(q8, q8, q8) fused is compute-bound\n")
    assert [v.status for v in verdicts(spec)] == ["pass"] * 3


@pytest.mark.parametrize("body, code, words", [
    ("attention(q, q, q, causl) fused is 1 kernels", "attention-operand", "`causal`"),
    ("attention(q, q, q, 2) fused is 1 kernels", "attention-operand", "its mask"),
    ("attention(e, e, e) eager is 3 kernels", "dtype-mismatch", "fused only"),
    ("attention(q, s, s, causal) fused is 1 kernels", "shape-mismatch", "no more queries than keys"),
    ("attention(q, q, q, causal, causal) fused is 1 kernels", "wrong-arguments", "takes 3"),
])
def test_bad_attention_calls_are_located_errors(body, code, words):
    found = errors(H100 + "q = bf16[1, 4, 64, 64]\ns = bf16[1, 4, 32, 64]\ne = fp8[1, 4, 64, 64]\n" + body + "\n")
    assert len(found) == 1 and found[0].code == code and words in found[0].message + (found[0].help or ""), found
    assert found[0].span.line == 5


def test_an_unknown_implementation_is_refused_with_the_words_it_takes():
    found = errors(H100 + "set attention_implementation = flash4\n")
    assert len(found) == 1 and found[0].code == "bad-setting"
    assert "flash3" in found[0].message and "flash_decoding" in found[0].message
