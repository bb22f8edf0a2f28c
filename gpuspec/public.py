"""The Python API at the package top: `gpuspec.check`, `gpuspec.explain` and what they return, typed and documented.

A thin face over gpuspec.api (the application API every command uses), for a program or a notebook:

    import gpuspec
    report = gpuspec.check(Path("specs/"), device="H100-SXM")
    for verdict in report:                  # every claim against every source
        print(verdict.status, verdict.claim, verdict.value, verdict.expected)
    report.errors                           # invalid input, each located: never raised

The contract: what is wrong with the *input* (a spec that does not parse or resolve, a path that names nothing,
an unknown device, a profile or results file that cannot be used) comes back located in `Report.errors` (and
`Explained.errors`), as the command line prints it; only a wrong *call* (an argument of the wrong type) raises
TypeError, and Ctrl-C while measuring raises api.Interrupted (a KeyboardInterrupt holding the report so far).

Nothing here imports lark, jinja2, torch or triton: lark words a syntax error (gpuspec runs the parser's tables
itself), and measuring (torch, triton) runs only when `sources` asks for it.
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Union

from gpuspec import api
from gpuspec.api import Sources
from gpuspec.diagnostics import Diagnostic

if TYPE_CHECKING:
    from gpuspec import report as report_module
    from gpuspec import verdicts as verdicts_module
    from gpuspec.report.explain import Explanation

__all__ = ["Error", "Explained", "Report", "Sources", "Verdict", "check", "explain"]

PathLike = Union[str, "os.PathLike[str]"]
Input = Union[str, "os.PathLike[str]", Sequence[PathLike]]
_TEXT_NAME = "<text>"


class Error:
    """One problem with the input: its code (`unknown-device`), words, where (file, line, column: None when it
    is about an argument rather than a file), and what would be right (`help`, or None)."""

    __slots__ = ("_diagnostic",)

    def __init__(self, diagnostic: Diagnostic):
        self._diagnostic = diagnostic

    @property
    def code(self) -> str:
        return self._diagnostic.code

    @property
    def message(self) -> str:
        return self._diagnostic.message

    @property
    def help(self) -> str | None:
        return self._diagnostic.help

    @property
    def file(self) -> str | None:
        span = self._diagnostic.span
        return span.file if span else None

    @property
    def line(self) -> int | None:
        span = self._diagnostic.span
        return span.line if span else None

    @property
    def column(self) -> int | None:
        span = self._diagnostic.span
        return span.column if span else None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}: " if self.file else ""
        return f"{where}error[{self.code}]: {self.message}" + (f" ({self.help})" if self.help else "")

    def __repr__(self) -> str:
        return f"<gpuspec.Error {self}>"


class Verdict:
    """One claim against one source (`model`, `calibrated`, `measured`): `status` is "pass", "fail" or "skip".

    `value` is the computed number in SI units (a string for a word such as `memory-bound`; None when skipped),
    `expected` the claim's number as written, `interval` the (low, high) the claim allows in the same SI units (the
    report's `± 10%: 18.0–22.0 µs`), `value_bounds` the value's own (low, high) (the number twice, unless the value
    is a range: a measured latency), `derivation` how the value was worked out, in words and numbers: a line a
    step, each input two spaces under the step that uses it."""

    __slots__ = ("_verdict",)

    def __init__(self, verdict: verdicts_module.Verdict):
        self._verdict = verdict

    @property
    def claim(self) -> str:
        return self._verdict.claim.text

    @property
    def file(self) -> str:
        return self._verdict.claim.span.file

    @property
    def line(self) -> int:
        return self._verdict.claim.span.line

    @property
    def column(self) -> int:
        return self._verdict.claim.span.column

    @property
    def metric(self) -> str:
        return self._verdict.claim.metric

    @property
    def comparator(self) -> str:
        return self._verdict.claim.comparator

    @property
    def expected(self) -> str:
        return self._verdict.claim.expected.written

    @property
    def tolerance(self) -> str | None:
        tolerance = self._verdict.claim.tolerance
        return tolerance.written if tolerance is not None else None

    @property
    def source(self) -> str:
        return self._verdict.source

    @property
    def status(self) -> str:
        return self._verdict.status

    @property
    def passed(self) -> bool:
        return self._verdict.status == "pass"

    @property
    def value(self) -> float | str | None:
        actual = self._verdict.actual
        return None if actual is None else actual.number

    @property
    def shown_value(self) -> str | None:
        """The value as the report prints it, with its unit (`20.0 µs`)."""
        actual = self._verdict.actual
        return None if actual is None else actual.format()

    @property
    def unit(self) -> str | None:
        """The SI unit `value` is in (`s`, `B/s`; '' for a count), or None when there is no value."""
        actual = self._verdict.actual
        if actual is None or actual.dimension is None:
            return None
        from gpuspec import units

        return units.si_symbol(actual.dimension)

    @property
    def interval(self) -> tuple[float, float] | None:
        """The values the claim allows, (low, high) in SI units as `value` is: `≈ 20 µs ± 10%` allows
        (18e-6, 22e-6), `62 waves` (61.5, 62.5) (what rounds to the digits written), `20–30 cycles` (19.5, 30.5);
        a bound is open on one side (`< 25 µs`: (-inf, 25e-6)); None for a word such as `memory-bound`. A value
        holds when it falls in it (a range, `value_bounds`, when it overlaps it for `=` and `≈`, and when all of
        it falls in it for a bound); whether an end itself does follows the comparator (`<` leaves it out)."""
        from gpuspec.verdicts import allowed

        return allowed(self._verdict.claim)

    @property
    def value_bounds(self) -> tuple[float, float] | None:
        """The value's own (low, high) in SI units: the number twice, unless the value is a range (a measured
        latency, `200–300 cycles`); None without a number (skipped, or a word)."""
        actual = self._verdict.actual
        if actual is None or isinstance(actual.number, str):
            return None
        return actual.bounds

    @property
    def message(self) -> str:
        """The value against the claim in words, or why it was skipped."""
        return self._verdict.message

    @property
    def derivation(self) -> str:
        actual = self._verdict.actual
        if actual is None:
            return ""
        from gpuspec.report.text import derivation

        return "\n".join(derivation(actual, depth=64))  # the whole tree: each input indented under its use

    @property
    def raw(self) -> verdicts_module.Verdict:
        """The application's verdict (gpuspec.verdicts.Verdict), for what this face does not show."""
        return self._verdict

    def __repr__(self) -> str:
        return (f"<gpuspec.Verdict {self.status} {self.source} {self.file}:{self.line} {self.claim!r}: "
                f"{self.shown_value}>")


class Report:
    """What `gpuspec.check` found: iterate it for the verdicts (one per claim and source), in file order.

    `errors` holds invalid input, located; `warnings` what changes no verdict (a fence nearly a gpu block);
    `exit_code` is what `gpuspec check` would exit with (0 all hold, 1 a claim fails, 2 invalid input, 5 nothing
    checked); `ok` is true when it would be 0. In a notebook it shows as a table."""

    __slots__ = ("_report",)

    def __init__(self, report: report_module.Report):
        self._report = report

    def __iter__(self) -> Iterator[Verdict]:
        return (Verdict(verdict) for verdict in self._report.verdicts)

    def __len__(self) -> int:
        return len(self._report.verdicts)

    @property
    def verdicts(self) -> list[Verdict]:
        return list(self)

    @property
    def failures(self) -> list[Verdict]:
        return [verdict for verdict in self if verdict.status == "fail"]

    @property
    def errors(self) -> list[Error]:
        return [Error(diagnostic) for diagnostic in self._report.diagnostics]

    @property
    def warnings(self) -> list[Error]:
        return [Error(diagnostic) for diagnostic in self._report.warnings]

    @property
    def files(self) -> tuple[str, ...]:
        return self._report.files

    @property
    def summary(self) -> dict[str, int]:
        """{"passed": ..., "failed": ..., "skipped": ..., "errors": ...}"""
        return self._report.summary

    @property
    def exit_code(self) -> int:
        return self._report.exit_code

    @property
    def ok(self) -> bool:
        return self._report.exit_code == 0

    @property
    def raw(self) -> report_module.Report:
        """The application's Report (gpuspec.report.Report), which every printer in gpuspec.report takes."""
        return self._report

    def format(self, format: str = "text", verbose: int = 0) -> str:
        """The report as `gpuspec check --format FORMAT` prints it: text, json, junit, markdown or github; the
        text one with `verbose` 1 as `-v` prints it (every claim, failures' whole derivation), 2 as `-vv`."""
        import importlib

        if format not in ("text", "json", "junit", "markdown", "github"):
            raise ValueError(f"unknown format {format!r}: text, json, junit, markdown or github")
        if format == "text":
            from gpuspec.report import text

            return text.render(self._report, verbose=verbose)
        return importlib.import_module(f"gpuspec.report.{format}").render(self._report)

    def __str__(self) -> str:
        return self.format("text")

    def __repr__(self) -> str:
        return f"<gpuspec.Report {self._report.summary_line()}, {len(self._report.diagnostics)} errors>"

    def _repr_html_(self) -> str:
        from gpuspec.report.notebook import table

        return table(self._report)


class Explained:
    """What `gpuspec.explain` found: each workload or claim with its values (iterate it), or the errors that kept
    the spec from loading. `str()` is what `gpuspec explain` prints."""

    __slots__ = ("_items", "_errors")

    def __init__(self, items: Sequence[Explanation], errors: Sequence[Diagnostic]):
        self._items, self._errors = list(items), list(errors)

    def __iter__(self) -> Iterator[Explanation]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def errors(self) -> list[Error]:
        return [Error(diagnostic) for diagnostic in self._errors]

    def __str__(self) -> str:
        from gpuspec import devices, llm_catalog
        from gpuspec.report import explain as printer

        if self._errors:
            return "\n".join(str(error) for error in self.errors) + "\n"
        return printer.render(self._items, {**devices.references(), **llm_catalog.references()})

    def __repr__(self) -> str:
        return f"<gpuspec.Explained {len(self._items)} items, {len(self._errors)} errors>"


def check(text_or_paths: Input | None = None, *, device: str | None = None, tolerance: str | None = None,
          sources: Sources | None = None, against: str | Sequence[str] | None = None, name: str = _TEXT_NAME,
          config: bool | PathLike = True) -> Report:
    """Check every claim, as `gpuspec check` does, and return the Report.

    text_or_paths: a `str` is spec text (named `name` in errors; a `name` ending in .md reads it as Markdown);
        a `pathlib.Path` (or any os.PathLike), or a list or tuple of paths (str or Path), names files and folders,
        searched as `gpuspec check PATH...` searches them; None (the default) checks the `paths` of
        `[tool.gpuspec]`, else the current folder.
    device: a catalog device (`"H100-SXM"`) for the workloads of specs that name none; a spec's own `device` wins.
    tolerance: the tolerance of `≈` claims in specs that set none (`"5%"`, `"2 µs"`); default ± 10%.
    sources: what to check against beside the model: `gpuspec.Sources(profile=..., results=(...,))`.
    against: the sources claims are checked against in specs without `set sources` (`("model", "measured")`, or
        `"model,measured"`), as `sources` of `[tool.gpuspec]` and `check --sources` name them; a spec's own `set
        sources` wins. Default: the model, and each source `sources` gives that can say something of a claim.
    config: `[tool.gpuspec]` under these arguments, as the command line reads it: True (the default) that of the
        nearest pyproject.toml from the current folder up, a path that pyproject.toml (or the folder to look up
        from), False none. Its device, tolerance, sources, profile, results, Markdown and exclude settings apply
        where the arguments give none (config.Config.under, the rule the command line keeps).

    Invalid input comes back in `report.errors`, located; it is never raised.
    """
    found, wrong = _configuration(config)
    if wrong is not None:
        return Report(api.check_specs(wrong))
    found, problems = _under(found, device, tolerance, against)
    defaults = found.defaults
    if text_or_paths is None:
        text_or_paths = [*found.paths] or ["."]
    if isinstance(text_or_paths, str):
        specs = api.text_specs(text_or_paths, name, defaults)
    else:
        specs = api.load_specs(_paths(text_or_paths), defaults, found.search)
    if problems:  # a wrong argument: said once, with the spec's own errors (which it may have caused)
        specs = api.Specs(specs.specs, specs.files, [*problems, *specs.diagnostics], specs.texts, specs.warnings,
                          specs.paths)
    return Report(api.check_specs(specs, _sources(sources, found)))


def explain(text_or_path: str | os.PathLike[str], line: int | None = None, *, device: str | None = None,
            name: str = _TEXT_NAME, config: bool | PathLike = True) -> Explained:
    """How every metric of each workload is derived, and the value behind each claim, as `gpuspec explain`
    prints it; only those on `line` when given (an int, from 1). A `str` is spec text, a Path a spec file; `config`
    as for check (its device and tolerance apply). Invalid input comes back in `.errors`, located: a line that is
    not in the file (0, past its end) or that has no workload or claim on it, as `gpuspec explain FILE:LINE` says
    it."""
    from gpuspec.diagnostics import SpecError
    from gpuspec.text import line_count

    if line is not None and (isinstance(line, bool) or not isinstance(line, int)):
        raise TypeError(f"line must be an int (a line number, from 1) or None, not {type(line).__name__}")
    if not isinstance(text_or_path, (str, os.PathLike)):
        raise TypeError(f"explain takes spec text (str) or a path (pathlib.Path), not {type(text_or_path).__name__}")
    found, wrong = _configuration(config)
    if wrong is not None:
        return Explained([], wrong.diagnostics)
    found, problems = _under(found, device, None, None)
    if problems:
        return Explained([], problems)
    defaults = found.defaults
    if isinstance(text_or_path, str):
        specs = api.text_specs(text_or_path, name, defaults)
        if specs.diagnostics:
            return Explained([], specs.diagnostics)
        spec = specs.specs[0]
    else:
        try:
            spec = api.load_spec(os.fspath(text_or_path), defaults)
        except SpecError as error:
            return Explained([], error.diagnostics)
    problem = api.line_problem(spec.path, line, line_count(spec.document), spec.program, claims=True)
    if problem is not None:
        return Explained([], [problem])
    return Explained(api.explain_program(spec.program, line), [])


def _paths(given: object) -> list[str]:
    if isinstance(given, os.PathLike):
        return [os.fspath(given)]
    if isinstance(given, (list, tuple)) and all(isinstance(p, (str, os.PathLike)) for p in given):
        return [os.fspath(p) for p in given]
    raise TypeError("check takes spec text (str), a path (pathlib.Path) or a list of paths, not "
                    f"{type(given).__name__}")


def _sources(sources: object, found) -> Sources | None:
    """The sources asked for; without any, the profile and results files of [tool.gpuspec]."""
    if sources is not None and not isinstance(sources, Sources):
        raise TypeError(f"sources must be gpuspec.Sources, not {type(sources).__name__}")
    if sources is None and (found.profile or found.results):
        return Sources(profile=found.profile, results=found.results, placed=found.placed)
    return sources


def _configuration(config: object):
    """[tool.gpuspec] as `config` asks (see check), and None; or the defaults and the Specs that hold what is
    wrong with it (every problem located in the pyproject.toml, its text to show the lines)."""
    from gpuspec import config as project
    from gpuspec.diagnostics import SpecError

    if not isinstance(config, (bool, str, os.PathLike)):
        raise TypeError(f"config must be True, False or a path, not {type(config).__name__}")
    if config is False:
        return project.Config(), None
    try:
        if config is True:
            return project.load(), None
        path = os.fspath(config)
        if os.path.isdir(path):
            return project.load(path), None
        if not os.path.isfile(path):
            problem = Diagnostic("no-such-path", f"config=: no such file or folder: {path}", None,
                                 "give a pyproject.toml, the folder to look up from, True or False")
            return project.Config(), api.Specs([], [], [problem])
        return project.read(path) or project.Config(), None
    except SpecError as error:
        from gpuspec.text import read_leniently

        files = {d.span.file for d in error.diagnostics if d.span is not None}
        return project.Config(), api.Specs([], [], error.diagnostics, {f: read_leniently(f) for f in files})


def _under(found, device: object, tolerance: object, against: object):
    """[tool.gpuspec] under the arguments, by the rule the command line keeps (config.Config.under), and the
    problems with the arguments (each said of its argument: `device=: unknown device ...`): every argument that is
    right applies, and the table's own setting is kept where one is wrong."""
    for argument, given in (("device", device), ("tolerance", tolerance)):
        if given is not None and not isinstance(given, str):
            raise TypeError(f"{argument} must be a str, not {type(given).__name__}")
    if isinstance(against, str):
        against = [against]
    elif against is not None and not (isinstance(against, (list, tuple)) and all(isinstance(a, str) for a in against)):
        raise TypeError(f"against must be a str or a sequence of str, not {type(against).__name__}")
    return found.applied(device=device, tolerance=tolerance, sources=against,
                         named=lambda key: ("against" if key == "sources" else key) + "=")
