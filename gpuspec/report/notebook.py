"""The Report as a notebook shows it (`_repr_html_`): one self-contained HTML table, no script, no stylesheet or
picture fetched from anywhere. Every piece of user text (claims, file names, messages) is escaped for HTML after
report.safe has made its control characters and bidirectional marks visible: spec text is untrusted."""
from __future__ import annotations

import html

from gpuspec.report import Report
from gpuspec.report.safe import shown
from gpuspec.report.text import derivation

_COLOURS = {"pass": "#1a7f37", "fail": "#cf222e", "skip": "#6e7781", "error": "#cf222e"}
_CELL = "padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #d0d7de"


def _text(text: object) -> str:
    return html.escape(shown(str(text)), quote=True)


def _row(cells: list[str], header: bool = False) -> str:
    tag = "th" if header else "td"
    return "<tr>" + "".join(f'<{tag} style="{_CELL}">{cell}</{tag}>' for cell in cells) + "</tr>"


def _status(status: str) -> str:
    return f'<b style="color:{_COLOURS[status]}">{status}</b>'


def _explained(message: str, steps: list[str]) -> str:
    """The message, with the derivation folded under it (a <details> element: no script needed to open it)."""
    if not steps:
        return _text(message)
    return (f'<details><summary>{_text(message)}</summary><pre style="margin:0">'
            f'{_text(chr(10).join(steps))}</pre></details>')


def table(report: Report) -> str:
    """The summary line, then a row per error and per verdict: status, where, claim, source, value, and the
message with the value's derivation folded under it."""
    rows = [_row(["status", "where", "claim", "source", "value", "message"], header=True)]
    for diagnostic in report.diagnostics:
        span = diagnostic.span
        where = f"{span.file}:{span.line}:{span.column}" if span else ""
        message = diagnostic.message + (f" ({diagnostic.help})" if diagnostic.help else "")
        rows.append(_row([_status("error"), _text(where), "", "", "", _text(f"[{diagnostic.code}] {message}")]))
    for verdict in report.verdicts:
        claim, actual = verdict.claim, verdict.actual
        rows.append(_row([_status(verdict.status), _text(f"{claim.span.file}:{claim.span.line}"), _text(claim.text),
                          _text(verdict.source), _text(actual.format() if actual is not None else ""),
                          _explained(verdict.message, derivation(actual) if actual is not None else [])]))
    errors = len(report.diagnostics)
    summary = _text(report.summary_line() + (f", {errors} error{'s' * (errors != 1)}" if errors else ""))
    return (f'<div class="gpuspec-report"><p>{summary}</p>'
            f'<table style="border-collapse:collapse">{"".join(rows)}</table></div>')
