"""The Markdown report: the counts, then tables of failures, errors and passing claims, for PR comments; kept under
what GitHub shows (a PR comment, a job summary), the rows that hold left out first, and counted (`fitted`, which
`gpuspec report --format markdown` keeps to as well)."""
from __future__ import annotations

import html
import re
from collections.abc import Callable

from gpuspec.record import Record, record
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


# GitHub takes a PR comment of at most 65,536 characters and a job summary of at most 1 MiB (of UTF-8) per step. A
# report keeps under these, with room for what a bot posting it adds; past them, the least telling rows are left out
# and counted.
LIMIT = 60_000
SUMMARY_LIMIT = 1_000_000  # bytes


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


@record
class Section(Record):
    """Lines of a Markdown report: a head, rows that may be left out from the end (the lowest `keep` first), a tail
    kept with the head, and what to say when some rows are left out (`{n}` the count; `one` where it is 1)."""

    head: tuple[str, ...]
    rows: tuple[str, ...]
    keep: int          # the order in which sections give up rows: 0 first
    left_out: str = ""  # `{n} more ...`: the line shown when n rows are left out
    one: str = ""       # the line when one row is: `1 more file`, not `1 more files`
    tail: tuple[str, ...] = ()

    def left(self, count: int) -> str:
        template = self.one if count == 1 and self.one else self.left_out
        return _sentence(template.format(n=f"{count:,}"))


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def fitted(sections: list[Section], limit: int = LIMIT, size: Callable[[str], int] = len) -> str:
    """The sections' lines, rows left out from the least telling sections until the whole is at most `limit` by
    `size` (characters, or a job summary's bytes), each section's left-out rows counted where they were."""
    kept = [len(s.rows) for s in sections]

    def text() -> str:
        lines: list[str] = []
        for section, count in zip(sections, kept):
            lines += [*section.head, *section.rows[:count]]
            if count < len(section.rows):
                lines += ["", section.left(len(section.rows) - count), ""]
            lines += section.tail
        return "\n".join(lines) + "\n"

    for order in sorted({s.keep for s in sections}):
        for index, section in enumerate(sections):
            if section.keep != order:
                continue
            excess = size(text()) - limit
            if excess <= 0:
                return text()
            if kept[index] == len(section.rows) and section.rows:  # the line that counts what is left out
                excess += size(section.left_out) + 12
            while kept[index] and excess > 0:  # each row gives back its length and its line break
                kept[index] -= 1
                excess -= size(section.rows[kept[index]]) + 1
    return text()


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


def _diagnostic_row(diagnostic) -> list[str]:
    span = diagnostic.span
    where = f"{span.file}:{span.line}:{span.column}" if span else "—"
    return [where, diagnostic.code, diagnostic.message + (f"\nhelp: {diagnostic.help}" if diagnostic.help else "")]


def derivations(failures: list[Verdict]) -> list[str]:
    """Each failure's whole derivation, folded under its place and claim: lines as list items, nested as the
    tree is, every piece escaped."""
    from gpuspec.report.text import failed_derivation

    return [line for block in _derivation_blocks(failures) for line in block]


def _derivation_blocks(failures: list[Verdict]) -> list[list[str]]:
    """Each failure's derivation as its own lines (a block a report may leave out whole)."""
    from gpuspec.report.text import failed_derivation

    blocks: list[list[str]] = []
    for verdict in failures:
        if verdict.actual is None:
            continue
        lines = ["", "<details>", f"<summary>{html_inert(_where(verdict))}: {html_inert(verdict.claim.text)} "
                 f"({html_inert(verdict.source)})</summary>", ""]
        for line in failed_derivation(verdict):
            depth = (len(line) - len(line.lstrip(" "))) // 2
            lines.append("  " * depth + "- " + cell(line.strip()))
        blocks.append([*lines, "", "</details>"])
    return blocks


def _table_section(title: tuple[str, ...], header: list[str], rows: list[list[str]], keep: int, left_out: str,
                   one: str, tail: tuple[str, ...] = ()) -> Section:
    return Section((*title, _row(header), _row(["---"] * len(header))), tuple(_row([cell(c) for c in r]) for r in rows),
                   keep, left_out, one, tail)


_EVERY_ONE = "(`--format text` prints every one)"


def render(report: Report, whole: bool = False, limit: int = LIMIT, size: Callable[[str], int] = len) -> str:
    """The Markdown report; `whole` adds each failure's derivation, folded. It is kept to `limit` by `size` (a PR
    comment's characters; a job summary's bytes): past it, rows are left out and counted, those that hold first,
    then the derivations and warnings, then errors, and failures last."""
    head = [heading(report)]
    if report.rebound is not None:
        head += ["", cell(report.rebound.line()[0].upper() + report.rebound.line()[1:] + ".")]
    failures = [v for v in report.verdicts if v.status == "fail"]
    skipped = [v for v in report.verdicts if v.status == "skip"]
    passed = [v for v in report.verdicts if v.status == "pass"]
    nothing = report.nothing_checked()
    if nothing:
        head += ["", cell(nothing[0].upper() + nothing[1:] + ".")]
    elif not failures and not report.diagnostics and not report.warnings and not skipped:
        count = len(passed)
        head += ["", "The one claim holds." if count == 1 else f"All {count:,} claims hold."]
        return "\n".join(head) + "\n"
    sections = [Section(tuple(head), (), 99)]
    if failures:
        sections.append(_table_section(
            ("", f"### Failed ({len(failures):,})", ""), ["Where", "Claim", "Source", "Computed", "Message"],
            [[_where(v), v.claim.text, v.source, _computed(v), _message(v)] for v in failures], 5,
            f"{{n}} more failures {_EVERY_ONE}", f"1 more failure {_EVERY_ONE}"))
        if whole:
            sections.append(Section((), tuple("\n".join(block) for block in _derivation_blocks(failures)), 1,
                                    "{n} more derivations (`gpuspec explain FILE:LINE` shows each)",
                                    "1 more derivation (`gpuspec explain FILE:LINE` shows it)"))
    for title, found, keep in (("Errors", report.diagnostics, 4), ("Warnings", report.warnings, 1)):
        if found:
            word = title.lower()
            sections.append(_table_section(("", f"### {title} ({len(found):,})", ""), ["Where", "Code", "Message"],
                                           [_diagnostic_row(d) for d in found], keep,
                                           f"{{n}} more {word} {_EVERY_ONE}", f"1 more {word[:-1]} {_EVERY_ONE}"))
    if skipped:
        sections.append(_table_section(
            _details_head(f"{len(skipped):,} skipped"), ["Where", "Claim", "Source", "Reason"],
            [[_where(v), v.claim.text, v.source, v.reason or v.message] for v in skipped], 0,
            f"{{n}} more skipped claims {_EVERY_ONE}", f"1 more skipped claim {_EVERY_ONE}", _DETAILS_TAIL))
    if passed:
        sections.append(_table_section(
            _details_head(f"{len(passed):,} passed"), ["Where", "Claim", "Source", "Computed"],
            [[_where(v), v.claim.text, v.source, _computed(v)] for v in passed], 0,
            f"{{n}} more claims that hold {_EVERY_ONE}", f"1 more claim that holds {_EVERY_ONE}", _DETAILS_TAIL))
    return fitted(sections, limit, size)


def _details_head(summary: str) -> tuple[str, ...]:
    return ("", "<details>", f"<summary>{summary}</summary>", "")


_DETAILS_TAIL = ("", "</details>")
