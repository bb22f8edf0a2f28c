"""`gpuspec check --update`: rewrite each failing claim's number to the computed value, at the precision written,
and nothing else; each file is written atomically."""
from __future__ import annotations

import math
from pathlib import Path

from gpuspec.check import Verdict
from gpuspec.files import write_atomically


def replacements(verdicts: list[Verdict]) -> dict[str, list[tuple[int, int, int, str]]]:
    """By file, the edits (line, column, end_column, new text) that make each failing model claim true.

    Claims about words (bounds) take the computed word; ranges, bounds and open bounds are left for a person.
    """
    edits: dict[str, list[tuple[int, int, int, str]]] = {}
    for verdict in verdicts:
        claim = verdict.claim
        if verdict.status != "fail" or verdict.source != "model" or verdict.actual is None:
            continue
        expected = claim.expected
        if expected.span is None or claim.comparator not in ("=", "≈") or expected.kind not in ("point", "word"):
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
            new = written_like(verdict.actual.number / expected.unit.scale, expected.written_number)
        span = expected.span
        if span.line != span.end_line:
            continue
        edits.setdefault(span.file, []).append((span.line, span.column, span.end_column, new))
    return edits


def written_like(value: float, written: str) -> str:
    """`value` written the way `written` is: the same number of decimals, separators, exponent."""
    if not math.isfinite(value):
        return written
    text = written.replace(",", "")
    marker = "E" if "E" in text else "e"
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    if exponent:  # the same significant digits, in scientific form: 2.00e-5 -> 2.00e-6
        formatted = f"{value:.{decimals}e}"
        digits, _, power = formatted.partition("e")
        return f"{digits}{marker}{int(power)}"
    return f"{value:,.{decimals}f}" if "," in written else f"{value:.{decimals}f}"


def apply(path: str, edits: list[tuple[int, int, int, str]]) -> int:
    """Make the edits in one file (right to left on each line, so columns stay valid); how many were made."""
    target = Path(path)
    with open(target, encoding="utf-8", newline="") as handle:  # keep \r\n line endings as they are
        text = handle.read()
    bom = text.startswith("\ufeff")
    lines = text.removeprefix("\ufeff").split("\n")
    done = 0
    for line, column, end_column, new in sorted(edits, key=lambda e: (e[0], -e[1])):
        if not 0 < line <= len(lines):
            continue
        row = lines[line - 1]
        lines[line - 1] = row[: column - 1] + new + row[end_column - 1:]
        done += 1
    write_atomically(target, ("\ufeff" if bom else "") + "\n".join(lines))
    return done
