"""The analytical model: estimate(workload) -> Estimate, one set of metric rules per workload kind."""
from __future__ import annotations

from gpuspec.model import attention, collectives, decode, elementwise, matmul, rowwise, stream
from gpuspec.model.estimate import Estimate, ModelError
from gpuspec.model.values import Value

_RULES = {"elementwise": elementwise.RULES, "stream": stream.RULES, "decode": decode.RULES, "matmul": matmul.RULES,
          "rowwise": rowwise.RULES, "attention": attention.RULES, "collective": collectives.RULES}
_CACHE: dict = {}


def estimate(workload) -> Estimate:
    """The metrics of `workload` on its device; identical workloads share one Estimate."""
    model = getattr(workload, "model", None)
    key = (workload, id(workload.device.facts), id(model.facts) if model is not None else None)
    found = _CACHE.get(key)
    if found is None:
        found = _CACHE[key] = Estimate(workload, workload.device, _RULES[workload.kind])
    return found


__all__ = ["Estimate", "ModelError", "Value", "estimate"]
