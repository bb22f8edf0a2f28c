"""The row-wise kind: sum, mean, amax, softmax, layernorm and rmsnorm over the last axis, eager (a kernel per pass)
or fused (one). Its stages: resolve.py, rules.py (passes, bytes, FLOPs), harness.py (a Triton kernel per row)."""
from __future__ import annotations

from attrs import field

from gpuspec.devices import Device
from gpuspec.kinds.kind import KERNEL_FIGURES, KERNEL_MODES, ROOFLINE_METRICS, Kind, Observation, calls, observed_field
from gpuspec.record import ValueRecord, record
from gpuspec.tensors import Tensor

# Row-wise operations over the last axis: reductions write one value per row, the others a full tensor.
ROWWISE_OPS = ("sum", "mean", "amax", "softmax", "layernorm", "rmsnorm")
REDUCTIONS = ("sum", "mean", "amax")


@record
class Rowwise(ValueRecord):
    """`op(x)` over the last axis of x: eager (one kernel per pass, row statistics through HBM) or fused (one)."""

    op: str
    x: Tensor
    mode: str  # "eager" or "fused"
    device: Device
    observed: Observation | None = observed_field()
    text: str = field(eq=False, default="")
    timing: str = "alone"  # how a figure about it was timed (`set timing = ...`, kinds.kind.TIMINGS)

    kind = "rowwise"

    @property
    def out_shape(self) -> tuple[int, ...]:
        return self.x.shape[:-1] if self.op in REDUCTIONS else self.x.shape

    @property
    def setting(self) -> str:
        return f"{self.device.name}, {self.op}, {self.mode}"

    def result(self, name: str) -> Tensor:
        return Tensor(name, self.x.dtype, self.out_shape)


# The metrics of its rules (rules.py), for what the resolver says before any rule is loaded.
ROWWISE_METRICS = ("rows", "row_length", "elements", "passes", "kernels", "launches", "bytes_read", "bytes_written",
                   "flops", "peak_flop_rate", "t_floor", "time", "bound", "round_trips", "sms_used",
                   *ROOFLINE_METRICS)

KIND = Kind("rowwise", Rowwise, recognizes=calls(*ROWWISE_OPS), noun="row-wise operation", modes=KERNEL_MODES,
            figures=KERNEL_FIGURES, streamable=True, measured_leaves=("time",), metrics=ROWWISE_METRICS)
