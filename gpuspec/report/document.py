"""The standalone report (`gpuspec report`): one row per claim with every source's value side by side,
failing claims first, then the errors, then the pictures, inlined, in one HTML or Markdown file."""
from __future__ import annotations

import base64
import html

from gpuspec.program import SOURCES
from gpuspec.record import Record, record
from gpuspec.report import Report
from gpuspec.report.markdown import cell as markdown_cell
from gpuspec.report.markdown import heading
from gpuspec.report.safe import shown
from gpuspec.report.text import realistic_line
from gpuspec.verdicts import Verdict, show

FORMATS = ("html", "markdown")
_MARKS = {"pass": "✓", "fail": "✗", "skip": "skipped"}


@record
class Cell(Record):
    """One source's say on one claim: its status and value (or why it has none)."""

    status: str  # pass, fail or skip
    text: str


@record
class Row(Record):
    """One claim: where it is, what it says, and each source's cell (None where a source did not judge it)."""

    where: str
    claim: str
    status: str  # fail if any source fails it, else pass if any passes it, else skip
    cells: tuple[Cell | None, ...]
    message: str  # the first failure in words, with the usual mistake it fits if any


@record
class Picture(Record):
    """A picture to inline: its title and its SVG text, or (svg empty) a note that says why it is not drawn."""

    title: str
    svg: str
    note: str = ""


def sources(report: Report) -> tuple[str, ...]:
    """The sources that judged some claim, in the usual order (model, calibrated, measured)."""
    present = {v.source for v in report.verdicts}
    return tuple(s for s in SOURCES if s in present)


def rows(report: Report) -> list[Row]:
    """A row per claim, failing claims first, each group in file order."""
    columns = sources(report)
    by_claim: dict[int, list[Verdict]] = {}
    for verdict in report.verdicts:
        by_claim.setdefault(id(verdict.claim), []).append(verdict)
    found = []
    for verdicts in by_claim.values():
        claim = verdicts[0].claim
        statuses = {v.status for v in verdicts}
        status = "fail" if "fail" in statuses else "pass" if "pass" in statuses else "skip"
        judged = {v.source: v for v in verdicts}
        cells = tuple(_cell(judged[s]) if s in judged else None for s in columns)
        failure = next((v for v in verdicts if v.status == "fail"), None)
        why = failure.message if failure else ""
        if failure is not None and (failure.realistic is not None or failure.ideal is not None):
            why = f"{why}; {realistic_line(failure)}"
        found.append(Row(f"{claim.span.file}:{claim.span.line}", _claim(claim), status, cells, why))
    return sorted(found, key=lambda row: row.status != "fail")  # a stable sort keeps file order


def _claim(claim) -> str:
    """The claim with what it is about: `y is ≈ 30 µs` as written, `y = x * 2: memory-bound` from a block."""
    statement = claim.statement.rstrip().rstrip(":")
    return statement if claim.text in statement else f"{statement}: {claim.text}"


def _cell(verdict: Verdict) -> Cell:
    if verdict.actual is None:
        return Cell(verdict.status, f"{_MARKS[verdict.status]}: {verdict.reason or verdict.message}")
    where = f" ({verdict.profile})" if verdict.profile else ""
    return Cell(verdict.status, f"{show(verdict.actual, verdict.claim.expected)}{where} {_MARKS[verdict.status]}")


def _data_uri(picture: Picture) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(picture.svg.encode("utf-8")).decode("ascii")


def render(report: Report, pictures: list[Picture], format: str = "html") -> str:
    return render_html(report, pictures) if format == "html" else render_markdown(report, pictures)


# --- Markdown --------------------------------------------------------------------------------------


def render_markdown(report: Report, pictures: list[Picture]) -> str:
    columns = sources(report)
    lines = ["# gpuspec report", "", heading(report), ""]
    if report.verdicts:
        lines += ["| Where | Claim | " + " | ".join(columns) + " | Why it fails |",
                  "| --- | --- | " + " | ".join("---" for _ in columns) + " | --- |"]
        for row in rows(report):
            cells = [markdown_cell(c.text) if c else "—" for c in row.cells]
            lines.append(f"| {markdown_cell(row.where)} | {markdown_cell(row.claim)} | " + " | ".join(cells)
                         + f" | {markdown_cell(row.message)} |")
    nothing = report.nothing_checked()
    if nothing:
        lines += ["", markdown_cell(_sentence(nothing))] if report.verdicts else [markdown_cell(_sentence(nothing))]
    for title, found in (("Errors", report.diagnostics), ("Warnings", report.warnings)):
        if not found:
            continue
        lines += ["", f"## {title} ({len(found)})", "", "| Where | Code | Message |", "| --- | --- | --- |"]
        for d in found:
            message = d.message + (f"\nhelp: {d.help}" if d.help else "")
            lines.append(f"| {markdown_cell(_where(d))} | {markdown_cell(d.code)} | {markdown_cell(message)} |")
    for picture in pictures:
        title = markdown_cell(picture.title)
        lines += ["", f"## {title}", "", _markdown_picture(picture, title)]
    return "\n".join(lines) + "\n"


# A PR comment holds 65,536 characters and a job summary 1 MiB, and GitHub shows no data: image in either: a
# picture is inlined in Markdown only when it is small; otherwise the reader is told where to get it.
MARKDOWN_PICTURE_LIMIT = 8_000


def _markdown_picture(picture: Picture, title: str) -> str:
    if not picture.svg:
        return markdown_cell(_sentence(picture.note))
    uri = _data_uri(picture)
    if len(uri) <= MARKDOWN_PICTURE_LIMIT:
        return f"![{title}]({uri})"
    return (f"Not inlined: {len(uri) // 1000:,} kB as an inline picture, more than a PR comment or job summary "
            "shows. The HTML report (`--format html`) has it; `gpuspec plot` draws it to a file.")


def _where(diagnostic) -> str:
    span = diagnostic.span
    return f"{span.file}:{span.line}:{span.column}" if span else "—"


def _sentence(reason: str) -> str:
    return reason[0].upper() + reason[1:] + "."


# --- HTML ------------------------------------------------------------------------------------------

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 80em; padding: 0 1em; color: #222; }
table { border-collapse: collapse; width: 100%; margin: 1em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.where, td.value { white-space: nowrap; font-variant-numeric: tabular-nums; }
tr.fail td:first-child { border-left: 4px solid #c4302b; }
td.pass { color: #2b7a3e; } td.fail { color: #c4302b; font-weight: 600; } td.skip { color: #888; }
td.why { color: #555; font-size: 0.92em; }
figure { margin: 2em 0; } figure img { max-width: 100%; } figcaption { color: #555; }
"""


def render_html(report: Report, pictures: list[Picture]) -> str:
    e = _html
    columns = sources(report)
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             "<title>gpuspec report</title>", f"<style>{_STYLE}</style>", "</head>", "<body>",
             "<h1>gpuspec report</h1>", f"<p>{e(report.summary_line())}"
             + (f", {len(report.diagnostics)} errors" if report.diagnostics else "") + "</p>"]
    if report.verdicts:
        header = "".join(f"<th>{e(s)}</th>" for s in columns)
        parts += ["<table>", f"<tr><th>Where</th><th>Claim</th>{header}<th>Why it fails</th></tr>"]
        for row in rows(report):
            cells = "".join(f'<td class="value {c.status}">{e(c.text)}</td>' if c else '<td class="skip">—</td>'
                            for c in row.cells)
            parts.append(f'<tr class="{row.status}"><td class="where">{e(row.where)}</td><td>{e(row.claim)}</td>'
                         f'{cells}<td class="why">{e(row.message)}</td></tr>')
        parts.append("</table>")
    nothing = report.nothing_checked()
    if nothing:
        parts.append(f"<p>{e(_sentence(nothing))}</p>")
    for title, found, kind in (("Errors", report.diagnostics, "fail"), ("Warnings", report.warnings, "skip")):
        if not found:
            continue
        parts += [f"<h2>{title} ({len(found)})</h2>", "<table>", "<tr><th>Where</th><th>Code</th><th>Message</th></tr>"]
        for d in found:
            message = e(d.message) + (f"<br>help: {e(d.help)}" if d.help else "")
            parts.append(f'<tr class="{kind}"><td class="where">{e(_where(d))}</td><td>{e(d.code)}</td>'
                         f"<td>{message}</td></tr>")
        parts.append("</table>")
    for picture in pictures:
        if not picture.svg:
            parts += [f"<h2>{e(picture.title)}</h2>", f"<p>{e(_sentence(picture.note))}</p>"]
            continue
        parts += [f"<h2>{e(picture.title)}</h2>", "<figure>",
                  f'<img alt="{e(picture.title)}" src="{_data_uri(picture)}">', "</figure>"]
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


def _html(text: str) -> str:
    return html.escape(shown(text))
