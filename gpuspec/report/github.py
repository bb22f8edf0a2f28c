"""The GitHub Actions report: a workflow command per failure, error, warning and skip, then the summary line.

Each line is one command that gpuspec wrote: what a user wrote (file names, spec text) is only ever a property
or the message of one, percent-encoded, with its control characters shown as escapes, so it can neither start
a line nor end the command it is in.
"""
from __future__ import annotations

import os
import stat
import sys

from gpuspec.diagnostics import Diagnostic
from gpuspec.files import WriteError, append
from gpuspec.report import Report
from gpuspec.report.safe import shown, shown_line
from gpuspec.report.text import deciding, realistic_line, sources_line
from gpuspec.text import Span
from gpuspec.verdicts import Verdict


def escape_data(text: str) -> str:
    """A command's message as GitHub reads it: `%`, carriage return and newline percent-encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command's property value: as a message, and `:` and `,` percent-encoded too."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _visible(text: str) -> str:
    """Each line of `text` with its other control characters written as escapes; the line breaks kept."""
    return "\n".join(shown(line) for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def command(kind: str, span: Span | None, title: str, message: str) -> str:
    """`::kind file=...,line=...,col=...,endColumn=...,title=...::message`, escaped."""
    properties: list[tuple[str, object]] = []
    if span is not None:
        properties += [("file", span.file), ("line", span.line), ("col", span.column)]
        if span.end_line != span.line:
            properties.append(("endLine", span.end_line))
        properties.append(("endColumn", span.end_column))
    properties.append(("title", title))
    shown = ",".join(f"{name}={escape_property(_visible(str(value)))}" for name, value in properties)
    # `##[` is the older command syntax, which a runner finds anywhere in a line (a file named `##[error]x.gpu`)
    return f"::{kind} {shown}::{escape_data(_visible(message))}".replace("##[", "##\\x5b")


def _failure(verdict: Verdict, siblings: list[Verdict]) -> str:
    lines = [verdict.message, f"claim: {verdict.claim.text}"]
    if len(siblings) > 1:
        lines.append(f"sources: {sources_line(siblings)}")
    if verdict.realistic is not None or verdict.ideal is not None:  # the speed of light beside a real device
        lines.append(realistic_line(verdict))
    if verdict.actual is not None:  # the lines that decide it; the job summary has the whole report
        lines.extend(line.strip() for line in deciding(verdict.actual))
    return command("error", verdict.claim.span, f"gpuspec {verdict.source}", "\n".join(lines))


def _error(diagnostic: Diagnostic, kind: str = "error") -> str:
    message = diagnostic.message + (f"\nhelp: {diagnostic.help}" if diagnostic.help else "")
    return command(kind, diagnostic.span, f"gpuspec {kind}[{diagnostic.code}]", message)


def _size(path: str) -> int:
    """Bytes a regular file holds already (0 for anything else: a link or a folder is refused by the append)."""
    try:
        found = os.lstat(path)
    except OSError:
        return 0
    return found.st_size if stat.S_ISREG(found.st_mode) else 0


def render(report: Report) -> str:
    """The workflow commands; where GITHUB_STEP_SUMMARY names a file, the Markdown report is appended to it."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        from gpuspec.report import markdown  # only then: the annotations alone need none of it

        try:  # within the 1 MiB GitHub takes of a step's summary, less what the step has written to it already
            room = markdown.SUMMARY_LIMIT - _size(summary)
            append(summary, markdown.render(report, whole=True, limit=room, size=markdown.utf8_size))
        except WriteError as error:  # the annotations are the result; a summary lost is worth a warning only
            print(shown_line(f"gpuspec: warning: the job summary was not written: {error}"), file=sys.stderr)
    by_claim: dict[int, list[Verdict]] = {}
    for verdict in report.verdicts:
        by_claim.setdefault(id(verdict.claim), []).append(verdict)
    lines = []
    for verdict in report.verdicts:
        if verdict.status == "fail":
            lines.append(_failure(verdict, by_claim[id(verdict.claim)]))
        elif verdict.status == "skip":
            lines.append(command("notice", verdict.claim.span, f"gpuspec {verdict.source} skipped",
                                 f"{verdict.claim.text}: {verdict.reason or verdict.message}"))
    lines.extend(_error(d) for d in report.diagnostics)
    lines.extend(_error(w, "warning") for w in report.warnings)
    if report.rebound is not None:  # every verdict above is for that device, not the one each spec names
        lines.append(command("notice", None, "gpuspec --device", report.rebound.line()))
    nothing = report.nothing_checked()
    if nothing:
        lines.append(command("warning", None, "gpuspec", nothing))
    lines.append(shown_line(report.summary_line()))
    return "\n".join(lines) + "\n"

