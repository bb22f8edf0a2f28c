"""The standalone report's structure (gpuspec report): in HTML a row per claim with its device and a value per
source, its derivations folded under it, counts per file, filters that need no script, every piece of user text
shown as text; in Markdown a report that renders as a PR comment or job summary and fits one. No matplotlib:
the pictures are tested in test_plot_files.py."""
from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

from gpuspec.api import check_text
from gpuspec.report import Report, document

SPEC = """\
device H100-SXM
set sources = model, measured
x = bf16[4096, 4096]
y = x * 2:
    memory-bound, ≈ 20 µs
device A100-80GB
w = bf16[4096, 4096]
v = w * 2 is ≈ 10 µs
device.sms = 108
"""
OTHER = "device H100-SXM\nx = bf16[4096]\ny = x * 2 is ≈ 2 µs\n"
BROKEN = "device H100-SXM\nx = bf16[4096]\ny = x * 2 is is memory-bound\n"
VOID = {"meta", "br", "wbr", "img", "col", "input", "link", "hr"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None]):
        self.tag, self.attrs, self.children = tag, attrs, []

    @property
    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()

    def all(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        found = []
        for child in self.children:
            if isinstance(child, Node):
                if (tag is None or child.tag == tag) and (cls is None or cls in child.classes):
                    found.append(child)
                found.extend(child.all(tag, cls))
        return found

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)


class Tree(HTMLParser):
    """The page as a tree; every element must be closed, in order (the page is well formed)."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]
        self.feed(page)
        self.close()
        assert self.stack == [self.root], [n.tag for n in self.stack]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag):
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def two_files() -> Report:
    first, second = check_text(SPEC, "specs/a.gpu"), check_text(OTHER, "specs/b.gpu")
    return Report((*first.verdicts, *second.verdicts), (), ["specs/a.gpu", "specs/b.gpu"],
                  {**first.texts, **second.texts})


def page(report: Report) -> Node:
    return Tree(document.render_html(report, [])).root


def test_each_claim_is_a_row_with_its_device_a_value_per_source_and_its_derivations_folded_under_it():
    report = two_files()
    assert document.sources(report) == ("model", "measured")
    root = page(report)
    claims = root.all("details", "claim")
    assert len(claims) == len({id(v.claim) for v in report.verdicts}) == 5
    first = claims[0]  # the failing claim comes first: v ≈ 10 µs on the A100 (it takes ≈ 33 µs)
    assert "fail" in first.classes
    summary = first.all("summary")[0]
    assert [s.text() for s in summary.all("span", "where")] == ["specs/a.gpu:8"]
    assert [s.text() for s in summary.all("span", "device")] == ["A100-80GB"]
    values = summary.all("span", "value")
    assert len(values) == 2 and "fail" in values[0].classes and values[0].text().endswith("✗")
    assert "skip" in values[1].classes and "--measure" in values[1].text()
    assert "not ≈ 10 µs" in summary.all("span", "why")[0].text()
    (folded,) = first.all("div", "derivations")
    headings = [h.text() for h in folded.all("h3")]
    assert headings[0].startswith("model: ") and headings[1] == "measured"
    (tree,) = folded.all("pre")
    assert tree.text().splitlines()[0].startswith("time = ")  # the model's whole derivation, a line a step
    assert "hbm_bandwidth" in tree.text()
    # each line a block indented by its depth, so that a long one wraps under itself instead of leaving the page
    lines = tree.all("span")
    assert [line.classes for line in lines[:2]] == [["d0"], ["d1"]] and lines[1].text().startswith("t_mem = ")
    assert "white-space: pre-wrap" in document.render_html(report, [])
    assert [c.text() for c in values[1].all("code")] == ["--measure"]  # a message's `code` shown as code
    devices = {c.all("span", "where")[0].text(): c.all("span", "device")[0].text() for c in claims}
    assert devices["specs/a.gpu:5"] == "H100-SXM" and devices["specs/a.gpu:9"] == "A100-80GB"  # a device fact
    header = root.all("div", "head")[0]
    assert [s.text() for s in header.all("span")] == ["", "Where", "Device", "Claim", "model", "measured",
                                                      "Why it fails"]


def test_the_counts_per_file_and_the_filters_that_need_no_script():
    report = two_files()
    html = document.render_html(report, [])
    root = Tree(html).root
    files = root.all("table", "files")[0]
    rows = [[td.text() for td in tr.all("td")] for tr in files.all("tr")[1:]]
    assert rows == [["specs/a.gpu", "H100-SXM, A100-80GB", "4", "1", "3", "0", "0"],
                    ["specs/b.gpu", "H100-SXM", "1", "0", "1", "0", "0"]]
    assert [a.attrs["href"] for a in files.all("a")] == ["#f1", "#f1-failures", "#f2"]
    assert "5 claims in 2 files: 1 fail, 4 hold" in root.all("p", "summary")[0].text()
    # The filters: the #fragment targets an empty element; its later siblings (the filter links, the rows)
    # are shown or hidden by CSS alone. The targets must be siblings that come before the rows.
    body = root.all("body")[0]
    order = [(n.tag, n.attrs.get("id") or " ".join(n.classes)) for n in body.children if isinstance(n, Node)]
    at = order.index(("span", "failures"))
    assert order[at:at + 7] == [("span", "failures"), ("span", "f1"), ("span", "f1-failures"), ("span", "f2"),
                                ("span", "f2-failures"), ("nav", "filter"), ("div", "claims")]
    style = root.all("style")[0].text()
    assert "#failures:target ~ .claims .claim:not(.fail)" in style
    assert "#f1:target ~ .claims .claim:not(.f1)" in style and "#f2-failures:target ~ .claims .claim:not(.f2.fail)" \
        in style
    ids = {n.attrs["id"] for n in root.all() if "id" in n.attrs}
    for link in root.all("a"):  # every link goes to a filter or a section of the page, nowhere else
        href = link.attrs["href"]
        assert href == "#" or href[1:] in ids, href
    assert [c.classes[2] for c in root.all("details", "claim")] == ["f1", "f1", "f1", "f1", "f2"]
    chips = [a.text() for a in root.all("nav")[0].all("a")]
    assert chips[:2] == ["all 5", "failures 1"] and "specs/a.gpu: failures 1" in chips
    assert root.all("p", "empty") == []  # a claim fails: the failures filter has rows to show
    assert "No claim fails." in document.render_html(check_text(OTHER, "specs/b.gpu"), [])


def test_the_page_runs_nothing_and_fetches_nothing():
    html = document.render_html(two_files(), [document.Picture("The roofline", "<svg xmlns='http://www.w3.org/2000/"
                                                                               "svg'/>")])
    root = Tree(html).root
    assert not root.all("script") and "<script" not in html.lower()
    (policy,) = [m for m in root.all("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert policy.attrs["content"] == "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    for node in root.all():
        assert not any(name.startswith("on") for name in node.attrs), node.attrs
        for name in ("src", "href"):
            if name in node.attrs:
                assert node.attrs[name].startswith(("data:image/svg+xml;base64,", "#")), node.attrs[name]


HOSTILE_NAME = 'a"><script>alert(1)</script>&amp;\u202eevil\u202c</style>.gpu'
HOSTILE_SPEC = ("device H100-SXM\nx = bf16[4096, 4096]\n"
                "y = x * 2:  # </details></summary><img src=x onerror=alert(1)> \u2066 \x1b[31m\n"
                '    "</pre></div><script>alert(2)</script> \u202e"\n'
                "    ≈ 99 µs\n")


def test_hostile_names_and_spec_text_are_shown_as_text():
    report = check_text(HOSTILE_SPEC, HOSTILE_NAME)
    html = document.render_html(report, [])
    root = Tree(html).root  # well formed: no planted tag closed or opened an element
    assert not root.all("script") and not root.all("img")
    assert not re.search("[\u202a-\u202e\u2066-\u2069\x1b]", html)  # bidi and escape characters made visible
    claims = root.all("details", "claim")
    assert len(claims) == 1 and "fail" in claims[0].classes
    where = claims[0].all("span", "where")[0].text()
    assert where == 'a"><script>alert(1)</script>&amp;\\u202eevil\\u202c</style>.gpu:5'  # as written, visibly
    text = claims[0].all("span", "text")[0].text()
    assert "</details></summary><img src=x onerror=alert(1)> \\u2066 \\x1b[31m" in text
    files = root.all("table", "files")[0].all("td")[0].text()
    assert files == HOSTILE_NAME.replace("\u202e", "\\u202e").replace("\u202c", "\\u202c")
    for node in root.all():  # no user text in a tag's name, class or id
        assert re.fullmatch(r"[a-z0-9#-]*", node.attrs.get("id") or ""), node.attrs
        assert all(re.fullmatch(r"[a-z0-9-]+", c) for c in node.classes), node.attrs
    assert HOSTILE_NAME not in root.all("style")[0].text() and "alert" not in root.all("style")[0].text()


def _table_rows(markdown: str) -> list[list[str]]:
    """The rows of every table, as markdown-it (CommonMark with GitHub's tables) parses them: cells' text."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    rows, row = [], None
    for token in tokens:
        if token.type == "tr_open":
            row = []
        elif token.type == "inline" and row is not None:
            row.append(token.content)
        elif token.type == "tr_close":
            rows.append(row)
            row = None
    return rows


def _html_in(markdown: str) -> set[str]:
    """The HTML tags markdown-it would pass through to the page (inline and as blocks)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    found = set()
    for token in tokens:
        for piece in [token, *(token.children or [])]:
            if piece.type in ("html_inline", "html_block"):
                found.update(re.findall(r"</?[a-z]+", piece.content))
    return found


def test_the_markdown_report_renders_as_tables_with_the_failures_derivations_folded():
    report = two_files()
    markdown = document.render_markdown(report, [])
    rows = _table_rows(markdown)
    files, claims = rows[:3], rows[3:]
    assert files[0] == ["File", "Devices", "Claims", "Failed", "Passed", "Skipped", "Errors"]
    assert files[1] == ["specs/a.gpu", "H100-SXM, A100-80GB", "4", "1", "3", "0", "0"]
    assert claims[0] == ["Where", "Device", "Claim", "model", "measured", "Why it fails"]
    assert len(claims) == 6 and all(len(r) == 6 for r in claims)
    assert claims[1][:2] == ["specs/a.gpu:8", "A100-80GB"]
    assert "### How the failing values are derived" in markdown and markdown.count("<details>") == 1
    assert {"<details", "<summary"} <= _html_in(markdown) <= {"<details", "<summary", "</summary", "</details", "<br"}


def test_hostile_text_in_the_markdown_report_is_text_in_every_cell():
    markdown = document.render_markdown(check_text(HOSTILE_SPEC, HOSTILE_NAME), [])
    assert _html_in(markdown) <= {"<details", "<summary", "</summary", "</details", "<br"}
    (row,) = [r for r in _table_rows(markdown) if r[0].startswith("a")]
    assert len(row) == 5  # no `|` in the text split a cell
    assert not re.search("[\u202a-\u202e\u2066-\u2069\x1b]", markdown)


def _many(claims: int) -> str:
    return "device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2\n" + "y is ≈ 20 µs\n" * claims


def test_a_huge_report_keeps_every_row_in_html_and_fits_a_pr_comment_in_markdown():
    big, failing = check_text(_many(3000), "specs/big.gpu"), check_text(SPEC, "specs/a.gpu")
    report = Report((*failing.verdicts, *big.verdicts), (), ["specs/a.gpu", "specs/big.gpu"],
                    {**failing.texts, **big.texts})
    html = document.render_html(report, [])
    root = Tree(html).root
    assert len(root.all("details", "claim")) == 3004
    assert [td.text() for td in root.all("table", "files")[0].all("tr")[2].all("td")][2:4] == ["3,000", "0"]
    markdown = document.render_markdown(report, [])
    assert len(markdown) <= document.MARKDOWN_LIMIT
    rows = _table_rows(markdown)
    claims = [r for r in rows if r[0].startswith("specs/") and len(r) == 6]
    assert claims[0][0] == "specs/a.gpu:8"  # the failure is kept, first
    shown = len(claims)
    assert 100 < shown < 3004
    left = re.search(r"([\d,]+) more claims that hold or were skipped", markdown)
    assert left and int(left[1].replace(",", "")) == 3004 - shown  # what is left out is counted, exactly
    assert "### How the failing values are derived" in markdown  # kept: passing rows go first


def test_a_report_of_errors_counts_them_per_file_and_links_to_them():
    broken, fine = check_text(BROKEN, "specs/broken.gpu"), check_text(OTHER, "specs/b.gpu")
    report = Report(fine.verdicts, broken.diagnostics, ["specs/broken.gpu", "specs/b.gpu"],
                    {**broken.texts, **fine.texts})
    root = page(report)
    rows = [[td.text() for td in tr.all("td")] for tr in root.all("table", "files")[0].all("tr")[1:]]
    assert rows[0] == ["specs/broken.gpu", "—", "0", "0", "0", "0", "1"]
    assert [h.attrs.get("id") for h in root.all("h2")].count("errors") == 1
    (errors,) = root.all("table", "errors")
    assert errors.all("td")[0].text().startswith("specs/broken.gpu:3:")
    markdown = document.render_markdown(report, [])
    assert "## Errors (1)" in markdown and ["specs/broken.gpu", "—", "0", "0", "0", "0", "1"] in _table_rows(markdown)


@pytest.mark.parametrize("limit", [3_000, 10_000])
def test_markdown_that_cannot_hold_everything_leaves_out_the_least_telling_rows_first(monkeypatch, limit):
    monkeypatch.setattr(document, "MARKDOWN_LIMIT", limit)
    report = check_text(SPEC + "v is ≈ 11 µs\nv is ≈ 12 µs\n" + "y is ≈ 20 µs\n" * 200, "specs/a.gpu")
    markdown = document.render_markdown(report, [])
    assert len(markdown) <= limit
    rows = [r for r in _table_rows(markdown) if r[0].startswith("specs/")]
    failing = [r for r in rows if r[-1]]
    assert len(failing) == 3 and rows[:3] == failing  # every failure kept, before any passing row
