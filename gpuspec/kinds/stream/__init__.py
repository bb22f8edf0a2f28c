"""The stream kind: `N launches of W`, a workload of kernels launched again and again, from the host or as one CUDA
graph; `N launches of G`, where G is itself `K launches of W as a CUDA graph`, replays that graph N times; `set sync =
per_launch` makes the host wait for the GPU after every launch. Its stages: resolve.py, rules.py (the launch
queue), harness.py (the launches, timed on both sides)."""
from __future__ import annotations

from attrs import field

from gpuspec import nodes
from gpuspec.devices import Device
from gpuspec.kinds.kind import Kind, Observation, observed_field
from gpuspec.record import ValueRecord, record


# Who launches a stream's kernels (`set launched_from = ...`), and the device fact that is its host cost per launch.
LAUNCHERS = {"pytorch": "launch_cost", "cpp": "cpp_launch_cost"}
# Whether the host waits for the GPU after each launch (`set sync = ...`): `none`, the launches run ahead of the GPU;
# `per_launch`, each launch is followed by a synchronisation (torch.cuda.synchronize(), .item(), a host copy).
SYNCS = {"none": "the host launches ahead of the GPU (the default)",
         "per_launch": "the host waits for the GPU after every launch, so host and GPU no longer overlap"}


@record
class Stream(ValueRecord):
    """A workload launched `count` times in a row: from the host one launch at a time, or as one CUDA graph.
    The workload is of a streamable kind (elementwise, row-wise, attention, matmul): one or more kernels a repeat;
    or a stream `as a CUDA graph`, which is then replayed `count` times, one graph launch each."""

    kernel: object
    count: int
    graph: bool
    device: Device
    sample_window: float  # seconds: the window a sampled utilization counts as busy if any kernel ran in it
    observed: Observation | None = observed_field()
    text: str = field(eq=False, default="")
    launched_from: str = "pytorch"  # who launches the kernels: `set launched_from = cpp`
    synced: bool = field(default=False, metadata={"omit_from_key_at_default": True})  # `set sync = per_launch`

    kind = "stream"

    @property
    def replays(self) -> bool:
        """Whether each launch replays a CUDA graph (the workload is a stream `as a CUDA graph`)."""
        return isinstance(self.kernel, Stream)

    @property
    def setting(self) -> str:
        what = "replays of a CUDA graph" if self.replays else "launches"
        return (f"{self.device.name}, {self.count:,} {what}{', as a CUDA graph' if self.graph else ''}"
                f"{', a sync per launch' if self.synced else ''}")


# The metrics of its rules (rules.py), for what the resolver says before any rule is loaded.
STREAM_METRICS = ("repeats", "kernels", "launches", "kernel_time", "launch_cost", "host_time", "launch_time",
                  "busy_time", "time", "idle_time", "busy_share", "idle_share", "sample_window", "utilization",
                  "bound", "bytes_moved", "flops", "bytes_per_repeat", "peak_flop_rate", "sms_used")

# The harness times the whole stream and the host's launches on the host, and the GPU's share from a CUDA graph.
# An observed figure is of the whole stream: its time, kernels launched per second, or its FLOPs or bytes over the
# time; its repeats run back to back, so a repeat's data that fits in L2 is read from there.
KIND = Kind("stream", Stream, recognizes=lambda expr: isinstance(expr, nodes.StreamNode), timeline=True,
            figures={"time": None, "launches/s": "kernels", "FLOP/s": "flops", "B/s": "bytes_moved", "MFU": "flops",
                     "MBU": "bytes_moved"},
            measured_leaves=("time", "busy_time", "host_time"), repeated=True, metrics=STREAM_METRICS)
