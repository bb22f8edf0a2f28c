"""The matmul kind: `a @ b` on the tensor cores, in tiles. Its stages: resolve.py, rules.py (FLOPs, bytes, tile and
wave quantization), harness.py (torch.matmul)."""
from __future__ import annotations

from attrs import field

from gpuspec import nodes
from gpuspec.devices import Device
from gpuspec.kinds.kind import KERNEL_FIGURES, ROOFLINE_METRICS, Kind, Observation, observed_field
from gpuspec.record import ValueRecord, as_tuple, record
from gpuspec.tensors import Tensor, broadcast

DEFAULT_TILE = (128, 128)
# PyTorch's compiled matmuls (inductor's autotuned Triton configs, torch/_inductor/kernel/mm_common.py,
# `filtered_configs`) shrink a tile's rows and columns to the next power of two of M and N, never under 16: a
# 64-row matmul runs 64-row tiles, not 128-row tiles that are half padding.
SMALLEST_TILE_SIDE = 16


def default_tile(m: int, n: int) -> tuple[int, int]:
    """The tile a matmul of M rows and N columns runs when the spec names none."""
    def side(full: int, size: int) -> int:
        return max(min(full, 1 << max(size - 1, 0).bit_length()), SMALLEST_TILE_SIDE)

    return side(DEFAULT_TILE[0], m), side(DEFAULT_TILE[1], n)


@record
class Matmul(ValueRecord):
    """`a @ b`: a (batched) matrix multiply, a [..., M, K] by b [..., K, N], on the tensor cores, in tiles."""

    a: Tensor
    b: Tensor
    tile: tuple[int, int] = field(converter=as_tuple)  # rows x columns of C that one block computes
    device: Device = None  # type: ignore[assignment]
    observed: Observation | None = observed_field()
    text: str = field(eq=False, default="")
    tile_written: bool = field(eq=False, default=True)  # False: the default tile, shrunk to a skinny shape

    kind = "matmul"

    @property
    def setting(self) -> str:
        return f"{self.device.name}, {self.tile[0]}x{self.tile[1]} tiles"

    def result(self, name: str) -> Tensor:
        """C, under `name`."""
        batch = broadcast(self.a.shape[:-2], self.b.shape[:-2])
        return Tensor(name, self.a.dtype, (*batch, self.a.shape[-2], self.b.shape[-1]))


# The metrics of its rules (rules.py), for what the resolver says before any rule is loaded.
MATMUL_METRICS = ("m", "n", "k", "batch", "flops", "bytes_read", "bytes_written", "peak_flop_rate", "tile_m",
                  "tile_n", "tiles", "tile_efficiency", "waves", "waves_started", "sms_used", "wave_efficiency",
                  "t_math_tiles", "time", "bound", "kernels", "launches", "blocks", *ROOFLINE_METRICS)

KIND = Kind("matmul", Matmul, recognizes=lambda expr: isinstance(expr, nodes.BinOp) and expr.op == "@",
            needs_tensors=True, noun="matmul", figures=KERNEL_FIGURES, streamable=True, measured_leaves=("time",),
            metrics=MATMUL_METRICS)
