"""The analytical model: estimate(workload) -> Estimate, one set of metric rules per workload kind."""
from __future__ import annotations

from gpuspec.model import elementwise
from gpuspec.model.estimate import Estimate, ModelError
from gpuspec.model.values import Value

_RULES = {"elementwise": elementwise.RULES}
_CACHE: dict = {}


def estimate(workload) -> Estimate:
    """The metrics of `workload` on its device; identical workloads share one Estimate."""
    key = (workload, workload.device.name, workload.device.overridden, id(workload.device.facts))
    found = _CACHE.get(key)
    if found is None:
        found = _CACHE[key] = Estimate(workload, workload.device, _RULES[workload.kind])
    return found


__all__ = ["Estimate", "ModelError", "Value", "estimate"]
