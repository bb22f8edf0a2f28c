"""The usual mistakes, diagnosed: when a claim fails, does the number written fit a slip people often make?

Each candidate turns the computed value into what the slip would give (a dense peak taken for the sparse one,
GiB read as GB, bits as bytes, a unit prefix off by 1000, an FMA counted as one FLOP, an early datasheet value
the catalog notes); the first one under which the claim would hold is named.
"""
from __future__ import annotations

import re

from gpuspec import units
from gpuspec.model.values import NotFinite, Value
from gpuspec.program import Claim

_RATE, _FLOPS, _INTENSITY = units.FLOP_RATE, units.FLOPS, units.INTENSITY
_BYTE_LIKE = (units.BYTES, units.BANDWIDTH)
_BINARY = {"K": ("Ki", 1.024), "M": ("Mi", 2**20 / 1e6), "G": ("Gi", 2**30 / 1e9), "T": ("Ti", 2**40 / 1e12)}
_QUANTITY = re.compile(r"(?<![\w.])([0-9][0-9,]*(?:\.[0-9]+)?)\s*([A-Za-zµμ]+(?:/[A-Za-zµμ]+)?)")


def diagnose(actual: Value, claim: Claim, holds, reevaluate=None) -> str | None:
    """Words naming the slip that the claim's number fits, or None.

    holds(value, claim) is the comparison rule; reevaluate(fact_name, value) recomputes the claim with one device
    fact replaced (None where that is not possible).
    """
    if isinstance(actual.number, str) or claim.expected.kind == "word" or actual.number == 0:
        return None
    for factor, words in _candidates(actual, claim.expected.unit):
        scaled = _scaled(actual, factor)
        if scaled is not None and holds(scaled, claim) and _near_a_bound(scaled, claim):
            return words
    if reevaluate is not None:
        for fact in _facts(actual):
            for alternative, written in _alternatives(fact):
                try:
                    value = reevaluate(fact.name, alternative)
                except Exception:  # an alternative that cannot be computed is not the answer
                    continue
                if value is not None and holds(value, claim) and _near_a_bound(value, claim):
                    return (f"the claim matches {fact.name} = {written}, which the catalog notes as another published "
                            f"figure (it uses {fact.format()}{f' [{fact.reference}]' if fact.reference else ''})")
    return None


def _near_a_bound(value: Value, claim: Claim) -> bool:
    """Whether a slip explains a one-sided claim (`21+ µs`, `< 5 ms`): the slipped value must land near the bound
    written, within a factor of 2, since any value far enough past a bound passes it (20 ms is `21+ µs`, but
    reading 20 µs as 20 ms is not why someone wrote 21 µs). A point or a range is explained by passing."""
    expected = claim.expected
    one_sided = expected.kind == "at_least" or claim.comparator in ("<", "≤", ">", "≥")
    if not one_sided or isinstance(value.number, str) or isinstance(expected.low, str):
        return True
    bound, number = abs(float(expected.low)), abs(float(value.number))
    return bound > 0 and number > 0 and max(bound, number) <= 2 * min(bound, number)


def _candidates(actual: Value, unit: units.Unit | None):
    """(factor, words): the claimed value would be actual × factor if the slip were made."""
    dimension, shown = actual.dimension, actual.format()
    if dimension == _RATE:
        yield 2.0, f"the claim matches the 2:4-sparse rate, twice the dense {shown}: datasheets print sparse rates"
        yield 0.5, f"the claim is half of {shown}: FLOPs counted with an FMA as one?"
    if dimension in (_FLOPS, _INTENSITY):
        yield 0.5, f"the claim is half of {shown}: FLOPs counted with an FMA as one? (an FMA is 2 FLOPs)"
    if dimension in _BYTE_LIKE and unit is not None:
        symbol = unit.symbol
        if symbol[:1] in _BINARY and symbol[1:2] != "i":  # written in decimal units: was it binary?
            binary, ratio = _BINARY[symbol[0]]
            binary_symbol = binary + symbol[1:]
            in_binary = actual.number / units.parse_unit(binary_symbol).scale
            yield 1 / ratio, (f"the claim matches the value in {binary_symbol} ({in_binary:.4g} {binary_symbol} = "
                              f"{actual.number / unit.scale:.4g} {symbol})")
        elif symbol[1:2] == "i" and symbol[:1] in _BINARY:  # written in binary units: was it decimal?
            _, ratio = _BINARY[symbol[0]]
            decimal_symbol = symbol[0] + symbol[2:]
            in_decimal = actual.number / units.parse_unit(decimal_symbol).scale
            yield ratio, (f"the claim matches the value in {decimal_symbol} ({in_decimal:.4g} {decimal_symbol} = "
                          f"{actual.number / unit.scale:.4g} {symbol})")
        yield 8.0, f"the claim is 8 times {shown}: bits counted where bytes are meant?"
        yield 1 / 8, f"the claim is an eighth of {shown}: bytes counted where bits are meant?"
    yield 1000.0, f"the claim is 1000 times the value ({shown}): a unit prefix slip?"
    yield 1e-3, f"the claim is a thousandth of the value ({shown}): a unit prefix slip?"


def _scaled(value: Value, factor: float) -> Value | None:
    """The value as the slip would give it; None when that overflows (a value near the largest float, × 1000)."""
    low, high = value.bounds
    try:
        return Value(value.name, value.number * factor, value.dimension, low=low * factor, high=high * factor,
                     percent=value.percent)
    except NotFinite:
        return None


def _facts(value: Value, found=None) -> list[Value]:
    """The device facts a value was derived from (each once)."""
    found = {} if found is None else found
    if value.reference is not None and value.rule is None:
        found.setdefault(value.name, value)
    for child in value.inputs:
        _facts(child, found)
    return list(found.values())


def _alternatives(fact: Value):
    """Other published figures for a fact, as its catalog note gives them (`... said 3 TB/s`)."""
    for number, unit_text in _QUANTITY.findall(fact.note or ""):
        try:
            unit = units.parse_unit(unit_text)
        except units.UnknownUnit:
            continue
        if unit.dimension != fact.dimension:
            continue
        value = float(number.replace(",", "")) * unit.scale
        if value > 0 and abs(value - fact.number) > 1e-9 * abs(fact.number):
            yield value, f"{number} {unit_text}"
