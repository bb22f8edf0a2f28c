"""pytest plugin: every claim of a `.gpu` file (and, when asked, of Markdown gpu blocks) as a test item.

Enable Markdown with `--gpuspec-markdown` or the ini setting `gpuspec_markdown = true`. A file that does not
parse or resolve is one failing item that shows the errors. Files that the ini setting `gpuspec_exclude` names
(globs relative to the rootdir) are left to other collectors.

Claims are checked as `gpuspec check` checks them (through gpuspec.api), against the model and, when given, a
calibration profile (`--gpuspec-profile FILE` or the ini setting `gpuspec_profile`) and saved results
(`--gpuspec-results FILE`, repeatable, or the ini setting `gpuspec_results`, one file a line). Paths on the command
line are relative to where pytest was started, those in the ini file to the ini file's folder. A profile or
results file that cannot be used fails each spec's `errors` item with the reason, naming the file.
"""
from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser) -> None:
    group = parser.getgroup("gpuspec", "gpuspec claims")
    group.addoption("--gpuspec-markdown", action="store_true", default=None,
                    help="also collect the gpu blocks of Markdown files as gpuspec claims")
    parser.addini("gpuspec_markdown", type="bool", default=False,
                  help="collect the gpu blocks of Markdown files as gpuspec claims")
    parser.addini("gpuspec_exclude", type="linelist", default=[],
                  help="files not to collect as gpuspec claims: globs relative to the rootdir (documents that "
                       "show errors on purpose, or that another collector reads)")
    group.addoption("--gpuspec-profile", metavar="FILE", default=None,
                    help="a calibration profile: check claims against the calibrated source too")
    group.addoption("--gpuspec-results", metavar="FILE", action="append", default=None,
                    help="saved results: check claims against the measured source too (repeat for several files)")
    parser.addini("gpuspec_profile", type="string", default="",
                  help="a calibration profile to check claims against (relative to the ini file)")
    parser.addini("gpuspec_results", type="linelist", default=[],
                  help="saved results files to check claims against, one a line (relative to the ini file)")


def pytest_collect_file(parent, file_path: Path):
    if _excluded(parent.config, file_path):
        return None
    if file_path.suffix == ".gpu":
        return SpecFile.from_parent(parent, path=file_path)
    if file_path.suffix in (".md", ".markdown") and _markdown_enabled(parent.config):
        from gpuspec import markdown
        from gpuspec.text import read_leniently

        if markdown.mentions_gpu(read_leniently(file_path)):  # near misses too, for their warnings
            return SpecFile.from_parent(parent, path=file_path)
    return None


def _excluded(config, file_path: Path) -> bool:
    patterns = config.getini("gpuspec_exclude")
    if not patterns:
        return False
    from fnmatch import fnmatchcase

    try:
        relative = file_path.relative_to(config.rootpath).as_posix()
    except ValueError:  # outside the rootdir: no pattern names it
        return False
    return any(fnmatchcase(relative, pattern) for pattern in patterns)


def _markdown_enabled(config) -> bool:
    option = config.getoption("gpuspec_markdown")
    return bool(option) if option is not None else bool(config.getini("gpuspec_markdown"))


def _sources(config):
    """The sources beside the model that the options and ini settings ask for (gpuspec.api.Sources)."""
    from gpuspec.api import Sources

    here = config.invocation_params.dir
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    profile = config.getoption("gpuspec_profile")
    if profile:
        profile = str(here / profile)
    elif config.getini("gpuspec_profile"):
        profile = str(base / config.getini("gpuspec_profile"))
    given = config.getoption("gpuspec_results")
    if given:
        results = [str(here / path) for path in given]
    else:
        results = [str(base / path) for path in config.getini("gpuspec_results")]
    return Sources(results=tuple(results), profile=profile or None)


class SpecFile(pytest.File):
    """One spec file (or Markdown document): its claims, checked as `gpuspec check` checks them when collected."""

    def collect(self):
        from gpuspec.api import check_specs, load_specs

        specs = load_specs([str(self.path)])
        report = check_specs(specs, _sources(self.config))
        for warning in report.warnings:  # a block that was nearly a gpu block: said, with the fix
            self.warn(pytest.PytestWarning(_shown(f"{warning.span}: {warning.message}; {warning.help}")))
        if report.diagnostics:
            yield InvalidSpec.from_parent(self, name="errors", diagnostics=report.diagnostics, texts=report.texts)
        grouped: dict[int, list] = {}
        for verdict in report.verdicts:
            grouped.setdefault(id(verdict.claim), []).append(verdict)
        seen: dict[str, int] = {}
        for claim_verdicts in grouped.values():
            claim = claim_verdicts[0].claim
            name = _shown(f"{claim.statement.rstrip(':')} | {claim.text}")
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
            from gpuspec.report.text import failure

            return "\n".join(line for v in excinfo.value.args[0] for line in failure(v, self.verdicts))
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
