"""The analytical model: estimate(workload) -> Estimate, one set of metric rules per workload kind."""
from __future__ import annotations

from gpuspec.model import attention, collectives, decode, elementwise, matmul, observed, rowwise, stream, training
from gpuspec.model.estimate import Estimate, ModelError
from gpuspec.model.values import Value

_RULES = {"elementwise": elementwise.RULES, "stream": stream.RULES, "decode": decode.RULES, "matmul": matmul.RULES,
          "rowwise": rowwise.RULES, "attention": attention.RULES, "collective": collectives.RULES,
          "training": training.RULES}
# A workload written with `observed ...` also has the metrics that figure implies.
_OBSERVED_RULES = {kind: observed.rules_for(rules) for kind, rules in _RULES.items()}
_CACHE: dict = {}


def estimate(workload) -> Estimate:
    """The metrics of `workload` on its device; identical workloads share one Estimate."""
    model = getattr(workload, "model", None)
    key = (workload, id(workload.device.facts), id(model.facts) if model is not None else None)
    found = _CACHE.get(key)
    if found is None:
        rules = (_OBSERVED_RULES if getattr(workload, "observed", None) is not None else _RULES)[workload.kind]
        found = _CACHE[key] = Estimate(workload, workload.device, rules)
    return found


__all__ = ["Estimate", "ModelError", "Value", "estimate"]
