"""Spec text and where things are in it: SpecText (path, text, line offset) and Span."""
from __future__ import annotations

from pathlib import Path

from attrs import field

from gpuspec.record import ValueRecord, record


@record
class Span(ValueRecord):
    """A stretch of one input file: 1-based lines and columns, end_column exclusive, as in Lark.

    start and end are character offsets into the text it was parsed from.
    """

    file: str
    line: int
    column: int
    end_line: int
    end_column: int
    start: int = field(default=0, eq=False, repr=False)
    end: int = field(default=0, eq=False, repr=False)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@record
class SpecText(ValueRecord):
    """The text of one spec, and where it came from.

    line_offset is added to every line number, and column_offsets (by line) to columns, so that a block
    inside a larger document reports positions in the document's own lines and columns.
    """

    path: str
    text: str = field(repr=False)
    line_offset: int = 0
    column_offsets: dict | None = field(default=None, eq=False, repr=False)  # line -> columns it was dedented

    def line(self, number: int) -> str:
        """The text of the 1-based document line `number`, without its line break ('' if out of range)."""
        lines = self.text.split("\n")  # Lark counts lines by \n only; splitlines() would also split at \r, U+2028, ...
        index = number - 1 - self.line_offset
        return lines[index] if 0 <= index < len(lines) else ""


class UnreadableText(Exception):
    """A file that is not UTF-8 text; carries the position of the first bad byte."""

    def __init__(self, path: str, line: int, column: int, reason: str):
        super().__init__(reason)
        self.path, self.line, self.column, self.reason = path, line, column, reason


def read_spec(path: str | Path) -> SpecText:
    """Read a spec file as UTF-8 (a leading byte-order mark is dropped).

    Raises UnreadableText for bytes that are not UTF-8 or for NUL bytes, with their position.
    """
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line, column = _position(raw[: error.start].decode("utf-8", "replace"))
        raise UnreadableText(str(path), line, column, f"byte 0x{raw[error.start]:02x} is not UTF-8 text") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    nul = text.find("\0")
    if nul >= 0:
        line, column = _position(text[:nul])
        raise UnreadableText(str(path), line, column, "a NUL byte: this looks like a binary file, not a spec")
    return SpecText(str(path), text)


def _position(before: str) -> tuple[int, int]:
    line = before.count("\n") + 1
    return line, len(before) - (before.rfind("\n") + 1) + 1


def _invisible(char: str) -> bool:
    code = ord(char)
    return (code < 32 and char != "\t") or 0x7F <= code < 0xA0 or char in _LAYOUT


# Line and paragraph separators and the bidirectional controls: they reorder or break a terminal's line.
_LAYOUT = frozenset("\u2028\u2029\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff")


def escaped(text: str) -> str:
    """`text` with control and layout characters written as escapes (`\\r`, `\\u2028`), safe to print."""
    if not any(_invisible(c) for c in text):
        return text
    return "".join(c.encode("unicode_escape").decode("ascii") if _invisible(c) else c for c in text)


def masked(text: str) -> str:
    """`text` with control and layout characters shown as U+FFFD, one column each, for a caret excerpt."""
    if not any(_invisible(c) for c in text):
        return text
    return "".join("\ufffd" if _invisible(c) else c for c in text)
