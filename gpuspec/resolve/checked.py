"""Checked numbers and their text: dimensions, whole numbers, device limits, constants known before any model runs,
and expressions written back in a canonical form (for messages and derivations)."""
from __future__ import annotations

import math
import sys

from gpuspec import devices, metrics, nodes, units
from gpuspec.devices import Device
from gpuspec.program import (
    FactRef,
    Literal,
    MetricRef,
    NamedRef,
    Operation,
    Ref,
    apply,
)
from gpuspec.resolve.scope import invalid
from gpuspec.text import Span


def free_names(expr: nodes.Expr) -> set[str]:
    if isinstance(expr, nodes.Name):
        return {expr.id}
    if isinstance(expr, nodes.BinOp):
        return free_names(expr.left) | free_names(expr.right)
    if isinstance(expr, nodes.Neg):
        return free_names(expr.operand)
    if isinstance(expr, nodes.Call):
        return set().union(*(free_names(a) for a in expr.args))
    if isinstance(expr, nodes.WithUnit):
        return free_names(expr.expr)
    return set()


def expr_text(expr: nodes.Expr) -> str:
    """An expression written back in a canonical form (for messages and derivations)."""
    if isinstance(expr, nodes.Quantity):
        unit = expr.unit or ""
        return f"{expr.number.text}{'' if unit in ('', '%', '×') else ' '}{unit}"
    if isinstance(expr, nodes.Name):
        return expr.id
    if isinstance(expr, nodes.Member):
        return f"{expr.owner}.{expr.attribute}"
    if isinstance(expr, nodes.DeviceField):
        return f"device.{expr.field_name}"
    if isinstance(expr, nodes.ModelFact):
        return f"{expr.model}.{expr.attribute}"
    if isinstance(expr, nodes.WithUnit):
        inner = expr_text(expr.expr)
        return f"{inner}{'' if expr.unit in ('%', '×') else ' '}{expr.unit}"
    if isinstance(expr, nodes.Neg):  # `-(a + b)` keeps its brackets: `-a + b` is another sum
        inner = expr_text(expr.operand)
        return f"-({inner})" if isinstance(expr.operand, nodes.BinOp) and expr.operand.op != "^" else f"-{inner}"
    if isinstance(expr, nodes.Call):
        return f"{expr.function}({', '.join(expr_text(a) for a in expr.args)})"
    if isinstance(expr, nodes.BinOp):
        left, right = expr_text(expr.left), expr_text(expr.right)
        if isinstance(expr.left, nodes.BinOp) and _PRECEDENCE[expr.left.op] < _PRECEDENCE[expr.op]:
            left = f"({left})"
        elif expr.op == "^" and isinstance(expr.left, (nodes.BinOp, nodes.Neg)):  # `(-a)^2`, `(a^b)^c`
            left = f"({left})"
        if isinstance(expr.right, nodes.BinOp) and _PRECEDENCE[expr.right.op] <= _PRECEDENCE[expr.op]:
            right = f"({right})"
        return f"{left}{expr.op}{right}" if expr.op == "^" else f"{left} {expr.op} {right}"
    return "?"


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "@": 2, "^": 3}


def value_text(value) -> str:
    if isinstance(value, (nodes.Word, nodes.Figure)):
        return value.text
    number = value.low.text + ("+" if value.kind == "at_least" else "")
    if value.high is not None:
        number += "–" + value.high.text
    if value.phrase is None:
        return number
    unit = value.phrase.unit
    joiner = "" if unit in ("%", "×") else " "
    return " ".join([number + joiner + unit, *value.phrase.words])


def dimension_of(ref: Ref) -> units.Dimension | None:
    if isinstance(ref, MetricRef):
        return metrics.METRICS[ref.metric].dimension
    if isinstance(ref, FactRef):
        return devices.FIELDS[ref.name][0]
    return ref.dimension


def square_root(dimension, span) -> units.Dimension:
    if any(x % 2 for x in dimension):
        raise invalid("bad-power", "the square root of this unit is not a unit", span)
    return tuple(x // 2 for x in dimension)  # type: ignore[return-value]


def with_article(word: str) -> str:
    """`a decode`, `an elementwise`: the article for a kind of workload."""
    return f"{'an' if word[0] in 'aeiou' else 'a'} {word}"


def describe(dimension: units.Dimension | None) -> str:
    names = {units.TIME: "time (s)", units.BYTES: "bytes (B)", units.FLOPS: "FLOP", units.BANDWIDTH: "bytes/s",
             units.FLOP_RATE: "FLOP/s", units.INTENSITY: "FLOP/B", units.CYCLES: "cycles",
             units.FREQUENCY: "Hz", units.POWER: "W", units.COUNT: "plain numbers",
             units.PER_SECOND: "a count per second (/s)"}
    if dimension is None:
        return "words"
    return names.get(dimension, units.si_symbol(dimension))


def unit_hint(dimension: units.Dimension | None) -> str | None:
    examples = {units.TIME: "µs", units.BYTES: "MB", units.FLOPS: "MFLOP", units.BANDWIDTH: "TB/s",
                units.FLOP_RATE: "TFLOP/s", units.INTENSITY: "FLOP/B", units.CYCLES: "cycles",
                units.FREQUENCY: "GHz", units.POWER: "W", units.COUNT: "a plain number, `%` or `×`",
                units.PER_SECOND: "/s (`1000/s`, `tokens/s`, `launches/s`)"}
    example = examples.get(dimension)
    return f"write it in {example}" if example else None


def same_dimension(actual, wanted, what: str, span: Span) -> None:
    if actual != wanted:
        raise invalid("dimension-mismatch", f"{what} is in {describe(wanted)}, not {describe(actual)}", span,
                      unit_hint(wanted))


def within_limit(device: Device, field: str, asked: float | None, what: str, span: Span) -> None:
    """An error when a workload asks for more of a per-block resource than the device allows."""
    limit = device.fact(field)
    if asked is not None and limit is not None and asked > limit.value:
        raise invalid("over-device-limit", f"{units.format_count(asked)} {what} is more than {device.name} allows "
                      f"({limit.written})", span)


# The range of a 64-bit float, which every number in gpuspec is: below the smallest normal float digits are lost.
_LARGEST, _SMALLEST = sys.float_info.max, sys.float_info.min
_RANGE_HELP = "gpuspec computes in 64-bit floats: sizes from about 2.2e-308 to 1.8e308 in SI units (s, B, FLOP)"


def in_range(number: nodes.Number, unit: units.Unit, span: Span) -> float:
    """The number as written in SI units (times its unit's scale); an error when a 64-bit float cannot hold it:
    too large (`1e300 PB`), or so small it would become zero (`1e-400`) or lose its digits."""
    value = number.value * unit.scale
    written = number.text + (f" {unit.symbol}" if unit.symbol else "")
    if not math.isfinite(value):
        raise invalid("number-out-of-range", f"`{written}` is too large for gpuspec", span, _RANGE_HELP)
    if abs(value) < _SMALLEST and _nonzero(number):
        raise invalid("number-out-of-range", f"`{written}` is too small for gpuspec: it would become "
                      f"{'zero' if value == 0 else 'imprecise'}", span, _RANGE_HELP)
    return value


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # a whole number too large for a float (`10 ^ 400`)
        return False


def _nonzero(number: nodes.Number) -> bool:
    mantissa = number.text.lower().partition("e")[0]
    return any(digit in mantissa for digit in "123456789")


def resolution(number: nodes.Number, unit: units.Unit, span: Span) -> float:
    """The place value of the last digit written, in SI units (1 for `62`, 0.1 for `33.5`, 1e7 for `8.03e9`); an
    error when the exponent puts it beyond a 64-bit float (`0e400`)."""
    mantissa, _, exponent = number.text.replace(",", "").lower().partition("e")
    place = int(exponent or 0) - len(mantissa.partition(".")[2])
    try:
        value = 10.0 ** place * unit.scale
    except OverflowError:
        value = math.inf
    if not _SMALLEST <= value <= _LARGEST:
        raise invalid("number-out-of-range", f"the exponent of `{number.text}` is out of range: its last digit "
                      f"stands for 10^{place}", span, _RANGE_HELP)
    return value


def whole_number(number: nodes.Number, unit: units.Unit, span: Span, what: str) -> int:
    value = in_range(number, unit, span)
    if unit.dimension != units.COUNT or value != int(value) or value < 1:
        raise invalid("expected-whole-number", f"{what} must be a whole number of at least 1, not `{number.text}`",
                      span)
    return int(value)


def needs_model(ref: Ref) -> bool:
    """Whether a reference names a metric anywhere, so only the model can compute it."""
    if isinstance(ref, MetricRef):
        return True
    if isinstance(ref, NamedRef):
        return needs_model(ref.expr)
    if isinstance(ref, Operation):
        return any(needs_model(arg) for arg in ref.args)
    return False


def constant(ref: Ref, span: Span) -> float:
    """The value of a reference that needs no model (numbers, named values, device facts)."""
    if isinstance(ref, Literal):
        return ref.value
    if isinstance(ref, NamedRef):
        return constant(ref.expr, span)
    if isinstance(ref, FactRef):
        return ref.device.fact(ref.name).value  # type: ignore[union-attr]
    if isinstance(ref, Operation):
        args = [constant(a, span) for a in ref.args]
        try:
            value = apply(ref.op, args)
        except ZeroDivisionError:
            raise invalid("division-by-zero", f"`{ref.text}` divides by zero", span) from None
        except OverflowError:  # 10^999: past a 64-bit float
            raise invalid("bad-arithmetic", f"`{ref.text}` cannot be computed: it is too large for a 64-bit float",
                          span, _RANGE_HELP) from None
        except (ArithmeticError, ValueError) as error:
            raise invalid("bad-arithmetic", f"`{ref.text}` cannot be computed: {error}", span) from None
        if isinstance(value, complex):
            raise invalid("bad-arithmetic", f"`{ref.text}` is not a real number", span)
        if not _finite(value):
            raise invalid("not-finite", f"`{ref.text}` is too large to compute", span, _RANGE_HELP)
        return value
    raise invalid("not-constant", "this must be a number known before any workload is modelled", span)


def arithmetic(formula: nodes.Expr) -> float:
    """The number a value written as arithmetic over plain numbers comes to (`2 * 512^3`), in 64-bit floats; an
    error where a step divides by zero, leaves the range of a float or is not a real number. Worked without
    recursion, so a product of any length is one loop."""
    pending: list[tuple[nodes.Expr, bool]] = [(formula, False)]
    found: list[float] = []
    plain = units.Unit("", 1.0, units.COUNT)
    while pending:
        node, ready = pending.pop()
        if isinstance(node, nodes.Quantity):
            found.append(in_range(node.number, plain, node.span))
        elif isinstance(node, nodes.BinOp) and not ready:
            pending.extend(((node, True), (node.right, False), (node.left, False)))
        elif isinstance(node, nodes.BinOp):
            right = found.pop()
            found.append(_step(node, found.pop(), right))
        elif isinstance(node, nodes.Neg) and not ready:
            pending.extend(((node, True), (node.operand, False)))
        elif isinstance(node, nodes.Neg):
            found.append(-found.pop())
        else:
            raise invalid("bad-expression", "a claimed value is arithmetic over numbers", node.span)
    return found[0]


def _step(node: nodes.BinOp, left: float, right: float) -> float:
    written = expr_text(node)
    if len(written) > 60:
        written = written[:28] + " … " + written[-28:]
    try:
        if node.op == "+":
            value = left + right
        elif node.op == "-":
            value = left - right
        elif node.op == "*":
            value = left * right
        elif node.op == "/":
            value = left / right
        else:
            value = left ** right
    except ZeroDivisionError:
        raise invalid("division-by-zero", f"`{written}` divides by zero", node.span) from None
    except OverflowError:
        value = math.inf
    if isinstance(value, complex):
        raise invalid("bad-arithmetic", f"`{written}` is not a real number", node.span,
                      "a negative number has no real fractional power")
    if not math.isfinite(value):
        raise invalid("number-out-of-range", f"`{written}` is too large for gpuspec", node.span, _RANGE_HELP)
    if abs(value) < _SMALLEST and (value != 0 or (node.op in "*/^" and left != 0 and right != 0)):
        raise invalid("number-out-of-range", f"`{written}` is too small for gpuspec: it would become "
                      f"{'zero' if value == 0 else 'imprecise'}", node.span, _RANGE_HELP)
    return value
