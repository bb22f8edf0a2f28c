"""`1000 launches of y as a CUDA graph`: a named workload of a streamable kind, launched a whole number of times;
`100 launches of g`, where g is `20 launches of y as a CUDA graph`: that graph replayed 100 times."""
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
    if isinstance(bound.workload, Stream):
        _check_replayed(scope, bound.workload, count, stream, written)
    elif not kinds.of(bound.workload).streamable:
        streamable = [kind.name for kind in kinds.KINDS if kind.streamable]
        raise invalid("not-a-kernel", f"`{stream.workload}` is {kinds.of(bound.workload).article}; a stream "
                      f"launches {', '.join(streamable[:-1])} or {streamable[-1]} workloads", stream.span)
    device = bound.workload.device
    return Stream(bound.workload, count, written.graph, device, options.sample_window(scope, device),
                  text=statement, launched_from=scope.launched_from, synced=scope.sync == "per_launch")


def _check_replayed(scope: Scope, inner: Stream, count: int, stream: nodes.StreamNode, written: nodes.Options) -> None:
    """A stream may repeat a stream only as the replays of one CUDA graph: `N launches of g`, g a stream `as a CUDA
    graph` of kernels. Anything else is a longer stream, written as one."""
    name = stream.workload
    repeated = next((n for n, b in scope.names.items() if isinstance(b, WorkloadName) and b.workload is inner.kernel),
                    "W")
    longer = f"{count * inner.count:,} launches of {repeated}"
    if inner.replays:
        raise invalid("stream-of-stream", f"`{name}` replays a CUDA graph already; gpuspec replays a graph of "
                      "kernels, not a stream of replays", stream.span,
                      "replay the graph itself: `N launches of G`, G written `K launches of W as a CUDA graph`")
    if not inner.graph:
        raise invalid("stream-of-stream", f"`{name}` is a stream of launches already; launching it again is one "
                      "longer stream", stream.span, f"write `{longer}`, or make `{name}` a CUDA graph "
                      f"(`... as a CUDA graph`) to replay it")
    if written.graph:
        raise invalid("graph-of-graph", f"`{name}` is a CUDA graph already; a graph of its replays is one graph of "
                      "all their kernels", written.span, f"write `{longer} as a CUDA graph`, or replay `{name}`: "
                      f"`{count:,} launches of {name}` without `as a CUDA graph`")
