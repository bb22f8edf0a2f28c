"""Errors in spec input: Diagnostic (code, words, location, help), SpecError that carries them, and PartlyRead,
which also carries what of a spec with syntax errors could be read."""
from __future__ import annotations

from collections.abc import Iterable

from gpuspec.record import Record, record
from gpuspec.text import Span


@record
class Diagnostic(Record):
    """One problem with the input, located in a file.

    code is a stable kebab-case id (`unknown-device`); message says what is wrong; help, when there is
    real help, says what would be right.
    """

    code: str
    message: str
    span: Span | None
    help: str | None = None

    def sort_key(self) -> tuple:
        s = self.span
        return (s.file, s.line, s.column) if s else ("", 0, 0)


class SpecError(Exception):
    """The input is invalid; every diagnostic found is in `diagnostics`, sorted by position."""

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics = tuple(sorted(diagnostics, key=Diagnostic.sort_key))
        super().__init__("; ".join(d.message for d in self.diagnostics))


class PartlyRead(SpecError):
    """Errors found reading a spec (its syntax), with what of it could still be read: `partial` (a nodes.Spec of
    the statements that parsed, those that did not stood in for by nodes.Unparsed), for the semantic errors of the
    rest to be found too, and `placeholders`, the lines of claims that did not parse and were stood in for in it
    (an error there is this one's). `partial` is None where nothing more can be read."""

    def __init__(self, diagnostics: Iterable[Diagnostic], partial: object = None,
                 placeholders: frozenset[int] = frozenset()):
        super().__init__(diagnostics)
        self.partial, self.placeholders = partial, placeholders


def did_you_mean(word: str, known: Iterable[str], named: dict[str, str] | None = None) -> str | None:
    """A 'did you mean' help line naming the closest of `known`, or None when nothing is close. `named` maps a
    spelling to the name to suggest for it (an alias to its device's name), so that one thing is offered once."""
    import difflib  # only needed when something is misspelt

    known = list(known)
    named = named or {}
    lowered = {k.lower(): named.get(k, k) for k in known}
    if word.lower() in lowered:
        return f"did you mean `{lowered[word.lower()]}`?"
    close = difflib.get_close_matches(word.lower(), list(lowered), n=12, cutoff=0.6)
    names = list(dict.fromkeys(f"`{lowered[c]}`" for c in close))[:3]
    if not names:
        return None
    return f"did you mean {' or '.join(names)}?"
