"""The standalone report (`gpuspec report`): the counts per file, then one row per claim with its device and every
source's value side by side, failing claims first, each claim's derivations folded under its row; then the
errors, then the pictures. One HTML file (no script, nothing fetched: a filter for failures and for each file is
CSS over the address's #fragment), or Markdown that fits a PR comment or a job summary.

Every piece of user text (file names, claims, device names, messages) passes report.safe (controls and
bidirectional marks made visible) and then HTML's or Markdown's escaping: spec text is untrusted.
"""
from __future__ import annotations

import base64
import html
import re

from gpuspec.program import SOURCES, FactRef, MetricRef, NamedRef, Operation
from gpuspec.record import Record, record
from gpuspec.report import Report
from gpuspec.report.markdown import LIMIT, Section, fitted, heading
from gpuspec.report.markdown import cell as markdown_cell
from gpuspec.report.markdown import derivations as markdown_derivations
from gpuspec.report.safe import shown
from gpuspec.report.text import derivation, failed_derivation, realistic_line
from gpuspec.verdicts import Verdict, show

FORMATS = ("html", "markdown")
_MARKS = {"pass": "✓", "fail": "✗", "skip": "skipped"}
DERIVATION_DEPTH = 12  # levels of a derivation shown under a row: the whole tree of every bundled spec


@record
class Cell(Record):
    """One source's say on one claim: its status, value (or why it has none) and the value's derivation."""

    status: str  # pass, fail or skip
    text: str
    derivation: tuple[str, ...] = ()


@record
class Row(Record):
    """One claim: where it is, its device, what it says, and each source's cell (None where a source did not
    judge it)."""

    where: str
    file: str
    line: int
    device: str
    claim: str
    status: str  # fail if any source fails it, else pass if any passes it, else skip
    cells: tuple[Cell | None, ...]
    message: str  # the first failure in words, with the usual mistake it fits if any
    failures: tuple[Verdict, ...] = ()


@record
class FileCount(Record):
    """What one file holds: its claims by status (a claim fails when any source fails it) and its errors."""

    path: str
    devices: tuple[str, ...]
    claims: int
    failed: int
    passed: int
    skipped: int
    errors: int


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
        judged = {v.source: v for v in verdicts}
        cells = tuple(_cell(judged[s]) if s in judged else None for s in columns)
        failures = tuple(v for v in verdicts if v.status == "fail")
        why = failures[0].message if failures else ""
        if failures and (failures[0].realistic is not None or failures[0].ideal is not None):
            why = f"{why}; {realistic_line(failures[0])}"
        found.append(Row(f"{claim.span.file}:{claim.span.line}", claim.span.file, claim.span.line,
                         " · ".join(devices(claim.subject)),
                         _claim(claim), _status({v.status for v in verdicts}), cells, why, failures))
    return sorted(found, key=lambda row: row.status != "fail")  # a stable sort keeps file order


def _status(statuses: set[str]) -> str:
    return "fail" if "fail" in statuses else "pass" if "pass" in statuses else "skip"


def devices(ref) -> tuple[str, ...]:
    """The devices a claim's subject runs on or names, in order, each once (none for plain arithmetic)."""
    found: dict[str, None] = {}
    pending = [ref]
    while pending:
        ref = pending.pop()
        if isinstance(ref, MetricRef):
            device = getattr(ref.workload, "device", None)
            if device is not None:
                found[device.name] = None
        elif isinstance(ref, FactRef):
            found[ref.device.name] = None
        elif isinstance(ref, NamedRef):
            pending.append(ref.expr)
        elif isinstance(ref, Operation):
            pending.extend(reversed(ref.args))
    return tuple(found)


def files(report: Report, found: list[Row] | None = None) -> list[FileCount]:
    """A count per file, in the order the files were checked (a file with only errors included); one pass over
    the rows and errors, however many files."""
    found = rows(report) if found is None else found
    paths = dict.fromkeys((*report.files, *(r.file for r in found),
                           *(d.span.file for d in report.diagnostics if d.span)))
    by_file: dict[str, list[Row]] = {path: [] for path in paths}
    for row in found:
        by_file[row.file].append(row)
    errors = dict.fromkeys(paths, 0)
    for diagnostic in report.diagnostics:
        if diagnostic.span:
            errors[diagnostic.span.file] += 1
    counts = []
    for path, mine in by_file.items():
        shown_devices = dict.fromkeys(d for r in sorted(mine, key=lambda r: r.line) for d in r.device.split(" · ")
                                      if d)
        status = [r.status for r in mine]
        counts.append(FileCount(path, tuple(shown_devices), len(mine), status.count("fail"), status.count("pass"),
                                status.count("skip"), errors[path]))
    return counts


def _claim(claim) -> str:
    """The claim with what it is about: `y is ≈ 30 µs` as written, `y = x * 2: memory-bound` from a block."""
    statement = claim.statement.rstrip().rstrip(":")
    return statement if claim.text in statement else f"{statement}: {claim.text}"


def _cell(verdict: Verdict) -> Cell:
    if verdict.actual is None:
        return Cell(verdict.status, f"{_MARKS[verdict.status]}: {verdict.reason or verdict.message}")
    where = f" ({verdict.profile})" if verdict.profile else ""
    lines = failed_derivation(verdict, DERIVATION_DEPTH) if verdict.status == "fail" else \
        derivation(verdict.actual, DERIVATION_DEPTH)
    return Cell(verdict.status, f"{show(verdict.actual, verdict.claim.expected)}{where} {_MARKS[verdict.status]}",
                tuple(lines))


def _data_uri(picture: Picture) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(picture.svg.encode("utf-8")).decode("ascii")


def render(report: Report, pictures: list[Picture], format: str = "html") -> str:
    return render_html(report, pictures) if format == "html" else render_markdown(report, pictures)


def _where(diagnostic) -> str:
    span = diagnostic.span
    return f"{span.file}:{span.line}:{span.column}" if span else "—"


def _sentence(reason: str) -> str:
    return reason[0].upper() + reason[1:] + "."


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'s' * (count != 1)}"


# --- Markdown --------------------------------------------------------------------------------------

# GitHub takes a PR comment of at most 65,536 characters (a job summary: 1 MiB). The report keeps under this, with
# room for what a bot posting it adds; past it, the least telling rows are left out and counted (markdown.fitted).
MARKDOWN_LIMIT = LIMIT
# GitHub shows no data: image in a comment or summary: a picture is inlined only when small; otherwise the reader
# is told where to get it.
MARKDOWN_PICTURE_LIMIT = 8_000


def render_markdown(report: Report, pictures: list[Picture]) -> str:
    columns = sources(report)
    found = rows(report)
    sections = [Section(("# gpuspec report", "", heading(report)), (), 99)]
    counts = files(report, found)
    if len(counts) > 1 or report.diagnostics:
        sections.append(Section(("", "| File | Devices | Claims | Failed | Passed | Skipped | Errors |",
                                 "| --- | --- | --: | --: | --: | --: | --: |"),
                                tuple(_markdown_count(c) for c in counts), 2, "{n} more files", "1 more file"))
    if found:
        failing = [r for r in found if r.status == "fail"]
        title = f"## Claims ({len(found):,}, failures first)" if failing else f"## Claims ({len(found):,})"
        header = ("", title, "", "| Where | Device | Claim | " + " | ".join(columns) + " | Why it fails |",
                  "| --- | --- | --- | " + " | ".join("---" for _ in columns) + " | --- |")
        sections.append(Section(header, tuple(_markdown_row(r) for r in failing), 5,
                                "{n} more failing claims (the HTML report, `--format html`, has every one)",
                                "1 more failing claim (the HTML report, `--format html`, has every one)"))
        sections.append(Section((), tuple(_markdown_row(r) for r in found if r.status != "fail"), 0,
                                "{n} more claims that hold or were skipped (`--format html` has every one)",
                                "1 more claim that holds or was skipped (`--format html` has every one)"))
        verdicts = [v for r in failing for v in r.failures]
        if verdicts:
            sections.append(Section(("", "### How the failing values are derived"),
                                    tuple("\n".join(markdown_derivations([v])) for v in verdicts), 1,
                                    "{n} more derivations (`gpuspec explain FILE:LINE` shows each)",
                                    "1 more derivation (`gpuspec explain FILE:LINE` shows it)"))
    nothing = report.nothing_checked()
    if nothing:
        sections.append(Section(("", markdown_cell(_sentence(nothing))), (), 99))
    for title, found_here in (("Errors", report.diagnostics), ("Warnings", report.warnings)):
        if found_here:
            word = title.lower()
            sections.append(Section(("", f"## {title} ({len(found_here):,})", "", "| Where | Code | Message |",
                                     "| --- | --- | --- |"), tuple(_markdown_diagnostic(d) for d in found_here),
                                    4 if title == "Errors" else 1, f"{{n}} more {word}", f"1 more {word[:-1]}"))
    for picture in pictures:
        title = markdown_cell(picture.title)
        sections.append(Section(("", f"## {title}", "", _markdown_picture(picture, title)), (), 99))
    return fitted(sections, MARKDOWN_LIMIT)


def _markdown_count(count: FileCount) -> str:
    numbers = " | ".join(f"{n:,}" for n in (count.claims, count.failed, count.passed, count.skipped, count.errors))
    return f"| {markdown_cell(count.path)} | {markdown_cell(', '.join(count.devices)) or '—'} | {numbers} |"


def _markdown_row(row: Row) -> str:
    cells = " | ".join(markdown_cell(c.text) if c else "—" for c in row.cells)
    return (f"| {markdown_cell(row.where)} | {markdown_cell(row.device) or '—'} | {markdown_cell(row.claim)} | "
            f"{cells} | {markdown_cell(row.message)} |")


def _markdown_diagnostic(diagnostic) -> str:
    message = diagnostic.message + (f"\nhelp: {diagnostic.help}" if diagnostic.help else "")
    return f"| {markdown_cell(_where(diagnostic))} | {markdown_cell(diagnostic.code)} | {markdown_cell(message)} |"


def _markdown_picture(picture: Picture, title: str) -> str:
    if not picture.svg:
        return markdown_cell(_sentence(picture.note))
    uri = _data_uri(picture)
    if len(uri) <= MARKDOWN_PICTURE_LIMIT:
        return f"![{title}]({uri})"
    return (f"Not inlined: {len(uri) // 1000:,} kB as an inline picture, more than a PR comment or job summary "
            "shows. The HTML report (`--format html`) has it; `gpuspec plot` draws it to a file.")


# --- HTML ------------------------------------------------------------------------------------------

# The page may run nothing and fetch nothing: its styles are inline and its pictures data: addresses.
_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_STYLE = """
:root { color-scheme: light; --fail: #b42318; --pass: #1a7f37; --skip: #6e7781; --line: #d8dee4; --shade: #f6f8fa; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 86em;
  padding: 0 1.5em; color: #1f2328; }
h1 { font-size: 1.6em; margin: 0 0 .2em; } h2 { font-size: 1.2em; margin: 2em 0 .5em; }
.summary { font-size: 1.05em; margin: 0; } .summary .fail { color: var(--fail); font-weight: 600; }
.by-source { color: #57606a; font-size: .9em; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; margin: .5em 0; }
th, td { border-bottom: 1px solid var(--line); padding: .3em .6em; text-align: left; vertical-align: top;
  overflow-wrap: anywhere; }
th { background: var(--shade); font-weight: 600; }
.n { text-align: right; font-variant-numeric: tabular-nums; }
table.files col.n { width: 6.5em; } table.files col.devices { width: 20%; }
.wide, .claims { overflow-x: auto; } .wide table { min-width: 52em; } .rows { min-width: 60em; }
table.errors col.where { width: 28%; } table.errors col.code { width: 9em; }
tr.fail td:first-child { box-shadow: inset 3px 0 var(--fail); }
td.has-fail a, td.has-fail { color: var(--fail); font-weight: 600; }
a { color: #0969da; }
.filter { margin: .6em 0 .8em; display: flex; flex-wrap: wrap; gap: .4em; align-items: baseline; }
.filter a { padding: .1em .7em; border: 1px solid var(--line); border-radius: 1em; text-decoration: none;
  color: inherit; }
.target { display: none; }
.claims { border-top: 1px solid var(--line); }
.row { display: grid; grid-template-columns: COLUMNS; column-gap: .8em; padding: .35em .5em;
  border-bottom: 1px solid var(--line); }
.row > span { min-width: 0; overflow-wrap: anywhere; }
.where { overflow-wrap: break-word; }
.head { background: var(--shade); font-weight: 600; }
summary { list-style: none; cursor: pointer; display: block; }
summary::-webkit-details-marker { display: none; }
summary:hover .row { background: var(--shade); }
summary:focus-visible { outline: 2px solid #0969da; outline-offset: -2px; }
.mark::before { content: "▸"; color: #57606a; } details[open] .mark::before { content: "▾"; }
.claim.fail .row { box-shadow: inset 3px 0 var(--fail); }
.where, .value { font-variant-numeric: tabular-nums; }
.value.pass { color: var(--pass); } .value.fail { color: var(--fail); font-weight: 600; }
.value.skip, .none { color: var(--skip); }
.why { color: #57606a; font-size: .93em; }
.derivations { padding: .5em 1em .8em 2.2em; background: #fbfcfd; border-bottom: 1px solid var(--line); }
.derivations h3 { font-size: .95em; margin: .5em 0 .2em; font-weight: 600; }
.derivations pre { margin: 0; white-space: normal;
  font: 12.5px/1.5 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.derivations pre > span { display: block; white-space: pre-wrap; overflow-wrap: anywhere; text-indent: -2ch; }
.derivations p { margin: .2em 0; }
code { font: .92em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: nowrap; }
.empty { display: none; color: #57606a; padding: .6em .5em; }
figure { margin: 1em 0 2em; } figure img { max-width: 100%; height: auto; }
""" + "".join(f".derivations .d{depth} {{ padding-left: {2 * depth + 2}ch; }}\n" for depth in range(16))


def render_html(report: Report, pictures: list[Picture]) -> str:
    e = _html
    columns = sources(report)
    found = rows(report)
    counts = files(report, found)
    ids = {count.path: f"f{index}" for index, count in enumerate(counts, 1)}
    template = " ".join(["1.1em", "minmax(0, 2.2fr)", "minmax(0, 1fr)", "minmax(0, 3.2fr)",
                         *["minmax(0, 1.3fr)"] * len(columns), "minmax(0, 2.6fr)"])
    style = _STYLE.replace("COLUMNS", template) + _filter_rules(list(ids.values()))
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             "<title>gpuspec report</title>", f"<style>{style}</style>", "</head>", "<body>",
             "<h1>gpuspec report</h1>", f'<p class="summary">{_summary(report, counts, columns)}</p>']
    if counts:
        parts += _files_table(counts, ids)
    if found:
        parts += _claims(found, columns, ids, counts)
    nothing = report.nothing_checked()
    if nothing:
        parts.append(f"<p>{e(_sentence(nothing))}</p>")
    for title, found_here, kind in (("Errors", report.diagnostics, "fail"), ("Warnings", report.warnings, "skip")):
        if not found_here:
            continue
        parts += [f'<h2 id="{title.lower()}">{title} ({len(found_here):,})</h2>',
                  '<div class="wide"><table class="errors">',
                  '<colgroup><col class="where"><col class="code"><col></colgroup>',
                  "<thead><tr><th>Where</th><th>Code</th><th>Message</th></tr></thead>", "<tbody>"]
        for d in found_here:
            message = e(d.message) + (f"<br>help: {e(d.help)}" if d.help else "")
            parts.append(f'<tr class="{kind}"><td class="where">{e(_where(d))}</td><td>{e(d.code)}</td>'
                         f"<td>{message}</td></tr>")
        parts += ["</tbody>", "</table></div>"]
    for picture in pictures:
        parts.append(f"<h2>{e(picture.title)}</h2>")
        if not picture.svg:
            parts.append(f"<p>{e(_sentence(picture.note))}</p>")
            continue
        parts += ["<figure>", f'<img alt="{e(picture.title)}" src="{_data_uri(picture)}">', "</figure>"]
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


def _summary(report: Report, counts: list[FileCount], columns: tuple[str, ...]) -> str:
    """Claims by status (a claim fails when any source fails it), the files and errors; then each source's own
    counts, which are the ones `gpuspec check` prints."""
    claims = sum(c.claims for c in counts)
    failed = sum(c.failed for c in counts)
    words = [f'<span class="fail">{failed:,} fail</span>' if failed else "none fails",
             f"{sum(c.passed for c in counts):,} hold"]
    skipped = sum(c.skipped for c in counts)
    if skipped:
        words.append(f"{skipped:,} skipped")
    line = f"{_plural(claims, 'claim')} in {_plural(len(counts), 'file')}: " + ", ".join(words)
    if report.diagnostics:
        line += f'; <a href="#errors">{_plural(len(report.diagnostics), "error")}</a>'
    by_source = []
    for source in columns:
        mine = [v for v in report.verdicts if v.source == source]
        tally = {status: sum(v.status == status for v in mine) for status in ("pass", "fail", "skip")}
        by_source.append(f"{_html(source)} {tally['pass']:,} passed, {tally['fail']:,} failed"
                         + (f", {tally['skip']:,} skipped" if tally["skip"] else ""))
    return line + (f'<br><span class="by-source">by source: {"; ".join(by_source)}</span>' if by_source else "")


def _filter_rules(ids: list[str]) -> str:
    """The filters, in CSS: the address's #fragment names one (`#failures`, a file's `#f3` or `#f3-failures`),
    the rows it does not match are hidden and its link is shown as the one in effect (`all` when none is; a
    file's link shows only while it is)."""
    hide = ["#failures:target ~ .claims .claim:not(.fail)"]
    files = []
    for i in ids:
        hide += [f"#{i}:target ~ .claims .claim:not(.{i})", f"#{i}-failures:target ~ .claims .claim:not(.{i}.fail)"]
        files += [f"#{i}:target ~ .filter a.{i}", f"#{i}-failures:target ~ .filter a.{i}-failures"]
    active = ["#failures:target ~ .filter a.failures", *files]
    rules = [",\n".join(hide) + " { display: none; }",
             "#failures:target ~ .empty.failures { display: block; }",
             ".filter a.file { display: none; }",
             ".filter a.all,\n" + ",\n".join(active) + " { background: var(--shade); border-color: #8c959f; }",
             ".target:target ~ .filter a.all { background: none; border-color: var(--line); }"]
    if files:
        rules.insert(3, ",\n".join(files) + " { display: inline; }")
    return "\n" + "\n".join(rules) + "\n"


def _files_table(counts: list[FileCount], ids: dict[str, str]) -> list[str]:
    e = _html
    parts = ["<h2>Files</h2>", '<div class="wide"><table class="files">',
             '<colgroup><col><col class="devices">' + '<col class="n">' * 5 + "</colgroup>",
             '<thead><tr><th>File</th><th>Devices</th><th class="n">Claims</th><th class="n">Failed</th>'
             '<th class="n">Passed</th><th class="n">Skipped</th><th class="n">Errors</th></tr></thead>', "<tbody>"]
    for count in counts:
        i = ids[count.path]
        name = f'<a href="#{i}">{_path(count.path)}</a>' if count.claims else _path(count.path)
        failed = f'<a href="#{i}-failures">{count.failed:,}</a>' if count.failed else "0"
        errors = f'<a href="#errors">{count.errors:,}</a>' if count.errors else "0"
        status = "fail" if count.failed or count.errors else "pass"
        parts.append(f'<tr class="{status}"><td>{name}</td><td>{e(", ".join(count.devices)) or "—"}</td>'
                     f'<td class="n">{count.claims:,}</td><td class="n{" has-fail" * bool(count.failed)}">{failed}'
                     f'</td><td class="n">{count.passed:,}</td><td class="n">{count.skipped:,}</td>'
                     f'<td class="n{" has-fail" * bool(count.errors)}">{errors}</td></tr>')
    return parts + ["</tbody>", "</table></div>"]


def _claims(found: list[Row], columns: tuple[str, ...], ids: dict[str, str], tallies: list[FileCount]) -> list[str]:
    e = _html
    counts = {t.path: t.claims for t in tallies}
    failing = {t.path: t.failed for t in tallies}
    failed = sum(failing.values())  # claims, each counted once however many sources fail it
    parts = ["<h2>Claims</h2>", '<span id="failures" class="target"></span>']
    parts += [f'<span id="{i}" class="target"></span><span id="{i}-failures" class="target"></span>'
              for i in ids.values()]
    links = [f'<a class="all" href="#">all {len(found):,}</a>', f'<a class="failures" href="#failures">'
             f"failures {failed:,}</a>"]
    # a file's filter (a link in the files table) shows here only while it is the one in effect
    links += [f'<a class="{i} file" href="#{i}">{e(path)}: all {counts[path]:,}</a>' for path, i in ids.items()
              if counts[path]]
    links += [f'<a class="{i}-failures file" href="#{i}-failures">{e(path)}: failures {failing[path]:,}</a>'
              for path, i in ids.items() if failing[path]]
    parts.append('<nav class="filter" aria-label="show">show: ' + " ".join(links) + "</nav>")
    heads = "".join(f"<span>{e(s)}</span>" for s in columns)
    parts += ['<div class="claims"><div class="rows">',
              f'<div class="row head"><span></span><span>Where</span><span>Device</span><span>Claim</span>{heads}'
              "<span>Why it fails</span></div>"]
    for row in found:
        cells = "".join(f'<span class="value {c.status}">{_prose(c.text)}</span>' if c else
                        '<span class="none">—</span>' for c in row.cells)
        parts.append(f'<details class="claim {row.status} {ids[row.file]}"><summary><span class="row">'
                     f'<span class="mark" aria-hidden="true"></span><span class="where">{_path(row.where)}</span>'
                     f'<span class="device">{e(row.device) or "—"}</span><span class="text">{e(row.claim)}</span>'
                     f'{cells}<span class="why">{_prose(row.message)}</span></span></summary>'
                     f'<div class="derivations">{_derivations(row, columns)}</div></details>')
    parts.append("</div></div>")
    if not failed:  # shown by the failures filter, which would otherwise show nothing at all
        parts.append('<p class="empty failures">No claim fails.</p>')
    return parts


def _derivations(row: Row, columns: tuple[str, ...]) -> str:
    """Under a row: each source's value with its derivation, or why the source has none."""
    e = _html
    parts = []
    for source, cell in zip(columns, row.cells):
        if cell is None:
            parts.append(f"<h3>{e(source)}</h3><p>this source did not judge the claim</p>")
        elif cell.derivation:
            parts.append(f"<h3>{e(source)}: {e(cell.text)}</h3><pre>{_lines(cell.derivation)}</pre>")
        else:
            parts.append(f"<h3>{e(source)}</h3><p>{_prose(cell.text)}</p>")
    return "".join(parts)


def _html(text: str) -> str:
    return html.escape(shown(text), quote=True)


_CODE = re.compile(r"`([^`]+)`")


def _prose(text: str) -> str:
    """A message escaped, its `code spans` shown as code (escaped first, so a span holds only escaped text)."""
    return _CODE.sub(r"<code>\1</code>", _html(text))


def _lines(lines: tuple[str, ...]) -> str:
    """Lines escaped one by one (report.safe shows a line break inside one as an escape), each a block indented by
    its depth in the tree, so that a long line wraps under itself rather than running off the page."""
    shown = []
    for line in lines:
        text = line.lstrip(" ")
        depth = min((len(line) - len(text)) // 2, _DEEPEST)
        shown.append(f'<span class="d{depth}">{_html(text)}</span>')
    return "\n".join(shown)


_DEEPEST = 15  # the deepest indentation _STYLE has a rule for (d0 to d15); deeper lines share it


def _path(text: str) -> str:
    """A path escaped, with a place to break the line after each slash: a long path wraps at its folders."""
    return _html(text).replace("/", "/<wbr>")
