"""The collective kind: all_reduce, all_gather, reduce_scatter, all_to_all and broadcast_to_all over GPUs joined by
NVLink or PCIe, as rings. Its stages: resolve.py and rules.py; no harness (see KIND)."""
from __future__ import annotations

from attrs import field

from gpuspec.devices import Device
from gpuspec.kinds.kind import Kind, Observation, calls, observed_field
from gpuspec.record import ValueRecord, record

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast_to_all")
# NCCL's algorithm (`set nccl_algorithm = ring`): "auto" is whichever NCCL picks. Over NVLink a profile may give
# each its own measured bandwidth (nvlink_bandwidth_ring, nvls_bandwidth).
ALGORITHMS = ("auto", "ring", "nvls")
# How the collective was called (`set nccl_launch = graph`): "eager", each call launched by the host as it comes
# (nccl-tests, torch.distributed); "graph", replayed from a CUDA graph, where no host work is left in its time.
LAUNCHES = ("eager", "graph")


@record
class Collective(ValueRecord):
    """A collective over `gpus` GPUs joined by a link (NVLink or PCIe), moving a buffer of `size` bytes, as a ring."""

    op: str
    size: float  # bytes: the whole buffer (all_reduce, broadcast) or the gathered result (all_gather, ...)
    gpus: int
    link: str    # "nvlink" or "pcie"
    device: Device
    observed: Observation | None = observed_field()
    text: str = field(eq=False, default="")
    algorithm: str = "auto"  # NCCL's algorithm, as `set nccl_algorithm = ...` says
    launch: str = "eager"  # how it was called, as `set nccl_launch = ...` says

    kind = "collective"

    @property
    def setting(self) -> str:
        return f"{self.gpus} × {self.device.name} over {self.link}"


# The metrics of its rules (rules.py), for what the resolver says before any rule is loaded.
COLLECTIVE_METRICS = ("gpus", "size", "wire_share", "wire_bytes", "link_bandwidth", "transfer_time", "latency",
                      "time", "algbw", "busbw", "bytes_moved")

# An observed bandwidth is NCCL's algorithm bandwidth: the buffer over the time; a share of the line rate is its bus
# bandwidth's.
KIND = Kind("collective", Collective, recognizes=calls(*COLLECTIVES),
            figures={"time": None, "B/s": "size", "of line rate": "size"},
            unmeasured="a collective needs several GPUs joined by a link, and measuring one is NCCL's tests' job",
            metrics=COLLECTIVE_METRICS)
