"""The plan for templates/stream.py.jinja: the repeated workload's own plan (elementwise, for now) and the launches:
the whole stream and the host's launches timed on the host, the GPU's share from a CUDA graph. A stream of replays
captures its graph once and replays it; a sync per launch waits for the GPU after each launch."""
from __future__ import annotations

from gpuspec import codegen
from gpuspec.codegen import Code
from gpuspec.kinds.elementwise import harness as elementwise
from gpuspec.kinds.stream import Stream
from gpuspec.planning import MAX_LAUNCHES, HarnessError
from gpuspec.units import format_count

REPEATS = ("elementwise",)  # the kinds whose program templates/stream.py.jinja repeats (it includes their template)


def _repeated(workload: Stream):
    """The workload whose kernels the stream launches: its own, or that of the graph it replays."""
    return workload.kernel.kernel if workload.replays else workload.kernel


def plan(workload: Stream, name: Code, name_of) -> dict:
    repeated = _repeated(workload)
    if repeated.kind not in REPEATS:
        raise HarnessError(f"no harness measures a stream of {repeated.kind} workloads yet")
    if workload.launched_from != "pytorch" or (workload.replays and workload.kernel.launched_from != "pytorch"):
        raise HarnessError(f"a harness launches from Python; a stream launched from {workload.launched_from} has "
                           "another host cost per launch, which it would not measure")
    per_launch = workload.kernel.count if workload.replays else 1
    if workload.count * per_launch > MAX_LAUNCHES:
        raise HarnessError(f"a stream of {format_count(workload.count * per_launch)} launches is more than a harness "
                           f"runs (at most {MAX_LAUNCHES:,}: it captures every launch in one CUDA graph)")
    # The repeated workload under its own name: its functions are defined once, by it where the program measures
    # it too (harness.plans says so in define_kernel), else here.
    kernel = elementwise.plan(repeated, name_of(repeated) or Code(f"{name}_repeated"), name_of)
    return {"template": "stream.py.jinja", "kind": Code("stream"), "id": name, "kernel": kernel,
            "define_kernel": True, "helpers": kernel["helpers"], "count": codegen.literal(workload.count),
            "graph": bool(workload.graph), "synced": bool(workload.synced and not workload.graph),
            "replayed": codegen.literal(per_launch) if workload.replays else None}


def defines(workload: Stream, name: str) -> list[str]:
    """Its measuring function, and the repeated workload's functions where it defines them itself."""
    return [f"measure_{name}", *elementwise.defines(_repeated(workload), f"{name}_repeated")]
