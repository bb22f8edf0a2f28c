"""`1000 launches of y as a CUDA graph`: a named workload of a streamable kind, launched a whole number of times."""
from __future__ import annotations

from gpuspec import kinds, nodes, units
from gpuspec.kinds.stream import Stream
from gpuspec.resolve import options
from gpuspec.resolve.checked import whole_number
from gpuspec.resolve.scope import Scope, WorkloadName, invalid, unknown_name
from gpuspec.tensors import Tensor


def resolve(subject: nodes.Subject, scope: Scope, local: dict[str, Tensor], statement: str) -> Stream:
    stream, written = subject.expr, subject.options
    if written.on is not None or written.threads is not None or written.mode:
        raise invalid("stream-options", "a stream takes only `as a CUDA graph`; give other options to the "
                      "workload it launches", written.span)
    count = whole_number(stream.count, units.Unit("", 1.0, units.COUNT), stream.count.span, "a launch count")
    bound = scope.names.get(stream.workload)
    if not isinstance(bound, WorkloadName):
        if bound is None:
            raise unknown_name(scope, stream.workload, stream.span)
        raise invalid("not-a-workload", f"`{stream.workload}` is not a workload, so it cannot be launched",
                      stream.span)
    if not kinds.of(bound.workload).streamable:
        streamable = [kind.name for kind in kinds.KINDS if kind.streamable]
        raise invalid("not-a-kernel", f"`{stream.workload}` is {kinds.of(bound.workload).article}; a stream "
                      f"launches {', '.join(streamable[:-1])} or {streamable[-1]} workloads", stream.span)
    device = bound.workload.device
    return Stream(bound.workload, count, written.graph, device, options.sample_window(scope, device),
                  text=statement, launched_from=scope.launched_from)
