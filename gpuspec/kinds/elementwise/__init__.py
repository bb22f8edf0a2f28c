"""The elementwise kind: an expression over tensors (`x * 2 + 1`), eager (one kernel per operation) or fused (one
kernel). Its stages: resolve.py (the expression), rules.py (bytes, FLOPs, kernels), harness.py (a Triton kernel
and the PyTorch ops)."""
from __future__ import annotations

from attrs import field

from gpuspec.devices import Device
from gpuspec.kinds.kind import KERNEL_FIGURES, KERNEL_MODES, ROOFLINE_METRICS, Kind, Observation, observed_field
from gpuspec.record import ValueRecord, record
from gpuspec.tensors import Node, Tensor, result_dtype, result_shape


@record
class Elementwise(ValueRecord):
    """An elementwise workload: an expression over tensors, run eager (one kernel per op) or fused (one kernel)."""

    expr: Node
    mode: str  # "eager" or "fused"
    threads_per_block: int
    device: Device
    registers_per_thread: int | None = None
    shared_memory_per_block: float | None = None  # bytes
    observed: Observation | None = observed_field()
    text: str = field(eq=False, default="")
    timing: str = "alone"  # how a figure about it was timed (`set timing = ...`, kinds.kind.TIMINGS)

    kind = "elementwise"

    @property
    def setting(self) -> str:
        return f"{self.device.name}, {self.mode}, {self.threads_per_block} threads per block"

    def result(self, name: str) -> Tensor:
        """The tensor it computes, under `name` (for an expression that uses it)."""
        return Tensor(name, result_dtype(self.expr) or "fp32", result_shape(self.expr))


# The metrics of its rules (rules.py), for what the resolver says before any rule is loaded.
ELEMENTWISE_METRICS = ("elements", "bytes_read", "bytes_written", "flops", "peak_flop_rate", "instructions",
                       "issue_rate", "t_issue", "t_floor", "time", "bound", "blocks", "threads", "kernels",
                       "launches", "round_trips", "threads_per_block", "warps_per_block", "resident_blocks_per_sm",
                       "residency_limit", "blocks_per_wave", "waves", "waves_started", "sms_used",
                       "last_wave_occupancy", *ROOFLINE_METRICS)

# The fallback: a subject over tensors that no other kind recognizes is an elementwise expression.
KIND = Kind("elementwise", Elementwise, recognizes=lambda expr: True, needs_tensors=True, modes=KERNEL_MODES,
            figures=KERNEL_FIGURES, streamable=True, measured_leaves=("time",), metrics=ELEMENTWISE_METRICS)
