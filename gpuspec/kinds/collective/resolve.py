"""`all_reduce(1 GB) across 8 GPUs over nvlink`: a buffer's size, the GPUs and the link they share."""
from __future__ import annotations

from gpuspec import nodes, units
from gpuspec.diagnostics import did_you_mean
from gpuspec.kinds.collective import Collective
from gpuspec.resolve.checked import constant, dimension_of, same_dimension, whole_number
from gpuspec.resolve.quantities import quantity
from gpuspec.resolve.scope import Scope, invalid, require_device
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
        raise invalid("wrong-arguments", f"`{call.function}` takes one argument: the buffer's size", call.span)
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
                      written.span, f"write `over {other}`" if why and device.fact(f"{other}_bandwidth")
                      else f"set it: `device {device.name} with {link}_bandwidth = ...`")
    size = quantity(scope, call.args[0])
    same_dimension(dimension_of(size), units.BYTES, "the buffer", call.args[0].span)
    value = constant(size, call.args[0].span)
    if value <= 0:
        raise invalid("bad-size", "the buffer must be larger than zero", call.args[0].span)
    return Collective(call.function, value, gpus, link, device, text=statement, algorithm=scope.nccl_algorithm,
                      launch=scope.nccl_launch)
