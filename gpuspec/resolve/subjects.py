"""A subject: a workload of the kind that recognizes it (its own resolve.py checks it), with an observed figure
attached; or a value, named or claimed. Then the claims about it."""
from __future__ import annotations

import importlib

import attrs

from gpuspec import kinds, nodes, units
from gpuspec.kinds.kind import FIGURE_DIMENSIONS, FIGURES, RATE_NOUNS, UTILIZATIONS, Kind, Observation
from gpuspec.program import Claim, Expected, MetricRef, NamedRef
from gpuspec.resolve.checked import constant, describe, dimension_of, free_names, in_range, needs_model
from gpuspec.resolve.claims import claims, claims_alone
from gpuspec.resolve.quantities import quantity, unit_text
from gpuspec.resolve.scope import Invalid, Scope, ValueName, WorkloadName, after_failed, bind, invalid
from gpuspec.resolve.tensor_expressions import mentions_tensor, tensor

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
    if isinstance(written.expr, nodes.Name) and written.expr.id in scope.failed and named is None:
        # `y is ...` where y's definition failed: that error stands for y, but its claims may have their own
        failed = after_failed(scope, written.expr.id, written.expr.span)
        claims_alone(scope, written.claims, statement, scope.failed[written.expr.id] == "workload")
        raise failed  # type: ignore[misc]
    kind = kinds.recognizing(written.expr)
    if local or not kind.needs_tensors or mentions_tensor(scope, written.expr):
        try:
            workload = _resolve_stage(kind).resolve(written, scope, local, statement)
            observed = written.options.observed
            if observed is not None:
                workload = attrs.evolve(workload, observed=_observation(observed, kind))
        except Invalid:
            _failed(scope, written, statement, "workload")
            raise
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
    try:
        ref = quantity(scope, written.expr)
        if not needs_model(ref):  # a value that cannot be computed (`1 B / 0 s`) is an error where it is written
            constant(ref, written.expr.span)
    except Invalid:
        _failed(scope, written, statement, "value")
        raise
    if written.name:
        ref = NamedRef(written.name, ref, dimension_of(ref), written.name)
        bind(scope, written.name, ValueName(ref, written.span.line), written.span)
    elif not written.claims.items:
        raise invalid("nothing-claimed", "this line claims nothing", written.span,
                      "add `is` and a claim, e.g. `... is ≈ 20 µs`, or a comparison: `... ≈ 20 µs`")
    claims(scope, written.claims, statement, None, ref)


def _failed(scope: Scope, written: nodes.Subject, statement: str, what: str) -> None:
    """A workload or value that could not be resolved: its name is known to have failed (what uses it is no error
    of its own), and its claims are checked for what does not depend on it."""
    if written.name and written.name not in scope.names:
        scope.failed.setdefault(written.name, what)
    claims_alone(scope, written.claims, statement, what == "workload")


def _resolve_stage(kind: Kind):
    """The kind's resolve module (gpuspec/kinds/<kind>/resolve.py), imported on first use."""
    found = _STAGES.get(kind.name)
    if found is None:
        found = _STAGES[kind.name] = importlib.import_module(f"gpuspec.kinds.{kind.name}.resolve")
    return found


def _observation(observed: nodes.Observed, kind: Kind) -> Observation:
    """`observed 107 tokens/s`, `observed 60% MFU`: a figure that says something about this kind of workload."""
    written = _written(observed)
    name = _figure(observed, kind, written)
    if name not in kind.figures:
        raise invalid("observed-figure", f"`observed {written}` is {FIGURES[name].split(' (')[0]}, which says nothing "
                      f"about {kind.article}", observed.span, _takes(kind))
    unit = units.parse_unit(observed.unit)  # _figure has read it
    value = in_range(observed.number, unit, observed.number.span)
    if value <= 0:
        raise invalid("observed-figure", "an observed figure is larger than zero", observed.span)
    if name in UTILIZATIONS and value > 1:
        raise invalid("observed-figure", f"`observed {written}`: a utilization is at most 100%", observed.span,
                      "a figure past the peak is a slip: check how it was computed (a sparse or another dtype's "
                      "peak, the bytes counted)")
    return Observation(value, FIGURE_DIMENSIONS[name], figure=name, text=written)


def _written(observed: nodes.Observed) -> str:
    """The figure as written: `107 tokens/s`, `60% MFU`."""
    unit = observed.unit or ""
    text = observed.number.text + ("" if unit in ("", "%", "×") or unit.startswith("/") else " ") + unit
    return " ".join((text, *observed.words))


def _figure(observed: nodes.Observed, kind: Kind, written: str) -> str:
    """Which figure of FIGURES `observed ...` is, from its unit and the words after it."""
    if observed.unit is None:
        raise invalid("observed-figure", f"`observed {written}` needs a unit to say what it is", observed.span,
                      _takes(kind))
    unit = unit_text(observed.unit, observed.span)
    if unit.symbol == "%":
        taken = [name for name in UTILIZATIONS if name in kind.figures]
        said = " ".join(observed.words)
        found = next((name for name in UTILIZATIONS if said.lower() == name.lower()), None)
        if found is not None:
            return found
        if not taken:
            raise invalid("observed-figure", f"`observed {written}`: {kind.article} has no utilization a "
                          "percentage could be", observed.span, _takes(kind))
        what = f"`{said}` is no utilization gpuspec knows" if said else "a percentage needs the utilization it is"
        examples = " or ".join(f"`observed {observed.number.text}% {name}`" for name in taken)
        raise invalid("observed-figure", f"`observed {written}`: {what}", observed.span, f"say which: {examples}")
    if observed.words:
        raise invalid("observed-figure", f"`observed {written}`: words after a unit name a utilization, after a "
                      f"percentage (`60% MFU`)", observed.span, _takes(kind))
    if unit.dimension == units.TOKEN_RATE:  # a count per second: which count it is
        found = RATE_NOUNS.get(unit.noun or "")
        if found is None and unit.noun is None:
            rates = [name for name in ("tokens/s", "launches/s") if name in kind.figures]
            raise invalid("observed-figure", f"`observed {written}` does not say what it counts per second",
                          observed.span, f"say it: {' or '.join(f'`{observed.number.text} {r}`' for r in rates)}"
                          if rates else _takes(kind))
        if found is None:
            raise invalid("observed-figure", f"`observed {written}` is `{unit.noun}` per second, which says nothing "
                          f"about {kind.article}", observed.span, _takes(kind))
        return found
    found = next((name for name, dimension in FIGURE_DIMENSIONS.items()
                  if dimension == unit.dimension and name not in UTILIZATIONS), None)
    if found is None:
        raise invalid("observed-figure", f"`observed {written}` is in {describe(unit.dimension)}, which says "
                      f"nothing about {kind.article}", observed.span, _takes(kind))
    return found


def _takes(kind: Kind) -> str:
    """The help: every figure the kind takes."""
    taken = [FIGURES[name] for name in kind.figures]
    return f"observe {', '.join(taken[:-1])} or {taken[-1]}" if len(taken) > 1 else f"observe {taken[0]}"


def _limits(scope: Scope, observed: nodes.Observed, statement: str, workload, kind: Kind) -> None:
    """Checks that come with an observed figure (Kind.observed_limits): each metric at most 100%, at the figure."""
    percent = units.Unit("%", 0.01, units.COUNT)
    for metric, why, hint, source in kind.observed_limits(workload):
        expected = Expected("point", 1.0, None, 0.01, percent, "100%", None, "100")
        scope.claims.append(Claim(observed.span, f"{metric} ≤ 100%", statement, metric, "≤",
                                  MetricRef(workload, metric, metric), expected, None, (source,), why, True, hint))
