"""Markdown documents -> spec text: the ```gpu fenced blocks and <!-- gpu ... --> comments of a document,
in order, as one spec whose lines are the document's lines (markdown-it-py finds the blocks)."""
from __future__ import annotations

import re

from gpuspec.text import SpecText

FENCE_LANGUAGE = "gpu"
_HIDDEN_START = re.compile(r"^\s*<!--\s*gpu\b")
# A cheap test before parsing: does the document mention a gpu block at all?
_MENTION = re.compile(r"(```|~~~)\s*gpu\b|<!--\s*gpu\b")


def has_blocks(document: str) -> bool:
    """Whether the document holds a real gpu block (not just the words ```gpu in prose or inline code)."""
    return bool(_MENTION.search(document)) and any(line.strip() for line in extract("", document).text.split("\n"))


def extract(path: str, document: str) -> SpecText:
    """The gpu blocks of `document` as one spec. Every other line is blank, so positions are the document's;
    a fence indented (in a list, say) is dedented, and its columns shifted back when reported."""
    from markdown_it import MarkdownIt

    lines = document.split("\n")
    spec_lines = [""] * len(lines)
    offsets: dict[int, int] = {}
    for token in MarkdownIt("commonmark").parse(document):
        if token.map is None:
            continue
        first, end = token.map
        if token.type == "fence" and token.info.split()[:1] == [FENCE_LANGUAGE]:
            for i, text in enumerate(fence_body(token)):
                spec_lines[first + 1 + i] = text
                offsets[first + 2 + i] = len(container_prefix(lines[first + 1 + i], text))
        elif token.type == "html_block" and _HIDDEN_START.match(token.content):
            _hidden(lines, first, end, spec_lines, offsets)
    return SpecText(path, "\n".join(spec_lines), column_offsets=offsets)


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
