"""The resolver: a spec's statements in order, each by its own function over the Scope (what is known so far and
what has been found); every semantic error of a file, together."""
from __future__ import annotations

from gpuspec import nodes
from gpuspec.devices import Device
from gpuspec.diagnostics import Diagnostic, SpecError
from gpuspec.program import Defaults, Program
from gpuspec.resolve import catalogs, claims, settings, subjects, tensor_expressions
from gpuspec.resolve.scope import FOLLOWING, Invalid, Scope

# The function that resolves each kind of statement. A quote is kept for the claims that follow it.
STATEMENTS = {
    nodes.DeviceStatement: catalogs.device,
    nodes.ModelStatement: catalogs.model,
    nodes.Setting: settings.setting,
    nodes.TensorBinding: tensor_expressions.tensor_binding,
    nodes.Subject: subjects.subject,
    nodes.DirectClaim: claims.direct_claim,
    nodes.Unparsed: catalogs.unparsed,
}


# What a statement that failed was to define, for what uses its name (see Scope.failed).
_DEFINES = {nodes.TensorBinding: "tensor", nodes.DeviceStatement: "device", nodes.ModelStatement: "model"}


def resolve(spec: nodes.Spec, defaults: Defaults | None = None, device: Device | None = None) -> Program:
    """Resolve one parsed spec, starting from the run's defaults (a device, a tolerance) when given. Raises
    SpecError with every semantic error of the file.

    `device` rebinds the spec to that catalog device (`check --device`): every `device` statement stands for it
    (resolve/catalogs.py says how a derived device is rebound), and so does a default device."""
    scope = _resolved(spec, defaults, device)
    if scope.errors:
        raise SpecError(_own(scope.errors) or scope.errors)
    return Program(scope.path, scope.claims, scope.workloads)


def semantic_errors(spec: nodes.Spec, defaults: Defaults | None = None,
                    device: Device | None = None) -> list[Diagnostic]:
    """The semantic errors of the statements of a spec that did parse (a partial one: parse.SyntaxErrors), without
    those that an error already found stands for (a use of what a line that did not parse would have defined)."""
    return _own(_resolved(spec, defaults, device).errors)


def _own(errors: list[Diagnostic]) -> list[Diagnostic]:
    """The errors that are not only the consequence of another (a workload under a device that is not known)."""
    return [error for error in errors if error.code not in FOLLOWING]


def _resolved(spec: nodes.Spec, defaults: Defaults | None, device: Device | None) -> Scope:
    scope = Scope(spec.path, device)
    if defaults is not None:
        if defaults.device is not None:
            scope.device = device if device is not None else defaults.device  # type: ignore[assignment]
        scope.tolerance = defaults.tolerance or scope.tolerance
        if defaults.sources:  # as if the spec began with `set sources = ...`: its own line wins
            scope.sources, scope.sources_set = defaults.sources, True
    for statement in spec.statements:
        if isinstance(statement, nodes.Quote):
            scope.quote = statement.text
            continue
        try:
            STATEMENTS[type(statement)](statement, scope)
        except Invalid as problem:
            scope.errors.append(problem.diagnostic)
            defined = getattr(statement, "name", None)
            if defined is not None and defined not in scope.names:  # its uses are not errors of their own
                scope.failed.setdefault(defined, _DEFINES.get(type(statement), ""))
        if not isinstance(statement, nodes.Setting):
            scope.quote = None
    return scope
