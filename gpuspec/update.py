"""`gpuspec check --update`: rewrite each failing claim's number to the computed value, at the precision written,
and nothing else; each file is written atomically, with the line breaks and byte-order mark it had.

A number is written only if the language accepts it and the claim then holds, by the same rule `check` uses:
where the precision written cannot say the value (`≈ 0 µs` for 250 ns, `1 B` for 10⁴⁷ bytes) more digits, or
the exponent form, are used; where nothing fits, the claim is left for a person.
"""
from __future__ import annotations

import math

from gpuspec.verdicts import Verdict, holds

# The longest number the parser accepts (it refuses longer ones as too large).
LONGEST_NUMBER = 40
_MOST_DIGITS = 17  # a double holds no more significant decimal digits than this

Edit = tuple[int, int, int, str]  # line, column, end column (exclusive), new text


def replacements(verdicts: list[Verdict]) -> dict[str, list[Edit]]:
    """By file, the edits (line, column, end_column, new text) that make each failing claim true: by the model's
    value, or for a claim about real hardware by the measured or calibrated one (`_rewritten_by`).

    Claims about words (bounds) take the computed word; ranges, bounds and open bounds are left for a person,
    as are values written as arithmetic and values no number can be written for (negative or not finite).
    """
    edits: dict[str, dict[tuple[int, int], Edit]] = {}
    measured = {id(v.claim) for v in verdicts if v.source == "measured" and v.actual is not None}
    for verdict in verdicts:
        claim = verdict.claim
        if verdict.status != "fail" or verdict.actual is None or verdict.source != _rewritten_by(claim, measured):
            continue
        expected = claim.expected
        if expected.span is None or claim.comparator not in ("=", "≈") or expected.kind not in ("point", "word"):
            continue
        if expected.arithmetic:  # the arithmetic a person wrote (`2 * 512^3 FLOP`) is theirs to correct
            continue
        if expected.kind == "word":
            new = str(verdict.actual.number)
            if " and " in new:
                continue
            if expected.written_number.endswith("-bound"):
                new += "-bound"
        else:
            if expected.unit is None or isinstance(verdict.actual.number, str):
                continue
            new = number_for(verdict)
            if new is None:
                continue
        span = expected.span
        if span.line != span.end_line:
            continue
        # One edit per place, however often the claim was reported.
        edits.setdefault(span.file, {})[(span.line, span.column)] = (span.line, span.column, span.end_column, new)
    return {path: list(found.values()) for path, found in edits.items()}


def _rewritten_by(claim, measured: set[int]) -> str:
    """The source whose value a claim's number is rewritten to: the model's, where the claim is checked against it;
    a claim about real hardware (`in practice`) the measurement's, where there is one, else the calibrated
    source's (the device's published profile, or the profile given)."""
    if "model" in claim.sources:
        return "model"
    return "measured" if id(claim) in measured and "measured" in claim.sources else "calibrated"


def number_for(verdict: Verdict) -> str | None:
    """The number to write for a failing point claim: the computed value written like the number it replaces,
    with more digits where that does not hold; None when no number the language accepts makes the claim hold."""
    expected = verdict.claim.expected
    value = verdict.actual.number / expected.unit.scale
    if not math.isfinite(value) or value < 0:
        return None
    for text in _candidates(value, expected.written_number):
        if len(text) <= LONGEST_NUMBER and _holds_as(verdict, text):
            return text
    return None


def _candidates(value: float, written: str):
    """Ways to write `value`: as `written` is written first, then with more decimals, then in exponent form with
    as many significant digits as written and more. Past 10¹⁷ the digits of a whole number are a double's noise,
    so such a value is written in exponent form."""
    plain = written.replace(",", "")
    mantissa, _, exponent = plain.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    significant = max(1, len(mantissa.replace(".", "").lstrip("0")))
    marker = "E" if "E" in plain else "e"
    if exponent or value < 10.0 ** _MOST_DIGITS:
        yield written_like(value, written)
    if not exponent and value < 10.0 ** _MOST_DIGITS:
        for more in range(decimals + 1, decimals + _MOST_DIGITS + 1):
            yield f"{value:,.{more}f}" if "," in written else f"{value:.{more}f}"
    for digits in range(significant, _MOST_DIGITS + 1):
        yield _scientific(value, digits - 1, marker)


def _holds_as(verdict: Verdict, text: str) -> bool:
    """Whether the claim holds with `text` written for its number, read as the resolver reads it."""
    import attrs

    from gpuspec.nodes import Number

    claim, expected = verdict.claim, verdict.claim.expected
    number = Number(text, span=None)
    scale = expected.unit.scale
    trial = attrs.evolve(expected, low=number.value * scale, resolution=number.resolution * scale,
                         written_number=text)
    return holds(verdict.actual, attrs.evolve(claim, expected=trial))


def written_like(value: float, written: str) -> str:
    """`value` written the way `written` is: the same number of decimals, separators, exponent."""
    if not math.isfinite(value):
        return written
    text = written.replace(",", "")
    marker = "E" if "E" in text else "e"
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    if exponent:  # the same significant digits, in scientific form: 2.00e-5 -> 2.00e-6
        return _scientific(value, decimals, marker)
    return f"{value:,.{decimals}f}" if "," in written else f"{value:.{decimals}f}"


def _scientific(value: float, decimals: int, marker: str) -> str:
    digits, _, power = f"{value:.{decimals}e}".partition("e")
    return f"{digits}{marker}{int(power)}"


def apply(path: str, edits: list[Edit], expected_text: str | None = None) -> int:
    """Make the edits in one file (right to left on each line, so columns stay valid); how many were made.

    The file is read as check reads it; `expected_text` is the text the edits were worked out from, and a file
    that no longer has it is refused (files.WriteError), as write_back refuses what would lose text.
    """
    from gpuspec.files import WriteError
    from gpuspec.text import UnreadableText, escaped, read_file, split_lines, write_back

    try:
        read = read_file(path)
    except (OSError, UnreadableText) as error:
        reason = getattr(error, "strerror", None) or getattr(error, "reason", None) or error
        raise WriteError(f"cannot read {escaped(str(path))}: {escaped(str(reason))}; it was not updated") from None
    if expected_text is not None and read.text != expected_text:
        raise WriteError(f"{escaped(str(path))} changed since it was checked, so it was not updated; run again")
    lines, breaks = split_lines(read.written)
    done = 0
    for line, column, end_column, new in sorted(edits, key=lambda e: (e[0], -e[1])):
        if not 0 < line <= len(lines):
            continue
        row = lines[line - 1]
        lines[line - 1] = row[: column - 1] + new + row[end_column - 1:]
        done += 1
    write_back(read, "".join(line + brk for line, brk in zip(lines, breaks)))
    return done
