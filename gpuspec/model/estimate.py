"""Estimate: the metrics of one workload on one device, each computed on first use from its rule."""
from __future__ import annotations

from collections.abc import Callable

from gpuspec.devices import Device
from gpuspec.model.values import Value, fact


class ModelError(Exception):
    """The model cannot compute a metric (a device lacks a fact it needs, a limit is exceeded)."""


Rule = Callable[["Estimate"], Value]


class Estimate:
    """The metrics of one workload: a lazy, memoised mapping from metric name to Value.

    rules maps each metric the workload's kind defines to the function that computes it from others.
    """

    def __init__(self, workload, device: Device, rules: dict[str, Rule]):
        self.workload, self.device, self._rules = workload, device, rules
        self._values: dict[str, Value] = {}

    def __getitem__(self, name: str) -> Value:
        value = self._values.get(name)
        if value is None:
            rule = self._rules.get(name)
            if rule is None:
                from gpuspec.diagnostics import did_you_mean

                hint = did_you_mean(name, self._rules)
                article = "an" if self.workload.kind[0] in "aeiou" else "a"
                raise ModelError(f"{article} {self.workload.kind} workload has no metric `{name}`"
                                 + (f"; {hint}" if hint else ""))
            value = self._values[name] = rule(self)
        return value

    def __contains__(self, name: str) -> bool:
        return name in self._rules

    def names(self) -> list[str]:
        return list(self._rules)

    def fact(self, name: str) -> Value:
        """A device fact as a Value, with its reference; ModelError if the device does not have it."""
        found = self.device.fact(name)
        if found is None:
            raise ModelError(f"device {self.device.name} has no `{name}`; set it with "
                             f"`device {self.device.name} with {name} = ...`")
        return fact(found)
