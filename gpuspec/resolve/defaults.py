"""The defaults a run gives every spec (a device, a tolerance), from names and text written outside a spec
(`[tool.gpuspec]`, the Python API), checked as the language checks them: an unknown device with its nearest names,
a tolerance with its unit and range."""
from __future__ import annotations

import re

import attrs

from gpuspec import devices, nodes
from gpuspec.diagnostics import Diagnostic, did_you_mean
from gpuspec.program import Defaults, Tolerance
from gpuspec.resolve.quantities import tolerance as checked_tolerance
from gpuspec.resolve.quantities import unit_text
from gpuspec.resolve.scope import Invalid, invalid
from gpuspec.text import Span

# `5%`, `± 5%`, `+-5%`, `+/- 2 µs`, `0.5 ms`: a tolerance as `set tolerance` takes it, its sign optional.
_TOLERANCE = re.compile(r"(?:±|\+-|\+/-)?\s*(?P<number>[0-9][0-9,]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*"
                        r"(?P<unit>\S*)")


def defaults(device: str | None, tolerance: str | None, device_span: Span | None = None,
             tolerance_span: Span | None = None, tolerance_origin: str | None = None) \
        -> tuple[Defaults, list[Diagnostic]]:
    """The Defaults for a device name and a tolerance as written, and the errors of those that are wrong (each at
    the span given: where it was written). A tolerance with a unit fits the claims of its dimension alone: a claim of
    another is refused at `tolerance_span` (else at the claim), its words naming `tolerance_origin`."""
    found, errors = Defaults(), []
    if device is not None:
        try:
            found = Defaults(default_device(device, device_span), found.tolerance)
        except Invalid as problem:
            errors.append(problem.diagnostic)
    if tolerance is not None:
        try:
            found = Defaults(found.device, default_tolerance(tolerance, tolerance_span, tolerance_origin))
        except Invalid as problem:
            errors.append(problem.diagnostic)
    return found, errors


def default_device(name: str, span: Span | None) -> devices.Device:
    found = devices.lookup(name.strip())
    if found is None:
        raise invalid("unknown-device", f"unknown device `{name}`", span,
                      did_you_mean(name, devices.known_names()) or "`gpuspec devices` lists the catalog")
    return found


def default_tolerance(text: str, span: Span | None, origin: str | None = None) -> Tolerance:
    written = text.strip()
    match = _TOLERANCE.fullmatch(written)
    if match is None:
        raise invalid("bad-tolerance", f"`{written}` is not a tolerance", span,
                      "write a percentage (`5%`) or a quantity (`2 µs`), as `set tolerance` takes it")
    where = span or Span("<defaults>", 1, 1, 1, 1)
    number = nodes.Number(match["number"], span=where)
    unit = unit_text(match["unit"], where)
    found = checked_tolerance(number, unit, span, from_file=True)
    return attrs.evolve(found, dimension=unit.dimension, origin=origin, place=span)
