"""Markdown documents -> spec text: the ```gpu fenced blocks and <!-- gpu ... --> comments of a document,
in order, as one spec whose lines are the document's lines (markdown-it-py finds the blocks); and the blocks
that were nearly gpu blocks (```GPU, ```gpu,, a hidden block inside other HTML), as warnings that say the fix."""
from __future__ import annotations

import re

from gpuspec.diagnostics import Diagnostic
from gpuspec.text import Span, SpecText, escaped, normalized

FENCE_LANGUAGE = "gpu"
NEAR_MISS = "near-miss"
_HIDDEN_START = re.compile(r"^\s*<!--\s*gpu\b")
# A cheap test before parsing: does the document mention a gpu block at all (or nearly)?
_MENTION = re.compile(r"(```|~~~)\s*gpu\b|<!--\s*gpu\b")
_NEAR_MENTION = re.compile(r"(```|~~~)\s*\{?\.?gpu|<!--\s*gpu\b", re.IGNORECASE)
# Inside an HTML block, what would have been a gpu block had it started a block of its own.
_BURIED = re.compile(r"<!--\s*gpu\b|^\s*(?:```|~~~)\s*gpu\b", re.IGNORECASE)
# A fence language that is `gpu` but for case, punctuation after it or Pandoc's braces.
_NEAR_LANGUAGE = re.compile(r"\{?\.?gpu(?:\W.*)?", re.IGNORECASE)


def has_blocks(document: str) -> bool:
    """Whether the document holds a real gpu block (not just the words ```gpu in prose or inline code)."""
    return bool(_MENTION.search(document)) and any(line.strip() for line in extract("", document).text.split("\n"))


def mentions_gpu(document: str) -> bool:
    """Whether the document holds a gpu block or something that was nearly one (worth a warning)."""
    if not _NEAR_MENTION.search(document):
        return False
    spec = extract("", document)
    return bool(spec.warnings) or any(line.strip() for line in spec.text.split("\n"))


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
    near = _NEAR_MENTION.search(document) is not None
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
            if near:
                warnings.extend(_buried(path, lines, first, end, token, skip_first=True))
        elif near:
            warnings.extend(_near_miss(path, lines, token))
    return SpecText(path, "\n".join(spec_lines), column_offsets=offsets, document=document,
                    warnings=tuple(warnings))


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
        if match.group().lstrip().startswith("<!--"):
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
        head = child.content.split("\n")[0]
        for index in range(first, min(end, len(lines))):
            column = lines[index].find(head, searched_from.get(index, 0))
            if column >= 0:
                searched_from[index] = column + 1
                found.append(_warning(path, index + 1, column + 1, len(head),
                                      "this hidden gpu block is inside a paragraph, so it is not checked: a hidden "
                                      "block starts a line of its own",
                                      "put the comment on lines of its own, with a blank line before it"))
                break
    return found


def _warning(path: str, line: int, column: int, width: int, message: str, fix: str) -> Diagnostic:
    return Diagnostic(NEAR_MISS, message, Span(path, line, column, line, column + max(1, width)), fix)
