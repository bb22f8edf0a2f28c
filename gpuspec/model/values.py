"""Value: a number with its unit and its derivation, and the helpers that build one from others."""
from __future__ import annotations

import math

from attrs import field

from gpuspec import units
from gpuspec.devices import Fact
from gpuspec.record import Record, as_tuple, record


@record
class Value(Record):
    """One computed (or given) number: its name, SI value, dimension, and how it was derived.

    rule is a template over the inputs (`{0} / {1}`); a value with no rule is given: a device fact
    (with its reference), a setting, or a number from the spec. A range (a measured latency) has
    low < high and number at its middle. A word value (a bound) has a str number and no dimension.
    """

    name: str
    number: float | str
    dimension: units.Dimension | None
    rule: str | None = None
    inputs: tuple["Value", ...] = field(default=(), converter=as_tuple, repr=False)
    reference: str | None = None
    note: str | None = None
    low: float | None = None
    high: float | None = None
    percent: bool = False  # a share, shown as a percentage

    @property
    def bounds(self) -> tuple[float, float]:
        """(low, high): the number twice unless the value is a range."""
        if self.low is not None and self.high is not None:
            return self.low, self.high
        return self.number, self.number  # type: ignore[return-value]

    def format(self) -> str:
        if isinstance(self.number, str):
            return self.number
        if self.percent and self.dimension == units.COUNT:
            return f"{units.significant(self.number * 100)}%"
        if self.low is not None and self.high is not None and self.low != self.high:
            low = units.format_si(self.low, self.dimension)
            high = units.format_si(self.high, self.dimension)
            return f"{low.split()[0]}–{high}" if low.split()[1:] == high.split()[1:] else f"{low} – {high}"
        return units.format_si(self.number, self.dimension)

    def derivation(self) -> str:
        """`t_mem = bytes_moved / hbm_bandwidth = 67.1 MB / 3.35 TB/s = 20.0 µs`."""
        if self.rule is None:
            source = f" [{self.reference}]" if self.reference else ""
            note = f" ({self.note})" if self.note else ""
            return f"{self.name} = {self.format()}{source}{note}"
        if self.rule == "{0}" and self.inputs[0].name == self.name:  # a renaming to its own name says nothing
            return self.inputs[0].derivation()
        names = self.rule.format(*(i.name for i in self.inputs))
        numbers = self.rule.format(*(i.format() for i in self.inputs))
        steps = [self.name, names]
        for step in (numbers, self.format()):
            if step != steps[-1]:
                steps.append(step)
        note = f" ({self.note})" if self.note else ""
        return " = ".join(steps) + note


def fact(fact: Fact) -> Value:
    return Value(fact.name, fact.value, fact.dimension, reference=fact.reference, note=fact.note,
                 low=fact.low, high=fact.high)


def given(name: str, number: float | str, dimension: units.Dimension | None, note: str | None = None) -> Value:
    return Value(name, number, dimension, note=note)


def renamed(name: str, value: Value) -> Value:
    """`value` under another name, keeping it as the one input (`bytes = bytes_moved`)."""
    return Value(name, value.number, value.dimension, "{0}", (value,), low=value.low, high=value.high)


def product(name: str, *factors: Value, note: str | None = None) -> Value:
    number = math.prod(f.number for f in factors)  # type: ignore[misc]
    dimension = units.COUNT
    for f in factors:
        dimension = units.multiply(dimension, f.dimension)
    return Value(name, number, dimension, " × ".join(f"{{{i}}}" for i in range(len(factors))), factors, note=note)


def quotient(name: str, top: Value, bottom: Value, note: str | None = None, percent: bool = False) -> Value:
    number = top.number / bottom.number if bottom.number else math.inf  # type: ignore[operator]
    return Value(name, number, units.divide(top.dimension, bottom.dimension), "{0} / {1}", (top, bottom), note=note,
                 percent=percent)


def total(name: str, *terms: Value, note: str | None = None) -> Value:
    rule = " + ".join(f"{{{i}}}" for i in range(len(terms)))
    return Value(name, sum(t.number for t in terms), terms[0].dimension, rule, terms, note=note)  # type: ignore[misc]


def largest(name: str, *terms: Value, note: str | None = None) -> Value:
    rule = "max(" + ", ".join(f"{{{i}}}" for i in range(len(terms))) + ")"
    return Value(name, max(t.number for t in terms), terms[0].dimension, rule, terms, note=note)  # type: ignore[type-var]


def smallest(name: str, *terms: Value, note: str | None = None) -> Value:
    rule = "min(" + ", ".join(f"{{{i}}}" for i in range(len(terms))) + ")"
    return Value(name, min(t.number for t in terms), terms[0].dimension, rule, terms, note=note)  # type: ignore[type-var]


def ceil_quotient(name: str, top: Value, bottom: Value, note: str | None = None) -> Value:
    number = math.ceil(top.number / bottom.number - 1e-12)  # type: ignore[operator]
    return Value(name, number, units.divide(top.dimension, bottom.dimension), "⌈{0} / {1}⌉", (top, bottom), note=note)


def floor_quotient(name: str, top: Value, bottom: Value, note: str | None = None) -> Value:
    number = math.floor(top.number / bottom.number + 1e-12)  # type: ignore[operator]
    return Value(name, number, units.divide(top.dimension, bottom.dimension), "⌊{0} / {1}⌋", (top, bottom), note=note)


def ceiling(name: str, value: Value, note: str | None = None) -> Value:
    return Value(name, math.ceil(value.number - 1e-9), value.dimension, "⌈{0}⌉", (value,), note=note)  # type: ignore[operator]


def choice(name: str, word: str, rule: str, inputs: tuple[Value, ...], note: str | None = None) -> Value:
    """A word chosen by a stated rule from other values (`bound = memory`, as t_mem is the largest)."""
    return Value(name, word, None, rule, inputs, note=note)
