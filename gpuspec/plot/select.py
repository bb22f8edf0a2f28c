"""Which workloads a picture shows: those of the files named, or of one line (`FILE:LINE`), with every
mistake in choosing them (no such line, a line that is not a stream, nothing to draw) said in words."""
from __future__ import annotations

from pathlib import Path

from attrs import evolve

from gpuspec import kinds
from gpuspec.api import Search, Spec, line_problem, load_spec, spec_files
from gpuspec.devices import Device
from gpuspec.plot.data import Subject, label_of, plottable
from gpuspec.program import Defaults, Program
from gpuspec.record import Record, record
from gpuspec.text import line_count


class SelectionError(Exception):
    """The targets name nothing a picture can show; the message names the file and line and what would do."""


@record
class Target(Record):
    """A spec file named for a picture, checked, with the line asked for (None: the whole file)."""

    path: str
    line: int | None
    lines: int  # how many lines the file has
    program: Program


def load_targets(targets: list[tuple[str, int | None]], defaults: Defaults | None = None,
                 search: Search | None = None, device: Device | None = None) -> list[Target]:
    """Each (file, line) read, parsed and resolved with the run's defaults ([tool.gpuspec]'s device and tolerance)
    and rebound to `device` (`--device`) if given; a folder is every spec in it, searched as `search` says. Raises
    SpecError for a file that does not check."""
    loaded = []
    for given, line in targets:
        paths = [str(p) for p in spec_files([given], search)[0]] if line is None and Path(given).is_dir() else [given]
        for path in paths:
            loaded.append(target(load_spec(path, defaults, device), line, path))
    return loaded


def target(spec: Spec, line: int | None = None, path: str | None = None) -> Target:
    """A loaded spec as a picture's target: the whole file, or `line`; named `path` as given (else as read)."""
    return Target(path if path is not None else spec.path, line, line_count(spec.document), spec.program)


def subjects(targets: list[Target]) -> list[Subject]:
    """Every workload of each target: the whole file, or the one on its line. SelectionError for a line
    with no workload on it."""
    found: list[Subject] = []
    for target in targets:
        line = target.line
        here = [Subject(label_of(text), target.path, span.line, workload)
                for span, text, workload in target.program.workloads
                if line is None or span.line <= line <= span.end_line]
        problem = line_problem(target.path, line, target.lines, target.program)  # in the words explain uses
        if problem is not None:
            raise SelectionError(problem.message)
        found.extend(here)
    return _told_apart(found)


def _told_apart(found: list[Subject]) -> list[Subject]:
    """The subjects, a label that names workloads of several files prefixed with each one's file (`a.gpu: y`)."""
    files: dict[str, set[str]] = {}
    for subject in found:
        files.setdefault(subject.label, set()).add(subject.path)
    return [evolve(s, label=f"{Path(s.path).name}: {s.label}") if len(files[s.label]) > 1 else s for s in found]


def roofline_subjects(targets: list[Target]) -> list[Subject]:
    """The workloads of the targets that have a place on a roofline (FLOPs, bytes and a time)."""
    chosen = subjects(targets)
    drawable = [s for s in chosen if plottable(s.workload)]
    if not drawable:
        where = ", ".join(_target(t.path, t.line) for t in targets)
        names = sorted({s.workload.kind for s in chosen})
        had = f"only {' and '.join(names)} workloads, which have" if names else "no workloads, so"
        raise SelectionError(f"{where}: nothing to put on a roofline: {had} no FLOPs, bytes and time to plot; "
                             "give a file with elementwise, matmul, row-wise, attention, stream or decode workloads")
    return drawable


def stream_subjects(targets: list[Target]) -> list[Subject]:
    """The launch streams of the targets: every stream of a file, or the one on a line."""
    found: list[Subject] = []
    for target in targets:
        path, line = target.path, target.line
        chosen = subjects([target])
        streams = [s for s in chosen if kinds.of(s.workload).timeline]
        if streams:
            found.extend(streams)
            continue
        others = [s for s in _all(target) if kinds.of(s.workload).timeline]
        if line is not None:
            raise SelectionError(f"{path}:{line}: `{chosen[0].label}` is {kinds.of(chosen[0].workload).article}, "
                                 f"not a launch stream (`N launches of W`); {_lines('streams', others)}")
    if not found:
        where = ", ".join(_target(t.path, t.line) for t in targets) or "the files given"
        raise SelectionError(f"{where}: no launch streams to draw; write one as `N launches of W`")
    return _told_apart(found)


def _all(target: Target) -> list[Subject]:
    return [Subject(label_of(text), target.path, span.line, workload)
            for span, text, workload in target.program.workloads]


def _lines(what: str, found: list[Subject]) -> str:
    if not found:
        return f"the file has no {what}"
    shown = ", ".join(f"{s.line} ({s.label})" for s in found[:8])
    return f"the {what} are on line{'s' * (len(found) > 1)} {shown}{', …' if len(found) > 8 else ''}"


def _target(path: str, line: int | None) -> str:
    return path if line is None else f"{path}:{line}"
