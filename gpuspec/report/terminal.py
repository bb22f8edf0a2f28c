"""The text report as a terminal shows it: quieter (`check -q`: no line per file) and in colour where colour is
wanted (a terminal, unless NO_COLOR; anywhere with FORCE_COLOR), each stream judged on its own: the report on
stdout, errors and usage on stderr, `explain`'s derivations. Only the pass/fail marks, the fail/error/warning
headers and explain's own headings are coloured, never user text; machine formats never pass through here."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TextIO

from gpuspec.report import Report
from gpuspec.report.safe import shown_line

GREEN, RED, YELLOW, BOLD_RED, BOLD, RESET = "\x1b[32m", "\x1b[31m", "\x1b[33m", "\x1b[1;31m", "\x1b[1m", "\x1b[0m"
_MARK_COLOURS = {".": GREEN, "F": RED, "s": YELLOW}
_STATUS_COLOURS = {"PASS": GREEN, "FAIL": RED, "SKIP": YELLOW}
# A header starts a line (user text shown under it is indented): `FILE:L:C: fail: `, `...: error[code]: `.
_HEADER = re.compile(r"^(\S.*?: )(fail|error\[[^\]\s]*\]|warning\[[^\]\s]*\])(: )")
# A command's own complaint on stderr, as argparse words it: `gpuspec check: error: ...`.
_COMPLAINT = re.compile(r"^(gpuspec(?: [a-z]+)*: )(error)(: )")
# explain's own words: the headings of a workload's facts and references, and a value it cannot compute.
_EXPLAIN_WORDS = re.compile(r"^(  )(facts used:|cannot compute)( |$)|^()(references:)()$")


def wants_colour(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """NO_COLOR (any value but empty: no-color.org) turns colour off; else FORCE_COLOR (likewise:
    force-color.org) turns it on; else colour on a terminal that is not a dumb one."""
    if environ.get("NO_COLOR", ""):
        return False
    if environ.get("FORCE_COLOR", ""):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and environ.get("TERM", "") != "dumb"


def _progress_count(rendered: list[str], report: Report) -> int:
    """How many leading lines are the per-file mark lines (`PATH ..F.`) of a report that is not verbose."""
    files = list(dict.fromkeys(v.claim.span.file for v in report.verdicts))
    if len(rendered) < len(files):
        return 0
    for line, path in zip(rendered, files):
        if not line.startswith(shown_line(path) + " "):
            return 0
    return len(files)


def trimmed(rendered: str) -> str:
    """The text report without blank lines before its first line or after its last (a report of errors alone
    began with the blank line that separates them from the marks)."""
    body = rendered.strip("\n")
    return body + "\n" if body else ""


def quiet(rendered: str, report: Report) -> str:
    """The text report without its line per file: failures, errors and the summary."""
    lines = rendered.removesuffix("\n").split("\n")
    return trimmed("\n".join(lines[_progress_count(lines, report):]) + "\n")


def coloured(rendered: str, report: Report) -> str:
    """The text report (quiet or not) with its marks and headers in colour."""
    lines = rendered.removesuffix("\n").split("\n")
    progress = _progress_count(lines, report)
    files = list(dict.fromkeys(v.claim.span.file for v in report.verdicts))
    out = []
    for number, line in enumerate(lines):
        if number < progress:
            prefix = shown_line(files[number]) + " "
            marks = re.sub(r"(\.+|F+|s+)", lambda m: f"{_MARK_COLOURS[m.group()[0]]}{m.group()}{RESET}",
                           line[len(prefix):])
            out.append(prefix + marks)
            continue
        status = line[:4]
        if status in _STATUS_COLOURS and line[4:5] == " ":
            out.append(f"{_STATUS_COLOURS[status]}{status}{RESET}{line[4:]}")
            continue
        header = _HEADER.match(line)
        if header:
            word = header.group(2)
            colour = YELLOW if word.startswith("warning") else BOLD_RED
            out.append(f"{header.group(1)}{colour}{word}{RESET}{line[header.end(2):]}")
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def _headed(line: str) -> str | None:
    """`line` with its fail/error/warning header coloured, or None when it has none."""
    header = _HEADER.match(line)
    if header:
        word = header.group(2)
        colour = YELLOW if word.startswith("warning") else BOLD_RED
        return f"{header.group(1)}{colour}{word}{RESET}{line[header.end(2):]}"
    complaint = _COMPLAINT.match(line)
    if complaint:
        return f"{complaint.group(1)}{BOLD_RED}{complaint.group(2)}{RESET}{line[complaint.end(2):]}"
    return None


def coloured_errors(text: str) -> str:
    """Errors, warnings and a command's complaints (what goes to stderr), their headers in colour."""
    lines = text.split("\n")
    return "\n".join(_headed(line) or line for line in lines)


def coloured_explanation(text: str) -> str:
    """What `explain` prints, with its own headings (`facts used:`, `references:`) in bold and `cannot compute`
    in red; the titles and derivations (the spec's words and numbers) as they are."""
    out = []
    for line in text.split("\n"):
        found = _EXPLAIN_WORDS.match(line)
        if found:
            indent = found.group(1) if found.group(1) is not None else ""
            word = found.group(2) or found.group(5)
            colour = RED if word == "cannot compute" else BOLD
            out.append(f"{indent}{colour}{word}{RESET}{line[len(indent) + len(word):]}")
        else:
            out.append(line)
    return "\n".join(out)
