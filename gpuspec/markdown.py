"""Markdown documents -> spec text: the ```gpu fenced blocks and <!-- gpu ... --> comments of a document,
in order, as one spec whose lines are the document's lines (markdown-it-py finds the blocks); the
`<!-- gpu: ... -->` comments that follow a number in a sentence (found here, read by gpuspec.prose); and the
blocks that were nearly gpu blocks (```GPU, ```gpu,, a hidden block inside other HTML), as warnings that say the
fix."""
from __future__ import annotations

import re

from gpuspec.diagnostics import Diagnostic
from gpuspec.record import ValueRecord, record
from gpuspec.text import Span, SpecText, escaped, normalized

FENCE_LANGUAGE = "gpu"
NEAR_MISS = "near-miss"
_HIDDEN_START = re.compile(r"^\s*<!--\s*gpu\b")
# `<!-- gpu:` (with the colon) checks the number just before it in a sentence; `<!-- gpu` alone starts a block.
PROSE_START = re.compile(r"<!--\s*gpu:")
_PROSE_BLOCK = re.compile(r"^\s*<!--\s*gpu:")
# An inline comment that was nearly a number check: the case of `gpu`, or a comparison without the colon.
_NEAR_PROSE = re.compile(r"<!--\s*gpu\s*[≈~=<>≤≥]|<!--\s*gpu:", re.IGNORECASE)
# A cheap test before parsing: does the document mention a gpu block at all (or nearly)?
_MENTION = re.compile(r"(```|~~~)\s*gpu\b|<!--\s*gpu\b")
_NEAR_MENTION = re.compile(r"(```|~~~)\s*\{?\.?gpu|<!--\s*gpu\b", re.IGNORECASE)
# Inside an HTML block, what would have been a gpu block had it started a block of its own.
_BURIED = re.compile(r"<!--\s*gpu\b|^\s*(?:```|~~~)\s*gpu\b", re.IGNORECASE)
# A fence language that is `gpu` but for case, punctuation after it or Pandoc's braces.
_NEAR_LANGUAGE = re.compile(r"\{?\.?gpu(?:\W.*)?", re.IGNORECASE)


@record
class ProseComment(ValueRecord):
    """A `<!-- gpu: ... -->` comment in a document, where it stands: `line` (1-based), `column` of its `<!--` and
    `end_column` after its `-->` (both 1-based, in the document's line), and `where`: "inline" (in a paragraph,
    heading or list item: a reader sees the sentence, not the comment), "code" (in a code span, or escaped: a
    reader sees the comment as text), "block" (on a line of its own, where it follows no number) or "multiline"
    (a comment over several lines)."""

    line: int
    column: int
    end_column: int
    where: str


def has_blocks(document: str) -> bool:
    """Whether the document holds a real gpu block or number check (not just the words ```gpu in prose or inline
    code)."""
    if not _MENTION.search(document):
        return False
    spec = extract("", document)
    return any(c.where != "code" for c in spec.prose) or any(line.strip() for line in spec.text.split("\n"))


def mentions_gpu(document: str) -> bool:
    """Whether the document holds a gpu block, a number check, or something that was nearly one (worth a
    warning)."""
    if not _NEAR_MENTION.search(document):
        return False
    spec = extract("", document)
    return (bool(spec.warnings) or any(c.where != "code" for c in spec.prose)
            or any(line.strip() for line in spec.text.split("\n")))


def near_misses(path: str, document: str) -> tuple[Diagnostic, ...]:
    """The blocks of `document` that look like gpu blocks but are not read as one: warnings (code `near-miss`),
    each at its file:line:column, saying what to write instead."""
    return extract(path, document).warnings


def extract(path: str, document: str) -> SpecText:
    """The gpu blocks of `document` as one spec. Every other line is blank, so positions are the document's;
    a fence indented (in a list, say) is dedented, and its columns shifted back when reported. Its warnings are
    the near misses (see near_misses); its document is the document with `\\n` line breaks."""
    from markdown_it import MarkdownIt

    document = normalized(document)  # a lone \r ends a line here as it does for markdown-it
    lines = document.split("\n")
    spec_lines = [""] * len(lines)
    offsets: dict[int, int] = {}
    warnings: list[Diagnostic] = []
    prose: list[ProseComment] = []
    near = _NEAR_MENTION.search(document) is not None
    for token in MarkdownIt("commonmark").parse(document):
        if token.map is None:
            continue
        first, end = token.map
        if token.type == "fence" and token.info.split()[:1] == [FENCE_LANGUAGE]:
            for i, text in enumerate(fence_body(token)):
                spec_lines[first + 1 + i] = text
                offsets[first + 2 + i] = len(container_prefix(lines[first + 1 + i], text))
        elif token.type == "html_block" and _PROSE_BLOCK.match(token.content):
            column = PROSE_START.search(lines[first]).start() + 1
            prose.append(ProseComment(first + 1, column, len(lines[first]) + 1, "block"))
            warnings.extend(_buried(path, lines, first, end, token, skip_first=True))
        elif token.type == "html_block" and _HIDDEN_START.match(token.content):
            _hidden(lines, first, end, spec_lines, offsets)
            if near:
                warnings.extend(_buried(path, lines, first, end, token, skip_first=True))
        elif near:
            if token.type == "inline" and token.children:
                prose.extend(_prose_comments(lines, first, end, token))
            warnings.extend(_near_miss(path, lines, token))
    return SpecText(path, "\n".join(spec_lines), column_offsets=offsets, document=document,
                    warnings=tuple(warnings), prose=tuple(prose))


def _prose_comments(lines: list[str], first: int, end: int, token) -> list[ProseComment]:
    """The `<!-- gpu:` comments of one inline run (a paragraph, a heading): each real comment (an html_inline
    that markdown-it found) at its place, and each `<!-- gpu:` that is text a reader sees (in a code span, or
    escaped) as "code"."""
    rows = lines[first:min(end, len(lines))]
    written = [(index, match.start()) for index, row in enumerate(rows) for match in PROSE_START.finditer(row)]
    if not written:
        return []
    in_code = _code_spans(rows)
    comments = [child.content for child in token.children
                if child.type == "html_inline" and PROSE_START.match(child.content)]
    found: list[ProseComment] = []
    for index, column in written:
        row = rows[index]
        backslashes = len(row[:column]) - len(row[:column].rstrip("\\"))
        shown = (index, column) in in_code or backslashes % 2 == 1  # `\<!--` is text, as in a code span
        content = comments[0] if comments and not shown else None
        if content is not None and row.startswith(content.split("\n")[0], column):
            comments.pop(0)
            head = content.split("\n")[0]
            where = "multiline" if "\n" in content else "inline"
            found.append(ProseComment(first + index + 1, column + 1, column + len(head) + 1, where))
        else:  # text a reader sees: in a code span, escaped, inside a link's address
            close = row.find("-->", column)
            found.append(ProseComment(first + index + 1, column + 1, close + 4 if close >= 0 else len(row) + 1,
                                      "code"))
    return found


def _code_spans(rows: list[str]) -> set[tuple[int, int]]:
    """The places (row, column) of `<!--` that stand inside a code span of these lines, by CommonMark's rule: a
    run of backticks opens a span that the next run of as many closes; a backslash escapes what follows; an HTML
    comment that starts first is a comment, whatever backticks it holds."""
    text = "\n".join(rows)
    starts = [0]
    for row in rows:
        starts.append(starts[-1] + len(row) + 1)
    inside: set[int] = set()
    at = 0
    while at < len(text):
        char = text[at]
        if char == "\\":
            at += 2
        elif text.startswith("<!--", at):
            close = text.find("-->", at + 4)
            at = len(text) if close < 0 else close + 3
        elif char == "`":
            run = len(text[at:]) - len(text[at:].lstrip("`"))
            closing = re.compile(rf"(?<!`)`{{{run}}}(?!`)")
            match = closing.search(text, at + run)
            if match is None:
                at += run
                continue
            for found in re.finditer("<!--", text[at:match.start()]):
                inside.add(at + found.start())
            at = match.end()
        else:
            at += 1
    places = set()
    for offset in inside:
        row = max(i for i, s in enumerate(starts) if s <= offset)
        places.add((row, offset - starts[row]))
    return places


def fence_body(token) -> list[str]:
    """The lines of a fence's content, without the container's prefix (list indentation, `> `)."""
    return token.content.split("\n")[:-1] if token.content.endswith("\n") else token.content.split("\n")


def container_prefix(document_line: str, content: str) -> str:
    """What stands before a fence's content on its document line: list indentation, a block quote's `> `."""
    if content and document_line.endswith(content):
        return document_line[: len(document_line) - len(content)]
    return document_line[: len(document_line) - len(document_line.lstrip(" >"))]


def _hidden(lines: list[str], first: int, end: int, spec_lines: list[str], offsets: dict[int, int]) -> None:
    """The body of `<!-- gpu ... -->`: what follows `gpu` up to `-->`, on one line or several."""
    for index in range(first, end):
        text = lines[index]
        start = 0
        if index == first:
            match = _HIDDEN_START.match(text)
            start = match.end() if match else 0
        close = text.find("-->", start)
        body = text[start:close if close >= 0 else len(text)]
        if body.strip():
            stripped = body.lstrip()
            spec_lines[index] = stripped.rstrip()
            offsets[index + 1] = len(text[:start]) + (len(body) - len(stripped))
        if close >= 0:
            break


# --- near misses -----------------------------------------------------------------------------------------

def _near_miss(path: str, lines: list[str], token) -> list[Diagnostic]:
    first, end = token.map
    if token.type == "fence":
        language = (token.info.split() or [""])[0]
        if not _NEAR_LANGUAGE.fullmatch(language):
            return []
        line = lines[first]
        column = line.find(language, line.find(token.markup) + len(token.markup)) + 1
        fence = f"{token.markup}{language}"
        fix = f"write {token.markup}gpu"
        if language.lower() == FENCE_LANGUAGE:
            why = "the fence's language is lowercase `gpu`"
        elif "{" in language:
            why = "gpuspec reads a fence's language written plainly, not in braces"
        else:
            why = "the fence's language must be the word `gpu` alone"
            fix += ", with a space before anything that follows it"
        return [_warning(path, first + 1, column, len(language), f"{escaped(fence)} is not a gpu block: {why}", fix)]
    if token.type == "html_block":
        if re.match(r"\s*<!--\s*gpu\b", token.content, re.IGNORECASE):  # `<!-- GPU`: the case is wrong
            line = lines[first]
            match = re.search(r"<!--\s*gpu", line, re.IGNORECASE)
            column = match.start() + 1 if match else 1
            written = match.group() if match else "<!--"
            return [_warning(path, first + 1, column, len(written),
                             f"`{escaped(written)}` is not a hidden gpu block: the word is lowercase `gpu`",
                             "write `<!-- gpu`")] + _buried(path, lines, first, end, token, skip_first=True)
        return _buried(path, lines, first, end, token, skip_first=False)
    if token.type == "inline" and token.children:
        return _inline(path, lines, first, end, token)
    return []


def _buried(path: str, lines: list[str], first: int, end: int, token, skip_first: bool) -> list[Diagnostic]:
    """gpu blocks written inside an HTML block: Markdown passes them through as HTML, so they are not read."""
    found = []
    opening = escaped(lines[first].strip()[:40])
    for index in range(first, min(end, len(lines))):
        match = _BURIED.search(lines[index])
        if match is None or (skip_first and index == first):
            continue
        if PROSE_START.match(lines[index], match.start() + len(match.group()) - len(match.group().lstrip())):
            what, fix = ("this number check", "write the sentence as Markdown, outside the HTML, with the comment "
                         "right after its number")
        elif match.group().lstrip().startswith("<!--"):
            what, fix = "this hidden gpu block", "start `<!-- gpu` on a line of its own, after a blank line"
        else:
            what, fix = "this gpu fence", "leave a blank line between the HTML and the fence"
        found.append(_warning(path, index + 1, match.start() + len(match.group()) - len(match.group().lstrip()) + 1,
                              len(match.group().strip()),
                              f"{what} is inside an HTML block (`{opening}` on line {first + 1}), which Markdown "
                              "passes through as it is: it is not checked", fix))
    return found


def _inline(path: str, lines: list[str], first: int, end: int, token) -> list[Diagnostic]:
    """`<!-- gpu ... -->` inside a paragraph: an inline comment, not a hidden block."""
    found = []
    searched_from: dict[int, int] = {}
    for child in token.children:
        if child.type != "html_inline" or not re.match(r"<!--\s*gpu\b", child.content, re.IGNORECASE):
            continue
        if PROSE_START.match(child.content):  # a number check: gpuspec.prose reads it
            continue
        head = child.content.split("\n")[0]
        for index in range(first, min(end, len(lines))):
            column = lines[index].find(head, searched_from.get(index, 0))
            if column >= 0:
                searched_from[index] = column + 1
                found.append(_inline_warning(path, index + 1, column + 1, head))
                break
    return found


def _inline_warning(path: str, line: int, column: int, head: str) -> Diagnostic:
    """A `<!-- gpu` comment inside a sentence that is not a number check as written."""
    if re.match(r"<!--\s*gpu:", head, re.IGNORECASE):  # `<!-- GPU:`
        written = re.match(r"<!--\s*gpu:", head, re.IGNORECASE).group()
        return _warning(path, line, column, len(written),
                        f"`{escaped(written)}` is not a number check: the word is lowercase `gpu`",
                        "write `<!-- gpu:`")
    if _NEAR_PROSE.match(head):  # `5.53 ms<!-- gpu ≈ x.time -->`: the colon is missing
        return _warning(path, line, column, len(head),
                        "this comment is not a number check: a check of the number before it starts `<!-- gpu:`, "
                        "with a colon", "write `<!-- gpu: ≈ NAME.METRIC -->` right after the number")
    return _warning(path, line, column, len(head),
                    "this hidden gpu block is inside a paragraph, so it is not checked: a hidden block starts a "
                    "line of its own",
                    "put the comment on lines of its own, with a blank line before it; to check the number just "
                    "before it, write `<!-- gpu: ≈ NAME.METRIC -->`")


def _warning(path: str, line: int, column: int, width: int, message: str, fix: str) -> Diagnostic:
    return Diagnostic(NEAR_MISS, message, Span(path, line, column, line, column + max(1, width)), fix)
