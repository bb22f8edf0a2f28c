"""The attention model against hand-worked numbers on an H100 (989.4 TFLOP/s dense bf16, 3.35 TB/s).

q is bf16[1, 32, 4096, 128]; k and v are bf16[1, 8, 4096, 128] (grouped-query: 4 query heads per kv head).
Scores: 32 × 4096² = 536,870,912, so the score matrix is 1,073,741,824 B = 1 GiB.
"""
import pytest
from conftest import H100, verdicts

from gpuspec import devices, model
from gpuspec.kinds.attention import Attention
from gpuspec.tensors import Tensor

D = devices.lookup("H100-SXM")
BW, PEAK = 3.35e12, D.fact("tensor_bf16").value
SCORES = 32 * 4096 * 4096
Q_BYTES = 32 * 4096 * 128 * 2  # 33,554,432
KV_BYTES = 8 * 4096 * 128 * 2  # 8,388,608 each


def est(mode="eager", batch=1, heads=32, kv_heads=8, seq_q=4096, seq_kv=4096, head_dim=128, dtype="bf16"):
    q = Tensor("q", dtype, (batch, heads, seq_q, head_dim))
    k = Tensor("k", dtype, (batch, kv_heads, seq_kv, head_dim))
    v = Tensor("v", dtype, (batch, kv_heads, seq_kv, head_dim))
    return model.estimate(Attention(q, k, v, mode, D))


def test_flops_and_the_score_matrix():
    e = est()
    assert e["flops"].number == 4 * SCORES * 128 + 6 * SCORES == 278_099_132_416
    assert e["score_bytes"].number == 2**30  # 1 GiB per batch entry
    assert est(batch=2)["score_bytes"].number == 2**31
    assert est("fused")["flops"].number == e["flops"].number


def test_eager_writes_the_scores_and_reads_them_back():
    e = est()
    assert e["kernels"].number == 3 and e["round_trips"].number == 2
    # QKᵀ reads q and k; softmax reads S; PV reads P and v
    assert e["bytes_read"].number == Q_BYTES + KV_BYTES + 2**30 + 2**30 + KV_BYTES
    # QKᵀ writes S; softmax writes P; PV writes o
    assert e["bytes_written"].number == 2**30 + 2**30 + Q_BYTES
    assert e["peak_flop_rate"].number == PEAK
    assert e["bound"].number == "memory"
    kernel_1 = max((Q_BYTES + KV_BYTES + 2**30) / BW, (2 * SCORES * 128 + SCORES) / PEAK)
    kernel_2 = max(2 * 2**31 / BW / 2, 5 * SCORES / PEAK)
    kernel_3 = max((2**30 + KV_BYTES + Q_BYTES) / BW, 2 * SCORES * 128 / PEAK)
    assert e["time"].number == pytest.approx(kernel_1 + kernel_2 + kernel_3)
    assert e["time"].number == pytest.approx(1.307e-3, rel=1e-3)


def test_fused_reads_q_k_v_once_and_is_compute_bound():
    e = est("fused")
    assert e["kernels"].number == 1 and e["round_trips"].number == 0
    assert e["bytes_read"].number == Q_BYTES + 2 * KV_BYTES == 50_331_648
    assert e["bytes_written"].number == Q_BYTES
    assert e["intensity"].number == pytest.approx(278_099_132_416 / 83_886_080)  # ≈ 3,315 FLOP/B
    assert e["bound"].number == "compute"
    assert e["time"].number == pytest.approx(278_099_132_416 / PEAK)  # ≈ 281 µs
    assert est()["bytes_moved"].number / e["bytes_moved"].number == pytest.approx(52.2, rel=1e-3)


def test_short_sequences_are_memory_bound_even_fused():
    e = est("fused", seq_q=1, seq_kv=4096)  # one decode step: q is one token
    assert e["bound"].number == "memory"
    assert e["time"].number == pytest.approx(max(e["t_mem"].number, D.fact("kernel_floor").value))


def test_fp16_uses_its_tensor_rate():
    assert est(dtype="fp16")["peak_flop_rate"].number == D.fact("tensor_fp16").value


def test_attention_in_a_spec():
    spec = H100 + ("q = bf16[1, 32, 4096, 128]\nk = bf16[1, 8, 4096, 128]\nv = bf16[1, 8, 4096, 128]\n"
                   "o = attention(q, k, v):\n    score_bytes = 1 GiB\n    3 kernels\n    memory-bound\n"
                   "attention(q, k, v) fused is 1 kernels, compute-bound\no * 2 is 16.8M elements\n")
    assert [v.status for v in verdicts(spec)] == ["pass"] * 6
