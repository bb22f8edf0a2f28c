"""gpuspec's application API: load specs -> check them with evidence -> a Report; and explain, format and update.

Every way in (the command line, the pytest plugin, pictures and reports, a Python program) goes through these
functions, so a spec is read, resolved and checked the same way everywhere:

    specs = load_specs(["specs/"])                      # every spec file found, and the errors of those that fail
    report = check_specs(specs, Sources(profile="h100.json", results=("run.json",)))
    report.exit_code, report.verdicts                   # or run_check(paths, sources) for both steps

`load_spec(path)` reads one file (SpecError if it does not load); `check_text(text)` checks spec text given as
a string; `explain(path, line)` is what `gpuspec explain` prints; `format_file(path)` and `update_failing(report)`
rewrite specs (`gpuspec fmt`, `gpuspec check --update`). Spec text is read by `read` (through gpuspec.text) and
nowhere else.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from attrs import evolve, field

from gpuspec import model
from gpuspec.diagnostics import Diagnostic, PartlyRead, SpecError
from gpuspec.model.expressions import evaluate
from gpuspec.program import Claim, Defaults, Program
from gpuspec.record import Record, as_tuple, record
from gpuspec.report import Rebinding, Report
from gpuspec.resolve import resolve, semantic_errors
from gpuspec.text import (
    SEPARATOR_HELP,
    FileText,
    Span,
    SpecText,
    UnreadableText,
    decode,
    escaped,
    line_separators,
    read_file,
    read_leniently,
    read_spec,
)
from gpuspec.verdicts import Evidence, Verdict, check

if TYPE_CHECKING:
    from collections.abc import Callable

    from gpuspec.devices import Device
    from gpuspec.measure import Options
    from gpuspec.report.explain import Explanation

__all__ = [
    "MARKDOWN_SUFFIXES", "SPEC_SUFFIX", "Formatted", "Interrupted", "Search", "Sources", "Spec", "Specs", "TargetError",
    "Updated", "check_specs", "check_text", "compile_text", "explain", "explain_program", "file_identity",
    "format_file", "found_spec_files", "gather_evidence", "glob_problem", "line_problem", "load_rebound",
    "load_spec", "load_specs", "read", "run_check", "spec_files", "split_target", "text_specs", "update_failing",
    "workload_label",
]

SPEC_SUFFIX = ".gpu"
MARKDOWN_SUFFIXES = (".md", ".markdown")


def spec_files(paths: list[str], search: Search | None = None) -> tuple[list[Path], list[Diagnostic]]:
    """The spec files named by `paths`: files as given, and every *.gpu below a folder (and Markdown file that
    holds gpu blocks, unless `search` leaves Markdown out), sorted; `search.exclude` skips what a folder holds,
    never a file named. What is wrong (a path that names nothing, a folder that cannot be read) is each an error.
    Hidden folders (`.git`, `.cache`), virtual environments (a folder with a pyvenv.cfg) and node_modules are not
    searched, unless named.

    A file is named once, however often and by whatever spelling it is reached (`d/a.gpu`, `d/../d/a.gpu`,
    a symlink to it, another hard link): the first spelling is kept.
    """
    files, errors, _ = found_spec_files(paths, search)
    return files, errors


def found_spec_files(paths: list[str], search: Search | None = None) \
        -> tuple[list[Path], list[Diagnostic], list[Diagnostic]]:
    """spec_files, and the warnings of the search: a folder named that the excludes skip whole."""
    import os
    import stat

    search = search or Search()
    found: list[Path] = []
    errors: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    for given in paths:
        path = Path(given)
        if given == "-":
            found.append(path)
            continue
        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError) as error:  # ValueError: a NUL in the name
            missing = isinstance(error, (FileNotFoundError, NotADirectoryError, ValueError))
            reason = "no such file or folder" if missing else f"cannot be looked at ({error.strerror or error})"
            errors.append(Diagnostic("no-such-path", f"{reason}: {escaped(given)}{search.written_in(given)}",
                                     search.place_of(given), "give a .gpu file or a folder that holds some"))
            continue
        if not stat.S_ISDIR(mode):
            found.append(path)
            continue
        pattern = search.excluding(path)
        if pattern is not None:
            warnings.append(Diagnostic(
                "excluded", f"{escaped(given)} is not searched: {search.exclude_from} excludes it "
                            f"(`{escaped(pattern)}`)", search.exclude_at,
                "a file named is still checked: name its files, or leave the folder out of the excludes"))
            continue
        found.extend(_searched(path, search, errors))
    unique: dict[object, Path] = {}
    for path in found:
        unique.setdefault(file_identity(path), path)
    return list(unique.values()), errors, warnings


_NOT_SEARCHED = ("node_modules",)  # besides hidden folders and virtual environments


def _searched(folder: Path, search: Search, errors: list[Diagnostic]) -> list[Path]:
    """The spec files below `folder` (sorted), walked once: hidden folders, virtual environments, node_modules and
    what the excludes name are not entered; a folder that cannot be read is an error, and the walk goes on."""
    import os

    suffixes = (SPEC_SUFFIX, *MARKDOWN_SUFFIXES) if search.markdown else (SPEC_SUFFIX,)

    def unreadable(error: OSError) -> None:
        name = error.filename if error.filename is not None else folder
        errors.append(Diagnostic("unreadable-folder", f"cannot read the folder {escaped(os.fsdecode(name))}: "
                                 f"{error.strerror or error}; what it holds is not checked", None,
                                 "let gpuspec read it, or leave it out with `exclude` of [tool.gpuspec] (or "
                                 "--exclude)"))

    candidates: list[Path] = []
    for root, folders, names in os.walk(folder, onerror=unreadable):
        here = Path(root)
        folders[:] = [name for name in folders if not _left_alone(here / name) and not search.excludes(here / name)]
        for name in names:
            path = here / name
            if path.suffix not in suffixes or search.excludes(path):
                continue
            if path.suffix != SPEC_SUFFIX and not search.reads_markdown(path):
                continue
            try:
                if not path.is_file():  # a folder named *.gpu, a broken link
                    continue
            except OSError:  # there, but it cannot be looked at: reading it says why
                pass
            candidates.append(path)
    candidates.sort()
    return [p for p in candidates if p.suffix == SPEC_SUFFIX or _mentions_gpu(p)]


def _left_alone(folder: Path) -> bool:
    """A folder a search does not enter unless it is named: hidden (`.git`, `.venv`, `.cache`), a virtual
    environment (it holds a pyvenv.cfg: `venv`, `env`), or node_modules."""
    if folder.name.startswith(".") or folder.name in _NOT_SEARCHED:
        return True
    try:
        return (folder / "pyvenv.cfg").is_file()
    except OSError:
        return False


class TargetError(ValueError):
    """A `FILE:LINE` whose LINE is no line number: the message names what was given and what a FILE:LINE is."""


_LINE_NUMBER = re.compile(r"(?P<file>.+):(?P<line>[0-9]+)", re.S)  # ASCII digits: `²` is no line number


def split_target(target: str) -> tuple[str, int | None]:
    """`FILE[:LINE]` as explain, harness and plot take it: the file and the line asked for (None: the whole file).
    A path that is there is a file whatever colons it holds; otherwise what follows the last colon of a file that
    is there (or of `-`, standard input) must be a line number: TargetError when it is not (`a.gpu:abc`,
    `a.gpu:`, `a.gpu:-1`)."""
    import os

    found = _LINE_NUMBER.fullmatch(target)
    if found:
        return found["file"], int(found["line"])
    head, colon, tail = target.rpartition(":")
    if colon and head and not os.path.lexists(target) and (head == "-" or os.path.lexists(head)):
        example = f"FILE:LINE, such as {escaped(head)}:1"
        if not tail:
            raise TargetError(f"{escaped(target)}: the line number is missing after the `:` ({example})")
        raise TargetError(f"{escaped(target)}: LINE must be a line number, 1 or more ({example}), not "
                          f"`{escaped(tail)}`")
    return target, None


def line_problem(path: str, line: int | None, lines: int, program: Program | None = None,
                 claims: bool = False) -> Diagnostic | None:
    """What is wrong with `FILE:LINE` as explain, harness and plot read it, in the words each says it (the one
    rule; None when nothing is): line 0, a line past the end of a file of `lines` lines, a line with no workload on
    it in `program` (nor a claim, where `claims` says a claim alone will do: explain). Located at the nearest line
    the file has."""
    from gpuspec.text import past_the_end

    if line is None:
        return None
    place = min(max(line, 1), max(lines, 1))
    where = Span(str(path), place, 1, place, 1)
    if line < 1:
        return Diagnostic("no-such-line", f"{escaped(str(path))}:{line}: lines are numbered from 1", where,
                          f"give a line from 1 to {lines}" if lines else "the file is empty")
    beyond = past_the_end(str(path), line, lines)
    if beyond is not None:
        return Diagnostic("no-such-line", beyond, where, None)
    if program is None:
        return None
    workloads = [(span, text) for span, text, _ in program.workloads]
    if any(span.line <= line <= span.end_line for span, _ in workloads):
        return None
    if claims and any(claim.span.line == line for claim in program.claims):
        return None
    if not workloads:
        hint = "the file has no workloads"
    else:
        shown = ", ".join(f"{span.line} ({workload_label(text)})" for span, text in workloads[:8])
        hint = f"the workloads are on line{'s' * (len(workloads) > 1)} {shown}{', …' if len(workloads) > 8 else ''}"
    return Diagnostic("nothing-on-line", f"{escaped(str(path))}:{line}: no workload on this line; {hint}", where,
                      None)


_LABEL_LENGTH = 28  # as a picture's labels are cut (plot.data.LABEL_LENGTH)


def workload_label(text: str) -> str:
    """The short label of a workload's statement: its name (`y = x * 2:` -> `y`), else the workload as written
    (cut at 28 characters); what a picture labels it with."""
    named = re.match(r"\s*([A-Za-z_]\w*)\s*=(?!=)", text)
    if named:
        return named.group(1)
    shown = re.split(r"\s+is\s+", text.strip().rstrip(":"), maxsplit=1)[0].strip()
    return escaped(shown if len(shown) <= _LABEL_LENGTH else shown[:_LABEL_LENGTH - 1].rstrip() + "…")


@record
class Search(Record):
    """How folders are searched for specs: whether their Markdown files are read for gpu blocks (all of them, or
    those `markdown_globs` match, relative to `markdown_root`), and the glob patterns of files and folders to skip,
    relative to `root`. A pattern matches a file's path from its root or any folder above the file (`drafts`
    skips all below drafts/); `*` crosses `/`, and `**/` also stands for no folder at all (`docs/**/*.md` matches
    docs/a.md)."""

    markdown: bool = True
    exclude: tuple[str, ...] = field(default=(), converter=as_tuple)
    root: str = "."
    stdin_name: str = "<stdin>"  # what `-` is called (`--stdin-filename`): a .md name reads it as Markdown
    markdown_globs: tuple[str, ...] = field(default=(), converter=as_tuple)  # none: every Markdown file
    markdown_root: str = "."
    exclude_from: str = "--exclude"  # where the exclude globs were given, in words
    exclude_at: Span | None = None   # ... and written, when in a file (the `exclude` key of [tool.gpuspec])
    # Where each path searched was written, when in a file (the `paths` key of [tool.gpuspec]): (path, place, words)
    placed: tuple[tuple[str, Span, str], ...] = field(default=(), converter=as_tuple)

    def excludes(self, path: Path) -> bool:
        return bool(self.exclude) and matches(path, self.exclude, self.root)

    def excluding(self, path: Path) -> str | None:
        """The first exclude glob that matches `path` (or a folder above it), or None."""
        return next((pattern for pattern in self.exclude if matches(path, (pattern,), self.root)), None)

    def place_of(self, path: str) -> Span | None:
        return next((place for given, place, _ in self.placed if given == path), None)

    def written_in(self, path: str) -> str:
        """` (paths of [tool.gpuspec])` where `path` was written in a file, else ''."""
        return next((f" ({words})" for given, _, words in self.placed if given == path), "")

    def reads_markdown(self, path: Path) -> bool:
        """Whether a Markdown file found in a folder is read for gpu blocks (a file named is always read)."""
        if not self.markdown:
            return False
        return not self.markdown_globs or matches(path, self.markdown_globs, self.markdown_root)


def matches(path: str | Path, patterns: Sequence[str], root: str = ".") -> bool:
    """Whether any of the glob `patterns` matches `path` (relative to `root`) or a folder above it."""
    import os

    relative = Path(os.path.relpath(path, root)).as_posix()
    parts = relative.split("/")
    # the file and each folder above it, from the root: never the root itself (`.`) nor a folder above it (`..`)
    within = ["/".join(parts[:n]) for n in range(1, len(parts) + 1) if parts[n - 1] not in (".", "..")]
    compiled = [_glob(pattern.rstrip("/")) for pattern in patterns]
    return any(glob.fullmatch(name) for name in within for glob in compiled)


@functools.lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern:
    """A shell glob as a regular expression: `*` and `**` any characters, `/` too (as fnmatch has it), `**/` also
    nothing (no folder), `?` one character, `[...]` a set (`[!...]` its complement). A malformed set (glob_problem)
    stands for its characters."""
    return re.compile(_translated(pattern)[0], re.S)


def glob_problem(pattern: str) -> str | None:
    """What keeps `pattern` from being a glob as excludes and Markdown patterns take them, in words (None: it is
    one): an empty pattern, a `[` that no `]` closes, a set with nothing in it or a range that runs backwards."""
    if not pattern.strip("/"):
        return "an empty pattern matches nothing (`drafts`, `docs/**/*.md`)"
    return _translated(pattern)[1]


def _set_end(pattern: str, at: int) -> int | None:
    """Where the set that opens at `pattern[at]` (a `[`) closes, as a shell reads it (a `]` first in the set, after
    `[` or `[!`, is one of its characters), or None when nothing closes it."""
    first = at + 1 + (pattern[at + 1:at + 2] == "!")
    end = pattern.find("]", first + 1)
    return end if end != -1 else None


def _translated(pattern: str) -> tuple[str, str | None]:
    """The regular expression of a glob, and what is wrong with the glob (None when nothing is)."""
    out, at, problem = [], 0, None
    while at < len(pattern):
        if pattern.startswith("**/", at):
            out.append("(?:.*/)?")
            at += 3
        elif pattern[at] == "*":
            out.append(".*")
            at += 2 if pattern.startswith("**", at) else 1
        elif pattern[at] == "?":
            out.append(".")
            at += 1
        elif pattern[at] == "[" and _set_end(pattern, at) is not None:
            end = _set_end(pattern, at)
            body = re.sub(r"([\\\[&~|])", r"\\\1", pattern[at + 1:end])  # no nested set or set operation
            body = "^" + body[1:] if body.startswith("!") else body.replace("^", "\\^", 1)
            try:
                re.compile(f"[{body}]")
            except re.error:  # `[z-a]`: not a set, so the characters themselves
                problem = problem or f"`{pattern[at:end + 1]}` is no set of characters: a range in it runs backwards"
                out.append(re.escape("["))
                at += 1
                continue
            out.append(f"[{body}]")
            at = end + 1
        else:
            if pattern[at] == "[":
                problem = problem or (f"the `[` at character {at + 1} opens a set of characters that no `]` closes "
                                      "(`[[]` matches a `[` itself)")
            out.append(re.escape(pattern[at]))
            at += 1
    return "".join(out), problem


def file_identity(path: str | Path) -> object:
    """What names one file, whatever the spelling: its device and inode (so hard links are one file), else its
    resolved path."""
    import os

    if str(path) == "-":
        return "-"
    try:
        found = os.stat(path)
        return (found.st_dev, found.st_ino)
    except OSError:
        return os.path.realpath(path)


def _mentions_gpu(path: Path) -> bool:
    """Whether a Markdown file holds gpu blocks, or near misses worth a warning (so that a folder's other
    documents are left alone)."""
    from gpuspec import markdown

    return markdown.mentions_gpu(read_leniently(path))  # '' (no gpu blocks) if it cannot be read


def read(path: str | Path, stdin_name: str = "<stdin>") -> SpecText:
    """The text of a spec file (`-` is standard input, called `stdin_name`), or the gpu blocks of a Markdown file
    (with the whole document, and warnings for near misses), read the one way every command reads spec text.
    Raises SpecError if it cannot be read as text."""
    try:
        name = stdin_name if str(path) == "-" else str(path)
        if str(path) == "-":
            source = _stdin(stdin_name)
        else:
            source = read_spec(path)
        if Path(name).suffix in MARKDOWN_SUFFIXES:
            from gpuspec import markdown

            source = markdown.extract(source.path, source.text)
    except UnreadableText as error:
        span = Span(error.path, error.line, error.column, error.line, error.column + 1)
        raise SpecError([Diagnostic("unreadable", error.reason, span)]) from None
    except OSError as error:
        span = Span(str(path), 1, 1, 1, 1)
        raise SpecError([Diagnostic("unreadable", f"cannot read the file: {error.strerror or error}", span)]) from None
    separators = _line_separators(source)
    if separators:
        raise SpecError(separators)
    return source


def _line_separators(source: SpecText) -> list[Diagnostic]:
    return [Diagnostic("line-separator", message, span, SEPARATOR_HELP) for span, message in line_separators(source)]


@record
class Spec(Record):
    """One spec file read, parsed and resolved: its text (for a Markdown file, its gpu blocks) and its program."""

    source: SpecText
    program: Program

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def document(self) -> str:
        """The text errors are shown against: the whole document for Markdown, else the spec itself."""
        return _document(self.source)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        """Blocks of a Markdown file that were nearly gpu blocks: said, with the fix; they change no verdict."""
        return self.source.warnings


def load_spec(path: str | Path, defaults: Defaults | None = None, device: Device | None = None) -> Spec:
    """Read, parse and resolve one spec file (`-` is standard input), with the run's defaults if any, rebound to
    `device` if given (`check --device`). Raises SpecError for invalid input."""
    source = read(path)
    return Spec(source, compile_text(source, defaults, device))


def _document(source: SpecText) -> str:
    return source.document if source.document is not None else source.text


def _stdin(name: str = "<stdin>") -> SpecText:
    return _stdin_file(name).spec()


def _stdin_file(name: str) -> FileText:
    import sys

    return decode(sys.stdin.buffer.read(), name)


def compile_text(source: SpecText, defaults: Defaults | None = None, device: Device | None = None) -> Program:
    """Parse and resolve one spec's text (with the run's defaults, if any), rebound to `device` if given (`check
    --device`). Raises SpecError for invalid input."""
    try:
        try:
            spec = _parse(source)
        except PartlyRead as unread:
            raise SpecError(_every_error(source, unread, defaults, device)) from None
        return resolve(spec, defaults, device)
    except RecursionError:
        raise SpecError([_too_deep(source)]) from None


def _every_error(source: SpecText, unread: PartlyRead, defaults: Defaults | None,
                 device: Device | None) -> list[Diagnostic]:
    """The errors of a spec that did not all parse: its syntax errors, and the semantic errors of what did parse
    (without those of the claim lines that did not parse, which were stood in for). No claim of it is checked."""
    errors = list(unread.diagnostics)
    spec = unread.partial
    if spec is None:
        return errors
    if source.prose:
        from gpuspec import prose

        try:
            spec = prose.with_claims(spec, source)
        except SpecError as more:
            errors.extend(more.diagnostics)
    errors.extend(error for error in semantic_errors(spec, defaults, device)
                  if error.span is None or error.span.line not in unread.placeholders)
    return errors


def _parse(source: SpecText):
    """The spec's nodes: from the cache when its text has been parsed before, else parsed (and cached); a
    document's number checks (`5.53 ms<!-- gpu: ≈ launches.time -->`) after its blocks' statements."""
    from gpuspec import cache

    spec = cache.lookup(source)
    if spec is None:
        from gpuspec.parse import parse  # the parser's tables load only when a spec has changed: start-up time

        spec = parse(source)  # a SpecError (invalid input) is not cached: it is reported every time
        cache.store(source, spec)
    if source.prose:
        from gpuspec import prose

        spec = prose.with_claims(spec, source)
    return spec


def _too_deep(source: SpecText) -> Diagnostic:
    # Point at the line with the most nesting and operators: the one that exhausted the stack.
    lines = source.text.split("\n")
    index = max(range(len(lines)), key=lambda i: sum(lines[i].count(c) for c in "()+-*/^"))
    line = index + 1 + source.line_offset
    return Diagnostic("too-deep", "this expression is nested too deeply or is too long to check",
                      Span(source.path, line, 1, line, len(lines[index]) + 1),
                      "split it into named values of a few hundred operations each")


@record
class Sources(Record):
    """Which sources beside the model a run checks against, and where their numbers come from."""

    measure: Options | None = None       # measure with harnesses now, so
    results: tuple[str, ...] = ()        # results files to check against
    profile: str | None = None           # a calibration profile
    save_results: str | None = None      # where to save what was measured
    require_measure: bool = False        # a measured claim that cannot be measured fails rather than skips
    progress: Callable[[str], None] | None = None  # called with a line of text as each spec is measured
    device: str | None = None            # `--device`: rebind every spec to this catalog device, or `auto`
    # Where a profile or results file was named, when in a file (a key of [tool.gpuspec]): (path, place, words)
    placed: tuple[tuple[str, Span, str], ...] = field(default=(), converter=as_tuple)

    def place_of(self, path: str) -> tuple[Span, str]:
        """Where `path` was named and in what words (` (`profile` of [tool.gpuspec])`); else its own first line."""
        return next(((place, f" ({words})") for given, place, words in self.placed if given == path),
                    (Span(path, 1, 1, 1, 1), ""))


@record
class Specs(Record):
    """The spec files found under some paths: each one that loaded, and the errors of those that did not."""

    specs: tuple[Spec, ...] = field(converter=as_tuple)
    files: tuple[str, ...] = field(converter=as_tuple)              # every spec file found, loaded or not
    diagnostics: tuple[Diagnostic, ...] = field(converter=as_tuple)  # paths that name nothing; invalid files
    texts: dict[str, str] = field(factory=dict, repr=False)          # each file's text, to show an error's line
    warnings: tuple[Diagnostic, ...] = field(default=(), converter=as_tuple)  # near misses of gpu blocks
    paths: tuple[str, ...] = field(default=(), converter=as_tuple)  # the paths as given
    rebound: Rebinding | None = None  # the device `--device` rebound every spec to, and how it was chosen

    @property
    def programs(self) -> list[tuple[str, Program]]:
        """Each loaded spec's path and program, in file order."""
        return [(spec.path, spec.program) for spec in self.specs]


def load_specs(paths: Iterable[str], defaults: Defaults | None = None, search: Search | None = None,
               device: Device | None = None, rebound: Rebinding | None = None) -> Specs:
    """Every spec file under `paths` (see spec_files) read, parsed and resolved; a file that does not load
    gives its errors instead (the text shown beside them read as leniently as it decodes)."""
    paths = list(paths)
    with _no_cyclic_gc():
        files, diagnostics, warnings = found_spec_files(paths, search)
        texts: dict[str, str] = {}
        specs: list[Spec] = []
        for path in files:
            try:
                source = read(path, search.stdin_name if search else "<stdin>")
                texts[source.path] = _document(source)
                warnings.extend(source.warnings)  # said even when the blocks do not resolve
                specs.append(Spec(source, compile_text(source, defaults, device)))
            except SpecError as error:
                diagnostics.extend(error.diagnostics)
                if str(path) not in texts:  # bytes that are not UTF-8: show the line as best it decodes
                    texts[str(path)] = read_leniently(path)
        texts = _with_places(texts, (*diagnostics, *warnings))  # what is located in a pyproject.toml key too
        return Specs(specs, [str(f) for f in files], diagnostics, texts, warnings, paths, rebound)


def check_specs(specs: Specs, sources: Sources | None = None) -> Report:
    """Check every claim of the loaded specs against the model and the other sources asked for: a profile (the
    calibrated source), results files and measuring now (the measured one). A profile or results file that cannot
    be used is an error of the report, naming the file and what is wrong.

    Raises Interrupted (a KeyboardInterrupt that holds the report so far) on Ctrl-C while measuring."""
    sources = sources or Sources()
    with _no_cyclic_gc():
        diagnostics = list(specs.diagnostics)
        stop = None
        try:
            evidence, problems = _evidence(specs.programs, sources)
        except _MeasuringInterrupted as interrupted:
            evidence, problems, stop = interrupted.evidence, interrupted.problems, interrupted.stop
        diagnostics.extend(problems)
        verdicts: list[Verdict] = []
        for spec in specs.specs:
            found, errors = check(spec.program, evidence)
            verdicts.extend(found)
            diagnostics.extend(errors)
        measuring = sources.measure is not None or bool(sources.results)
        texts = _with_places(specs.texts, [p for p in problems if any(p.span == place for _, place, _ in
                                                                      sources.placed)])
        report = Report(verdicts, diagnostics, specs.files, texts, specs.warnings, specs.paths, measuring,
                        specs.rebound)
    if stop is not None:
        raise Interrupted(report, f"measured {stop.done} of {stop.files} spec file{'s' * (stop.files != 1)}; "
                                  "the claims of the others were not measured")
    return report


def _with_places(texts: dict[str, str], diagnostics: Iterable[Diagnostic]) -> dict[str, str]:
    """`texts` and the text of each file outside the specs that a diagnostic is located in (a pyproject.toml key),
    so that its line is shown under it."""
    added = dict(texts)
    for diagnostic in diagnostics:
        where = diagnostic.span.file if diagnostic.span is not None else None
        if where is not None and where not in added and where != "-":
            text = read_leniently(where)
            if text:
                added[where] = text
    return added


def run_check(paths: Iterable[str], sources: Sources | None = None, defaults: Defaults | None = None,
              search: Search | None = None) -> Report:
    """Check every claim in the spec files under `paths`: load_specs (rebound to the device `sources.device`
    names, if any), then check_specs."""
    sources = sources or Sources()
    paths = list(paths)
    device, rebound, refused = _rebinding(sources)
    if refused:  # a --device that names no device: nothing is checked for a device other than the one asked for
        return Report([], refused, [], {}, paths=paths)
    return check_specs(load_rebound(paths, sources, defaults, search), sources)


def load_rebound(paths: Iterable[str], sources: Sources | None = None, defaults: Defaults | None = None,
                 search: Search | None = None) -> Specs:
    """load_specs as run_check loads them: rebound to the device `sources.device` names, if any (`--device`), a
    spec that names no device being for it too; a device that cannot be had is the Specs' one error."""
    sources = sources or Sources()
    paths = list(paths)
    device, rebound, refused = _rebinding(sources)
    if refused:
        return Specs([], [], refused, {}, paths=paths)
    if device is not None:  # a spec that names no device is checked for the one asked for too
        defaults = evolve(defaults or Defaults(), device=device)
    return load_specs(paths, defaults, search, device, rebound)


def _rebinding(sources: Sources) -> tuple[Device | None, Rebinding | None, list[Diagnostic]]:
    """The device `--device` rebinds every spec to, and how it was chosen; or the error that says why there is
    none (an unknown name, with the close ones; auto without a GPU, or on a GPU the catalog lacks)."""
    if sources.device is None:
        return None, None, []
    from gpuspec import devices

    asked, gpu = sources.device, None
    try:
        if asked.strip().lower() != "auto":
            device = devices.rebinding_target(asked)
        elif sources.measure is None:
            raise devices.NoSuchDevice("--device auto rebinds the specs to the GPU that --measure runs on, and this "
                                       "run does not measure", "add --measure on a machine with a CUDA GPU, or name "
                                       "the device: --device H200 (`gpuspec devices` lists them)", "no-gpu")
        else:
            from gpuspec import measure

            names = measure.gpu_names(sources.measure)
            if not names:
                why = (measure.availability(sources.measure) or
                       "--harness-device cpu runs the kernels under the Triton interpreter, on no GPU")
                raise devices.NoSuchDevice(f"--device auto: no GPU was found to rebind the specs to: {why}",
                                           "measure on a machine with a CUDA GPU, or name the device: --device H200",
                                           "no-gpu")
            device, gpu = devices.found_gpu(names), names[0]
    except devices.NoSuchDevice as error:
        return None, None, [Diagnostic(error.code, error.message, None, error.help)]
    return device, Rebinding(device.name, device.title, escaped(asked), gpu), []




def check_text(text: str, path: str = "<spec>", sources: Sources | None = None,
               defaults: Defaults | None = None) -> Report:
    """Check the claims of one spec given as text (for tests and embedding), as run_check checks a file; a
    `path` ending in .md or .markdown reads the text as a Markdown document (its gpu blocks)."""
    return check_specs(text_specs(text, path, defaults), sources)


def text_specs(text: str, path: str = "<spec>", defaults: Defaults | None = None) -> Specs:
    """One spec given as text, loaded as load_specs loads a file: the spec, or its errors."""
    source = SpecText(path, text)
    if Path(path).suffix in MARKDOWN_SUFFIXES:
        from gpuspec import markdown

        source = markdown.extract(path, text)
    document = _document(source)
    try:
        separators = _line_separators(source)
        if separators:
            raise SpecError(separators)
        return Specs([Spec(source, compile_text(source, defaults))], [path], [], {path: document}, source.warnings)
    except SpecError as error:
        return Specs([], [path], error.diagnostics, {path: document}, source.warnings)


@contextlib.contextmanager
def _no_cyclic_gc():
    # Checking allocates many small objects and frees none until the end: the cyclic collector would
    # scan them again and again for nothing. Reference counting still frees what is dropped.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def gather_evidence(programs: Sequence[tuple[str, Program]],
                    sources: Sources) -> tuple[Evidence, list[Diagnostic]]:
    """The calibrated and measured sources for these (path, program) pairs, and what was wrong with a profile or
    results file given (for what shows the sources beside the model without checking: pictures)."""
    return _evidence(list(programs), sources)


def _evidence(programs: list[tuple[str, Program]], sources: Sources) -> tuple[Evidence, list[Diagnostic]]:
    """The calibrated and measured sources of a run: load what was given, measure what was asked for."""
    if not (sources.profile or sources.measure is not None or sources.results):
        return Evidence(None, None, sources.require_measure), []  # the model alone: nothing more to import
    from gpuspec import measure, profiles, results
    from gpuspec.sources import Calibrated, Measured

    problems: list[Diagnostic] = []
    calibrated = interrupted = None
    if sources.profile:
        try:
            calibrated = Calibrated(profiles.read_profile(sources.profile))
        except profiles.ProfileError as error:
            place, words = sources.place_of(sources.profile)
            problems.append(Diagnostic("bad-profile", f"{error}{words}", place))
    measured = None
    if sources.measure is not None or sources.results:
        found: list = []
        for path in sources.results:
            try:
                found.extend(results.read_results(path))
            except results.ResultsError as error:
                place, words = sources.place_of(path)
                problems.append(Diagnostic("bad-results", f"{error}{words}", place))
        reason = None
        if sources.measure is not None:
            reason = measure.availability(sources.measure)
            if reason is None:
                try:
                    fresh = measure.run_all(programs, sources.measure, sources.progress)
                except measure.Interrupted as stop:  # check what finished, then stop
                    fresh, interrupted = stop.finished, stop
                    found.extend(stop.stopped)
                found.extend(fresh)
                if sources.save_results:
                    try:
                        results.save(sources.save_results, fresh)
                    # a full disk (OSError), or a measurement a results file cannot hold (ResultsError): the
                    # results file as it was, and the run reported
                    except (OSError, results.ResultsError) as error:
                        problems.append(Diagnostic("cannot-save-results", str(error), None,
                                                   "the measurements were checked but not saved"))
        statements = {id(w): text for _, program in programs for _, text, w in program.workloads}
        measured = Measured(results.by_key(found), statements, reason if not found else None)
    if interrupted is not None:
        raise _MeasuringInterrupted(Evidence(calibrated, measured, sources.require_measure), problems, interrupted)
    return Evidence(calibrated, measured, sources.require_measure), problems


class _MeasuringInterrupted(KeyboardInterrupt):
    def __init__(self, evidence: Evidence, problems: list[Diagnostic], stop):
        super().__init__()
        self.evidence, self.problems, self.stop = evidence, problems, stop


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while measuring: `report` holds every claim checked against what had been measured by then."""

    def __init__(self, report: Report, note: str):
        super().__init__(note)
        self.report, self.note = report, note


def explain(path: str | Path, line: int | None = None, defaults: Defaults | None = None) -> list[Explanation]:
    """Every metric of each workload in the file (or on `line`), and the value behind each direct claim."""
    return explain_program(load_spec(path, defaults).program, line)


def explain_program(program: Program, line: int | None = None) -> list[Explanation]:
    """What explain shows, for a program already loaded."""
    from gpuspec.report.explain import Explanation  # what `explain` prints; `check` does without it
    found: list[Explanation] = []
    for span, text, workload in program.workloads:
        if line is not None and not span.line <= line <= span.end_line:
            continue
        values, errors = [], []
        try:
            estimate = model.estimate(workload)
            for name in estimate.names():
                try:
                    values.append(estimate[name])
                except model.ModelError as error:
                    errors.append(f"{name}: {error}")
        except RecursionError:
            values, errors = [], [TOO_DEEP_TO_EXPLAIN]
        title = f"{text}  [{workload.setting}]"
        found.append(Explanation(span, title, tuple(values), tuple(errors), _realistic(workload, values)))
    covered = {n for e in found for n in range(e.span.line, e.span.end_line + 1)}  # claims in a workload's block
    for claim in program.claims:
        if claim.span.line in covered or (line is not None and claim.span.line != line):
            continue
        found.append(_claim_explanation(claim))
    found = _with_verdicts(program, found, line)
    return sorted(found, key=lambda e: (e.span.line, e.span.column))


def _with_verdicts(program: Program, found: list[Explanation], line: int | None) -> list[Explanation]:
    """Each explanation with the model's verdict on the claims it covers (on `line` alone, where one was asked), in
    the words a failure uses: the digits that tell the value from the number written are shown."""
    from gpuspec.verdicts import describe

    def asked(item, claim) -> bool:  # a workload's first line asks for its whole block, a claim's line for itself
        inside = item.span.line <= claim.span.line <= item.span.end_line
        return inside and (line is None or line == item.span.line or claim.span.line == line)

    chosen = [c for c in program.claims if any(asked(item, c) for item in found)]
    if not chosen:
        return found
    verdicts, _ = check(evolve(program, claims=tuple(chosen)))
    out = []
    for item in found:
        mine = [v for v in verdicts if v.actual is not None and v.status != "skip" and asked(item, v.claim)]
        shown = tuple(f"{v.claim.span.line}:{v.claim.span.column} {v.status}"
                      f"{'' if v.source == 'model' else f' ({v.source})'}: "
                      f"{describe(v.actual, v.claim, v.status == 'pass')}" for v in mine)
        out.append(evolve(item, verdicts=shown) if shown else item)
    return out


def _realistic(workload, values) -> str | None:
    """`time` on a real device beside the ideal one: the workload by its device's published profile."""
    from gpuspec.sources import NotAvailable, Published

    ideal = next((v for v in values if v.name == "time"), None)
    if ideal is None:
        return None
    published = Published()
    try:
        real = published.estimate(workload)["time"]
        where = published.label(workload.device)
    except (NotAvailable, model.ModelError, ArithmeticError, RecursionError):
        return None
    return f"ideal {ideal.format()}; a real {workload.device.name}: ≈ {real.format()} ({where})"


TOO_DEEP_TO_EXPLAIN = "this expression is nested too deeply to explain: split it into named values"


def _claim_explanation(claim: Claim) -> Explanation:
    from gpuspec.report.explain import Explanation
    try:
        return Explanation(claim.span, claim.text, (evaluate(claim.subject, model.estimate),))
    except model.ModelError as error:
        return Explanation(claim.span, claim.text, (), (str(error),))
    except RecursionError:
        return Explanation(claim.span, claim.text, (), (TOO_DEEP_TO_EXPLAIN,))


# --- rewriting specs: `gpuspec fmt` and `gpuspec check --update` -------------------------------------------------

@record
class Formatted(Record):
    """A spec file as read and as formatted: `changed` says whether `write` would change it."""

    read: FileText
    text: str = field(repr=False)  # the formatted text, with the file's own line breaks

    @property
    def changed(self) -> bool:
        return self.text != self.read.written

    def write(self) -> None:
        """Write the formatted text back (its byte-order mark kept). files.WriteError, the file unchanged, if it
        changed since it was read or cannot be written."""
        from gpuspec.text import write_back

        write_back(self.read, self.text)


def format_file(path: str | Path) -> Formatted:
    """A spec file (or a Markdown file's gpu blocks) laid out the canonical way, read as `check` reads it.

    Raises fmt.FormatError, whose message names the file and says why, when it cannot be read, does not parse,
    or would say something else once formatted: the file is then left as it is."""
    from gpuspec import fmt

    shown = escaped(str(path))
    if str(path) == "-":
        raise fmt.FormatError("- (standard input) has no file to write back to; give the file's path")
    try:
        read = read_file(path)
    except OSError as error:
        raise fmt.FormatError(f"cannot read {shown}: {error.strerror or error}") from None
    except UnreadableText as error:
        raise fmt.FormatError(f"{shown}:{error.line}:{error.column}: {error.reason}; it was left as it is") from None
    if Path(path).suffix in MARKDOWN_SUFFIXES:
        return Formatted(read, fmt.format_markdown(read.written, str(path)))
    return Formatted(read, fmt.format_spec(read.written, str(path)))


def format_stdin(name: str = "<stdin>") -> Formatted:
    """Standard input laid out the canonical way, as format_file lays out a file called `name` (a .md name: its
    gpu blocks); nothing is written back. Raises fmt.FormatError as format_file does."""
    from gpuspec import fmt

    try:
        read = _stdin_file(name)
    except UnreadableText as error:
        raise fmt.FormatError(f"{escaped(name)}:{error.line}:{error.column}: {error.reason}") from None
    if Path(name).suffix in MARKDOWN_SUFFIXES:
        return Formatted(read, fmt.format_markdown(read.written, name))
    return Formatted(read, fmt.format_spec(read.written, name))


@record
class Updated(Record):
    """What update_failing did: claims rewritten, in how many files; the files it could not write, and why."""

    changed: int
    files: int
    refused: tuple[str, ...] = field(converter=as_tuple)  # a message per file not written
    refused_claims: int                                     # the claims in those files
    left: int                                               # failing claims with no number to write


def update_failing(report: Report) -> Updated:
    """Rewrite each failing claim's number in its file to the computed value, at the precision written. A file
    reached by two spellings is edited once; one that changed since it was checked is not written."""
    from gpuspec import update
    from gpuspec.files import WriteError

    edits = update.replacements(list(report.verdicts))
    by_file: dict[object, tuple[str, list]] = {}
    for path, file_edits in edits.items():
        if path != "<stdin>":
            found = by_file.setdefault(file_identity(path), (path, []))[1]
            found.extend(edit for edit in file_edits if edit not in found)
    changed, files, refused_claims, refused = 0, 0, 0, []
    for path, file_edits in by_file.values():
        try:
            changed += update.apply(path, file_edits, report.texts.get(path))
            files += 1
        except WriteError as error:
            refused.append(str(error))
            refused_claims += len(file_edits)
    left = report.count("fail") - changed - refused_claims
    return Updated(changed, files, refused, refused_claims, left)
