"""Spec text -> Spec AST: the Lark LALR parser over grammar/gpuspec.lark, and syntax errors in words."""
from __future__ import annotations

import functools
import re

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.indenter import DedentError, Indenter
from lark.lexer import PatternStr

from gpuspec import nodes
from gpuspec.diagnostics import Diagnostic, SpecError
from gpuspec.resources import data_dir
from gpuspec.text import Span, SpecText

_COMPARATORS = {"≈": "≈", "~=": "≈", "~": "≈", "=": "=", "==": "=", "<": "<", ">": ">",
                "≤": "≤", "<=": "≤", "≥": "≥", ">=": "≥"}

# How each terminal is named in an error message; keywords and symbols are shown as written.
_TERMINAL_WORDS = {
    "NUMBER": "a number",
    "NUMBER_PLUS": "a lower bound such as `400+`",
    "DIM": "a dimension (a whole number)",
    "DIMS_X": "a shape such as `4096x4096`",
    "NAME": "a name",
    "DEVICE_NAME": "a device name",
    "UNIT": "a unit",
    "STRING": "a quoted sentence",
    "BOUND": "`memory-bound`, `compute-bound` or `overhead-bound`",
    "APPROX": "`≈`", "EQUAL": "`=`", "LE": "`≤`", "GE": "`≥`", "LT": "`<`", "GT": "`>`",
    "TOL": "`±`", "RANGE_SEP": "`–`", "TIMES": "`×`",
    "_NL": "the end of the line",
    "_INDENT": "an indented block",
    "_DEDENT": "the end of the indented block",
    "$END": "the end of the file",
}
_OPERATORS = {"PLUS", "MINUS", "STAR", "SLASH", "CARET", "SUP2", "SUP3"}
_COMPARISONS = {"APPROX", "EQUAL", "LE", "GE", "LT", "GT"}


_TRAILING = re.compile(r"(\s|#[^\n]*)+$")


class _BadIndent(Exception):
    def __init__(self, token: Token):
        self.token = token


class _Indentation(Indenter):
    NL_type = "_NL"
    OPEN_PAREN_types = ["LPAR", "LSQB"]
    CLOSE_PAREN_types = ["RPAR", "RSQB"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8

    def handle_NL(self, token):
        try:
            yield from super().handle_NL(token)
        except DedentError:
            raise _BadIndent(token) from None


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = data_dir("grammar") / "gpuspec.lark"
    # cache=True keeps the compiled LALR tables in the temp folder, keyed by the grammar's hash.
    return Lark(grammar.read_text(encoding="utf-8"), parser="lalr", postlex=_Indentation(),
                propagate_positions=True, maybe_placeholders=True, cache=True)


def parse(source: SpecText) -> nodes.Spec:
    """Parse one spec. Raises SpecError with one located syntax diagnostic."""
    text = source.text if source.text.endswith("\n") else source.text + "\n"
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as error:
        raise SpecError([_syntax_diagnostic(error, source)]) from None
    except _BadIndent as error:
        line = error.token.end_line + source.line_offset
        column = len(error.token.value.rsplit("\n", 1)[-1].expandtabs(8)) + 1
        span = Span(source.path, line, column, line, column + 1)
        raise SpecError([Diagnostic("bad-indentation", "this line's indentation matches no enclosing block", span,
                                    "indent every claim of a block by the same amount")]) from None
    statements = _Builder(source, text).transform(tree)
    return nodes.Spec(source.path, statements)


def _describe(names: set[str]) -> str:
    terminals = {t.name: t for t in _parser().terminals}
    words = set()
    if names & _OPERATORS:
        words.add("an operator (+ - * / ^)")
    if names & _COMPARISONS:
        words.add("a comparison (= ≈ < ≤ > ≥)")
    for name in names - _OPERATORS - _COMPARISONS:
        if name in _TERMINAL_WORDS:
            words.add(_TERMINAL_WORDS[name])
        elif name in terminals and isinstance(terminals[name].pattern, PatternStr):
            words.add(f"`{terminals[name].pattern.value}`")
    ordered = sorted(words, key=lambda w: (w.startswith("the end"), w))
    if len(ordered) <= 1:
        return "".join(ordered) or "something else"
    return ", ".join(ordered[:-1]) + " or " + ordered[-1]


def _syntax_diagnostic(error: UnexpectedInput, source: SpecText) -> Diagnostic:
    line = error.line + source.line_offset if error.line and error.line > 0 else source.line_offset + 1
    column = error.column if error.column and error.column > 0 else 1
    if isinstance(error, UnexpectedCharacters):
        found = f"unexpected character `{error.char}`"
        expected, width = _describe(set(error.allowed or ())), 1
    elif isinstance(error, UnexpectedToken) and error.token.type != "$END":
        token = error.token
        expected, width = _describe(set(error.expected)), max(1, len(str(token.value).split("\n")[0]))
        if token.type == "_INDENT":
            found, width = "unexpected indentation", 1
        elif token.type == "_DEDENT":
            found = "the indented block ends here"
        elif token.type == "_NL":
            found, width = "the line ends early", 1
        else:
            found = f"unexpected `{token.value}`"
    else:
        expected = _describe(set(getattr(error, "expected", ()) or ()))
        found, width = "the file ends early", 1
        if isinstance(error, UnexpectedEOF) or getattr(error, "token", None) is not None:
            lines = source.text.rstrip("\n").split("\n")
            line, column = len(lines) + source.line_offset, len(lines[-1]) + 1
    span = Span(source.path, line, column, line, column + width)
    return Diagnostic("syntax", f"{found}; expected {expected}", span)


@v_args(meta=True)
class _Builder(Transformer):
    """Turns the Lark tree into nodes; it only builds, it never looks names up."""

    def __init__(self, source: SpecText, text: str):
        super().__init__()
        self._source, self._text = source, text

    # --- positions ---
    def _span(self, meta) -> Span | None:
        if getattr(meta, "empty", True):
            return None
        offset = self._source.line_offset
        end_line, end_column = meta.end_line, meta.end_column
        # A statement's span ends at its last token, not after the line break and comments that close it.
        written = _TRAILING.sub("", self._text[meta.start_pos:meta.end_pos])
        if len(written) < meta.end_pos - meta.start_pos:
            end_line = meta.line + written.count("\n")
            last = written.rfind("\n")
            end_column = (len(written) + meta.column) if last < 0 else len(written) - last
        return Span(self._source.path, meta.line + offset, meta.column, end_line + offset, end_column)

    def _tspan(self, token: Token) -> Span:
        offset = self._source.line_offset
        return Span(self._source.path, token.line + offset, token.column, token.end_line + offset, token.end_column)

    def _slice(self, meta) -> str:
        return self._text[meta.start_pos:meta.end_pos]

    def _number(self, token: Token) -> nodes.Number:
        return nodes.Number(str(token).rstrip("+"), span=self._tspan(token))

    # --- statements ---
    def start(self, meta, children):
        return tuple(c for c in children if c is not None and not isinstance(c, Token))

    def device_stmt(self, meta, children):
        names = [str(c) for c in children if isinstance(c, Token) and c.type == "DEVICE_NAME"]
        assignments = [c for c in children if isinstance(c, nodes.Assignment)]
        return nodes.DeviceStatement(names[0], names[1] if len(names) > 1 else None, assignments,
                                     span=self._span(meta))

    def assignment(self, meta, children):
        name, _, value = children
        return nodes.Assignment(str(name), value, span=self._span(meta))

    def set_stmt(self, meta, children):
        _, name, _, (amount, words) = children
        return nodes.Setting(str(name), amount, words, span=self._span(meta))

    def setting_amount(self, meta, children):
        _, number, unit = children
        phrase = nodes.Phrase(unit, span=self._span(meta)) if unit else None
        return nodes.Amount("point", self._number(number), None, phrase, span=self._span(meta)), ()

    def setting_words(self, meta, children):
        return None, tuple(str(c) for c in children)

    def quote(self, meta, children):
        # A quote may run over several lines; its words are kept, its line breaks are not.
        return nodes.Quote(" ".join(str(children[0])[1:-1].split()), span=self._span(meta))

    def tensor_binding(self, meta, children):
        name, _, tensor = children
        return nodes.TensorBinding(str(name), tensor, span=self._span(meta))

    def value_binding(self, meta, children):
        name, _, expr, options, claims = children
        return nodes.Subject(str(name), expr, options, claims, self._slice(meta).strip(), span=self._span(meta))

    def subject(self, meta, children):
        expr, options, claims = children
        return nodes.Subject(None, expr, options, claims, self._slice(meta).strip(), span=self._span(meta))

    def direct_claim(self, meta, children):
        subject, comparator, value, tolerance = children
        claim = nodes.Claim(comparator, subject, value, tolerance, self._slice(meta).strip(), span=self._span(meta))
        return nodes.DirectClaim(claim, span=self._span(meta))

    # --- workload options ---
    def options(self, meta, children):
        _, on, *rest = children
        mode = next((r[1] for r in rest if r[0] == "mode"), None)
        threads = next((r[1] for r in rest if r[0] == "threads"), None)
        return nodes.Options(on, mode, threads, span=self._span(meta))

    def eager(self, meta, children):
        return ("mode", "eager")

    def fused(self, meta, children):
        return ("mode", "fused")

    def threads(self, meta, children):
        return ("threads", self._number(children[1]))

    # --- claims ---
    def claims_tail(self, meta, children):
        items = []
        for child in children:
            if isinstance(child, list):
                items.extend(child)
            elif isinstance(child, nodes.Quote):
                items.append(child)
        return nodes.Block(items)

    def claim_list(self, meta, children):
        return list(children)

    def bound_claim(self, meta, children):
        token = children[0]
        word = nodes.Word(str(token).split("-")[0], span=self._tspan(token))
        return nodes.Claim("=", None, word, None, str(token), span=self._span(meta))

    def implicit_claim(self, meta, children):
        comparator, amount, tolerance = children
        return nodes.Claim(comparator or "=", None, amount, tolerance, self._slice(meta).strip(), span=self._span(meta))

    def explicit_claim(self, meta, children):
        subject, comparator, value, tolerance = children
        return nodes.Claim(comparator, subject, value, tolerance, self._slice(meta).strip(), span=self._span(meta))

    def word(self, meta, children):
        return nodes.Word(str(children[0]), span=self._span(meta))

    def point(self, meta, children):
        number, phrase = children
        return nodes.Amount("point", self._number(number), None, phrase, span=self._span(meta))

    def at_least(self, meta, children):
        number, phrase = children
        return nodes.Amount("at_least", self._number(number), None, phrase, span=self._span(meta))

    def range(self, meta, children):
        low, _, high, phrase = children
        return nodes.Amount("range", self._number(low), self._number(high), phrase, span=self._span(meta))

    def phrase(self, meta, children):
        unit, *words = children
        return nodes.Phrase(str(unit), tuple(str(w) for w in words), span=self._span(meta))

    def unit(self, meta, children):
        return str(children[0])

    def tolerance(self, meta, children):
        _, number, unit = children
        return nodes.Tolerance(self._number(number), unit, span=self._span(meta))

    def comparator(self, meta, children):
        return _COMPARATORS[str(children[0])]

    # --- tensors ---
    def shaped(self, meta, children):
        dims, dtype = children
        return nodes.TensorType(str(dtype), dims, span=self._span(meta))

    def tensor_type(self, meta, children):
        return nodes.TensorType(str(children[0]), children[1:], span=self._span(meta))

    def shape(self, meta, children):
        return list(children)

    def product_shape(self, meta, children):
        sizes = []
        for child in children:
            if child.type == "DIMS_X":
                sizes.extend(str(child).replace("×", "x").split("x"))
            elif child.type == "DIM":
                sizes.append(str(child))
        return [nodes.Dim(int(s), 1, span=self._span(meta)) for s in sizes]

    def single_dim(self, meta, children):
        return nodes.Dim(int(children[0]), 1, span=self._span(meta))

    def square_dim(self, meta, children):
        return nodes.Dim(int(children[0]), 2, span=self._span(meta))

    def cube_dim(self, meta, children):
        return nodes.Dim(int(children[0]), 3, span=self._span(meta))

    def power_dim(self, meta, children):
        return nodes.Dim(int(children[0]), int(children[2]), span=self._span(meta))

    # --- expressions ---
    def _binop(self, meta, children):
        left, op, right = children
        return nodes.BinOp(str(op), left, right, span=self._span(meta))

    add = sub = mul = div = pow = _binop

    def neg(self, meta, children):
        return nodes.Neg(children[1], span=self._span(meta))

    def square(self, meta, children):
        two = nodes.Quantity(nodes.Number("2", span=self._tspan(children[1])), None, span=self._tspan(children[1]))
        return nodes.BinOp("^", children[0], two, span=self._span(meta))

    def cube(self, meta, children):
        three = nodes.Quantity(nodes.Number("3", span=self._tspan(children[1])), None, span=self._tspan(children[1]))
        return nodes.BinOp("^", children[0], three, span=self._span(meta))

    def quantity(self, meta, children):
        number, unit = children
        return nodes.Quantity(self._number(number), unit, span=self._span(meta))

    def name(self, meta, children):
        return nodes.Name(str(children[0]), span=self._span(meta))

    def member(self, meta, children):
        return nodes.Member(str(children[0]), str(children[1]), span=self._span(meta))

    def device_field(self, meta, children):
        return nodes.DeviceField(str(children[1]), span=self._span(meta))

    def call(self, meta, children):
        return nodes.Call(str(children[0]), children[1:], span=self._span(meta))
