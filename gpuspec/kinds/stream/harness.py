"""The plan for templates/stream.py.jinja: the repeated workload's own plan (elementwise, for now) and the launches:
the whole stream and the host's launches timed on the host, the GPU's share from a CUDA graph."""
from __future__ import annotations

from gpuspec import codegen
from gpuspec.codegen import Code
from gpuspec.kinds.elementwise import harness as elementwise
from gpuspec.kinds.stream import Stream
from gpuspec.planning import MAX_LAUNCHES, HarnessError
from gpuspec.units import format_count

REPEATS = ("elementwise",)  # the kinds whose program templates/stream.py.jinja repeats (it includes their template)


def plan(workload: Stream, name: Code, name_of) -> dict:
    if workload.kernel.kind not in REPEATS:
        raise HarnessError(f"no harness measures a stream of {workload.kernel.kind} workloads yet")
    if workload.launched_from != "pytorch":
        raise HarnessError(f"a harness launches from Python; a stream launched from {workload.launched_from} has "
                           "another host cost per launch, which it would not measure")
    if workload.count > MAX_LAUNCHES:
        raise HarnessError(f"a stream of {format_count(workload.count)} launches is more than a harness runs "
                           f"(at most {MAX_LAUNCHES:,}: it captures every launch in one CUDA graph)")
    # The repeated workload under its own name: its functions are defined once, by it where the program measures
    # it too (harness.plans says so in define_kernel), else here.
    kernel = elementwise.plan(workload.kernel, name_of(workload.kernel) or Code(f"{name}_repeated"), name_of)
    return {"template": "stream.py.jinja", "kind": Code("stream"), "id": name, "kernel": kernel,
            "define_kernel": True, "helpers": kernel["helpers"], "count": codegen.literal(workload.count),
            "graph": bool(workload.graph)}


def defines(workload: Stream, name: str) -> list[str]:
    """Its measuring function, and the repeated workload's functions where it defines them itself."""
    return [f"measure_{name}", *elementwise.defines(workload.kernel, f"{name}_repeated")]
