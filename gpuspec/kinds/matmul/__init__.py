"""The matmul kind: `a @ b` on the tensor cores, in tiles. Its stages: resolve.py, rules.py (FLOPs, bytes, tile and
wave quantization), harness.py (torch.matmul)."""
from __future__ import annotations

from attrs import field

from gpuspec import nodes
from gpuspec.devices import Device
from gpuspec.kinds.kind import KERNEL_FIGURES, Kind, Observation, observed_field
from gpuspec.record import ValueRecord, as_tuple, record
from gpuspec.tensors import Tensor, broadcast


@record
class Matmul(ValueRecord):
    """`a @ b`: a (batched) matrix multiply, a [..., M, K] by b [..., K, N], on the tensor cores, in tiles."""

    a: Tensor
    b: Tensor
    tile: tuple[int, int] = field(converter=as_tuple)  # rows x columns of C that one block computes
    device: Device = None  # type: ignore[assignment]
    observed: Observation | None = observed_field()
    text: str = field(eq=False, default="")

    kind = "matmul"

    @property
    def setting(self) -> str:
        return f"{self.device.name}, {self.tile[0]}x{self.tile[1]} tiles"

    def result(self, name: str) -> Tensor:
        """C, under `name`."""
        batch = broadcast(self.a.shape[:-2], self.b.shape[:-2])
        return Tensor(name, self.a.dtype, (*batch, self.a.shape[-2], self.b.shape[-1]))


KIND = Kind("matmul", Matmul, recognizes=lambda expr: isinstance(expr, nodes.BinOp) and expr.op == "@",
            needs_tensors=True, noun="matmul", figures=KERNEL_FIGURES, streamable=True, measured_leaves=("time",))
