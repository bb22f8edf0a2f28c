"""Value: a number with its unit and its derivation, and the helpers that build one from others."""
from __future__ import annotations

import functools
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
        if self.dimension == _PER_SECOND and 1e3 <= abs(self.number) < 1e12:  # `1,447/s`, not `1.45 k/s`
            if abs(self.number) < 1e6:  # written against its number, as a claim's value and a failure show it
                return f"{float(units.significant(self.number, max(digits, 4)).replace(',', '')):,.0f}/s"
            scale, word = (1e9, "billion") if abs(self.number) >= 1e9 else (1e6, "million")
            return f"{units.significant(self.number / scale, digits)} {word} /s"
        if self.dimension == units.TIME and 1e3 <= abs(self.number) < 1e9:  # `72.7 days`, not `6.28 Ms`
            scale, word = next((s, w) for s, w in _LONG_TIMES if abs(self.number) >= s)
            return f"{units.significant(self.number / scale, digits)} {word}"
        if self.dimension == units.CYCLES and self.number == 1:
            return "1 cycle"
        if self.dimension in (units.COUNT, units.CYCLES):  # a whole count exactly; others one digit more
            text = units.format_count(self.number, digits + 1)
            return text if self.dimension == units.COUNT else f"{text} cycles"
        if self.dimension != units.TIME and abs(self.number) >= _PAST_PREFIXES:  # `4.36e23 B`, not `436,224,000 PB`
            return f"{units.significant(self.number, digits)} {units.si_symbol(self.dimension)}"
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
        numbers = _numbers_rule(self.rule, self.inputs).format(*_operands(self, result or self.format()))
        steps = [names] if _same_formula(self.name, names) else [self.name, names]  # `a / b`, said once
        if result is not None and numbers == self.format():  # the inputs' numbers are the value itself: say it once
            numbers = result
        last = result or self.format()
        if isinstance(self.number, str) and numbers.startswith(f"{self.number}, "):
            last = numbers  # a word said first with why (`memory, as 20.0 µs ≥ 501 ns`) is not said again after it
        for step in (numbers, last):
            if step != steps[-1]:
                steps.append(step)
        note = f" ({self.note})" if self.note else ""
        return " = ".join(steps) + note


def _operands(value: Value, result: str) -> list[str]:
    """The inputs' numbers as a formula shows them: to three digits, or to the digits it takes for the formula over
    the numbers shown to give the result shown (`25.0025 ms - 25.0000 ms = 2.50 µs`, not `25.0 ms - 25.0 ms =
    2.50 µs`; `20.03 µs + 20.03 µs = 40.1 µs`, not `20.0 µs + 20.0 µs`). A difference or a sum shows its terms to
    one place, as a sum is written by hand; elsewhere only the rounded inputs take more digits."""
    inputs = value.inputs
    plain = [i.format() for i in inputs]
    program = _arithmetic(value.rule) if value.rule is not None else None
    target = _shown(value, result) if program is not None else None
    if program is None or target is None:
        return plain
    shown = [_shown(i, text) for i, text in zip(inputs, plain)]
    if any(s is None for s in shown) or _gives(program, shown, target):  # type: ignore[arg-type]
        return plain
    rounded = [i.number != s[0] and abs(i.number - s[0]) > 1e-12 * abs(i.number)  # type: ignore[index]
               for i, s in zip(inputs, shown)]
    coarsest = max((s[1] for i, s in zip(inputs, shown) if i.number), default=0.0)  # type: ignore[index]
    for more in range(1, 13):
        if program.additive:  # every term to one place
            digits = [_digits_to(i, coarsest / 10 ** more) if i.number else 3 for i in inputs]
        else:
            digits = [3 + more if r else 3 for r in rounded]
        texts = [i.format(d) for i, d in zip(inputs, digits)]
        shown = [_shown(i, text) for i, text in zip(inputs, texts)]
        if all(s is not None for s in shown) and _gives(program, shown, target):  # type: ignore[arg-type]
            return texts
    return plain


def _digits_to(value: Value, place: float) -> int:
    """The fewest digits (at least three) that show `value` to `place` or finer."""
    for digits in range(3, 18):
        shown = _shown(value, value.format(digits))
        if shown is None or shown[1] <= place * (1 + 1e-9):
            return digits
    return 17


def _gives(program: _Program, shown: list[tuple[float, float]], target: tuple[float, float]) -> bool:
    """Whether the formula over the numbers shown comes to the result shown, to its last digit."""
    try:
        computed = program([s[0] for s in shown])
    except (ArithmeticError, ValueError):
        return True  # nothing to compare: leave the numbers as they are
    number, place = target
    return abs(computed - number) <= place / 2 * (1 + 1e-6) + 1e-12 * abs(number)


class _Program:
    """A rule that is plain arithmetic over its inputs (`{0} - {1}`, `⌈{0} / {1}⌉`, `max({0}, {1})`), worked out for
    their numbers by precedence, as a reader works it out; `additive` where it only adds and subtracts."""

    def __init__(self, tokens: tuple[str, ...], additive: bool):
        self.tokens, self.additive = tokens, additive

    def __call__(self, numbers: list[float]) -> float:
        return _Reading(self.tokens, numbers).whole()


class _Reading:
    """One working-out of a _Program's tokens: sums of products of powers of atoms."""

    _CLOSE = {"⌈": "⌉", "⌊": "⌋"}

    def __init__(self, tokens: tuple[str, ...], numbers: list[float]):
        self.tokens, self.numbers, self.at = tokens, numbers, 0

    def whole(self) -> float:
        result = self._sum()
        if self.at != len(self.tokens):
            raise ValueError("left over")
        return result

    def _peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _take(self, expected: str | None = None) -> str:
        token = self._peek()
        if token is None or (expected is not None and token != expected):
            raise ValueError(f"expected {expected}")
        self.at += 1
        return token

    def _sum(self) -> float:
        result = self._product()
        while self._peek() in ("+", "-", "−"):
            result = result + self._product() if self._take() == "+" else result - self._product()
        return result

    def _product(self) -> float:
        result = self._power()
        while self._peek() in ("×", "*", "/"):
            result = result * self._power() if self._take() != "/" else result / self._power()
        return result

    def _power(self) -> float:
        base = self._atom()
        return base ** self._power() if self._peek() == "^" and self._take() else base

    def _atom(self) -> float:
        token = self._take()
        if token in ("-", "−"):
            return -self._atom()
        if token == "(":
            result = self._sum()
            self._take(")")
            return result
        if token in self._CLOSE:
            inner = self._sum()
            self._take(self._CLOSE[token])
            return _ceil(inner) if token == "⌈" else _floor(inner)
        if token in ("max", "min"):
            self._take("(")
            found = [self._sum()]
            while self._peek() == ",":
                self._take()
                found.append(self._sum())
            self._take(")")
            return max(found) if token == "max" else min(found)
        if token.startswith("{"):
            return self.numbers[int(token[1:-1])]
        return float(token)


def _ceil(number: float) -> float:
    return math.ceil(number - 1e-9 * abs(number))


def _floor(number: float) -> float:
    return math.floor(number + 1e-9 * abs(number))


_TOKEN = re.compile(r"\{\d+\}|\d+(?:\.\d+)?|max|min|[()+\-−×*/^,⌈⌉⌊⌋]| +")


@functools.lru_cache(maxsize=512)
def _arithmetic(rule: str) -> _Program | None:
    """The rule as a _Program, or None where it has words (`the queue: ...`) or no inputs."""
    tokens, position = [], 0
    for match in _TOKEN.finditer(rule):
        if match.start() != position:
            return None
        position = match.end()
        if not match[0].isspace():
            tokens.append(match[0])
    if position != len(rule) or "{" not in rule:
        return None
    program = _Program(tuple(tokens), re.fullmatch(r"[{}\d()+\-− ]*", rule) is not None)
    try:
        most = max(int(t[1:-1]) for t in tokens if t.startswith("{"))
        program([1.0 + 0.1 * i for i in range(most + 1)])  # it reads as arithmetic
    except (ValueError, IndexError, ArithmeticError):
        return None
    return program


_UNIT_WORDS = {"%": 0.01, "million /s": 1e6, "billion /s": 1e9, "days": 86_400.0, "h": 3_600.0, "min": 60.0,
               "cycle": 1.0, "cycles": 1.0}
_PREFIXES = {"p": 1e-12, "n": 1e-9, "µ": 1e-6, "m": 1e-3, "": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
             "P": 1e15}
_SHOWN = re.compile(r"(-?\d[\d,]*(?:\.(\d+))?)(?:e(-?\d+))?(?: ?(.*))")


def _shown(value: Value, text: str) -> tuple[float, float] | None:
    """The number `text` shows for `value` and the place of its last digit, in SI units (`20.0 µs`: 2.00e-5 s, to
    1e-7 s); None where it is no plain number (a word, a range, a number in a unit it cannot read)."""
    if isinstance(value.number, str) or (value.low is not None and value.low != value.high):
        return None
    match = _SHOWN.fullmatch(text)
    if match is None:
        return None
    unit = match[4]
    if unit in _UNIT_WORDS:
        scale = _UNIT_WORDS[unit]
    else:
        symbol = units.si_symbol(value.dimension) if value.dimension is not None else ""
        prefix = unit[:len(unit) - len(symbol)] if unit.endswith(symbol) else None
        if prefix not in _PREFIXES:
            return None
        scale = _PREFIXES[prefix]  # type: ignore[index]
    exponent = 10.0 ** int(match[3] or 0)
    number = float(match[1].replace(",", "")) * exponent * scale
    return number, 10.0 ** -len(match[2] or "") * exponent * scale


def _written(value: Value) -> bool:
    """Whether a value is a number as a spec wrote it (`562.5 FLOP/B`), its name the text."""
    return value.rule is None and value.reference is None and value.name[:1].isdigit() and value.low is None


def _same_formula(name: str, formula: str) -> bool:
    """Whether a name as written (`a/b`, `y.time * 2`) is the formula as shown (`a / b`, `y.time × 2`)."""
    return name.replace("*", "×").replace(" ", "") == formula.replace(" ", "")


_MAX = sys.float_info.max
_PAST_PREFIXES = 0.9995e18  # beyond peta- a value is written in its unit with an exponent
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


def leaves(value: Value):
    """The given values a derivation rests on (device facts, settings, numbers written), each once."""
    waiting, seen = [value], set()
    while waiting:
        item = waiting.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if not item.inputs:
            yield item
        waiting.extend(item.inputs)


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
