"""The Markdown report: the counts, then tables of failures, errors and passing claims, for PR comments."""
from __future__ import annotations

import html
import re

from gpuspec.report import Report
from gpuspec.report.safe import shown
from gpuspec.verdicts import Verdict, show

# Characters with a meaning inside a GitHub Markdown table cell: a backslash escape makes each literal.
# The backslash comes first, so that `\|` written in a claim stays a backslash and a pipe.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~$&])")
_NEWLINE = re.compile(r"\r\n|\r|\n|\u2028|\u2029")
# What GitHub turns into a mention (a notification: `@name`, `@org/team`) or a link to an issue (`#12`, `GH-12`,
# `owner/repo#12`). A backslash does not stop it; a word joiner after the sign does, and shows nothing.
_REFERENCE = re.compile(r"@(?=[0-9A-Za-z])|#(?=[0-9])|(?<![0-9A-Za-z])GH(?=-[0-9])", re.IGNORECASE)
WORD_JOINER = "\u2060"


def cell(text: str) -> str:
    """`text` fit for one table cell: Markdown characters and `|` escaped, line breaks as `<br>`, mentions and
    issue references broken."""
    return "<br>".join(inert(part) for part in _NEWLINE.split(text))


def inert(text: str) -> str:
    """One line of user text as Markdown that shows it as written: control characters as escapes, Markdown
    and HTML syntax escaped, and no mention or issue reference for GitHub to act on."""
    return _REFERENCE.sub(lambda m: m[0] + WORD_JOINER, _SPECIAL.sub(r"\\\1", shown(text)))


def html_inert(text: str) -> str:
    """User text inside raw HTML of a Markdown document (a <summary> line): Markdown's backslash escapes are not
    read there, so HTML's escaping is what keeps `<b>` shown as written; mentions and references broken too, and
    `[` written as a reference, so that no `##[command]` stands in the file for a CI log that shows it."""
    escaped = html.escape(shown(" ".join(_NEWLINE.split(text)))).replace("[", "&#91;")
    return _REFERENCE.sub(lambda m: m[0] + WORD_JOINER, escaped)


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
    if verdict.actual is None:
        return "—"
    where = f" ({verdict.profile})" if verdict.profile else ""
    return show(verdict.actual, verdict.claim.expected) + where


def _message(verdict: Verdict) -> str:
    """A failure's message, and under it the ideal value beside what a real device takes, where both are known."""
    from gpuspec.report.text import realistic_line

    if verdict.realistic is None and verdict.ideal is None:
        return verdict.message
    return f"{verdict.message}\n{realistic_line(verdict)}"


def _details(summary: str, table: list[str]) -> list[str]:
    return ["", "<details>", f"<summary>{summary}</summary>", "", *table, "", "</details>"]


def _diagnostic_row(diagnostic) -> list[str]:
    span = diagnostic.span
    where = f"{span.file}:{span.line}:{span.column}" if span else "—"
    return [where, diagnostic.code, diagnostic.message + (f"\nhelp: {diagnostic.help}" if diagnostic.help else "")]


def derivations(failures: list[Verdict]) -> list[str]:
    """Each failure's whole derivation, folded under its place and claim: lines as list items, nested as the
    tree is, every piece escaped."""
    from gpuspec.report.text import failed_derivation

    lines: list[str] = []
    for verdict in failures:
        if verdict.actual is None:
            continue
        lines += ["", "<details>", f"<summary>{html_inert(_where(verdict))}: {html_inert(verdict.claim.text)} "
                  f"({html_inert(verdict.source)})</summary>", ""]
        for line in failed_derivation(verdict):
            depth = (len(line) - len(line.lstrip(" "))) // 2
            lines.append("  " * depth + "- " + cell(line.strip()))
        lines += ["", "</details>"]
    return lines


def render(report: Report, whole: bool = False) -> str:
    """The Markdown report; `whole` adds each failure's derivation, folded."""
    lines = [heading(report)]
    if report.rebound is not None:
        lines += ["", cell(report.rebound.line()[0].upper() + report.rebound.line()[1:] + ".")]
    failures = [v for v in report.verdicts if v.status == "fail"]
    skipped = [v for v in report.verdicts if v.status == "skip"]
    passed = [v for v in report.verdicts if v.status == "pass"]
    nothing = report.nothing_checked()
    if nothing:
        lines += ["", cell(nothing[0].upper() + nothing[1:] + ".")]
    elif not failures and not report.diagnostics and not report.warnings and not skipped:
        count = len(passed)
        lines += ["", "The one claim holds." if count == 1 else f"All {count} claims hold."]
        return "\n".join(lines) + "\n"
    if failures:
        lines += ["", f"### Failed ({len(failures)})", ""]
        lines += _table(["Where", "Claim", "Source", "Computed", "Message"],
                        [[_where(v), v.claim.text, v.source, _computed(v), _message(v)] for v in failures])
        if whole:
            lines += derivations(failures)
    if report.diagnostics:
        lines += ["", f"### Errors ({len(report.diagnostics)})", ""]
        lines += _table(["Where", "Code", "Message"], [_diagnostic_row(d) for d in report.diagnostics])
    if report.warnings:
        lines += ["", f"### Warnings ({len(report.warnings)})", ""]
        lines += _table(["Where", "Code", "Message"], [_diagnostic_row(w) for w in report.warnings])
    if skipped:
        lines += _details(f"{len(skipped)} skipped", _table(
            ["Where", "Claim", "Source", "Reason"],
            [[_where(v), v.claim.text, v.source, v.reason or v.message] for v in skipped]))
    if passed:
        lines += _details(f"{len(passed)} passed", _table(
            ["Where", "Claim", "Source", "Computed"],
            [[_where(v), v.claim.text, v.source, _computed(v)] for v in passed]))
    return "\n".join(lines) + "\n"
