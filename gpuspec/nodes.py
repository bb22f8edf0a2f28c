"""The Spec AST: frozen attrs nodes, each with the Span it came from. Nothing here is interpreted."""
from __future__ import annotations

from typing import Union

from attrs import field

from gpuspec.record import Record, as_tuple, record
from gpuspec.text import Span


def _span():
    return field(eq=False, repr=False, kw_only=True)


# --- numbers as written -------------------------------------------------------------------------


@record
class Number(Record):
    """A number exactly as written: `16,777,216`, `0.25`, `8.03e9`."""

    text: str
    span: Span = _span()

    @property
    def value(self) -> float:
        digits, scale = split_count_suffix(self.text)
        return float(digits.replace(",", "")) * scale

    @property
    def resolution(self) -> float:
        """The place value of the last digit written: 1 for `62`, 0.1 for `33.5`, 1e7 for `8.03e9`, 1000 for `10k`."""
        digits, scale = split_count_suffix(self.text)
        mantissa, _, exponent = digits.replace(",", "").lower().partition("e")
        decimals = len(mantissa.partition(".")[2])
        return 10.0 ** (int(exponent or 0) - decimals) * scale


# The suffixes a count may carry where a count is written (`10k launches`, `context 32k`): decimal as SI has them,
# binary with an i (`32Ki` is 32,768).
COUNT_SUFFIXES = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "Ki": 2.0 ** 10, "Mi": 2.0 ** 20, "Gi": 2.0 ** 30}


def split_count_suffix(text: str) -> tuple[str, float]:
    """`10k` -> (`10`, 1000.0); a number without a suffix -> (itself, 1.0)."""
    for length in (2, 1):
        suffix = text[-length:]
        if len(text) > length and suffix in COUNT_SUFFIXES and text[-length - 1].isdigit():
            return text[:-length], COUNT_SUFFIXES[suffix]
    return text, 1.0


@record
class Phrase(Record):
    """A unit and the words after it that name a metric: `MB moved`, `blocks per wave`."""

    unit: str
    words: tuple[str, ...] = field(converter=as_tuple, default=())
    span: Span = _span()


@record
class Amount(Record):
    """The value side of a claim: a point (`20 µs`), a range (`20–30 cycles`) or a lower bound (`400+`)."""

    kind: str  # "point", "range" or "at_least"
    low: Number
    high: Number | None
    phrase: Phrase | None
    span: Span = _span()


@record
class Figure(Record):
    """The value side of a claim written as the arithmetic that gives it, over plain numbers, with the unit after
    it applying to the whole: `2 * 512^3 FLOP`, `2 × 8192² FLOP`, `(4096 + 128) * 2 B`."""

    formula: "Expr"
    phrase: Phrase | None
    text: str
    span: Span = _span()


@record
class Word(Record):
    """A bare word as the value side of a claim: `bound = memory`."""

    text: str
    span: Span = _span()


@record
class ToleranceNode(Record):
    """`± 5%` or `± 2 µs` beside a value."""

    number: Number
    unit: str | None
    span: Span = _span()


# --- expressions ----------------------------------------------------------------------------------


@record
class Quantity(Record):
    """A number with an optional unit inside an expression: `2`, `2 B`, `3.35 TB/s`."""

    number: Number
    unit: str | None
    span: Span = _span()


@record
class Name(Record):
    """A name: a tensor, a workload, a named value, or a metric inside a workload's claims."""

    id: str
    span: Span = _span()


@record
class Member(Record):
    """`y.waves`: a metric of a named workload."""

    owner: str
    attribute: str
    span: Span = _span()


@record
class ModelFact(Record):
    """`mistral-7b.kv_bytes_per_token`: a fact of a model of the catalog (or of one the spec defined), by name."""

    model: str
    attribute: str
    span: Span = _span()


@record
class WithUnit(Record):
    """A power with a unit after it: `8192² FLOP`, `512^3 FLOP`; the unit is the power's, not its exponent's."""

    expr: "Expr"
    unit: str
    span: Span = _span()


@record
class DeviceField(Record):
    """`device.hbm_bandwidth`: a field of the current device."""

    field_name: str
    span: Span = _span()


@record
class BinOp(Record):
    """`left op right` with op one of + - * / ^."""

    op: str
    left: "Expr"
    right: "Expr"
    span: Span = _span()


@record
class Neg(Record):
    operand: "Expr"
    span: Span = _span()


@record
class Call(Record):
    """`exp(x)`, `max(a, b)`."""

    function: str
    args: tuple["Expr", ...] = field(converter=as_tuple)
    span: Span = _span()


Expr = Union[Quantity, Name, Member, ModelFact, DeviceField, BinOp, Neg, Call, WithUnit]


# --- tensors and workload options -----------------------------------------------------------------


@record
class Dim(Record):
    """One or more dimensions written as one: `4096` (1), `4096²` (2), `4096^3` (3)."""

    size: int
    repeat: int
    span: Span = _span()


@record
class TensorType(Record):
    """A dtype and a shape: `bf16[4096, 4096]`, `4096² bf16`."""

    dtype: str
    dims: tuple[Dim, ...] = field(converter=as_tuple)
    span: Span = _span()


@record
class Observed(Record):
    """`observed 107 tokens/s`, `observed 60% MFU`: a figure someone observed, its unit, and the words after the unit
    that say which figure it is (a utilization's name)."""

    number: Number
    unit: str | None
    words: tuple[str, ...] = field(converter=as_tuple, default=())
    span: Span = _span()


@record
class Options(Record):
    """What follows a workload: `on 4096² bf16`, `eager`/`fused`/`compiled`, `as a CUDA graph`,
    `with 128 threads per block`."""

    on: TensorType | None = None
    mode: str | None = None
    threads: Number | None = None
    graph: bool = False
    tile: tuple[int, int] | None = None  # `with 128x256 tiles`, for a matmul
    across: tuple[Number, str, str | None] | None = None  # `across 8 GPUs over nvlink`, for a collective
    observed: Observed | None = None  # `observed 107 tokens/s`: a published or measured figure to derive from
    span: Span | None = _span()


@record
class StreamNode(Record):
    """`1000 launches of y`: a workload launched again and again, one launch after another."""

    count: Number
    workload: str
    span: Span = _span()


@record
class DecodeSetting(Record):
    """One setting of a decode step: `batch 8`, `context 4096`, `weights fp8`, `15 kernels per layer`."""

    name: str
    number: Number | None
    word: str | None
    span: Span = _span()


@record
class Decode(Record):
    """`decode llama3-8b, batch 1, context 4096`: one token of LLM decoding; `prefill ..., prompt 2048`; or
    `train ..., batch 512, context 8192`: one optimizer step of training."""

    model: str
    settings: tuple[DecodeSetting, ...] = field(converter=as_tuple)
    phase: str = "decode"  # or "prefill" or "train"
    span: Span = _span()


# --- claims ---------------------------------------------------------------------------------------


@record
class ClaimNode(Record):
    """One statement about one number (or word) to be checked.

    subject is the expression claimed about, or None when the metric is implied by the phrase
    (`62 waves`, `≈20µs`) or the claim is a bound word (`memory-bound`).
    """

    comparator: str  # canonical: = ≈ < ≤ > ≥
    subject: Expr | None
    value: Amount | Figure | Word
    tolerance: ToleranceNode | None
    text: str
    practice: bool = False  # written after `in practice`: about real hardware, not the ideal model
    span: Span = _span()


@record
class Quote(Record):
    """A quoted sentence; it travels with the claims that follow it."""

    text: str
    span: Span = _span()


@record
class Block(Record):
    """The claims after `is` and in the indented block, in order, with their quotes."""

    items: tuple[ClaimNode | Quote, ...] = field(converter=as_tuple)
    span: Span | None = _span()


# --- statements -----------------------------------------------------------------------------------


@record
class Assignment(Record):
    name: str
    value: Expr
    span: Span = _span()


@record
class DeviceStatement(Record):
    """`device NAME [from BASE] [with field = value, ...]`: the device for what follows."""

    name: str
    base: str | None
    assignments: tuple[Assignment, ...] = field(converter=as_tuple)
    name_span: Span | None = field(default=None, eq=False, repr=False)  # where NAME is written
    span: Span = _span()


@record
class ModelStatement(Record):
    """`model NAME [from BASE] [with field = value, ...]`: an LLM for decode steps to use."""

    name: str
    base: str | None
    assignments: tuple[Assignment, ...] = field(converter=as_tuple)
    name_span: Span | None = field(default=None, eq=False, repr=False)  # where NAME is written
    span: Span = _span()


@record
class Setting(Record):
    """`set name = value`: a file-level setting for what follows."""

    name: str
    amount: Amount | None
    words: tuple[str, ...] = field(converter=as_tuple)
    span: Span = _span()


@record
class TensorBinding(Record):
    """`x = bf16[4096, 4096]`."""

    name: str
    tensor: TensorType
    span: Span = _span()


@record
class Subject(Record):
    """An expression and what is claimed about it; named when written `name = expr ...`.

    Over tensors it is a workload; over quantities it is a named value.
    """

    name: str | None
    expr: Union[Expr, StreamNode, Decode]
    options: Options
    claims: Block
    text: str
    span: Span = _span()


@record
class DirectClaim(Record):
    """A claim on its own line: `weights / device.hbm_bandwidth ≈ 4.8 ms`."""

    claim: ClaimNode
    span: Span = _span()


@record
class Unparsed(Record):
    """A statement that did not parse, in a spec read in spite of its syntax errors (parse.SyntaxErrors' `partial`):
    what it would have defined, as far as its first words say, so that what uses it is not an error of its own.
    `names` are the names it would have bound (`y = ...`); `device` the device it would have selected or defined,
    and `model` the model (`device mine from H100-SXM with ...`, `model mine from ...`)."""

    names: tuple[str, ...] = field(converter=as_tuple)
    device: str | None
    model: str | None
    span: Span = _span()


Statement = Union[DeviceStatement, ModelStatement, Setting, Quote, TensorBinding, Subject, DirectClaim, Unparsed]


@record
class Spec(Record):
    """One parsed spec file."""

    path: str
    statements: tuple[Statement, ...] = field(converter=as_tuple)
