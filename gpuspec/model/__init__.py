"""The analytical model: estimate(workload) -> Estimate, by the rules of the workload's kind
(gpuspec/kinds/<kind>/rules.py, imported when a workload of that kind is first estimated).

The measured source is the same rules with the metrics a harness measures (the kind's measured leaves) given as
measured values: measured_estimate. A metric is measured when its model value depends on one of those leaves
(leaves_behind), so which metrics a measurement supplies follows from the rules themselves.
"""
from __future__ import annotations

import importlib

from gpuspec import kinds
from gpuspec.model import observed
from gpuspec.model.estimate import Estimate, ModelError
from gpuspec.model.values import Value

_MODULES: dict = {}
_RULES: dict[tuple[str, bool], dict] = {}
_CACHE: dict = {}


def _rules_module(name: str):
    found = _MODULES.get(name)
    if found is None:
        found = _MODULES[name] = importlib.import_module(f"gpuspec.kinds.{name}.rules")
    return found


def rules(workload) -> dict:
    """The metric rules of a workload: its kind's, and those its observed figure implies when it has one."""
    has_figure = getattr(workload, "observed", None) is not None
    key = (workload.kind, has_figure)
    found = _RULES.get(key)
    if found is None:
        own = {**observed.MEMORY_RULES, **_rules_module(workload.kind).RULES}  # a kind's own memory rule wins
        found = _RULES[key] = observed.rules_for(kinds.of(workload), own) if has_figure else own
    return found


def estimate(workload) -> Estimate:
    """The metrics of `workload` on its device; identical workloads share one Estimate."""
    model = getattr(workload, "model", None)
    key = (workload, id(workload.device.facts), id(model.facts) if model is not None else None)
    found = _CACHE.get(key)
    if found is None:
        found = _CACHE[key] = Estimate(workload, workload.device, rules(workload), estimate_of=estimate)
    return found


def kernel_times(workload) -> list[float]:
    """The GPU time of each kernel of one run of a streamable workload, in order (what a stream repeats)."""
    return _rules_module(workload.kind).kernel_times(estimate(workload))


def measured_estimate(workload, leaves: dict[str, Value]) -> Estimate:
    """The workload's metrics by the model's rules, with `leaves` (measured values of some of the kind's measured
    leaves) in place of the rules that compute them."""
    return Estimate(workload, workload.device, rules(workload), leaves, estimate_of=estimate)


def leaves_behind(workload, metric: str) -> frozenset[str]:
    """The measured leaves of the workload's kind that the model's value of `metric` depends on (itself, if it is
    one): found by walking the value's inputs, stopping at a leaf. Empty when no measurement says anything about
    the metric, or when the model cannot compute it."""
    kind = kinds.of(workload)
    if not kind.measured_leaves:
        return frozenset()
    e = estimate(workload)
    walked = getattr(e, "_leaves_behind", None)
    if walked is None:
        walked = e._leaves_behind = ({}, {})  # type: ignore[attr-defined]
        for leaf in kind.measured_leaves:
            try:
                value = e[leaf]
            except (ModelError, RecursionError):  # no model value to find: the claims say why
                continue
            walked[0][id(value)] = (value, frozenset((leaf,)))
    try:
        value = e[metric]
    except (ModelError, RecursionError):
        return frozenset()
    return _behind(value, *walked)


def measurable(workload, metric: str) -> bool:
    """Whether a measurement of the workload says something about `metric`."""
    return bool(leaves_behind(workload, metric))


def _behind(root: Value, leaves: dict, memo: dict) -> frozenset[str]:
    """The leaves `root` depends on; memo keeps what each value (by identity, kept alive there) depends on."""
    stack = [(root, False)]
    while stack:
        value, expanded = stack.pop()
        key = id(value)
        if key in memo:
            continue
        if key in leaves:
            memo[key] = leaves[key]
        elif expanded:
            memo[key] = (value, frozenset().union(*(memo[id(i)][1] for i in value.inputs)))
        else:
            stack.append((value, True))
            stack.extend((i, False) for i in value.inputs if id(i) not in memo)
    return memo[id(root)][1]


__all__ = ["Estimate", "ModelError", "Value", "estimate", "kernel_times", "leaves_behind", "measurable",
           "measured_estimate", "rules"]
