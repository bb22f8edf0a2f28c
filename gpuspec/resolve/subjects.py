"""A subject: a workload of the kind that recognizes it (its own resolve.py checks it), with an observed figure
attached; or a value, named or claimed. Then the claims about it."""
from __future__ import annotations

import importlib

import attrs

from gpuspec import kinds, nodes, units
from gpuspec.kinds.kind import Kind, Observation
from gpuspec.program import Claim, Expected, MetricRef, NamedRef
from gpuspec.resolve.checked import constant, describe, dimension_of, free_names, in_range, needs_model
from gpuspec.resolve.claims import claims
from gpuspec.resolve.quantities import quantity, unit_text
from gpuspec.resolve.scope import Scope, ValueName, WorkloadName, bind, invalid
from gpuspec.resolve.tensor_expressions import mentions_tensor, tensor

_OBSERVED_WORDS = {units.TIME: "a time (`9.35 ms`)", units.TOKEN_RATE: "a token rate (`107 tokens/s`)",
                   units.FLOP_RATE: "a FLOP rate per GPU (`400 TFLOP/s`)", units.BANDWIDTH: "a bandwidth (`1.4 TB/s`)"}
_STAGES: dict[str, object] = {}


def subject(written: nodes.Subject, scope: Scope) -> None:
    local = {}
    if written.options.on is not None:
        for name in sorted(free_names(written.expr)):
            if name not in scope.names:
                local[name] = tensor(name, written.options.on)
    statement = written.text.split("\n")[0].strip()
    named = scope.names.get(written.expr.id) if isinstance(written.expr, nodes.Name) else None
    if isinstance(named, WorkloadName) and written.name is None:  # `y is ...`: claims on a workload already named
        if written.options.span is not None:
            raise invalid("options-on-a-name", f"`{written.expr.id}` is already defined; its options go where "
                          "it is defined", written.options.span)
        claims(scope, written.claims, statement, named.workload, None)
        return
    kind = kinds.recognizing(written.expr)
    if local or not kind.needs_tensors or mentions_tensor(scope, written.expr):
        workload = _resolve_stage(kind).resolve(written, scope, local, statement)
        observed = written.options.observed
        if observed is not None:
            workload = attrs.evolve(workload, observed=_observation(observed, kind))
        scope.workloads.append((written.span, statement, workload))
        if written.name:
            bind(scope, written.name, WorkloadName(workload, written.span.line), written.span)
        if observed is not None:
            _limits(scope, observed, statement, workload, kind)
        claims(scope, written.claims, statement, workload, None)
        return
    options = written.options
    if options.on is not None or options.mode or options.threads or options.graph or options.observed:
        raise invalid("not-a-workload", "`on`, `eager`, `fused`, `as a graph`, `with ... threads` and `observed` "
                      "describe workloads, but this expression has no tensors", written.options.span)
    ref = quantity(scope, written.expr)
    if not needs_model(ref):  # a value that cannot be computed (`1 B / 0 s`) is an error where it is written
        constant(ref, written.expr.span)
    if written.name:
        ref = NamedRef(written.name, ref, dimension_of(ref), written.name)
        bind(scope, written.name, ValueName(ref, written.span.line), written.span)
    elif not written.claims.items:
        raise invalid("nothing-claimed", "this line claims nothing", written.span,
                      "add `is` and a claim, e.g. `... is ≈ 20 µs`, or a comparison: `... ≈ 20 µs`")
    claims(scope, written.claims, statement, None, ref)


def _resolve_stage(kind: Kind):
    """The kind's resolve module (gpuspec/kinds/<kind>/resolve.py), imported on first use."""
    found = _STAGES.get(kind.name)
    if found is None:
        found = _STAGES[kind.name] = importlib.import_module(f"gpuspec.kinds.{kind.name}.resolve")
    return found


def _observation(observed: nodes.Quantity, kind: Kind) -> Observation:
    """`observed 107 tokens/s`: a figure in a unit that says something about this kind of workload."""
    unit = unit_text(observed.unit, observed.span) if observed.unit else units.Unit("", 1.0, units.COUNT)
    if unit.dimension not in kind.figures:
        allowed = [words for dimension, words in _OBSERVED_WORDS.items() if dimension in kind.figures]
        written = observed.number.text + (f" {observed.unit}" if observed.unit else "")
        raise invalid("observed-figure", f"`observed {written}` is in {describe(unit.dimension)}, which says "
                      f"nothing about {kind.article}", observed.span, f"observe {' or '.join(allowed)}")
    value = in_range(observed.number, unit, observed.number.span)
    if value <= 0:
        raise invalid("observed-figure", "an observed figure is larger than zero", observed.span)
    text = observed.number.text + (f" {observed.unit}" if observed.unit else "")
    return Observation(value, unit.dimension, text=text)


def _limits(scope: Scope, observed: nodes.Quantity, statement: str, workload, kind: Kind) -> None:
    """Checks that come with an observed figure: the utilizations it implies are at most 100%."""
    percent = units.Unit("%", 0.01, units.COUNT)
    for metric in kind.observed_limits:
        expected = Expected("point", 1.0, None, 0.01, percent, "100%", None, "100")
        scope.claims.append(Claim(observed.span, f"{metric} ≤ 100%", statement, metric, "≤",
                                  MetricRef(workload, metric, metric), expected, None, ("model",),
                                  "an observed figure cannot beat the device's peak", True))
