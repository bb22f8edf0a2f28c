"""`all_reduce(1 GB) across 8 GPUs over nvlink`: a buffer's size, the GPUs and the link they share. The buffer may
be a named tensor (`all_gather(t)`, or a workload's result): its size is the tensor's bytes, meaning what the size
means in the sized form."""
from __future__ import annotations

from gpuspec import kinds, nodes, units
from gpuspec.diagnostics import did_you_mean
from gpuspec.kinds.collective import Collective
from gpuspec.resolve import options
from gpuspec.resolve.checked import constant, dimension_of, same_dimension, whole_number
from gpuspec.resolve.quantities import quantity
from gpuspec.resolve.scope import Scope, TensorName, WorkloadName, after_failed, invalid, require_device
from gpuspec.resolve.tensor_expressions import mentions_tensor
from gpuspec.tensors import Tensor


def resolve(subject: nodes.Subject, scope: Scope, local: dict[str, Tensor], statement: str) -> Collective:
    call, written = subject.expr, subject.options
    device = require_device(scope, subject.span)
    if written.across is None:
        raise invalid("collective-needs-gpus", f"`{call.function}` needs the GPUs it runs across", call.span,
                      f"write `{call.function}(1 GB) across 8 GPUs over nvlink`")
    if written.mode or written.threads is not None or written.graph or written.tile or written.on is not None:
        raise invalid("collective-options", "a collective takes `across N GPUs over nvlink` (or pcie)",
                      written.span)
    if len(call.args) != 1:
        raise invalid("wrong-arguments", f"`{call.function}` takes one argument: the buffer's size or a named "
                      "tensor", call.span)
    count, noun, link = written.across
    gpus = whole_number(count, units.Unit("", 1.0, units.COUNT), count.span, "the number of GPUs")
    if gpus < 2:
        raise invalid("expected-whole-number", "a collective needs at least 2 GPUs", count.span)
    if noun.lower() not in ("gpus", "gpu", "devices"):
        raise invalid("syntax-word", f"`across {count.text} {noun}`: write `across {count.text} GPUs`",
                      written.span)
    link = (link or ("nvlink" if device.fact("nvlink_bandwidth") else "pcie")).lower()
    if link not in ("nvlink", "pcie"):
        raise invalid("unknown-link", f"unknown link `{link}`", written.span,
                      did_you_mean(link, ("nvlink", "pcie")) or "links: nvlink, pcie")
    if device.fact(f"{link}_bandwidth") is None:
        why = device.absent.get(f"{link}_bandwidth")
        other = "pcie" if link == "nvlink" else "nvlink"
        raise invalid("missing-fact", f"device {device.name} has no `{link}_bandwidth`" + (f": {why}" if why else ""),
                      written.span, options.missing_link_help(device, link, f"write `over {other}`"
                                                              if device.fact(f"{other}_bandwidth") else None))
    tensor = _named_tensor(scope, local, call.args[0])
    if tensor is not None:
        value = float(tensor.elements * tensor.itemsize)
    else:
        size = quantity(scope, call.args[0])
        same_dimension(dimension_of(size), units.BYTES, "the buffer", call.args[0].span)
        value = constant(size, call.args[0].span)
    if value <= 0:
        raise invalid("bad-size", "the buffer must be larger than zero", call.args[0].span)
    return Collective(call.function, value, gpus, link, device, text=statement, algorithm=scope.nccl_algorithm,
                      launch=scope.nccl_launch)


def _named_tensor(scope: Scope, local: dict[str, Tensor], arg) -> Tensor | None:
    """The tensor a collective's argument names (a tensor, or what a workload computes), or None for a size."""
    if not isinstance(arg, nodes.Name):
        if mentions_tensor(scope, arg):
            raise invalid("collective-operand", "a collective moves a named tensor or a size, not an expression "
                          "over tensors", arg.span, "name the tensor the expression computes (y = ...), then "
                          "move y")
        return None
    if arg.id in local:
        return local[arg.id]
    bound = scope.names.get(arg.id)
    failed = after_failed(scope, arg.id, arg.span) if bound is None else None
    if failed is not None:  # a tensor or workload whose definition failed: its error stands for this one
        raise failed
    if isinstance(bound, TensorName):
        return bound.tensor
    if isinstance(bound, WorkloadName):
        result = getattr(bound.workload, "result", None)
        if result is None:
            raise invalid("not-a-tensor", f"`{arg.id}` is {kinds.of(bound.workload).article}, which computes no "
                          "tensor for a collective to move", arg.span,
                          "a collective moves a tensor (`all_gather(t)` after `t = bf16[4096, 4096]`) or a size "
                          "(`all_gather(32 MB)`)")
        return result(arg.id)
    return None
