"""The work of `gpuspec plot` and `gpuspec report`: spec files -> pictures and reports, written atomically.

Every mistake in what was asked (an unknown picture format, a line with no stream, matplotlib missing) is a
PictureError with a message in words; invalid specs raise SpecError as elsewhere.
"""
from __future__ import annotations

from pathlib import Path

from gpuspec import kinds
from gpuspec.api import Search, Sources, check_specs, gather_evidence, load_rebound
from gpuspec.devices import Device
from gpuspec.files import WriteError, write_atomically
from gpuspec.plot import data, select
from gpuspec.program import Defaults
from gpuspec.record import Record, record
from gpuspec.report import Report, document

PICTURE_FORMATS = {".png": "png", ".svg": "svg"}
REPORT_FORMATS = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown"}
INSTALL = "pip install 'gpuspec[plot]'"


class PictureError(Exception):
    """What was asked cannot be drawn or written; the message says why and what would do."""


@record
class Run(Record):
    """What a run gives every spec it draws or reports, as `gpuspec check` gives it: the defaults of
    [tool.gpuspec] (a device, a tolerance, the sources), how folders are searched, the device `--device` rebinds
    every spec to (`device`, and its name as asked: `device_name`), and where the table named the profile and
    results files."""

    defaults: Defaults | None = None
    search: Search | None = None
    device: Device | None = None
    device_name: str | None = None
    placed: tuple = ()


def picture_format(out: str) -> str:
    """png or svg, from the suffix of `out`."""
    suffix = Path(out).suffix.lower()
    if suffix not in PICTURE_FORMATS:
        raise PictureError(f"--out {out}: a picture is written as .png or .svg, not "
                           f"{'`' + suffix + '`' if suffix else 'a file without a suffix'}")
    return PICTURE_FORMATS[suffix]


def report_format(out: str, asked: str | None) -> str:
    """html or markdown: as asked, else from the suffix of `out`."""
    if asked:
        return asked
    suffix = Path(out).suffix.lower()
    if suffix not in REPORT_FORMATS:
        written = f"`{suffix}`" if suffix else "a file without a suffix"
        raise PictureError(f"--out {out}: a report is written as .html or .md (or say which with --format "
                           f"html or --format markdown), not {written}")
    return REPORT_FORMATS[suffix]


def drawing():
    """gpuspec.plot.draw, or a PictureError that says how to install matplotlib."""
    try:
        from gpuspec.plot import draw
    except ImportError as error:
        raise PictureError(f"drawing needs matplotlib ({error}); install it with the plot extra: {INSTALL}") from None
    return draw


def roofline(targets: list[tuple[str, int | None]], out: str, profile: str | None = None,
             results: tuple[str, ...] = (), own_axes: bool = False, run: Run | None = None) -> str:
    """Draw the roofline of the targets' workloads into `out` (every device's panel on the same axis ranges,
    unless `own_axes`); returns a line saying what was written. `run` is what [tool.gpuspec] and the command give
    every spec (a device, a tolerance, how folders are searched, `--device`)."""
    format = picture_format(out)
    draw = drawing()
    run = run or Run()
    loaded = select.load_targets(targets, run.defaults, run.search, run.device)
    chosen = select.roofline_subjects(loaded)
    try:
        panels = data.roofline(chosen, _providers(loaded, profile, results, placed=run.placed), shared=not own_axes)
    except data.Undrawable as error:
        raise PictureError(str(error)) from None
    _write(out, draw.render(draw.roofline(panels), format))
    points = len({(s.path, s.line) for s in chosen})
    return f"roofline of {points} workload{'s' * (points != 1)} on {len(panels)} device{'s' * (len(panels) != 1)} " \
           f"written to {out}"


def timeline(targets: list[tuple[str, int | None]], out: str, run: Run | None = None) -> str:
    """Draw the launch timeline of the targets' streams into `out`; returns a line saying what was written."""
    format = picture_format(out)
    draw = drawing()
    run = run or Run()
    streams = select.stream_subjects(select.load_targets(targets, run.defaults, run.search, run.device))
    try:
        drawn = data.timeline(streams)
    except data.Undrawable as error:
        raise PictureError(str(error)) from None
    _write(out, draw.render(draw.timeline(drawn), format))
    return f"timeline of {len(streams)} stream{'s' * (len(streams) != 1)} written to {out}"


def report(paths: list[str], out: str, format: str | None = None, profile: str | None = None,
           results: tuple[str, ...] = (), run: Run | None = None) -> Report:
    """Check the claims under `paths` as `gpuspec check` does (with `run`'s defaults, search and device) and write
    the report with the pictures of their workloads to `out`."""
    format = report_format(out, format)
    draw = drawing()
    run = run or Run()
    sources = Sources(results=tuple(results), profile=profile, device=run.device_name, placed=run.placed)
    specs = load_rebound(paths, sources, run.defaults, run.search)
    checked = check_specs(specs, sources)
    pictures = _report_pictures([select.target(spec) for spec in specs.specs], draw, profile, results, run.placed)
    _write(out, document.render(checked, pictures, format))
    return checked


def _report_pictures(loaded: list[select.Target], draw, profile, results, placed=()) -> list[document.Picture]:
    """The roofline of every workload that has a place on one, and the timeline of every stream; none for
    files that do not check (their errors are in the report)."""
    chosen = select.subjects(loaded)
    pictures = []
    drawable = [s for s in chosen if data.plottable(s.workload)]
    if drawable:
        try:
            panels = data.roofline(drawable, _providers(loaded, profile, results, strict=False, placed=placed))
        except data.Undrawable as error:  # the checks stand; the report says why this picture is missing
            pictures.append(document.Picture("The roofline", "", f"not drawn: {error.reason}"))
        else:
            pictures.append(document.Picture("The roofline", draw.render(draw.roofline(panels), "svg").decode()))
    streams = [s for s in chosen if kinds.of(s.workload).timeline]
    if streams:
        try:
            drawn = data.timeline(streams)
        except data.Undrawable as error:
            pictures.append(document.Picture("The launch streams", "", f"not drawn: {error.reason}"))
        else:
            pictures.append(document.Picture("The launch streams", draw.render(draw.timeline(drawn), "svg").decode()))
    return pictures


def _providers(loaded: list[select.Target], profile: str | None, results: tuple[str, ...],
               strict: bool = True, placed=()) -> dict[str, object]:
    """The sources to draw: the model, and the calibrated and measured ones when a profile or results are given."""
    providers: dict[str, object] = {"model": data.ModelSource()}
    if not profile and not results:
        return providers
    found, problems = gather_evidence([(t.path, t.program) for t in loaded],
                                      Sources(results=tuple(results), profile=profile, placed=placed))
    if problems and strict:  # the report shows these among its errors; a picture has nowhere else to say them
        raise PictureError(problems[0].message)
    if found.calibrated is not None:
        providers["calibrated"] = found.calibrated
    if found.measured is not None:
        providers["measured"] = found.measured
    return providers


def _write(out: str, content: str | bytes) -> None:
    try:
        write_atomically(out, content)
    except WriteError as error:
        raise PictureError(str(error)) from None
