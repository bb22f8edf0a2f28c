"""Evaluate what a claim is about (a resolved reference) to a Value, using the model for metrics."""
from __future__ import annotations

import math
import re

from attrs import evolve

from gpuspec.model.estimate import ModelError, not_finite
from gpuspec.model.values import NotFinite, Value, fact, renamed
from gpuspec.program import FactRef, Literal, MetricRef, NamedRef, Ref, apply

_SYMBOLS = {"+": " + ", "-": " - ", "*": " × ", "/": " / ", "^": "^"}


def evaluate(ref: Ref, estimate_of, device_of=None) -> Value:
    """The Value of `ref`. `estimate_of(workload)` gives a workload's Estimate, and `device_of(device)` the device
    whose facts to use (the device itself unless given). ModelError if it cannot be computed, NotFiniteError (a
    ModelError) if it is not a finite number."""
    try:
        return _evaluate(ref, estimate_of, device_of)
    except (NotFinite, OverflowError) as error:  # a measured or calibrated number that is not one
        raise not_finite(error, getattr(ref, "text", None) or None) from None


def _evaluate(ref: Ref, estimate_of, device_of) -> Value:
    if isinstance(ref, Literal):
        return Value(ref.text, ref.value, ref.dimension)
    if isinstance(ref, MetricRef):
        return estimate_of(ref.workload)[ref.metric]
    if isinstance(ref, FactRef):
        device = device_of(ref.device) if device_of is not None else ref.device
        found = device.fact(ref.name)
        if found is None:
            raise ModelError(f"device {device.name} has no `{ref.name}`")
        return fact(found)
    if isinstance(ref, NamedRef):
        return renamed(ref.name, _as_written(ref.expr, _evaluate(ref.expr, estimate_of, device_of)))
    args = [_evaluate(a, estimate_of, device_of) for a in ref.args]
    if any(isinstance(a.number, str) for a in args):
        raise ModelError("a word cannot take part in arithmetic")
    try:
        number = apply(ref.op, [a.number for a in args])
    except ZeroDivisionError:
        raise ModelError(f"`{ref.text}` divides by zero") from None
    except (ArithmeticError, ValueError) as error:
        raise ModelError(f"`{ref.text}` cannot be computed: {error}") from None
    if isinstance(number, complex):
        raise ModelError(f"`{ref.text}` cannot be computed: it is not a real number")
    if not _finite(number):
        raise not_finite(NotFinite(f"`{ref.text}` is too large to compute", tuple(args)))
    if ref.op == "neg":
        template = "-" + _operand(ref, 0)
    elif ref.op in _SYMBOLS:
        template = _operand(ref, 0) + _SYMBOLS[ref.op] + _operand(ref, 1)
    else:
        template = ref.op + "(" + ", ".join(f"{{{i}}}" for i in range(len(args))) + ")"
    rule, inputs = _flattened(template, ref, args)
    low = high = None
    if any(a.low is not None and a.low != a.high for a in args) and ref.op in ("*", "/", "neg", "+", "-") \
            and all(isinstance(a.number, float | int) for a in args):
        corners = _corners(ref.op, args)
        low, high = min(corners), max(corners)
    return Value(ref.text, number, ref.dimension, rule, inputs, low=low, high=high)


_PLACEHOLDER = re.compile(r"\{(\d+)\}")


def _flattened(template: str, ref: Ref, args: list[Value]) -> tuple[str, tuple[Value, ...]]:
    """The rule of an arithmetic node over the leaves of its expression, and those leaves: an operand that is
    itself arithmetic written in place (`y.bytes_read × 2 / device.hbm_bandwidth`, its numbers `33.6 MB × 2 /
    3.35 TB/s`), so that the formula shows every number it substitutes, and says each once. A leaf is a number
    written, a named value, or a metric or device fact under the name written (`y.bytes_read`)."""
    inputs: list[Value] = []
    pieces: list[str] = []
    for written, value in zip(ref.args, args):
        if _is_arithmetic(written) and value.rule is not None:
            pieces.append(_renumbered(value.rule, len(inputs)))
            inputs.extend(value.inputs)
        else:
            inputs.append(_as_written(written, value))
            pieces.append(f"{{{len(inputs) - 1}}}")
    return _PLACEHOLDER.sub(lambda m: pieces[int(m[1])], template), tuple(inputs)


def _renumbered(rule: str, offset: int) -> str:
    """`{0} × {1}` with its placeholders moved up by `offset` (`{2} × {3}`)."""
    return _PLACEHOLDER.sub(lambda m: f"{{{int(m[1]) + offset}}}", rule)


def _is_arithmetic(ref: Ref) -> bool:
    return not isinstance(ref, (Literal, MetricRef, FactRef, NamedRef))


def _as_written(ref: Ref, value: Value) -> Value:
    """An operand under the name the expression gives it (`y.time`, `device.hbm_bandwidth`). A computed metric is
    renamed; a given value (a device fact, a setting) keeps its own name, which says where it came from, beneath a
    renaming."""
    text = getattr(ref, "text", None)
    if not isinstance(ref, (MetricRef, FactRef)) or not text or text == value.name:
        return value
    if value.rule is not None:
        return evolve(value, name=text)
    return renamed(text, value)


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "neg": 3, "^": 4}


def _operand(ref: Ref, index: int) -> str:
    """`{0}`, or `({0})` where the operand's own operator binds less tightly than ref's: the formula shown with
    names must mean what was computed (`a / (b × c)`, not `a / b × c`)."""
    inner = _PRECEDENCE.get(getattr(ref.args[index], "op", None), 9)
    outer = _PRECEDENCE[ref.op]
    right_side = index == 1 and ref.op in ("-", "/", "^")
    left_of_power = index == 0 and ref.op == "^"
    loose = inner < outer or (inner == outer and (right_side or left_of_power))
    return f"({{{index}}})" if loose else f"{{{index}}}"


def _finite(number: float) -> bool:
    try:
        return math.isfinite(number)
    except OverflowError:  # a whole number too large for a float (`10 ^ 400`)
        return False


def _corners(op: str, args: list[Value]) -> list[float]:
    """Every value the operation takes at the ends of its arguments' ranges (for interval arithmetic)."""
    if op == "neg":
        return [-x for x in args[0].bounds]
    return [apply(op, [a, b]) for a in args[0].bounds for b in args[1].bounds if not (op == "/" and b == 0)]
