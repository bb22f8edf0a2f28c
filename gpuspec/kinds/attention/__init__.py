"""The attention kind: `attention(q, k, v)`, eager (QKᵀ, softmax and PV as three kernels) or fused (one flash-style
kernel). Its stages: resolve.py, rules.py (FLOPs, score bytes), harness.py (PyTorch's attention)."""
from __future__ import annotations

from attrs import field

from gpuspec.devices import Device
from gpuspec.kinds.kind import KERNEL_FIGURES, KERNEL_MODES, Kind, Observation, calls, observed_field
from gpuspec.record import ValueRecord, record
from gpuspec.tensors import Tensor


@record
class Attention(ValueRecord):
    """`attention(q, k, v)`: q [batch, heads, seq_q, head_dim], k and v [batch, kv_heads, seq_kv, head_dim];
    eager (QKᵀ, softmax and PV as three kernels, scores through HBM) or fused (one flash-style kernel)."""

    q: Tensor
    k: Tensor
    v: Tensor
    mode: str  # "eager" or "fused"
    device: Device
    observed: Observation | None = observed_field()
    text: str = field(eq=False, default="")

    kind = "attention"

    @property
    def setting(self) -> str:
        return f"{self.device.name}, {self.mode}"

    def result(self, name: str) -> Tensor:
        """o, shaped as q."""
        return Tensor(name, self.q.dtype, self.q.shape)


KIND = Kind("attention", Attention, recognizes=calls("attention"), noun="attention", modes=KERNEL_MODES,
            figures=KERNEL_FIGURES, streamable=True, measured_leaves=("time",))
