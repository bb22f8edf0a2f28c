"""The terminal report: a mark per claim, each failure with its value and derivation, errors with a caret."""
from __future__ import annotations

from gpuspec.check import Verdict
from gpuspec.diagnostics import Diagnostic
from gpuspec.model.values import Value
from gpuspec.report import Report
from gpuspec.text import escaped, masked

_MARKS = {"pass": ".", "fail": "F", "skip": "s"}


def render(report: Report, verbose: bool = False) -> str:
    lines: list[str] = []
    by_file: dict[str, list[Verdict]] = {}
    for verdict in report.verdicts:
        by_file.setdefault(verdict.claim.span.file, []).append(verdict)
    if verbose:
        for verdict in report.verdicts:
            claim = verdict.claim
            status = verdict.status.upper()
            lines.append(f"{status:4} {escaped(str(claim.span))}: {claim.text}  [{verdict.source}]  "
                         f"{escaped(verdict.message)}")
    else:
        for path, verdicts in by_file.items():
            lines.append(f"{escaped(path)} {''.join(_MARKS[v.status] for v in verdicts)}")
    by_claim: dict[int, list[Verdict]] = {}
    for verdict in report.verdicts:
        by_claim.setdefault(id(verdict.claim), []).append(verdict)
    failures = [v for v in report.verdicts if v.status == "fail"]
    if failures:
        lines.append("")
    for verdict in failures:
        lines.extend(failure(verdict, by_claim[id(verdict.claim)]))
    if report.diagnostics:
        lines.append("")
        for diagnostic in report.diagnostics:
            lines.extend(error(diagnostic, report.texts))
        count = len(report.diagnostics)
        files = len({d.span.file for d in report.diagnostics if d.span})
        lines.append(f"{count} error{'s' * (count != 1)} in {files or 1} file{'s' * (files > 1)}")
    if not report.verdicts and not report.diagnostics:
        lines.append("no claims found")
    lines.append(report.summary_line())
    return "\n".join(lines) + "\n"


def sources_line(verdicts: list[Verdict]) -> str:
    """Every source's value for one claim, side by side: `model 20.03 µs ✓ · measured 22.90 µs ✗`."""
    from gpuspec.check import show

    parts = []
    for v in verdicts:
        if v.actual is None:
            parts.append(f"{v.source} —")
        else:
            parts.append(f"{v.source} {show(v.actual, v.claim.expected)} {'✓' if v.status == 'pass' else '✗'}")
    return " · ".join(parts)


def failure(verdict: Verdict, siblings: list[Verdict] | None = None) -> list[str]:
    claim = verdict.claim
    # a message may hold text from a results file (a harness's reason, a GPU's name): shown, never acted on
    lines = [f"{escaped(str(claim.span))}: fail: {claim.statement}",
             f"    claim: {claim.text}",
             f"    {escaped(verdict.message)}  [{verdict.source}]"]
    if siblings and len(siblings) > 1:
        lines.append(f"    sources: {sources_line(siblings)}")
    if claim.quote:
        lines.append(f"    quote: “{escaped(claim.quote)}”")
    if verdict.actual is not None:
        lines.extend("    " + line for line in derivation(verdict.actual))
    return lines


def derivation(value: Value, depth: int = 3) -> list[str]:
    """The value's derivation, then those of its inputs, indented, to `depth` levels, each value once."""
    lines: list[str] = []
    seen: set[int] = set()

    def walk(v: Value, level: int) -> None:
        if id(v) in seen or level > depth:
            return
        seen.add(id(v))
        if v.rule is None and v.reference is None and level > 0:
            return
        if v.rule == "{0}" and level > 0:  # a plain renaming says nothing new
            walk(v.inputs[0], level)
            return
        lines.append("  " * level + v.derivation())
        for child in v.inputs:
            walk(child, level + 1)

    walk(value, 0)
    return lines


def error(diagnostic: Diagnostic, texts: dict[str, str]) -> list[str]:
    span = diagnostic.span
    where = f"{span}: " if span else ""
    lines = [f"{escaped(where)}error[{diagnostic.code}]: {escaped(diagnostic.message)}"]
    if span is not None and span.file in texts:
        source = texts[span.file].split("\n")
        if 0 < span.line <= len(source):
            text = source[span.line - 1].rstrip("\r")
            shown = masked(text.expandtabs(4))
            column = len(masked(text[:span.column - 1]).expandtabs(4)) + 1  # tabs widen the line before the caret
            if len(shown) > 160:  # very long lines: show the part around the error
                start = max(0, column - 60)
                shown, column = "…" + shown[start:start + 120] + "…", column - start + 1
            same_line = span.end_line == span.line
            width = max(1, (span.end_column - span.column) if same_line else len(text) - span.column + 1)
            lines.append(f"    {shown}")
            lines.append(f"    {' ' * (column - 1)}{'^' * min(width, 120)}")
    if diagnostic.help:
        lines.append(f"    help: {escaped(diagnostic.help)}")
    return lines
