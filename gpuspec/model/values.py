"""Value: a number with its unit and its derivation, and the helpers that build one from others."""
from __future__ import annotations

import math
import re
import sys

from attrs import field

from gpuspec import units
from gpuspec.devices import Fact
from gpuspec.record import Record, as_tuple, record


class NotFinite(ArithmeticError):
    """A value came out infinite, not a number, or beyond a 64-bit float: the inputs it was computed from are too
    large or too small. The message names the value and shows its rule with the inputs' numbers; inputs are the
    values it was computed from."""

    def __init__(self, message: str, inputs: tuple = ()):
        super().__init__(message)
        self.inputs = inputs


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

    def __attrs_post_init__(self) -> None:
        # The one guard every computed number passes: an infinite or NaN value would compare (`> 1 s`, `min(1, nan)`)
        # as if it were a number and pass a claim wrongly.
        if self.low is None and type(self.number) in _NUMBERS and -_MAX <= self.number <= _MAX:  # the usual case
            return
        if not (_finite(self.number) and (self.low is None or _finite(self.low))
                and (self.high is None or _finite(self.high))):
            raise NotFinite(_not_finite(self), self.inputs)

    @property
    def bounds(self) -> tuple[float, float]:
        """(low, high): the number twice unless the value is a range."""
        if self.low is not None and self.high is not None:
            return self.low, self.high
        return self.number, self.number  # type: ignore[return-value]

    def format(self, digits: int = 3) -> str:
        """The value as a derivation shows it, to `digits` significant digits, with the prefix or the word that
        suits its size (`20.0 µs`, `1,447 /s`, `72.7 days`)."""
        if isinstance(self.number, str):
            return self.number
        if self.percent and self.dimension == units.COUNT:
            return f"{units.significant(self.number * 100, digits)}%"
        if self.low is not None and self.high is not None and self.low != self.high:
            low = units.format_si(self.low, self.dimension, digits)
            high = units.format_si(self.high, self.dimension, digits)
            return f"{low.split()[0]}–{high}" if low.split()[1:] == high.split()[1:] else f"{low} – {high}"
        if self.dimension == _PER_SECOND and 1e3 <= abs(self.number) < 1e12:  # `1,447 /s`, not `1.45 k/s`
            if abs(self.number) < 1e6:
                return f"{float(units.significant(self.number, max(digits, 4)).replace(',', '')):,.0f} /s"
            scale, word = (1e9, "billion") if abs(self.number) >= 1e9 else (1e6, "million")
            return f"{units.significant(self.number / scale, digits)} {word} /s"
        if self.dimension == units.TIME and 1e3 <= abs(self.number) < 1e9:  # `72.7 days`, not `6.28 Ms`
            scale, word = next((s, w) for s, w in _LONG_TIMES if abs(self.number) >= s)
            return f"{units.significant(self.number / scale, digits)} {word}"
        if self.dimension == units.CYCLES and self.number == 1:
            return "1 cycle"
        return units.format_si(self.number, self.dimension, digits)

    def derivation(self, result: str | None = None) -> str:
        """`t_mem = bytes_moved / hbm_bandwidth = 67.1 MB / 3.35 TB/s = 20.0 µs`; `result` is the value as a
        message shows it, where that takes more digits (`562.5 FLOP/B` where 3 digits would say `562`)."""
        if self.rule is None:
            source = f" [{self.reference}]" if self.reference else ""
            note = f" ({self.note})" if self.note else ""
            return f"{self.name} = {result or self.format()}{source}{note}"
        if self.rule == "{0}" and self.inputs[0].name == self.name:  # a renaming to its own name says nothing
            return self.inputs[0].derivation(result)
        if self.rule == "{0}" and _written(self.inputs[0]) and not self.note:
            # a named number (`r = 562.5 FLOP/B`): as written, every digit; three digits would say 562
            return f"{self.name} = {self.inputs[0].name}"
        names = _names_rule(self.rule, self.inputs).format(*(i.name for i in self.inputs))
        numbers = _numbers_rule(self.rule, self.inputs).format(*(i.format() for i in self.inputs))
        steps = [names] if _same_formula(self.name, names) else [self.name, names]  # `a / b`, said once
        if result is not None and numbers == self.format():  # the inputs' numbers are the value itself: say it once
            numbers = result
        for step in (numbers, result or self.format()):
            if step != steps[-1]:
                steps.append(step)
        note = f" ({self.note})" if self.note else ""
        return " = ".join(steps) + note


def _written(value: Value) -> bool:
    """Whether a value is a number as a spec wrote it (`562.5 FLOP/B`), its name the text."""
    return value.rule is None and value.reference is None and value.name[:1].isdigit() and value.low is None


def _same_formula(name: str, formula: str) -> bool:
    """Whether a name as written (`a/b`, `y.time * 2`) is the formula as shown (`a / b`, `y.time × 2`)."""
    return name.replace("*", "×").replace(" ", "") == formula.replace(" ", "")


_MAX = sys.float_info.max
_NUMBERS = (float, int)  # a float or int within ±_MAX is finite (a larger int does not fit a float)
_PER_SECOND = units.divide(units.COUNT, units.TIME)
_LONG_TIMES = ((86_400.0, "days"), (3_600.0, "h"), (60.0, "min"))

# `{0} launches`: a count followed by the noun of what it counts.
_LONE = re.compile(r"(?<!\w)\((\{\d+\})\)")
_COUNTED = re.compile(r"\{(\d+)\} ([a-z]+)\b")


def _names_rule(rule: str, inputs: tuple[Value, ...]) -> str:
    """The rule as it reads with names: a count named for what it counts is not followed by that noun again
    (`Σ over {0} kernels` with {0} = kernels reads `Σ over kernels`, not `Σ over kernels kernels`)."""
    def drop(match: re.Match) -> str:
        name = inputs[int(match[1])].name
        return f"{{{match[1]}}}" if name == match[2] or _singular(name) == _singular(match[2]) else match[0]
    return _COUNTED.sub(drop, rule)


def _numbers_rule(rule: str, inputs: tuple[Value, ...]) -> str:
    """The rule as it reads with numbers: one of a thing is singular (`1 launch`, not `1 launches`)."""
    rule = _LONE.sub(r"\1", rule)  # a number needs no parentheses of its own

    def agree(match: re.Match) -> str:
        value = inputs[int(match[1])]
        if value.number == 1 and value.dimension == units.COUNT and not value.percent:
            return f"{{{match[1]}}} {_singular(match[2])}"
        return match[0]
    return _COUNTED.sub(agree, rule)


def _singular(noun: str) -> str:
    if noun.endswith(("ches", "shes", "sses", "xes")):
        return noun[:-2]
    if noun.endswith("s") and not noun.endswith("ss"):
        return noun[:-1]
    return noun


def _finite(number) -> bool:
    if isinstance(number, str):
        return True
    try:
        return math.isfinite(number)
    except OverflowError:  # a whole number with more digits than a float holds
        return False


def _what(number) -> str:
    if isinstance(number, str):
        return "a word"
    try:
        return "not a number" if math.isnan(number) else "infinite"
    except OverflowError:
        return "beyond the range of a 64-bit float"


def _not_finite(value: Value) -> str:
    """`t_mem` is infinite: bytes_moved / hbm_bandwidth = 67.1 MB / 1.00e-293 B/s."""
    bad = next(n for n in (value.number, value.low, value.high) if n is not None and not _finite(n))
    text = f"`{value.name}` is {_what(bad)}"
    if value.rule is not None and all(_finite(i.number) for i in value.inputs):
        names = value.rule.format(*(i.name for i in value.inputs))
        numbers = value.rule.format(*(i.format() for i in value.inputs))
        text += f": {names} = {numbers}" if names != numbers else f": {names}"
    return text


def extreme_inputs(values, limit: int = 4) -> list[Value]:
    """The given numbers `values` were computed from (spec numbers, settings, device and model facts) that are far
    outside the sizes GPUs have, the most extreme first: the likely cause when a value overflows."""
    found: dict[str, Value] = {}
    seen: set[int] = set()
    stack = list(values)
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if v.rule is None and not isinstance(v.number, str) and v.number:
            found.setdefault(v.name, v)
        stack.extend(v.inputs)
    ranked = sorted(((math.log10(abs(v.number)), v) for v in found.values()), key=lambda p: -abs(p[0]))  # type: ignore[arg-type]
    return [v for exponent, v in ranked if not _SMALLEST < exponent < _LARGEST][:limit]


# Given numbers beyond 10^18 SI units (an exabyte) or under 10^-15 (a femtosecond) are far outside any GPU's sizes:
# the suspects when a value overflows.
_LARGEST, _SMALLEST = 18, -15


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
    if not bottom.number:
        raise NotFinite(f"`{name}` divides by zero: {top.name} / {bottom.name}, and {bottom.name} = 0", (top, bottom))
    number = top.number / bottom.number  # type: ignore[operator]
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
    exact = quotient(name, top, bottom)
    return Value(name, _whole(math.ceil, exact.number - 1e-12), exact.dimension, "⌈{0} / {1}⌉", (top, bottom),
                 note=note)


def floor_quotient(name: str, top: Value, bottom: Value, note: str | None = None) -> Value:
    exact = quotient(name, top, bottom)
    return Value(name, _whole(math.floor, exact.number + 1e-12), exact.dimension, "⌊{0} / {1}⌋", (top, bottom),
                 note=note)


def ceiling(name: str, value: Value, note: str | None = None) -> Value:
    return Value(name, _whole(math.ceil, value.number - 1e-9), value.dimension, "⌈{0}⌉", (value,), note=note)  # type: ignore[operator]


def _whole(rounding, number: float) -> float:
    """math.ceil or math.floor of a finite number; past 2^53 a float is whole already, and rounding it to an int
    could make one too large to turn back into a float."""
    return number if abs(number) >= 2.0**53 else rounding(number)


def choice(name: str, word: str, rule: str, inputs: tuple[Value, ...], note: str | None = None) -> Value:
    """A word chosen by a stated rule from other values (`bound = memory`, as t_mem is the largest)."""
    return Value(name, word, None, rule, inputs, note=note)
