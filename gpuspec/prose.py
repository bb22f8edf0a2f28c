"""Numbers in prose, checked: `about 5.53 ms<!-- gpu: ≈ launches.time ± 5% -->` ties the number a reader reads to
a metric of a workload that the document's gpu blocks define.

markdown.extract finds the comments; this module reads each one: the comparison, the metric and the tolerance from
the comment, the number and its unit from the text just before it. Each becomes a claim on a line of its own
(`launches.time ≈ 5.53 ms ± 5%`), parsed by the language's own parser and placed after the document's blocks (so a
sentence may come before the block that defines what it names), with the sentence as its quote. Every position is
moved back to where it is written: the number and unit in the sentence (`check --update` rewrites that number),
the metric and tolerance in the comment. What cannot be read is an error at its place that says what to write.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from gpuspec import nodes
from gpuspec.diagnostics import Diagnostic, SpecError, did_you_mean
from gpuspec.text import Span, SpecText, escaped, line_separators

# The language's number (grammar/gpuspec.lark's NUMBER) and unit (UNIT), as they end the text before a comment.
_NUMBER = r"(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_NUMBER_AT_END = re.compile(_NUMBER + r"\Z")
_UNIT_AT_END = re.compile(r"(?:[^\W\d_]+(?:/[^\W\d_]+)?|%|×)\Z")
# What may stand between a number and its unit: a space, a no-break space, a narrow or thin one.
_GAP = " \u00a0\u202f\u2009"
# Emphasis closed between the unit and the comment: **5.53 ms**<!-- gpu: ... -->
_CLOSERS = "*_~"
# A range's separator (`3–5 ms`, `3..5 ms`), as the language writes it, with the number before it.
_RANGE_BEFORE = re.compile(rf"({_NUMBER})[{_GAP}]?(–|\.\.)[{_GAP}]?\Z")
# What may stand just before the number: the line's start, a space, an opening bracket or quote, emphasis, a sign
# of comparison or a cell's bar. Anything else (a letter, a digit, a point, a minus) makes it part of something else.
_BEFORE_NUMBER = frozenset(" \t\u00a0\u202f\u2009([{\"'“‘«*_~≈<>≤≥=:|—")
_COMPARATOR = re.compile(r"\s*(≈|~|<=|>=|≤|≥|=|<|>)")
# The sentence reads number first (`4 ms<!-- gpu: < x.time -->`: 4 ms < x.time); the claim line, metric first.
_TURNED = {"<": ">", ">": "<", "≤": "≥", "≥": "≤", "<=": ">=", ">=": "<="}
_TOLERANCE = re.compile(r"±|\+/-|\+-")
_COMMENT = re.compile(r"<!--.*?-->")
_SEPARATORS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")  # as text.py refuses them in spec text
_LINE_MARKS = re.compile(r"^\s*(?:#{1,6}\s+|(?:>\s*)+|[-*+]\s+|\d{1,9}[.)]\s+)*")
_EXAMPLE = "`about 5.53 ms<!-- gpu: ≈ NAME.time ± 5% -->`"
_EMPHASIS = re.compile(r"\*\*|__")
_LONGEST_QUOTE = 200


@attrs.frozen
class _Piece:
    """A stretch of the claim line written for the parser, and where the same characters stand in the document."""

    start: int        # column in the claim line (1-based)
    end: int          # exclusive
    line: int         # the document's line
    column: int       # the document's column of `start`


@attrs.frozen
class _Check:
    """One number check read: the claim line for the parser, its pieces, and what the parse must give back."""

    text: str
    pieces: tuple[_Piece, ...]
    number: str       # the number read from the sentence (the low end of a range)
    number_column: int  # where it stands in the claim line
    comment: Span     # the whole comment, in the document
    sentence: str     # the sentence, without its comments: the claim's quote


def with_claims(spec: nodes.Spec, source: SpecText) -> nodes.Spec:
    """`spec` (a document's gpu blocks, parsed) with the document's number checks after its statements, each a
    DirectClaim after a Quote of its sentence. Raises SpecError with every misuse, each at its place."""
    document = source.document if source.document is not None else source.text
    lines = document.split("\n")
    checks: list[_Check] = []
    errors: list[Diagnostic] = []
    for comment in source.prose:
        row = lines[comment.line - 1] if 0 < comment.line <= len(lines) else ""
        try:
            found = _read(source.path, row, comment)
        except _Misuse as misuse:
            errors.append(misuse.diagnostic)
            continue
        if found is not None:
            checks.append(found)
    statements, problems = _parsed(source.path, checks)
    errors.extend(problems)
    if errors:
        raise SpecError(sorted(errors, key=Diagnostic.sort_key))
    return nodes.Spec(spec.path, (*spec.statements, *statements))


class _Misuse(Exception):
    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _misuse(code: str, message: str, span: Span, help: str | None) -> _Misuse:
    return _Misuse(Diagnostic(code, message, span, help))


def _read(path: str, row: str, comment) -> _Check | None:
    """One comment and the number before it, as a claim line; None for a comment that is only shown (the syntax
    quoted in a code span, with no number before it). Raises _Misuse."""
    line = comment.line
    whole = Span(path, line, comment.column, line, max(comment.end_column, comment.column + 4))
    head = row[comment.column - 1:]
    opening = re.match(r"<!--\s*gpu:", head)
    if comment.where == "block":
        raise _misuse("number-check-alone", "this `<!-- gpu:` comment stands on a line of its own, so there is no "
                      "number before it to check", whole,
                      f"write it right after the number it checks, in the sentence: {_EXAMPLE}; a hidden block of "
                      "claims starts `<!-- gpu` without the colon")
    if comment.where == "code" and "-->" not in head:
        if _number_before(row[:comment.column - 1]) is None:
            return None
        raise _misuse("number-check-unclosed", "this number check is not closed on its line", whole,
                      f"end the comment with `-->` on the same line: {_EXAMPLE}")
    if comment.where == "code":
        shown = row[:comment.column - 1]
        escaped_mark = shown.endswith("\\")  # `3.6 ms\<!-- gpu: ... -->`: Markdown shows the comment as text
        if _number_before(shown[:-1] if escaped_mark else shown, also="`") is None:
            return None  # the syntax shown as text (`<!-- gpu: ≈ NAME.METRIC -->` in backticks): not a use
        if escaped_mark:
            raise _misuse("number-check-in-code", "this number check is escaped (`\\<!--`), so a reader sees the "
                          "comment as text and gpuspec does not read it", whole,
                          "remove the backslash before `<!--`")
        raise _misuse("number-check-in-code", "this number check is inside a code span, so a reader sees the comment "
                      "as text and gpuspec does not read it", whole,
                      "take the number and the comment out of the backticks; to show the syntax as an example, "
                      "write it in a fenced block")
    if comment.where == "multiline":
        raise _misuse("number-check-lines", "this number check goes on past the end of its line", whole,
                      f"write the comment on one line, right after the number: {_EXAMPLE}")
    close = head.find("-->")
    body_start = comment.column - 1 + opening.end()
    body = row[body_start:comment.column - 1 + close] if close >= 0 else row[body_start:]
    separator = _SEPARATORS.search(body)
    if separator is not None:  # a character some editors show as a line break: the comment would not read as typed
        column = body_start + separator.start() + 1
        raise _misuse("line-separator", f"`{escaped(separator.group())}` is not a line break here, though some "
                      "editors show one", Span(path, line, column, line, column + 1), "write a space instead")
    # The comment: a comparison, the metric (any expression), and a tolerance, each where it is written.
    compared = _COMPARATOR.match(body)
    if compared is None:
        raise _misuse("number-check-comparison", "a number check starts with how the number compares: ≈, =, <, "
                      "≤, > or ≥", whole, f"for example {_EXAMPLE}")
    rest_start = compared.end()
    tolerance = _TOLERANCE.search(body, rest_start)
    metric_end = tolerance.start() if tolerance else len(body)
    metric = body[rest_start:metric_end]
    if not metric.strip():
        raise _misuse("number-check-metric", "this number check does not say which metric the number is", whole,
                      f"name it after the comparison: {_EXAMPLE} (a workload of the document's gpu blocks, a "
                      "metric of it; `gpuspec explain FILE` lists them)")
    # The number and its unit, just before the comment.
    before = row[:comment.column - 1]
    read = _number_before(before)
    if read is None:
        raise _misuse("number-check-no-number", *_no_number(before)[:1], whole, _no_number(before)[1])
    low, high, unit, gap = read
    if unit is not None:
        from gpuspec import units

        try:
            units.parse_unit(unit[0])
        except units.UnknownUnit:
            hint = did_you_mean(unit[0], units.known_units())
            raise _misuse("number-check-unit", f"`{escaped(unit[0])}` is not a unit gpuspec reads",
                          Span(path, line, unit[1] + 1, line, unit[1] + 1 + len(unit[0])),
                          (hint + " " if hint else "") + "write the unit the number is in (ms, µs, GB, TB/s, %, "
                          "...) right after it, then the comment") from None
    # The claim line: `METRIC COMPARATOR NUMBER[–HIGH] [UNIT] [± TOLERANCE]`, each piece mapped to its place.
    text, pieces = "", []

    def add(written: str, column: int | None) -> None:
        nonlocal text
        if column is not None and written:
            pieces.append(_Piece(len(text) + 1, len(text) + 1 + len(written), line, column + 1))
        text += written

    stripped = metric.strip()
    add(stripped, rest_start + body_start + (len(metric) - len(metric.lstrip())))
    add(" ", None)
    add(_TURNED.get(compared.group(1), compared.group(1)), body_start + compared.start(1))
    add(" ", None)
    number_column = len(text) + 1
    add(low[0], low[1])
    if high is not None:
        add(high[2], high[3])
        add(high[0], high[1])
    if unit is not None:
        add(" " if gap else "", None)
        add(unit[0], unit[1])
    if tolerance is not None:
        written = body[tolerance.start():].rstrip()
        add(" ", None)
        add(written, body_start + tolerance.start())
    sentence = _EMPHASIS.sub("", _LINE_MARKS.sub("", _COMMENT.sub("", row))).strip()
    if len(sentence) > _LONGEST_QUOTE:
        sentence = sentence[:_LONGEST_QUOTE - 1] + "…"
    return _Check(text, tuple(pieces), low[0], number_column, whole, sentence)


def _number_before(before: str, also: str = ""):
    """The number (and unit) that `before` ends with: ((number, column), high or None, (unit, column) or None,
    whether a gap stands between number and unit); columns 0-based. A high end is (number, column, separator,
    column). None when `before` does not end with a number, or with one run into something else."""
    end = len(before.rstrip(" \t"))
    while end and before[end - 1] in _CLOSERS:
        end -= 1
    text = before[:end]
    unit = None
    found = _UNIT_AT_END.search(text)
    gap = False
    if found is not None:
        unit = (found.group(), found.start())
        text = text[:found.start()]
        trimmed = text.rstrip(_GAP)
        gap = len(trimmed) != len(text)
        text = trimmed
    number = _NUMBER_AT_END.search(text)
    if number is None:
        return None
    start = number.start()
    high = None
    ranged = _RANGE_BEFORE.search(text[:start])
    if ranged is not None:
        high = (number.group(), start, ranged.group(2), ranged.start(2))
        start = ranged.start(1)
        number = ranged
    if start and text[start - 1] not in _BEFORE_NUMBER and text[start - 1] not in also:
        return None
    if start > 1 and text[start - 1] in _GAP and text[start - 2].isdigit():  # `10 000`: digits in groups
        return None
    low = (number.group(1) if high is not None else number.group(), start)
    return low, high, unit, gap


def _no_number(before: str) -> tuple[str, str]:
    """Why no number is read right before a comment, and what to write: the likely slip, where one is seen."""
    tail = before.rstrip(" \t").rstrip(_CLOSERS)
    core = _UNIT_AT_END.sub("", tail).rstrip(_GAP)
    glued = re.search(rf"(\S*?)({_NUMBER})\Z", core)
    spaced = re.search(rf"[0-9]+(?:[{_GAP}][0-9]+)+(?:\.[0-9]+)?\Z", core)
    if spaced:
        return (f"`{escaped(spaced.group())}` before this number check has spaces between its digits",
                f"write it {spaced.group().translate({ord(c): ',' for c in _GAP})} or "
                f"{spaced.group().translate({ord(c): None for c in _GAP})}, so that it reads as one number")
    if tail.endswith("`"):
        return ("the number before this number check is in a code span, which gpuspec never reads",
                "write the number outside the backticks, then the comment")
    if glued and glued.group(1) and glued.group(1)[-1] in "-−+–":
        return (f"`{escaped(glued.group(1)[-1] + glued.group(2))}` has a sign, and a number check reads a size, a "
                "time or a rate", "write the number without its sign; for a range, write `3–5 ms` with an en dash")
    if glued and glued.group(1):
        return (f"`{escaped(glued.group())}` before this number check is not a number on its own",
                "gpuspec reads a number such as 1,234.5 or 1.2e9 (a comma only between groups of three digits), "
                "after a space or at the start of the line")
    punctuated = re.search(rf"{_NUMBER}[{_GAP}]?(?:[^\W\d_]+(?:/[^\W\d_]+)?|%|×)?([^\w\s<]+)\Z", tail)
    if punctuated:
        return ("there is no number right before this number check",
                f"the comment checks the number just before it: put it before the `{escaped(punctuated.group(1))}`, "
                "right after the number and its unit")
    return ("there is no number right before this number check",
            f"write the number the sentence states, with its unit, then the comment: {_EXAMPLE}; for a number "
            "followed by words (`8 blocks per SM`), put the comment right after the number")


def _parsed(path: str, checks: Sequence[_Check]) -> tuple[list, list[Diagnostic]]:
    """The checks' claim lines parsed by the language's parser (one line each), moved to their places in the
    document: a Quote and a DirectClaim for each; and the errors, each at its place."""
    if not checks:
        return [], []
    from gpuspec.parse import parse

    errors: list[Diagnostic] = []
    source = SpecText(path, "\n".join(check.text for check in checks))
    for span, message in line_separators(source):
        check = checks[span.line - 1]
        errors.append(Diagnostic("line-separator", message, _moved_span(span, check), "write a space instead"))
    if errors:
        return [], errors
    failed: set[int] = set()
    try:
        statements = _cached_parse(source, parse)
    except SpecError:  # say each line's own error: parse them one at a time
        statements = []
        for index, check in enumerate(checks):
            try:
                statements.extend(_cached_parse(SpecText(path, check.text), parse, offset=index))
            except SpecError as error:
                failed.add(index + 1)
                errors.extend(_moved_diagnostic(d, check) for d in error.diagnostics)
    by_line: dict[int, list] = {}
    for statement in statements:
        by_line.setdefault(statement.span.line, []).append(statement)
    found: list = []
    for number, check in enumerate(checks, 1):
        if number in failed:
            continue
        parsed = by_line.get(number, [])
        claim = parsed[0].claim if len(parsed) == 1 and isinstance(parsed[0], nodes.DirectClaim) else None
        value = claim.value if claim is not None else None
        if (claim is None or not isinstance(value, nodes.Amount) or value.low.text != check.number
                or value.low.span.column != check.number_column):
            errors.append(Diagnostic("number-check-form", f"this number check reads `{escaped(check.text)}`, "
                                     "which is not one claim about the number", check.comment,
                                     f"write a comparison, a metric and a tolerance if any: {_EXAMPLE}"))
            continue
        moved = _moved(parsed[0], check)
        found.append(nodes.Quote(check.sentence, span=check.comment))
        found.append(attrs.evolve(moved, span=_union(check)))
    return found, errors


def _cached_parse(source: SpecText, parse, offset: int = 0) -> list:
    """The statements of `source`, from the parse cache when it was parsed before; each statement's line is
    shifted by `offset` (a line parsed alone is line 1 of its own text)."""
    from gpuspec import cache

    spec = cache.lookup(source)
    if spec is None:
        spec = parse(source)
        cache.store(source, spec)
    if not offset:
        return list(spec.statements)
    return [_shifted(statement, offset) for statement in spec.statements]


def _shifted(node, offset: int):
    return _rebuilt(node, lambda span: attrs.evolve(span, line=span.line + offset, end_line=span.end_line + offset))


def _moved(node, check: _Check):
    return _rebuilt(node, lambda span: _moved_span(span, check))


def _rebuilt(node, move):
    """`node` with every Span in it (its own and its children's) replaced by move(span)."""
    if isinstance(node, Span):
        return move(node)
    if isinstance(node, tuple):
        return tuple(_rebuilt(item, move) for item in node)
    if not attrs.has(type(node)):
        return node
    changes = {}
    for field in attrs.fields(type(node)):
        value = getattr(node, field.name)
        rebuilt = _rebuilt(value, move)
        if rebuilt is not value:
            changes[field.name] = rebuilt
    return attrs.evolve(node, **changes) if changes else node


def _moved_span(span: Span, check: _Check) -> Span:
    """Where a span of the claim line stands in the document: within one piece, the same characters; across
    several (a claim, an amount and its unit), from the first of them to the last as the document has them."""
    touched = [p for p in check.pieces if p.start < max(span.end_column, span.column + 1) and p.end > span.column]
    if not touched:  # between pieces (the end of the line): the piece before it
        before = [p for p in check.pieces if p.start <= span.column] or list(check.pieces[:1])
        touched = before[-1:]
    if len(touched) == 1:
        piece = touched[0]
        column = piece.column + max(0, span.column - piece.start)
        end = piece.column + min(piece.end, max(span.end_column, span.column + 1)) - piece.start
        return Span(span.file, piece.line, column, piece.line, max(end, column + 1))
    start = min(p.column for p in touched)
    end = max(p.column + (p.end - p.start) for p in touched)
    return Span(span.file, touched[0].line, start, touched[0].line, end)


def _moved_diagnostic(diagnostic: Diagnostic, check: _Check) -> Diagnostic:
    span = _moved_span(diagnostic.span, check) if diagnostic.span is not None else check.comment
    return Diagnostic(diagnostic.code, diagnostic.message, span, diagnostic.help)


def _union(check: _Check) -> Span:
    """The whole of a number check in the document: from its number to the end of its comment."""
    start = min(p.column for p in check.pieces)
    return Span(check.comment.file, check.comment.line, min(start, check.comment.column), check.comment.line,
                check.comment.end_column)
