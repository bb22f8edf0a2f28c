"""User text made safe to show: file names, spec text and results-file text, in the human formats.

Nothing a user wrote may act on the terminal, the browser or the CI log that shows it: control characters and
bidirectional marks are written as escapes, bytes of a name that is not UTF-8 as `\\xff`, and a line that a
GitHub workflow-command parser would run (`::error ...`, or `##[error]` anywhere) is escaped so that it reads as
text. The printers apply these to every piece of user text; the Markdown printers also break @mentions and issue
references (report/markdown.py).
"""
from __future__ import annotations

import re

from gpuspec.text import escaped
from gpuspec.text import masked as masked_slowly

# What gpuspec.text.escaped leaves: the Arabic letter mark (a bidirectional control) and lone surrogates,
# which stand for the bytes of a file name that is not UTF-8 (Python's surrogateescape) and cannot be encoded.
_MORE = re.compile("[\u061c\ud800-\udfff]")


def _escape(match: re.Match) -> str:
    code = ord(match[0])
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def shown(text: str) -> str:
    """`text` with every character that would act on a terminal, hide or reorder what follows, or fail to
    encode, written as a visible escape (`\\x1b`, `\\u202e`, `\\xff`). Applying it twice changes nothing more."""
    if text.isprintable():  # no control, format, separator or surrogate character: the usual case, at C speed
        return text
    return _MORE.sub(_escape, escaped(text))


def masked(text: str) -> str:
    """gpuspec.text.masked (each such character shown as U+FFFD, one column each), fast for the usual line."""
    return text if text.isprintable() else masked_slowly(text)


def log_line(line: str) -> str:
    """`line` as a CI log may show it: when a GitHub workflow-command parser would take it for a command (it
    starts with `::` after any spaces, or holds the older `##[` anywhere), that colon or bracket is escaped."""
    stripped = line.lstrip()
    if stripped.startswith("::"):
        at = len(line) - len(stripped)
        line = f"{line[:at]}\\x3a{line[at + 1:]}"
    return line.replace("##[", "##\\x5b") if "##[" in line else line


def shown_line(text: str) -> str:
    """A line of a terminal or log report: `shown`, then `log_line`."""
    return log_line(shown(text))
