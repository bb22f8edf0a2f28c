"""The Markdown report: the counts, then tables of failures, errors and passing claims, for PR comments."""
from __future__ import annotations

import re

from gpuspec.check import Verdict, show
from gpuspec.report import Report
from gpuspec.text import escaped

# Characters with a meaning inside a GitHub Markdown table cell: a backslash escape makes each literal.
# The backslash comes first, so that `\|` written in a claim stays a backslash and a pipe.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~$&])")
_NEWLINE = re.compile(r"\r\n|\r|\n|\u2028|\u2029")


def cell(text: str) -> str:
    """`text` fit for one table cell: Markdown characters and `|` escaped, line breaks as `<br>`."""
    return "<br>".join(_SPECIAL.sub(r"\\\1", escaped(part)) for part in _NEWLINE.split(text))


def heading(report: Report) -> str:
    summary = report.summary
    line = f"**gpuspec**: {summary['passed']} passed, {summary['failed']} failed"
    if summary["skipped"]:
        line += f", {summary['skipped']} skipped"
    if summary["errors"]:
        line += f", {summary['errors']} error{'s' * (summary['errors'] != 1)}"
    return line


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [_row(header), _row(["---"] * len(header)), *(_row([cell(c) for c in r]) for r in rows)]


def _where(verdict: Verdict) -> str:
    return f"{verdict.claim.span.file}:{verdict.claim.span.line}"


def _computed(verdict: Verdict) -> str:
    return "—" if verdict.actual is None else show(verdict.actual, verdict.claim.expected)


def _details(summary: str, table: list[str]) -> list[str]:
    return ["", "<details>", f"<summary>{summary}</summary>", "", *table, "", "</details>"]


def render(report: Report) -> str:
    lines = [heading(report)]
    failures = [v for v in report.verdicts if v.status == "fail"]
    skipped = [v for v in report.verdicts if v.status == "skip"]
    passed = [v for v in report.verdicts if v.status == "pass"]
    if not failures and not skipped and not report.diagnostics:
        count = len(passed)
        lines += ["", "No claims found." if not count else
                  "The one claim holds." if count == 1 else f"All {count} claims hold."]
        return "\n".join(lines) + "\n"
    if failures:
        lines += ["", f"### Failed ({len(failures)})", ""]
        lines += _table(["Where", "Claim", "Source", "Computed", "Message"],
                        [[_where(v), v.claim.text, v.source, _computed(v), v.message] for v in failures])
    if report.diagnostics:
        lines += ["", f"### Errors ({len(report.diagnostics)})", ""]
        rows = []
        for d in report.diagnostics:
            where = f"{d.span.file}:{d.span.line}:{d.span.column}" if d.span else "—"
            message = d.message + (f"\nhelp: {d.help}" if d.help else "")
            rows.append([where, d.code, message])
        lines += _table(["Where", "Code", "Message"], rows)
    if skipped:
        lines += _details(f"{len(skipped)} skipped", _table(
            ["Where", "Claim", "Source", "Reason"],
            [[_where(v), v.claim.text, v.source, v.reason or v.message] for v in skipped]))
    if passed:
        lines += _details(f"{len(passed)} passed", _table(
            ["Where", "Claim", "Source", "Computed"],
            [[_where(v), v.claim.text, v.source, _computed(v)] for v in passed]))
    return "\n".join(lines) + "\n"
