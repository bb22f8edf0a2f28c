"""sms_used, worked by hand for every kind that has it: the SMs a workload's grid occupies, its blocks (or tiles)
up to the SM count. An H100 SXM has 132 SMs, an A100 108.

- elementwise: one thread per element, 256 to a block: bf16[4096] is 16 blocks, 16 SMs.
- matmul: one output tile per SM at a time: 4096 × 4096 in 128 × 256 tiles is 512 tiles, all 132 SMs.
- row-wise: one block per row (the harness's Triton kernels take program_id(0) as the row): 8 rows use 8 SMs,
  8,192 rows all 132.
- attention (fused): one tile per 128 query rows of each batch entry and head: a decode step's query of one token
  on 32 heads is 32 tiles, 32 SMs; 2 × 16 heads × ⌈1,000 / 128⌉ = 8 is 256 tiles, all 132 (108 on an A100).
  Eager attention is three kernels, each with its own grid: no one count.
- a stream: its repeats run one after another, each on the repeated workload's SMs.
"""
import pytest
from conftest import H100

from gpuspec import api


def _values(text: str) -> dict[str, object]:
    report = api.check_text(text, "a.gpu")
    assert not report.diagnostics, report.diagnostics
    return {v.claim.text: v for v in report.verdicts}


def _sms(text: str, claim: str = "sms_used > 0"):
    found = _values(text)
    (verdict,) = [v for c, v in found.items() if c == claim]
    return verdict.actual


def test_elementwise_and_matmul_keep_theirs():
    small = _sms(H100 + "v = bf16[4096]\ny = v * 2 is sms_used > 0\n")
    assert small.number == 16 and small.derivation() == \
        "sms_used = min(blocks, sms) = min(16, 132) = 16 (blocks up to the SM count)"
    square = _sms(H100 + "a = bf16[4096, 4096]\nc = a @ a is sms_used > 0\n")
    assert square.number == 132


def test_a_row_wise_operation_uses_a_block_per_row():
    few = _sms(H100 + "x = fp16[8, 4096]\ns = softmax(x) eager is sms_used > 0\n")
    assert few.number == 8
    assert few.derivation() == "sms_used = min(rows, sms) = min(8, 132) = 8 (one block per row, up to the SM count)"
    assert _sms(H100 + "x = bf16[8192, 4096]\nn = layernorm(x) fused is sms_used > 0\n").number == 132
    assert _sms("device A100-80GB\nx = bf16[2, 64, 4096]\nn = rmsnorm(x) fused is sms_used > 0\n").number == 108


def test_a_fused_attention_uses_a_tile_per_128_query_rows_of_each_head():
    step = _sms(H100 + "q = bf16[1, 32, 1, 128]\nkv = bf16[1, 8, 4096, 128]\n"
                       "a = attention(q, kv, kv) fused is sms_used > 0\n")
    assert step.number == 32
    assert step.derivation() == "sms_used = min(tiles, sms) = min(32, 132) = 32 (one tile per SM at a time, up to " \
                                "the SM count)"
    assert step.inputs[0].derivation() == "tiles = batch × heads × query tiles per head = 1 × 32 × 1 = 32"
    long = _sms(H100 + "q = bf16[2, 16, 1000, 128]\na = attention(q, q, q) fused is sms_used > 0\n")
    assert long.inputs[0].number == 2 * 16 * 8 == 256 and long.number == 132
    assert _sms("device A100-80GB\nq = bf16[2, 16, 1000, 128]\na = attention(q, q, q) fused is sms_used > 0\n"
                ).number == 108


def test_eager_attention_says_why_it_has_no_one_count():
    report = api.check_text(H100 + "q = bf16[1, 32, 4096, 128]\na = attention(q, q, q) eager is sms_used > 0\n",
                            "a.gpu")
    (error,) = report.diagnostics
    assert error.code == "no-value" and "three kernels, each on a grid of its own" in error.message
    assert "has no metric" not in error.message


def test_a_stream_uses_the_repeated_workloads_sms():
    rows = _sms(H100 + "x = fp16[8, 4096]\ns = softmax(x) eager\nst = 100 launches of s is sms_used > 0\n")
    assert rows.number == 8 and rows.derivation() == "sms_used = the repeated workload's sms_used = 8"
    graph = _sms(H100 + "v = bf16[4096]\ny = v * 2\ng = 1000 launches of y as a CUDA graph\n"
                        "r = 10 launches of g is sms_used > 0\n")
    assert graph.number == 16


@pytest.mark.parametrize("workload", ["x = fp16[8, 4096]\nw = softmax(x)\n",
                                      "q = bf16[1, 8, 256, 64]\nw = attention(q, q, q) fused\n",
                                      "v = bf16[4096]\ny = v * 2\nw = 10 launches of y\n"])
def test_no_kind_that_has_a_grid_says_it_has_no_sms_used(workload):
    report = api.check_text(H100 + workload + "w.sms_used ≥ 1\n", "a.gpu")
    assert not report.diagnostics and report.verdicts[0].status == "pass"
