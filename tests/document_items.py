"""The documents of cases (tests/documents/*.md) as pytest items: each ```gpu block is one spec, checked as
`gpuspec check` checks a Markdown file, against the expectations written in its comments.

An expectation is a comment on the line it concerns, or alone on a line above it (it then concerns the next line
that is not one):

    # error: [code] fragment       an error of this code here, whose message or help holds the fragment
    # fail: fragment               a claim here fails, no usual mistake fits, and its message holds the fragment
    # mistake: fragment            a claim here fails and names the usual mistake its number fits; its message
                                   (which ends with that mistake) holds the fragment
    # skip: fragment               a claim here is skipped by a source, saying the fragment
    # pass                         a claim here passes

A line inside a quoted sentence that runs over lines may carry an expectation too (for the error such a line is:
gpuspec reads the comment as words of the quote).

Before the fragment, `[source]` may name the source of a verdict (`# skip: [measured] --measure`), and a number
before the bracket the column (of the document, as a report prints it): `# error: 23 [syntax]`,
`# fail: 36 [model] 20.03 µs`, `# pass: 22`. A fragment runs to the end of the comment or the next `#`;
` ... ` in it separates pieces that must each be there (`# mistake: 162.0% ... implies more`).

Whatever a block gives that no expectation names (an error, a failure, a skip) fails its item, as does an
expectation that nothing meets, a comment that was nearly an expectation (`# eror:`), a located error or
failure that the text report does not print at its place, and an error message that shows the grammar's
internal names. A fence written ```gpu continued adds its lines to the block before it: together they are one
spec and one item. Items are named after the heading above them.
"""
from __future__ import annotations

import difflib
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import attrs
import pytest

from gpuspec.text import SpecText

KINDS = ("error", "fail", "mistake", "skip", "pass")
CONTINUED = "continued"
_KEYWORD = re.compile(r"([A-Za-z][\w-]*)\s*(:?)(.*)", re.S)
_COLUMN = re.compile(r"(\d+)\s*(?=\[|$)(.*)", re.S)  # a column is a number before `[tag]` (or alone, for pass)
_INTERNAL = re.compile(r"__ANON|\b_[A-Z]+\b|\$END")  # Lark's names for anonymous and hidden terminals
_TAG = re.compile(r"\[([a-z0-9-]+)\]\s*(.*)", re.S)


@dataclass(frozen=True)
class Expectation:
    kind: str                 # one of KINDS
    line: int                 # the document line it concerns
    column: int | None
    tag: str | None           # an error's code; a verdict's source
    fragment: str
    written: int              # the document line the comment is on

    def __str__(self) -> str:
        what = f"error[{self.tag}]" if self.kind == "error" else self.kind + (f" [{self.tag}]" if self.tag else "")
        where = f" at column {self.column}" if self.column is not None else ""
        return f"{what}{where}" + (f" holding `{self.fragment}`" if self.fragment else "")


@dataclass
class Case:
    """One item: the lines of one gpu block (with the blocks that continue it) and what they should give."""

    name: str
    first_line: int
    lines: list[int] = field(default_factory=list)  # document lines of the spec, fences excluded
    expectations: list[Expectation] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # malformed expectations, with their lines


@dataclass(frozen=True)
class Outcome:
    """Something the spec gave: an error or a verdict, where it is, and the words to match a fragment in."""

    kind: str                 # error, fail, skip or pass
    line: int | None
    column: int | None
    tag: str                  # an error's code; a verdict's source
    words: str                # an error's message and help; a verdict's message
    hint: str | None
    printed: str | None       # the head of the line the text report prints for it

    def __str__(self) -> str:
        what = f"error[{self.tag}]" if self.kind == "error" else f"{self.kind} [{self.tag}]"
        where = f"{self.line}:{self.column}" if self.line is not None else "no location"
        return f"{what} at {where}: {_short(self.words)}"


def cases(source: SpecText) -> tuple[list[Case], list[str]]:
    """The items of one document (as `gpuspec check` reads it: its gpu blocks, and the whole document), and the
    problems of the document as a whole."""
    from markdown_it import MarkdownIt

    from gpuspec.markdown import FENCE_LANGUAGE, fence_body

    found: list[Case] = []
    problems: list[str] = []
    heading, heading_line, tokens = None, 0, MarkdownIt("commonmark").parse(source.document)
    in_section: dict[int, list[Case]] = {}
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            heading, heading_line = tokens[index + 1].content.strip(), token.map[0] + 1
            continue
        words = token.info.split() if token.type == "fence" else []
        if words[:1] != [FENCE_LANGUAGE]:
            continue
        first = token.map[0] + 1  # the fence's own line
        lines = [first + 1 + i for i in range(len(fence_body(token)))]
        if CONTINUED in words[1:]:
            if not found:
                problems.append(f"line {first}: a ```gpu {CONTINUED} block with no block before it to continue")
                continue
            found[-1].lines.extend(lines)
            continue
        case = Case(heading or "", first, lines)
        found.append(case)
        in_section.setdefault(heading_line, []).append(case)
    for section in in_section.values():
        for case in section:
            if not case.name:
                case.name = f"line {case.first_line}"
            elif len(section) > 1:
                case.name = f"{case.name} (line {case.first_line})"
    names = [c.name for c in found]
    for case in found:
        if names.count(case.name) > 1:
            case.name = f"{case.name} (line {case.first_line})"
        case.name = case.name.replace("::", ":")  # pytest reads `::` as a separator
        _read_expectations(case, source)
    covered = {n for c in found for n in c.lines}
    hidden = [n for n, text in enumerate(source.text.split("\n"), 1) if text.strip() and n not in covered]
    if hidden:
        problems.append(f"line {hidden[0]}: a hidden <!-- gpu --> block: a document of cases writes each case in a "
                        "```gpu block, where its expectations are checked")
    for warning in source.warnings:
        problems.append(f"line {warning.span.line}: {warning.message} (so it is not checked); {warning.help}")
    return found, sorted(problems, key=_line_of)


def _read_expectations(case: Case, source: SpecText) -> None:
    pending: list[tuple[int, str]] = []  # expectations written above the line they concern
    quote: str | None = None  # the closing mark of a quoted sentence that runs over lines
    unclosed = _never_closed(case, source)
    for number in case.lines:
        code, comment, quote = _split_comment(source.line(number), quote, unclosed.get(number, ()))
        segments = [s.strip() for s in comment.split("#")[1:]] if comment else []
        read = [(number, s) for s in segments if _is_expectation(s, number, case)]
        if not code.strip():
            pending.extend(read)
            continue
        for written, text in pending + read:
            expectation = _expectation(text, number, written)
            if isinstance(expectation, str):
                case.problems.append(f"line {written}: {expectation}")
            else:
                case.expectations.append(expectation)
        pending = []
    for written, text in pending:
        case.problems.append(f"line {written}: `# {text}` has no line of spec below it to concern")


def _never_closed(case: Case, source: SpecText) -> dict[int, set[int]]:
    """The quote marks of the case that nothing closes (by document line, their indexes in it): as gpuspec reads
    them, they open no quote."""
    ignored: dict[int, set[int]] = {}
    while True:
        quote, opened = None, None
        for number in case.lines:
            line = source.line(number)
            for index, char in enumerate(line):
                if quote is not None:
                    if char == quote:
                        quote = None
                elif char in "\"“" and index not in ignored.get(number, ()):
                    quote, opened = ('"' if char == '"' else "”"), (number, index)
                elif char == "#":
                    break
        if quote is None or opened is None:
            return ignored
        ignored.setdefault(opened[0], set()).add(opened[1])


_INSIDE = re.compile(r"#\s*(?:" + "|".join(KINDS) + r")\b")  # an expectation on a line inside a quote


def _split_comment(line: str, quote: str | None, ignored=()) -> tuple[str, str, str | None]:
    """A line's spec text and its comment (from the `#` that starts it), given whether it starts inside a quoted
    sentence; and whether it ends inside one. On a line inside a quote, an expectation's comment is read as one
    (for the error such a line is) and the quote goes on. Quote marks at `ignored` are none (never closed)."""
    for index, char in enumerate(line):
        if quote is not None:
            if char == quote:
                quote = None
            elif char == "#" and _INSIDE.match(line, index):
                return line[:index], line[index:], quote
        elif char in "\"“" and index not in ignored:
            quote = '"' if char == '"' else "”"
        elif char == "#":
            return line[:index], line[index:], None
    return line, "", quote


def _is_expectation(segment: str, line: int, case: Case) -> bool:
    """Whether a comment segment is an expectation; one that nearly is one is a problem of the case."""
    match = _KEYWORD.match(segment)
    if not match:
        return False
    word, colon, _ = match.groups()
    if word in KINDS:
        if word == "pass" or colon:
            return True
        case.problems.append(f"line {line}: `# {segment}`: write `# {word}: ...`, with a colon")
        return False
    close = difflib.get_close_matches(word.lower(), KINDS, n=1, cutoff=0.75)
    if close and (colon or word.lower() in KINDS):
        case.problems.append(f"line {line}: `# {segment}` is not an expectation: did you mean `# {close[0]}:`?")
    return False


def _expectation(text: str, line: int, written: int) -> Expectation | str:
    """An expectation read from one comment segment, or what is wrong with it."""
    word, colon, rest = _KEYWORD.match(text).groups()
    rest = rest.strip()
    column = None
    found = _COLUMN.match(rest)
    if found and (found.group(2) or word == "pass"):  # `# fail: 132` is a fragment; `# pass: 22` a column
        column, rest = int(found.group(1)), found.group(2).strip()
    tag = None
    found = _TAG.match(rest)
    if found:
        tag, rest = found.group(1), found.group(2).strip()
    if word == "pass":
        if rest or (colon and column is None and tag is None):
            return f"`# {text}`: write `# pass`, or `# pass: COLUMN [source]`"
    elif word == "error" and tag is None:
        return f"`# {text}`: an error names its code: `# error: [code] words of its message`"
    elif word in ("mistake", "skip") and not rest:
        return f"`# {text}`: say words of the {'mistake' if word == 'mistake' else 'reason'} it names"
    return Expectation(word, line, column, tag, rest, written)


# --- running a case ------------------------------------------------------------------------------------------


def outcomes(source: SpecText, case: Case) -> tuple[list[Outcome], str]:
    """What the case's spec gives when checked, and the text report `gpuspec check` prints for it."""
    from gpuspec.api import compile_text
    from gpuspec.diagnostics import SpecError
    from gpuspec.report import Report
    from gpuspec.report.text import render
    from gpuspec.verdicts import check

    keep = set(case.lines)
    text = "\n".join(line if n in keep else "" for n, line in enumerate(source.text.split("\n"), 1))
    spec = attrs.evolve(source, text=text, warnings=())
    try:
        verdicts, errors = check(compile_text(spec))
    except SpecError as error:
        verdicts, errors = [], list(error.diagnostics)
    report = Report(verdicts, errors, [spec.path], {spec.path: source.document})
    found = []
    for d in report.diagnostics:
        span = d.span
        found.append(Outcome("error", span and span.line, span and span.column, d.code,
                             d.message + "\n" + (d.help or ""), None,
                             f"{span}: error[{d.code}]: " if span else f"error[{d.code}]: "))
    for v in report.verdicts:
        span = v.claim.span
        found.append(Outcome(v.status, span.line, span.column, v.source, v.message, v.hint,
                             f"{span}: fail: " if v.status == "fail" else None))
    return found, render(report)


def mismatches(case: Case, found: list[Outcome], printed: str) -> list[tuple[int, str]]:
    """Each way the outcomes differ from what the case expects, with the document line it is about."""
    left = list(found)
    wrong: list[tuple[int, str]] = [(_line_of(p), p.split(": ", 1)[1]) for p in case.problems]
    listed: set[int] = set()  # lines whose every outcome a failed expectation has listed already
    for expected in case.expectations:
        match = next((o for o in left if _meets(o, expected)), None)
        if match is None:
            here = [o for o in found if o.line == expected.line]
            got = "; ".join(str(o) for o in here) if here else "nothing on this line"
            wrong.append((expected.written, f"expected {expected}; got {got}{_advice(expected, here)}"))
            listed.add(expected.line)
            continue
        left.remove(match)
        if match.printed and match.printed not in printed:
            wrong.append((expected.written, f"{match} is not printed at its place: no `{match.printed.strip()}` "
                                            "in the text report"))
    for outcome in left:
        if outcome.kind != "pass" and outcome.line not in listed:
            wrong.append((outcome.line or 0, f"unexpected {outcome}"))
    for outcome in found:
        if outcome.kind == "error" and _INTERNAL.search(outcome.words):  # words, never the grammar's names
            wrong.append((outcome.line or 0, f"{outcome} shows the grammar's internal names"))
        if outcome.hint and not outcome.words.endswith(outcome.hint):  # the mistake is said where it is read
            wrong.append((outcome.line or 0, f"{outcome} does not say the mistake it fits: {outcome.hint}"))
    located = [(o.line, o.column) for o in found if o.kind == "error" and o.line is not None]
    if located != sorted(located):
        wrong.append((case.first_line, f"errors are not reported in document order: {located}"))
    return sorted(wrong, key=lambda item: item[0])


def _meets(outcome: Outcome, expected: Expectation) -> bool:
    if outcome.line != expected.line or (expected.column is not None and outcome.column != expected.column):
        return False
    if expected.tag is not None and outcome.tag != expected.tag:
        return False
    if not all(piece in outcome.words for piece in expected.fragment.split(" ... ")):
        return False
    if expected.kind == "error":
        return outcome.kind == "error"
    if expected.kind in ("fail", "mistake"):
        return outcome.kind == "fail" and (outcome.hint is not None) == (expected.kind == "mistake")
    return outcome.kind == expected.kind


def _advice(expected: Expectation, here: list[Outcome]) -> str:
    if expected.kind == "fail" and any(o.kind == "fail" and o.hint for o in here):
        return " (the failure names a usual mistake: expect it with `# mistake: ...`)"
    if expected.kind == "mistake" and any(o.kind == "fail" and not o.hint for o in here):
        return " (no usual mistake fits this failure: expect it with `# fail: ...`)"
    return ""


def _line_of(problem: str) -> int:
    found = re.match(r"line (\d+)", problem)
    return int(found.group(1)) if found else 0


def _short(words: str) -> str:
    words = " ".join(words.split())
    return words if len(words) <= 160 else words[:157] + "..."


# --- pytest ---------------------------------------------------------------------------------------------------


def collect(parent, file_path: Path, folder: Path):
    """The hook's answer for `file_path`: a document of cases when it is a Markdown file in `folder`."""
    if file_path.suffix == ".md" and file_path.parent == folder:
        return DocumentFile.from_parent(parent, path=file_path)
    return None


class DocumentFile(pytest.File):
    """A document of cases: an item per gpu block (with the blocks that continue it)."""

    def collect(self):
        from gpuspec.api import read
        from gpuspec.diagnostics import SpecError

        shown = _shown_path(self)
        try:
            source = attrs.evolve(read(self.path), path=shown)
        except SpecError as error:
            yield DocumentProblem.from_parent(self, name="document", problems=[str(d.span) + ": " + d.message
                                                                               for d in error.diagnostics])
            return
        found, problems = cases(source)
        if problems or not found:
            yield DocumentProblem.from_parent(self, name="document",
                                              problems=problems or ["no ```gpu blocks: a document of cases holds some"],
                                              shown=shown)
        for case in found:
            yield DocumentItem.from_parent(self, name=case.name, case=case, source=source)


def _shown_path(node) -> str:
    """The document's path as a user at the root of the project names it."""
    try:
        return node.path.relative_to(node.config.rootpath).as_posix()
    except ValueError:
        return str(node.path)


class CaseFailed(Exception):
    """A case's outcomes differ from what its comments expect."""


class DocumentItem(pytest.Item):
    def __init__(self, *, case: Case, source: SpecText, **kwargs):
        super().__init__(**kwargs)
        self.case, self.source = case, source

    def runtest(self) -> None:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("XDG_CACHE_HOME", _private_cache(self.config))  # never the user's own cache
            found, printed = outcomes(self.source, self.case)
        wrong = mismatches(self.case, found, printed)
        if wrong:
            raise CaseFailed(wrong, printed)

    def repr_failure(self, excinfo, style=None):
        if not isinstance(excinfo.value, CaseFailed):
            return super().repr_failure(excinfo, style)
        wrong, printed = excinfo.value.args
        lines = [f"{self.source.path}:{line}: {words}" for line, words in wrong]
        lines += ["", "gpuspec check printed:", *("    " + line for line in printed.rstrip("\n").split("\n")),
                  "", f"rerun this case: pytest '{self.nodeid}'"]
        return "\n".join(lines)

    def reportinfo(self):
        return self.path, self.case.first_line - 1, f"{self.source.path}:{self.case.first_line}: {self.name}"


class DocumentProblem(pytest.Item):
    """What is wrong with a document as a whole (a near miss of a gpu block, a hidden block, no blocks)."""

    def __init__(self, *, problems: list[str], shown: str = "", **kwargs):
        super().__init__(**kwargs)
        self.problems, self.shown = problems, shown

    def runtest(self) -> None:
        raise CaseFailed(self.problems)

    def repr_failure(self, excinfo, style=None):
        if not isinstance(excinfo.value, CaseFailed):
            return super().repr_failure(excinfo, style)
        return "\n".join(f"{self.shown}: {p}" if self.shown else p for p in self.problems)

    def reportinfo(self):
        return self.path, 0, f"{self.shown or self.path}: the document"


_CACHE = pytest.StashKey[str]()


def _private_cache(config) -> str:
    """A cache folder of the test run's own (private, removed at the end), so that cases never touch the user's."""
    folder = config.stash.get(_CACHE, None)
    if folder is None:
        folder = tempfile.mkdtemp(prefix="gpuspec-cases-")  # made 0700, as gpuspec requires of its folder
        config.stash[_CACHE] = folder
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    return folder

