"""The usual mistakes, diagnosed: when a claim fails, does the number written fit a slip people often make?

Each candidate is what the claimed number would be had one slip been made: GiB read as GB (or the reverse), bits as
bytes, a unit prefix off by one step, an FMA counted as one FLOP (only where the count is of multiply-adds), a
2:4-sparse tensor rate taken for the dense one, the tensor-core rate taken for the plain one of the same dtype (or
the reverse), another catalog device's figure for a device fact, and the other published figures the catalog keeps
as data (announced before the final datasheet, another part's, what a driver reports).

A mistake is named only when it is the one explanation: its value meets the claim within the claim's own precision
(the digits written, or the tolerance), no other candidate's does, and the computed value lies clearly outside what
was written (at least twice the claim's precision away). Bounds (`<`, `≤`, `>`, `≥`, `400+`) are never diagnosed:
any value far enough past a bound passes it, so a slip fitting one says nothing. The words say how sure it is,
from how closely the candidate agrees with the number written.
"""
from __future__ import annotations

import math

from gpuspec import units
from gpuspec.model.values import NotFinite, Value
from gpuspec.program import Claim, FactRef, MetricRef

_RATE, _FLOPS, _INTENSITY = units.FLOP_RATE, units.FLOPS, units.INTENSITY
_BYTE_LIKE = (units.BYTES, units.BANDWIDTH)
# Decimal prefix -> (its binary twin, binary / decimal): k and K are both 1000 in gpuspec.
_BINARY = {"k": ("Ki", 1.024), "K": ("Ki", 1.024), "M": ("Mi", 2**20 / 1e6), "G": ("Gi", 2**30 / 1e9),
           "T": ("Ti", 2**40 / 1e12)}
# The prefixes a unit family is written with, smallest first: a prefix slip is one step along its ladder.
_LADDERS = {
    "s": ("p", "n", "µ", "m", ""),
    "B": ("", "k", "M", "G", "T", "P"), "B/s": ("", "k", "M", "G", "T", "P"),
    "FLOP": ("", "k", "M", "G", "T", "P"), "FLOP/s": ("", "k", "M", "G", "T", "P"),
    "FLOPS": ("", "k", "M", "G", "T", "P"), "Hz": ("", "k", "M", "G"), "W": ("m", "", "k"),
}
# The plain rate of a dtype and its tensor-core rate: a table printing the higher one for both is a common slip.
_COUNTERPARTS = {"fp64": "tensor_fp64", "fp32": "tensor_tf32", "fp16": "tensor_fp16", "bf16": "tensor_bf16"}
_COUNTERPARTS.update({tensor: plain for plain, tensor in list(_COUNTERPARTS.items())})
_MULTIPLY_ADD_KINDS = ("matmul", "decode", "training")  # every FLOP they count is half of a multiply-add
_CLEAR = 2.0  # the computed value must be this many times the claim's precision away from the number written


class _Candidate:
    def __init__(self, value: Value, words: str, slip: bool = True):
        self.value, self.words, self.slip = value, words, slip


def diagnose(actual: Value, claim: Claim, holds, reevaluate=None, realistic: Value | None = None) -> str | None:
    """Words naming the one slip that the claim's number fits, and how sure that is; or None.

    holds(value, claim) is the comparison rule; reevaluate(fact_name, value) recomputes the claim with one device
    fact replaced (None where that is not possible); realistic is what a real device takes (the calibrated source),
    an explanation that is no slip: a claim it explains was likely measured, and no slip is named for it.
    """
    expected = claim.expected
    if isinstance(actual.number, str) or expected.kind in ("word", "at_least") or actual.number == 0:
        return None
    if claim.comparator in ("<", "≤", ">", "≥") or isinstance(expected.low, str):
        return None
    want, precision = _window(claim)
    if want == 0 or not _clearly_off(actual, want, precision):
        return None
    explaining = []
    # A device fact's claim is about the datasheet, not about what a real device reaches: no measured competitor.
    measured = realistic is not None and not isinstance(claim.subject, FactRef)
    others = [_Candidate(realistic, "", slip=False)] if measured else []
    for candidate in [*_candidates(actual, claim, reevaluate), *others]:
        if _explains(candidate.value, claim, holds, want):
            explaining.append(candidate)
    if len(explaining) != 1:  # none fits, or several do and the number cannot say which
        return None
    (found,) = explaining
    if not found.slip:
        return None
    return f"{found.words} ({_sureness(found.value, claim, want)})"


def _window(claim: Claim) -> tuple[float, float]:
    """(the number written, how far from it a value may be and still be what was written), in SI units."""
    expected = claim.expected
    low = float(expected.low)  # type: ignore[arg-type]
    half = expected.resolution / 2
    if expected.kind == "range":
        high = float(expected.high)  # type: ignore[arg-type]
        return (low + high) / 2, (high - low) / 2 + half
    tolerance = claim.tolerance
    if claim.comparator == "≈" and tolerance is not None:
        return low, tolerance.absolute if tolerance.absolute is not None else abs(low) * tolerance.relative
    return low, half


def _nearest(value: Value, want: float) -> float:
    low, high = value.bounds
    return min(max(want, low), high)


def _clearly_off(actual: Value, want: float, precision: float) -> bool:
    """Whether the computed value is far enough from the number written that a slip, not rounding or a loose
    tolerance, would be why: at least twice the claim's precision away."""
    return abs(_nearest(actual, want) - want) >= _CLEAR * max(precision, 1e-12 * abs(want))


def _explains(value: Value, claim: Claim, holds, want: float) -> bool:
    """Whether the slipped value is what was written: it meets the claim, and it is within half of the number
    written (a wide absolute tolerance, `≈ 1% ± 1%`, does not make 0.05% an explanation of `1%`)."""
    if isinstance(value.number, str):
        return False
    return holds(value, claim) and abs(_nearest(value, want) - want) <= 0.5 * abs(want)


def _sureness(value: Value, claim: Claim, want: float) -> str:
    """How sure the diagnosis is, in words: how closely the slipped value agrees with the number written, no closer
    than the digits written can tell."""
    off = abs(_nearest(value, want) - want) / abs(want)
    digits = claim.expected.resolution / 2 / abs(want)
    level = max(off, digits)
    sure = "almost certainly" if level <= 0.005 else "likely" if level <= 0.05 else "possibly"
    agreement = "to the digits written" if off <= digits else f"within {units.significant(off * 100, 2)}%"
    return f"{sure} this: it agrees {agreement}, and no other usual mistake fits"


def _candidates(actual: Value, claim: Claim, reevaluate):
    yield from _unit_slips(actual, claim.expected.unit)
    fma = _fma_as_one(actual, claim)
    if fma is not None:
        yield fma
    device = _device_of(claim.subject)
    facts = _facts(actual)
    if reevaluate is not None and device is not None:
        for fact in facts:
            if fact.name.startswith("tensor_") and not isinstance(fact.number, str):
                value = _recomputed(reevaluate, fact.name, 2 * float(fact.number))
                if value is not None:
                    yield _Candidate(value, f"the claim matches {_what(claim, fact)} at the 2:4-sparse {fact.name} "
                                            f"({_shown(2 * float(fact.number), fact.dimension)}), twice the dense "
                                            f"{fact.format()}: datasheets print the sparse rate beside the dense one")
                    if _counts_multiply_adds(claim) and actual.dimension == units.TIME:
                        # Half the FLOPs at the dense rate is the same time as every FLOP at twice the rate: the
                        # number cannot tell an FMA counted as one FLOP from the sparse rate.
                        yield _Candidate(value, "the claim is the time of half the FLOPs, a multiply-add counted as "
                                                "one FLOP")
        for figure in device.figures:
            if figure.fact in {f.name for f in facts}:
                value = _recomputed(reevaluate, figure.fact, figure.value)
                if value is not None:
                    cited = f" [{figure.reference}]" if figure.reference else ""
                    yield _Candidate(value, f"the claim matches {figure.fact} = {figure.written}, {figure.what}"
                                            f"{cited}; the catalog has {device.fact(figure.fact).written}")
    if isinstance(claim.subject, FactRef):
        kept = {f.value for f in (device.figures if device is not None else ()) if f.fact == claim.subject.name}
        yield from _other_figures(claim.subject, actual, kept)


def _counts_multiply_adds(claim: Claim) -> bool:
    """Whether the claim is about a workload whose every FLOP is half of a multiply-add (a matmul, a decode or
    training step), so that its times halve with an FMA counted as one FLOP."""
    subject = claim.subject
    return isinstance(subject, MetricRef) and getattr(subject.workload, "kind", None) in _MULTIPLY_ADD_KINDS


def _what(claim: Claim, fact: Value) -> str:
    return "the rate" if isinstance(claim.subject, FactRef) else "the value"


def _recomputed(reevaluate, name: str, number: float) -> Value | None:
    try:
        return reevaluate(name, number)
    except Exception:  # an alternative that cannot be computed is not the answer
        return None


def _unit_slips(actual: Value, unit: units.Unit | None):
    """The slips of the unit written: binary and decimal prefixes, bits and bytes, one prefix step."""
    if unit is None:
        return
    shown = actual.format()
    number = float(actual.number)
    symbol = unit.symbol
    if actual.dimension in _BYTE_LIKE:
        if symbol[:1] in _BINARY and symbol[1:2] != "i":  # written in decimal units: was it the binary number?
            binary, ratio = _BINARY[symbol[0]]
            binary_symbol = binary + symbol[1:]
            in_binary = number / units.parse_unit(binary_symbol).scale
            yield _Candidate(_scaled(actual, 1 / ratio), f"the claim matches the value in {binary_symbol}: "
                             f"{number / unit.scale:.4g} {symbol} is {in_binary:.4g} {binary_symbol}")
        elif symbol[1:2] == "i" and symbol[:1] in _BINARY:  # written in binary units: was it the decimal number?
            _, ratio = _BINARY[symbol[0]]
            decimal_symbol = symbol[0] + symbol[2:]
            in_decimal = number / units.parse_unit(decimal_symbol).scale
            yield _Candidate(_scaled(actual, ratio), f"the claim matches the value in {decimal_symbol}: "
                             f"{number / unit.scale:.4g} {symbol} is {in_decimal:.4g} {decimal_symbol}")
        yield _Candidate(_scaled(actual, 8.0), f"the claim is 8 times {shown}: bits counted where bytes are meant?")
        yield _Candidate(_scaled(actual, 1 / 8), f"the claim is an eighth of {shown}: bytes counted where bits are "
                                                 "meant?")
    for factor, step, direction in ((1000.0, -1, "larger"), (1e-3, 1, "smaller")):
        neighbour = _prefix_step(symbol, step)
        if neighbour is not None:
            yield _Candidate(_scaled(actual, factor), f"the claim is the value in {neighbour} written with {symbol} "
                             f"({shown}): a unit prefix one step {direction}?")


def _prefix_step(symbol: str, step: int) -> str | None:
    """The unit one prefix step from `symbol` along its family's ladder (`µs` -> `ms` for +1), or None when the
    unit has no prefixes (`%`, `×`, cycles, counts) or the step leaves the ladder."""
    for base, ladder in _LADDERS.items():
        for index, prefix in enumerate(ladder):
            if symbol in (prefix + base, ("u" if prefix == "µ" else prefix) + base,
                          ("K" if prefix == "k" else prefix) + base):
                other = index + step
                return ladder[other] + base if 0 <= other < len(ladder) else None
    return None


def _scaled(value: Value, factor: float) -> Value:
    """The value as the slip would give it; a word when that overflows (a value near the largest float, × 1000)."""
    low, high = value.bounds
    try:
        return Value(value.name, value.number * factor, value.dimension, low=low * factor, high=high * factor,
                     percent=value.percent)
    except NotFinite:
        return Value(value.name, "overflow", None)


def _fma_as_one(actual: Value, claim: Claim) -> _Candidate | None:
    """The count with each multiply-add as one FLOP, where the value counts multiply-adds at all: a matmul's, a
    decode or training step's (all of theirs), attention's two matmuls, an elementwise expression's multiplies
    that feed an add; a device's peak rate (which counts an FMA as two). None where the count has no FMA in it, so
    that a right count of lone multiplies is never blamed on this."""
    if actual.dimension not in (_FLOPS, _RATE, _INTENSITY):
        return None
    subject, number = claim.subject, float(actual.number)
    if isinstance(subject, FactRef):
        if actual.dimension != _RATE or subject.name not in (*_COUNTERPARTS, "tensor_fp8", "tensor_int8"):
            return None
        halved = number / 2
    elif isinstance(subject, MetricRef):
        kind = getattr(subject.workload, "kind", None)
        if kind in _MULTIPLY_ADD_KINDS:
            halved = number / 2
        elif kind == "attention":
            matmul = _input_named(actual, "FLOPs of the two matmuls")
            if matmul is None or actual.dimension != _FLOPS:
                return None
            halved = number - float(matmul.number) / 2
        elif kind == "elementwise" and actual.dimension == _FLOPS and subject.metric == "flops":
            pairs = _multiply_adds(subject.workload.expr)
            if not pairs:
                return None
            halved = number - pairs
        else:
            return None
    else:
        return None
    return _Candidate(_scaled(actual, halved / number),
                      f"the claim is {_shown(halved, actual.dimension)}, the count with a multiply-add as one FLOP (an FMA is "
                      f"2 FLOPs: {actual.format()})")


def _multiply_adds(node) -> int:
    """Elements at which an elementwise expression's multiply feeds an add or subtract (an FMA each)."""
    from gpuspec.tensors import Apply, is_constant, result_shape

    if not isinstance(node, Apply) or is_constant(node):
        return 0
    found = sum(_multiply_adds(arg) for arg in node.args)
    if node.op in ("add", "sub") and any(isinstance(a, Apply) and a.op == "mul" and not is_constant(a)
                                         for a in node.args):
        found += math.prod(result_shape(node))
    return found


def _input_named(value: Value, name: str) -> Value | None:
    if value.name == name:
        return value
    for child in value.inputs:
        found = _input_named(child, name)
        if found is not None:
            return found
    return None


def _other_figures(ref: FactRef, actual: Value, kept: set[float]):
    """For a claim about one device fact: the same fact of the other catalog devices (one candidate per value, the
    devices that share it named together; not a value the device's own figures already explain, which say more:
    the L40S's 96 MB of L2 is the full AD102 die's figure of the RTX 4090), and the same device's tensor-core or
    plain counterpart of a rate."""
    from gpuspec import devices

    if actual.dimension == units.CYCLES:  # latencies are measured, each its own way: not figures looked up wrongly
        return
    by_value: dict[float, list[str]] = {}
    for name, other in devices.catalog().items():
        fact = other.fact(ref.name)
        if (name == ref.device.hardware or fact is None or fact.is_range or fact.value == actual.number
                or fact.value in kept):
            continue
        by_value.setdefault(fact.value, []).append(name)
    for number, names in by_value.items():
        shown = _shown(number, actual.dimension)
        owners = " and ".join(names) if len(names) <= 3 else f"{', '.join(names[:3])} and others"
        yield _Candidate(Value(ref.name, number, actual.dimension),
                         f"the claim matches {owners}'s {ref.name} ({shown}): another device's figure?")
    counterpart = _COUNTERPARTS.get(ref.name)
    fact = ref.device.fact(counterpart) if counterpart else None
    if fact is not None and not fact.is_range and fact.value != actual.number:
        which = "tensor-core" if counterpart.startswith("tensor_") else "plain (non-tensor)"
        yield _Candidate(Value(ref.name, fact.value, actual.dimension),
                         f"the claim matches this device's {counterpart} ({fact.written}), its {which} rate: tables "
                         "that print the higher of the two rates give it for both")


def _shown(number: float, dimension) -> str:
    return units.format_si(number, dimension)


def _device_of(ref):
    """The device a claim's subject is about (its first workload's, or the fact's)."""
    if isinstance(ref, FactRef):
        return ref.device
    if isinstance(ref, MetricRef):
        return getattr(ref.workload, "device", None)
    for child in getattr(ref, "args", ()) or ((ref.expr,) if hasattr(ref, "expr") else ()):
        found = _device_of(child)
        if found is not None:
            return found
    return None


def _facts(value: Value, found=None) -> list[Value]:
    """The device facts a value was derived from (each once)."""
    found = {} if found is None else found
    if value.reference is not None and value.rule is None:
        found.setdefault(value.name, value)
    for child in value.inputs:
        _facts(child, found)
    return list(found.values())
