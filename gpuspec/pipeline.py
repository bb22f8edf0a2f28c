"""Paths -> Report: find spec files, then parse, resolve and check each one; and the data `explain` prints."""
from __future__ import annotations

import contextlib
import gc
import re
from pathlib import Path
from typing import TYPE_CHECKING

from gpuspec import model
from gpuspec.check import Evidence, Verdict, check
from gpuspec.diagnostics import Diagnostic, SpecError
from gpuspec.model.expressions import evaluate
from gpuspec.program import Claim, Program
from gpuspec.record import Record, record
from gpuspec.report import Report
from gpuspec.resolve import resolve
from gpuspec.text import Span, SpecText, UnreadableText, decode, escaped, read_spec, undecoded

if TYPE_CHECKING:
    from gpuspec.report.explain import Explanation

SPEC_SUFFIX = ".gpu"
MARKDOWN_SUFFIXES = (".md", ".markdown")


def spec_files(paths: list[str]) -> tuple[list[Path], list[Diagnostic]]:
    """The spec files named by `paths`: files as given, and every *.gpu below a folder, sorted.

    A file is named once, however often and by whatever spelling it is reached (`d/a.gpu`, `d/../d/a.gpu`,
    a symlink to it, another hard link): the first spelling is kept.
    """
    found: list[Path] = []
    errors: list[Diagnostic] = []
    for given in paths:
        path = Path(given)
        if given == "-":
            found.append(path)
        elif path.is_dir():
            candidates = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in (SPEC_SUFFIX,
                                                                                            *MARKDOWN_SUFFIXES))
            found.extend(p for p in candidates if p.suffix == SPEC_SUFFIX or _mentions_gpu(p))
        elif path.is_file():
            found.append(path)
        else:
            errors.append(Diagnostic("no-such-path", f"no such file or folder: {escaped(given)}", None,
                                     "give a .gpu file or a folder that holds some"))
    unique: dict[object, Path] = {}
    for path in found:
        unique.setdefault(file_identity(path), path)
    return list(unique.values()), errors


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

    try:
        return markdown.mentions_gpu(undecoded(path.read_bytes()))
    except OSError:
        return False


def read(path: str | Path) -> SpecText:
    """The text of a spec file (`-` is standard input), or the gpu blocks of a Markdown file (with the whole
    document, and warnings for near misses), read the one way every command reads spec text.
    Raises SpecError if it cannot be read as text."""
    try:
        if str(path) == "-":
            source = _stdin()
        else:
            source = read_spec(path)
            if Path(path).suffix in MARKDOWN_SUFFIXES:
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


# Characters some editors and viewers show as a line break, and spec text does not: `# note<U+2028>device A100`
# would look like two lines and be one comment. Refused in spec text (Markdown prose may hold them).
_SEPARATORS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _line_separators(source: SpecText) -> list[Diagnostic]:
    if not _SEPARATORS.search(source.text):
        return []
    found = []
    shift = source.column_offsets or {}
    for index, line in enumerate(source.text.split("\n")):
        for match in _SEPARATORS.finditer(line):
            number = index + 1 + source.line_offset
            column = match.start() + 1 + shift.get(index + 1, 0)
            found.append(Diagnostic(
                "line-separator", f"`{escaped(match.group())}` is not a line break here, though some editors show one",
                Span(source.path, number, column, number, column + 1),
                "write a plain line break (or a space) instead"))
    return found


def load(path: str | Path) -> tuple[SpecText, Program]:
    """Read, parse and resolve one spec file. Raises SpecError for invalid input."""
    source = read(path)
    return source, compile_text(source)


def _document(path, source: SpecText) -> str:
    """The text errors are shown against: the whole document for Markdown, else the spec itself."""
    return source.document if source.document is not None else source.text


def _undecoded(path: Path) -> str:
    try:
        return undecoded(path.read_bytes())
    except OSError:
        return ""


def _stdin() -> SpecText:
    import sys

    return decode(sys.stdin.buffer.read(), "<stdin>").spec()


def compile_text(source: SpecText) -> Program:
    """Parse and resolve one spec's text. Raises SpecError for invalid input."""
    try:
        return resolve(_parse(source))
    except RecursionError:
        raise SpecError([_too_deep(source)]) from None


def _parse(source: SpecText):
    """The spec's nodes: from the cache when its text has been parsed before, else parsed (and cached)."""
    from gpuspec import cache

    spec = cache.load(source)
    if spec is None:
        from gpuspec.parse import parse  # Lark is imported only when a spec has changed: start-up time

        spec = parse(source)  # a SpecError (invalid input) is not cached: it is reported every time
        cache.store(source, spec)
    return spec


def _too_deep(source: SpecText) -> Diagnostic:
    # Point at the line with the most nesting and operators: the one that exhausted the stack.
    lines = source.text.split("\n")
    index = max(range(len(lines)), key=lambda i: sum(lines[i].count(c) for c in "()+-*/^"))
    line = index + 1 + source.line_offset
    return Diagnostic("too-deep", "this expression is nested too deeply or is too long to check",
                      Span(source.path, line, 1, line, len(lines[index]) + 1),
                      "split it into named values of a few hundred operations each")


def check_text(text: str, path: str = "<spec>") -> Report:
    """Check the claims of one spec given as text (for tests and embedding)."""
    source = SpecText(path, text)
    try:
        program = compile_text(source)
    except SpecError as error:
        return Report([], error.diagnostics, [path], {path: source.text})
    verdicts, errors = check(program)
    return Report(verdicts, errors, [path], {path: source.text})


@record
class Sources(Record):
    """Which sources beside the model a run checks against, and where their numbers come from."""

    measure: object | None = None        # gpuspec.measure.Options: measure with harnesses now
    results: tuple[str, ...] = ()        # results files to check against
    profile: str | None = None           # a calibration profile
    save_results: str | None = None      # where to save what was measured
    require_measure: bool = False
    progress: object | None = None       # called with a line of text as each spec is measured


def run_check(paths: list[str], sources: Sources | None = None) -> Report:
    """Check every claim in the spec files under `paths` against the model, and the other sources asked for."""
    with _no_cyclic_gc():
        return _run_check(paths, sources or Sources())


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


def _run_check(paths: list[str], sources: Sources) -> Report:
    files, diagnostics = spec_files(paths)
    texts: dict[str, str] = {}
    programs: list[tuple[str, Program]] = []
    warnings: list[Diagnostic] = []
    for path in files:
        try:
            source = read(path)
            texts[source.path] = _document(path, source)
            warnings.extend(source.warnings)
            programs.append((source.path, compile_text(source)))
        except SpecError as error:
            diagnostics.extend(error.diagnostics)
            if str(path) not in texts:  # bytes that are not UTF-8: show the line as best it decodes
                texts[str(path)] = _undecoded(path)
    stop = None
    try:
        evidence, problems = _evidence(programs, sources)
    except _MeasuringInterrupted as interrupted:
        evidence, problems, stop = interrupted.evidence, interrupted.problems, interrupted.stop
    diagnostics.extend(problems)
    verdicts: list[Verdict] = []
    for _, program in programs:
        found, errors = check(program, evidence)
        verdicts.extend(found)
        diagnostics.extend(errors)
    report = Report(verdicts, diagnostics, [str(f) for f in files], texts, warnings, paths)
    if stop is not None:
        raise Interrupted(report, f"measured {stop.done} of {stop.files} spec file{'s' * (stop.files != 1)}; "
                                  "the claims of the others were not measured")
    return report


def evidence(programs: list[tuple[str, Program]], sources: Sources) -> tuple[Evidence, list[Diagnostic]]:
    """The calibrated and measured sources of a run, for what shows them beside the model (pictures)."""
    return _evidence(programs, sources)


def _evidence(programs: list[tuple[str, Program]], sources: Sources) -> tuple[Evidence, list[Diagnostic]]:
    """The calibrated and measured sources of a run: load what was given, measure what was asked for."""
    if not (sources.profile or sources.measure is not None or sources.results):
        return Evidence(None, None, sources.require_measure), []  # the model alone: nothing more to import
    from gpuspec import calibrate, measure, results
    from gpuspec.sources import Calibrated, Measured

    problems: list[Diagnostic] = []
    calibrated = interrupted = None
    if sources.profile:
        try:
            calibrated = Calibrated(calibrate.load(sources.profile))
        except calibrate.ProfileError as error:
            problems.append(Diagnostic("bad-profile", str(error), Span(sources.profile, 1, 1, 1, 1)))
    measured = None
    if sources.measure is not None or sources.results:
        found: list = []
        for path in sources.results:
            try:
                found.extend(results.load(path))
            except results.ResultsError as error:
                problems.append(Diagnostic("bad-results", str(error), Span(path, 1, 1, 1, 1)))
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


def explain(path: str, line: int | None = None) -> list[Explanation]:
    """Every metric of each workload in the file (or on `line`), and the value behind each direct claim."""
    from gpuspec.report.explain import Explanation  # what `explain` prints; `check` does without it
    _, program = load(path)
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
    return sorted(found, key=lambda e: (e.span.line, e.span.column))


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
