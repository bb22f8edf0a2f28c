"""A resolved spec: claims whose names, units, devices and workloads are all looked up and in SI units."""
from __future__ import annotations

import math
from typing import Union

from attrs import field

from gpuspec import units
from gpuspec.devices import Device
from gpuspec.record import Record, as_tuple, record
from gpuspec.text import Span

SOURCES = ("model", "calibrated", "measured")


# --- resolved expressions: what a claim is about -----------------------------------------------


@record
class Literal(Record):
    """A number from the spec, in SI units."""

    value: float
    dimension: units.Dimension
    text: str


@record
class MetricRef(Record):
    """A metric of a workload."""

    workload: object = field(repr=False)
    metric: str
    text: str


@record
class FactRef(Record):
    """A fact of a device."""

    device: Device
    name: str
    text: str


@record
class NamedRef(Record):
    """A named value, and the expression that defines it."""

    name: str
    expr: "Ref"
    dimension: units.Dimension | None
    text: str


@record
class Operation(Record):
    """`left op right` (op in + - * / ^) or `-operand` (op 'neg', right None), or a function (min, max, ceil...)."""

    op: str
    args: tuple["Ref", ...] = field(converter=as_tuple)
    dimension: units.Dimension | None
    text: str


Ref = Union[Literal, MetricRef, FactRef, NamedRef, Operation]


# --- the value side -------------------------------------------------------------------------------


@record
class Expected(Record):
    """What a claim says the value is, in SI units.

    kind is point, range, at_least or word. resolution is the place value of the last digit written,
    in SI units, for the rounding rule of `=`. unit is the unit written (None for a word).
    """

    kind: str
    low: float | str
    high: float | None
    resolution: float
    unit: units.Unit | None
    written: str
    span: Span | None = None  # where the number (or word) is written, for --update
    written_number: str = ""  # the number (or word) exactly as written
    arithmetic: bool = False  # written as the arithmetic that gives it (`2 * 512^3 FLOP`): exact; --update leaves it


@record
class Tolerance(Record):
    """How far `≈` may be off: relative (a fraction of the claimed value) or absolute (SI units)."""

    relative: float | None
    absolute: float | None
    written: str
    from_file: bool  # the file's default rather than one written beside the claim
    # A default (`set tolerance`, [tool.gpuspec], --tolerance) with a unit fits the claims of its dimension alone;
    # `origin` names where it was given, in words, and `place` where it was written, when in a file.
    dimension: units.Dimension | None = None
    origin: str | None = None
    place: Span | None = None


@record
class Claim(Record):
    """One claim, ready to check: about `subject` (a reference) on the given sources."""

    span: Span
    text: str
    statement: str           # the statement the claim belongs to, as written (its first line)
    metric: str              # what the claim is about, in words: `time`, `t_mem / t_math`
    comparator: str
    subject: Ref
    expected: Expected
    tolerance: Tolerance | None
    sources: tuple[str, ...]
    quote: str | None = None
    sources_set: bool = False  # the file named its sources; otherwise every source available is added
    hint: str | None = None  # for a check gpuspec adds (an observed figure's limits): what to look at when it fails


@record
class Program(Record):
    """Everything one spec file claims, in order, and the workloads it defines (for explain)."""

    path: str
    claims: tuple[Claim, ...] = field(converter=as_tuple)
    workloads: tuple[tuple[Span, str, object], ...] = field(converter=as_tuple)  # (span, text, workload)


def apply(op: str, args: list[float]) -> float:
    """The arithmetic of an Operation on plain numbers (SI units).

    Raises ArithmeticError (division by zero, overflow) or ValueError (a square root of a negative number).
    """
    if op == "neg":
        return -args[0]
    if op == "+":
        return args[0] + args[1]
    if op == "-":
        return args[0] - args[1]
    if op == "*":
        return args[0] * args[1]
    if op == "/":
        return args[0] / args[1]
    if op == "^":
        return args[0] ** args[1]
    if op in ("min", "max"):
        return (min if op == "min" else max)(args)
    return _ROUNDERS[op](args[0])


_ROUNDERS = {"ceil": math.ceil, "floor": math.floor, "round": round, "sqrt": math.sqrt}


@record
class Defaults(Record):
    """What a run gives every spec before its first line (from `[tool.gpuspec]`, the command line or the Python
    API): a device for workloads in a spec that names none, the tolerance of `≈` claims in a spec that sets none,
    and the sources claims are checked against, as `set sources = ...` names them. A spec's own `device`, `set
    tolerance` and `set sources` lines win."""

    device: object | None = None        # a devices.Device
    tolerance: Tolerance | None = None
    sources: tuple[str, ...] | None = None  # some of SOURCES, each once
