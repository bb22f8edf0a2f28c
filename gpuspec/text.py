"""Spec text and where things are in it: SpecText (path, text, line offset) and Span; reading (and writing back)
the text of a spec file, the one way every command does it; escaping text for a terminal.

Line breaks: `\n`, `\r\n` and a lone `\r` each end a line, as in CommonMark, Python's universal newlines and
the editors a reader uses; every other character (U+2028, a form feed, ...) is part of its line. Spec text is
handled with `\n` only, so every position (line:column) counts lines this way; a file is written back with
the line breaks it was written with.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from attrs import field

from gpuspec.files import read_regular
from gpuspec.record import Record, ValueRecord, record

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def normalized(text: str) -> str:
    """`text` with each of its line breaks (`\r\n`, `\r`, `\n`) written `\n`."""
    return _LINE_BREAK.sub("\n", text) if "\r" in text else text


def split_lines(text: str) -> tuple[list[str], list[str]]:
    """The lines of `text` without their breaks, and each line's break as written ('' after the last line)."""
    lines = _LINE_BREAK.split(text)
    breaks = _LINE_BREAK.findall(text) + [""]
    return lines, breaks


def line_count(text: str) -> int:
    """How many lines `text` (with `\n` breaks) has, as an editor numbers them: a final line break starts none."""
    return text.count("\n") + (0 if not text or text.endswith("\n") else 1)


def past_the_end(path: str, line: int, count: int) -> str | None:
    """What `FILE:LINE` says when LINE is past the end of a file of `count` lines, in the words every command
    uses (explain, harness, plot); else None."""
    if line <= count:
        return None
    return f"{escaped(path)}:{line}: past the end of the file, which has {count} line{'s' * (count != 1)}"


def newline_of(text: str) -> str:
    """The line break `text` is written with: its most common one (the first on a tie), `\n` when it has none."""
    breaks = _LINE_BREAK.findall(text)
    if not breaks:
        return "\n"
    return max(dict.fromkeys(breaks), key=breaks.count)


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


def _span_maker():
    """span(file, line, column, end_line, end_column, start, end): Span(...) with every field given, made without
    attrs' __init__ (whose fields here have no converter, validator or hook to run): the parser and the parse cache
    make a Span for every node, and this takes two thirds of the time. tests/test_parse_runtime.py holds it to
    Span's fields."""
    setters = [Span.__dict__[name].__set__ for name in ("file", "line", "column", "end_line", "end_column", "start",
                                                          "end")]
    new = object.__new__
    file_, line_, column_, end_line_, end_column_, start_, end_ = setters

    def span(file: str, line: int, column: int, end_line: int, end_column: int, start: int, end: int) -> Span:
        made = new(Span)
        file_(made, file)
        line_(made, line)
        column_(made, column)
        end_line_(made, end_line)
        end_column_(made, end_column)
        start_(made, start)
        end_(made, end)
        return made

    return span


span = _span_maker()


@record
class SpecText(ValueRecord):
    """The text of one spec, and where it came from.

    text has `\n` line breaks only (any other break is made one when the SpecText is made). line_offset is
    added to every line number, and column_offsets (by line) to columns, so that a block inside a larger
    document reports positions in the document's own lines and columns. For the gpu blocks of a Markdown
    file, document is the whole document (for showing the lines errors are on), warnings are the blocks
    that were nearly gpu blocks (Diagnostics with code `near-miss`), and prose the `<!-- gpu: ... -->` comments
    that tie a number of a sentence to a metric (gpuspec.prose reads them).
    """

    path: str
    text: str = field(repr=False, converter=normalized)
    line_offset: int = 0
    column_offsets: dict | None = field(default=None, eq=False, repr=False)  # line -> columns it was dedented
    document: str | None = field(default=None, eq=False, repr=False)
    warnings: tuple = field(default=(), eq=False, repr=False)
    prose: tuple = field(default=(), eq=False, repr=False)  # markdown.ProseComment: numbers in sentences to check

    def line(self, number: int) -> str:
        """The text of the 1-based document line `number`, without its line break ('' if out of range)."""
        lines = self.text.split("\n")
        index = number - 1 - self.line_offset
        return lines[index] if 0 <= index < len(lines) else ""


class UnreadableText(Exception):
    """A file that is not UTF-8 text; carries the position of the first bad byte."""

    def __init__(self, path: str, line: int, column: int, reason: str):
        super().__init__(reason)
        self.path, self.line, self.column, self.reason = path, line, column, reason


@record
class FileText(Record):
    """A text file as it is on disk: `written` is its text with the line breaks as written and without a
    byte-order mark; `text` is what every command reads (`\n` line breaks)."""

    path: str
    written: str = field(repr=False)
    bom: bool = False
    raw: bytes = field(default=b"", repr=False)  # the bytes read, to notice a change before writing back

    @property
    def text(self) -> str:
        return normalized(self.written)

    def spec(self) -> SpecText:
        return SpecText(self.path, self.written)


def decode(raw: bytes, path: str) -> FileText:
    """UTF-8 bytes as a FileText (a leading byte-order mark is dropped and remembered).

    Raises UnreadableText for bytes that are not UTF-8 or for NUL bytes, at their line and column.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line, column = _position(normalized(raw[: error.start].decode("utf-8", "replace")))
        raise UnreadableText(path, line, column, f"byte 0x{raw[error.start]:02x} is not UTF-8 text") from None
    bom = text.startswith("\ufeff")
    text = text.removeprefix("\ufeff")
    nul = text.find("\0")
    if nul >= 0:
        line, column = _position(normalized(text[:nul]))
        raise UnreadableText(path, line, column, "a NUL byte: this looks like a binary file, not a spec")
    return FileText(path, text, bom, raw)


def read_file(path: str | Path) -> FileText:
    """The text of the file at `path`, as written (see decode). OSError if it cannot be read."""
    return decode(read_regular(path), str(path))


def read_spec(path: str | Path) -> SpecText:
    """Read a spec file as UTF-8 (a leading byte-order mark is dropped), with `\n` line breaks.

    Raises UnreadableText for bytes that are not UTF-8 or for NUL bytes, with their position.
    """
    return read_file(path).spec()


def undecoded(raw: bytes) -> str:
    """Bytes that may not be UTF-8 text as text to show a line of: bad bytes and NULs become U+FFFD."""
    return normalized(raw.decode("utf-8", "replace").removeprefix("\ufeff").replace("\0", "\ufffd"))


def read_leniently(path: str | Path) -> str:
    """The lines of a file to show beside an error, read as every command reads it; '' if it cannot be read."""
    try:
        return undecoded(read_regular(path))
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return ""


def write_back(read: FileText, written: str) -> None:
    """Replace the file `read` came from with `written` (line breaks as given), its byte-order mark kept.

    A symlink is written through: the link stays and the file it points to changes. A file with several hard
    links is refused, as is one that changed since it was read: either would lose someone's text.
    Raises files.WriteError with the reason; the file is then unchanged.
    """
    from gpuspec.files import WriteError, write_atomically

    shown = escaped(read.path)
    target = os.path.realpath(read.path)
    try:
        links = os.stat(target).st_nlink
        now = read_regular(target)
    except OSError as error:
        raise WriteError(f"cannot write {shown}: {error.strerror or error}") from None
    if links > 1:
        raise WriteError(f"{shown} has {links} hard links: writing it would give this name a new file and leave "
                         "the others with the old text, so it was not changed; make the other names symlinks, "
                         "or edit it by hand")
    if now != read.raw:
        raise WriteError(f"{shown} changed while gpuspec was working on it, so it was not changed; run again")
    try:
        write_atomically(target, ("\ufeff" if read.bom else "").encode("utf-8") + written.encode("utf-8"))
    except WriteError as error:  # its message names the file as the system spells it: escape it for printing
        raise WriteError(escaped(str(error))) from None


# Characters some editors and viewers show as a line break, and spec text does not: `# note<U+2028>device A100`
# would look like two lines and be one comment. Refused in spec text (Markdown prose may hold them).
_SEPARATORS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
SEPARATOR_HELP = "write a plain line break (or a space) instead"


def line_separators(source: SpecText) -> list[tuple[Span, str]]:
    """Where spec text holds a character that looks like a line break and is not one, and what it is, in words
    (every command refuses such text before parsing it)."""
    if not _SEPARATORS.search(source.text):
        return []
    found = []
    shift = source.column_offsets or {}
    for index, line in enumerate(source.text.split("\n")):
        for match in _SEPARATORS.finditer(line):
            number = index + 1 + source.line_offset
            column = match.start() + 1 + shift.get(index + 1, 0)
            found.append((Span(source.path, number, column, number, column + 1),
                          f"`{escaped(match.group())}` is not a line break here, though some editors show one"))
    return found


def _position(before: str) -> tuple[int, int]:
    line = before.count("\n") + 1
    return line, len(before) - (before.rfind("\n") + 1) + 1


def _invisible(char: str) -> bool:
    code = ord(char)
    return (code < 32 and char != "\t") or 0x7F <= code < 0xA0 or char in _LAYOUT or 0xD800 <= code < 0xE000


# Line and paragraph separators and the bidirectional controls: they reorder or break a terminal's line.
_LAYOUT = frozenset("\u2028\u2029\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff")


def _escape(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code < 0xDD00:  # a byte of a file name that is not UTF-8 (os.fsdecode's surrogate escape)
        return f"\\x{code - 0xDC00:02x}"
    return char.encode("unicode_escape", "backslashreplace").decode("ascii")


def escaped(text: str) -> str:
    """`text` with control and layout characters written as escapes (`\\r`, `\\u2028`), and the bytes of a
    file name that is not UTF-8 as `\\xff`: safe to print and to encode as UTF-8."""
    if not any(_invisible(c) for c in text):
        return text
    return "".join(_escape(c) if _invisible(c) else c for c in text)


def masked(text: str) -> str:
    """`text` with control and layout characters shown as U+FFFD, one column each, for a caret excerpt."""
    if not any(_invisible(c) for c in text):
        return text
    return "".join("\ufffd" if _invisible(c) else c for c in text)
