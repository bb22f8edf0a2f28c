"""pytest plugin: every claim of a `.gpu` file (and, when asked, of Markdown gpu blocks) as a test item.

Markdown files are collected when named on the command line (`pytest post.md`; one with no gpu blocks is a
warning, and no tests ran), and for a whole tree with `--gpuspec-markdown`, the ini setting `gpuspec_markdown =
true` or `markdown` in `[tool.gpuspec]` (true, or the globs of the files to collect). A file that does not parse
or resolve is one failing item that shows the errors. Files that the ini setting `gpuspec_exclude` names (globs
relative to the rootdir), or else `exclude` of `[tool.gpuspec]`, are left to other collectors.

A failing claim prints as `gpuspec check` prints it (the claim, the value against the interval, the lines of the
derivation that decide it); with `pytest -v` as `check -v` (the whole derivation).

`[tool.gpuspec]` of the nearest pyproject.toml (from where pytest was started, as `gpuspec check` finds it) applies
under pytest's own options and ini settings, by the rule `gpuspec check` keeps (config.Config.under): its
device, tolerance and sources for specs that set none, its profile and results files, its Markdown and exclude
settings. A mistake in it is a usage error (exit 4), every problem located.

Claims are checked as `gpuspec check` checks them (through gpuspec.api), against the model and, when given, a
calibration profile (`--gpuspec-profile FILE` or the ini setting `gpuspec_profile`) and saved results
(`--gpuspec-results FILE`, repeatable, or the ini setting `gpuspec_results`, one file a line). Paths on the command
line are relative to where pytest was started, those in the ini file to the ini file's folder. A profile or
results file that cannot be used fails each spec's `errors` item with the reason, naming the file.
"""
from __future__ import annotations

from pathlib import Path

import pytest

# What pytest_configure found: [tool.gpuspec], and the files named on the command line.
_PROJECT = pytest.StashKey[object]()
_NAMED = pytest.StashKey[frozenset]()


def pytest_addoption(parser) -> None:
    group = parser.getgroup("gpuspec", "gpuspec claims")
    group.addoption("--gpuspec-markdown", action="store_true", default=None,
                    help="also collect the gpu blocks of Markdown files as gpuspec claims")
    # The ini settings default to None, so that one not set leaves [tool.gpuspec] to decide.
    parser.addini("gpuspec_markdown", type="bool", default=None,
                  help="collect the gpu blocks of Markdown files as gpuspec claims")
    parser.addini("gpuspec_exclude", type="linelist", default=None,
                  help="files not to collect as gpuspec claims: globs relative to the rootdir (documents that "
                       "show errors on purpose, or that another collector reads)")
    group.addoption("--gpuspec-profile", metavar="FILE", default=None,
                    help="a calibration profile: check claims against the calibrated source too")
    group.addoption("--gpuspec-results", metavar="FILE", action="append", default=None,
                    help="saved results: check claims against the measured source too (repeat for several files)")
    parser.addini("gpuspec_profile", type="string", default=None,
                  help="a calibration profile to check claims against (relative to the ini file)")
    parser.addini("gpuspec_results", type="linelist", default=None,
                  help="saved results files to check claims against, one a line (relative to the ini file)")


def pytest_configure(config) -> None:
    """Read [tool.gpuspec] once, and remember the files named on the command line. A mistake in the table is
    a usage error (pytest exits 4) that shows each problem at its file, line and column."""
    from gpuspec import config as project
    from gpuspec.diagnostics import SpecError

    here = config.invocation_params.dir
    try:
        found = project.load(here)
        config.stash[_PROJECT] = found.under(profile=_ini_path(config, "gpuspec_profile", config.getoption(
            "gpuspec_profile")), results=_ini_paths(config, "gpuspec_results", config.getoption("gpuspec_results")),
            markdown=_markdown_given(config, found), exclude=_unset_as_none(config.getini("gpuspec_exclude")),
            named=lambda key: f"gpuspec_{key}")  # a malformed gpuspec_exclude glob
    except SpecError as error:
        raise pytest.UsageError(_located(error)) from None
    named = set()
    for argument in config.args:
        path = Path(str(argument).split("::")[0])
        named.add(_identity(path if path.is_absolute() else here / path))
    config.stash[_NAMED] = frozenset(named)


def _located(error) -> str:
    """The configuration's errors as `gpuspec check` prints them: each at its place, with its line and a caret."""
    from gpuspec.report import text
    from gpuspec.text import read_leniently

    files = {d.span.file for d in error.diagnostics if d.span is not None}
    documents = text.Documents({path: read_leniently(path) for path in files})
    return "\n".join(line for d in error.diagnostics for line in text.error(d, documents))


def _unset_as_none(value):
    """An ini setting's value, or None when the ini file does not set it (pytest 8 gives [] then, 9 the default)."""
    return None if value is None or value == [] else value


def _markdown_given(config, found) -> bool | None:
    """Whether the tree's Markdown is collected: the option, else the ini setting, else `markdown` of
    [tool.gpuspec] where it is written (None: as the table says, its globs too; where it is not written, False:
    the CLI's default is to search folders' Markdown, pytest's is not to)."""
    option = config.getoption("gpuspec_markdown")
    if option is not None:
        return bool(option)
    ini = _unset_as_none(config.getini("gpuspec_markdown"))
    if ini is not None:
        return bool(ini)
    return None if "markdown" in found.keys else False


def _ini_path(config, name: str, option: str | None) -> str | None:
    """A path from the command line (relative to where pytest started) or the ini file (relative to it)."""
    if option:
        return str(config.invocation_params.dir / option)
    value = _unset_as_none(config.getini(name))
    return str(_ini_folder(config) / value) if value else None


def _ini_paths(config, name: str, option: list[str] | None) -> tuple[str, ...]:
    if option:
        return tuple(str(config.invocation_params.dir / path) for path in option)
    return tuple(str(_ini_folder(config) / path) for path in _unset_as_none(config.getini(name)) or ())


def _ini_folder(config) -> Path:
    return config.inipath.parent if config.inipath is not None else config.rootpath


def _identity(path: Path) -> object:
    from gpuspec.api import file_identity

    return file_identity(path)


def _project(config):
    found = config.stash.get(_PROJECT, None)
    if found is None:  # the plugin was loaded after configuration: the defaults, under the options given
        from gpuspec.config import Config

        found = config.stash[_PROJECT] = Config().under(markdown=_markdown_given(config, Config()))
    return found


def pytest_collect_file(parent, file_path: Path):
    if _excluded(parent.config, file_path):
        return None
    if file_path.suffix == ".gpu":
        return SpecFile.from_parent(parent, path=file_path)
    if file_path.suffix in (".md", ".markdown"):
        if _identity(file_path) in parent.config.stash.get(_NAMED, frozenset()):  # `pytest post.md`: asked for
            return SpecFile.from_parent(parent, path=file_path)
        if not _project(parent.config).search.reads_markdown(file_path):  # not asked for, or not a glob's
            return None
        from gpuspec import markdown
        from gpuspec.text import read_leniently

        if markdown.mentions_gpu(read_leniently(file_path)):  # near misses too, for their warnings
            return SpecFile.from_parent(parent, path=file_path)
    return None


def _excluded(config, file_path: Path) -> bool:
    patterns = _unset_as_none(config.getini("gpuspec_exclude"))
    if patterns is None:  # [tool.gpuspec]'s exclude, relative to its pyproject.toml's folder
        search = _project(config).search
        return search.excludes(file_path) if search.exclude else False
    from fnmatch import fnmatchcase

    try:
        relative = file_path.relative_to(config.rootpath).as_posix()
    except ValueError:  # outside the rootdir: no pattern names it
        return False
    return any(fnmatchcase(relative, pattern) for pattern in patterns)


def _sources(config):
    """The sources beside the model that the options, the ini settings and [tool.gpuspec] ask for."""
    from gpuspec.api import Sources

    found = _project(config)
    return Sources(results=tuple(found.results), profile=found.profile)


class SpecFile(pytest.File):
    """One spec file (or Markdown document): its claims, checked as `gpuspec check` checks them when collected."""

    def collect(self):
        from gpuspec.api import check_specs, load_specs

        specs = load_specs([str(self.path)], _project(self.config).defaults)
        report = check_specs(specs, _sources(self.config))
        for warning in report.warnings:  # a block that was nearly a gpu block: said, with the fix
            self.warn(pytest.PytestWarning(_shown(f"{warning.span}: {warning.message}; {warning.help}")))
        if not (report.verdicts or report.diagnostics or report.warnings):  # `pytest notes.md`, with nothing in it
            self.warn(pytest.PytestWarning(_shown(f"{self.path}: no gpu blocks to collect (```gpu fences, "
                                                  "<!-- gpu --> comments, or <!-- gpu: ... --> after a number)")))
        if report.diagnostics:
            yield InvalidSpec.from_parent(self, name="errors", diagnostics=report.diagnostics, texts=report.texts)
        grouped: dict[int, list] = {}
        for verdict in report.verdicts:
            grouped.setdefault(id(verdict.claim), []).append(verdict)
        seen: dict[str, int] = {}
        for claim_verdicts in grouped.values():
            claim = claim_verdicts[0].claim
            statement = claim.statement.rstrip(":")
            # a claim that is its whole statement (`x.time ≈ 4 ms`, a number checked in a sentence) is named once
            name = _shown(claim.text if statement.strip() == claim.text.strip() else f"{statement} | {claim.text}")
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:  # the same claim twice in one file: number the later ones
                name = f"{name} [{seen[name]}]"
            yield ClaimItem.from_parent(self, name=name, verdicts=claim_verdicts)


def _shown(text: str) -> str:
    """User text in an item's name or a line pytest prints: no terminal escape, bidirectional mark or workflow
    command (report.safe), and no `::`, which pytest reads as the separator of a node id's parts."""
    from gpuspec.report.safe import shown_line

    return shown_line(text).replace("::", ":\\x3a")


class ClaimFailed(Exception):
    """A claim does not hold against one of its sources."""


class ClaimItem(pytest.Item):
    """One claim: it passes when every source it was checked against agrees, and skips when none could."""

    def __init__(self, *, verdicts, **kwargs):
        super().__init__(**kwargs)
        self.verdicts = verdicts
        self.claim = verdicts[0].claim
        self.user_properties.extend([("file", self.claim.span.file), ("line", self.claim.span.line),
                                     ("column", self.claim.span.column)])

    def runtest(self) -> None:
        failed = [v for v in self.verdicts if v.status == "fail"]
        if failed:
            raise ClaimFailed(failed)
        if all(v.status == "skip" for v in self.verdicts):
            pytest.skip(_shown("; ".join(v.message for v in self.verdicts)))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ClaimFailed):
            from gpuspec.report.text import WHOLE, failure, shortened

            failed = excinfo.value.args[0]
            if self.config.getoption("verbose", 0) > 0:  # `pytest -v`: the whole derivation, as `check -v`
                return "\n".join(line for v in failed for line in failure(v, self.verdicts, depth=WHOLE))
            # as `gpuspec check` prints it: the claim, the value, the interval and the lines that decide it
            lines = [line for v in failed for line in failure(v, self.verdicts, whole=False)]
            if any(shortened(v.actual) for v in failed):
                lines.append("(pytest -v shows the whole derivation)")
            return "\n".join(lines)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, self.claim.span.line - 1, _shown(f"{self.claim.span}: {self.claim.text}")


class InvalidSpec(pytest.Item):
    """The errors of a spec that does not parse or resolve: a failing item, shown as the CLI shows them."""

    def __init__(self, *, diagnostics, texts, **kwargs):
        super().__init__(**kwargs)
        self.diagnostics, self.texts = diagnostics, texts  # texts: each file's text by path, as the report has it

    def runtest(self) -> None:
        raise ClaimFailed(self.diagnostics)

    def repr_failure(self, excinfo, style=None):
        from gpuspec.report.text import Documents, error

        documents = Documents(self.texts)  # each file split into lines once
        return "\n".join(line for d in self.diagnostics for line in error(d, documents))

    def reportinfo(self):
        first = self.diagnostics[0].span if self.diagnostics else None
        return self.path, (first.line - 1) if first else 0, "gpuspec errors"
