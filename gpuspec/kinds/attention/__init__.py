"""The attention kind: `attention(q, k, v)` or `attention(q, k, v, causal)`, eager (QKᵀ, softmax and PV as three
kernels) or fused (one flash-style kernel), in bf16, fp16 or (fused) fp8. Its stages: resolve.py, rules.py (FLOPs,
score bytes, the tiled kernel of a named implementation), harness.py (PyTorch's attention, or a Triton kernel)."""
from __future__ import annotations

from attrs import field

from gpuspec.devices import Device
from gpuspec.kinds.kind import KERNEL_FIGURES, KERNEL_MODES, ROOFLINE_METRICS, Kind, Observation, calls, observed_field
from gpuspec.record import ValueRecord, record
from gpuspec.tensors import Tensor

# Which kernel runs a fused attention (`set attention_implementation = flash3`). Each has its own published share
# of the achievable rate and its own per-tile overhead in profiles; `auto` is PyTorch's scaled_dot_product_attention,
# whose flash backend is FlashAttention-2. flash_decoding splits the keys over the SMs and adds a reduction kernel.
IMPLEMENTATIONS = {
    "auto": "PyTorch's scaled_dot_product_attention (its flash backend: FlashAttention-2); the default",
    "flash2": "FlashAttention-2: one block per 128 query rows, per batch entry and head",
    "flash3": "FlashAttention-3 (Hopper): warp-specialised, asynchronous",
    "cudnn": "cuDNN's fused attention (PyTorch's cuDNN backend)",
    "triton": "a Triton flash attention, as Triton's fused-attention tutorial writes it",
    "flash_decoding": "Flash-Decoding: the keys split over the SMs, then a reduction kernel",
}
# fp8 attention: q, k and v in fp8 (e4m3), o written in bf16, as FlashAttention-3 and cuDNN do.
FP8_OUTPUT = "bf16"


def _key_default(default):
    """A field whose default leaves a workload's harness key as it was before the field existed."""
    return field(default=default, metadata={"omit_from_key_at_default": True})


@record
class Attention(ValueRecord):
    """`attention(q, k, v)`: q [batch, heads, seq_q, head_dim], k and v [batch, kv_heads, seq_kv, head_dim];
    eager (QKᵀ, softmax and PV as three kernels, scores through HBM) or fused (one flash-style kernel). Causal:
    query i sees the keys up to i + seq_kv − seq_q (the mask aligned at the bottom right, as a KV cache needs)."""

    q: Tensor
    k: Tensor
    v: Tensor
    mode: str  # "eager" or "fused"
    device: Device
    observed: Observation | None = observed_field()
    text: str = field(eq=False, default="")
    causal: bool = _key_default(False)
    implementation: str = _key_default("auto")  # `set attention_implementation = ...`

    kind = "attention"

    @property
    def setting(self) -> str:
        extra = "".join((", causal" if self.causal else "",
                         f", {self.implementation}" if self.implementation != "auto" else ""))
        return f"{self.device.name}, {self.mode}{extra}"

    @property
    def output_dtype(self) -> str:
        return FP8_OUTPUT if self.q.dtype == "fp8" else self.q.dtype

    def result(self, name: str) -> Tensor:
        """o, shaped as q (bf16 when q is fp8)."""
        return Tensor(name, self.output_dtype, self.q.shape)


# The metrics of its rules (rules.py), for what the resolver says before any rule is loaded.
ATTENTION_METRICS = ("batch", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim", "scores", "flops", "score_bytes",
                     "bytes_read", "bytes_written", "peak_flop_rate", "kernels", "launches", "t_floor", "time",
                     "bound", "round_trips", "sms_used", *ROOFLINE_METRICS)

KIND = Kind("attention", Attention, recognizes=calls("attention"), noun="attention", modes=KERNEL_MODES,
            figures=KERNEL_FIGURES, streamable=True, measured_leaves=("time",), metrics=ATTENTION_METRICS)
