"""Estimate: the metrics of one workload on one device, each computed on first use from its rule."""
from __future__ import annotations

from collections.abc import Callable

import attrs

from gpuspec import kinds, units
from gpuspec.devices import Device
from gpuspec.model.values import NotFinite, Value, extreme_inputs, fact


class ModelError(Exception):
    """The model cannot compute a metric (a device lacks a fact it needs, a limit is exceeded).

    code is the diagnostic's code, and help, when there is any, says what would be right."""

    code = "model"

    def __init__(self, message: str, help: str | None = None):
        super().__init__(message)
        self.help = help


class NotFiniteError(ModelError):
    """A value overflowed to infinity or became NaN: it has no number, and a claim on it can neither pass nor fail."""

    code = "not-finite"


class NoValue(ModelError):
    """A metric that has no value for this workload (no batch makes this decode step compute-bound)."""

    code = "no-value"


def not_finite(error: ArithmeticError, metric: str | None = None, known=()) -> NotFiniteError:
    """The model error for a value that overflowed: what overflowed, in which metric, and the extreme inputs
    behind it (among the value's inputs, or else among `known` values)."""
    if isinstance(error, NotFinite):
        message = str(error)
        if metric is not None and not message.startswith(f"`{metric}`"):
            message = f"`{metric}` cannot be computed: {message}"
        suspects = extreme_inputs(error.inputs)
    else:  # raised by Python itself: an int too large for a float, math.ceil of infinity, a division by zero
        what = "divides by zero" if isinstance(error, ZeroDivisionError) else "overflows"
        message = f"`{metric or 'this value'}` cannot be computed: a number in its derivation {what}"
        suspects = extreme_inputs(known)
    if suspects:
        listed = ", ".join(f"{v.name} = {v.format()}" + (" (set in the spec)" if v.note == "set in the spec" else "")
                           for v in suspects)
        return NotFiniteError(message, f"it comes from {listed}: gpuspec computes in 64-bit floats (up to about "
                                       "1.8e308); check these numbers and their units")
    return NotFiniteError(message, "the numbers it is computed from are too large or too small for 64-bit floats "
                                   "(up to about 1.8e308); check the sizes, counts and device facts it uses")


Rule = Callable[["Estimate"], Value]


class Estimate:
    """The metrics of one workload: a lazy, memoised mapping from metric name to Value.

    rules maps each metric the workload's kind defines to the function that computes it from others. leaves are
    values given instead of their rules (measured times, for the measured source): every rule that uses one uses
    the given value. estimate_of(workload) is the estimate of another workload that a rule builds on (the workload
    a stream repeats).
    """

    def __init__(self, workload, device: Device, rules: dict[str, Rule], leaves: dict[str, Value] | None = None,
                 estimate_of: Callable[[object], Estimate] | None = None):
        self.workload, self.device, self._rules = workload, device, rules
        self._values: dict[str, Value] = dict(leaves) if leaves else {}
        self.estimate_of = estimate_of

    def __getitem__(self, name: str) -> Value:
        value = self._values.get(name)
        if value is None:
            rule = self._rules.get(name)
            if rule is None:
                from gpuspec.diagnostics import did_you_mean

                hint = did_you_mean(name, self._rules)
                raise ModelError(f"{kinds.of(self.workload).article} has no metric `{name}`"
                                 + (f"; {hint}" if hint else ""))
            try:
                value = rule(self)
            except (NotFinite, OverflowError, ZeroDivisionError) as error:  # never a value: inf would pass `> 1 s`
                raise not_finite(error, name, self._known()) from None
            self._values[name] = value
        return value

    def _known(self) -> list[Value]:
        """The values computed so far and the workload's own numbers: where to look for the cause of an overflow."""
        known = list(self._values.values())
        for item in attrs.fields(type(self.workload)):
            number = getattr(self.workload, item.name)
            if isinstance(number, (int, float)) and not isinstance(number, bool) and abs(number) < 1e308:
                known.append(Value(item.name, number, units.COUNT, note="set in the spec"))
        for owner in (self.device, getattr(self.workload, "model", None)):
            facts = getattr(owner, "facts", None) or {}
            known.extend(fact(f) for f in facts.values() if f.note == "set in the spec")
        return known

    def __contains__(self, name: str) -> bool:
        return name in self._rules

    def names(self) -> list[str]:
        return list(self._rules)

    def fact(self, name: str) -> Value:
        """A device fact as a Value, with its reference; ModelError if the device does not have it."""
        found = self.device.fact(name)
        if found is None:
            raise ModelError(self.device.missing(name), self._dtype_help(name))
        return fact(found)

    def _dtype_help(self, name: str) -> str | None:
        """For a tensor-core rate the device lacks (a V100's bf16), what to write for the workload to run in a
        dtype it has, in the words of the workload's kind (a decode step's `weights fp16`, a matmul's tensors)."""
        dtype = name.removeprefix("tensor_")
        if dtype == name:
            return None
        others = ("bf16", "fp16", "fp8", "int8", "tf32")
        other = next((d for d in others if d != dtype and self.device.fact(f"tensor_{d}")), None)
        return kinds.of(self.workload).dtype_help.format(dtype=other) if other else None
