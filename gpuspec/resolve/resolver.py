"""The resolver: a spec's statements in order, each by its own function over the Scope (what is known so far and
what has been found); every semantic error of a file, together."""
from __future__ import annotations

from gpuspec import nodes
from gpuspec.diagnostics import SpecError
from gpuspec.program import Defaults, Program
from gpuspec.resolve import catalogs, claims, settings, subjects, tensor_expressions
from gpuspec.resolve.scope import Invalid, Scope

# The function that resolves each kind of statement. A quote is kept for the claims that follow it.
STATEMENTS = {
    nodes.DeviceStatement: catalogs.device,
    nodes.ModelStatement: catalogs.model,
    nodes.Setting: settings.setting,
    nodes.TensorBinding: tensor_expressions.tensor_binding,
    nodes.Subject: subjects.subject,
    nodes.DirectClaim: claims.direct_claim,
}


def resolve(spec: nodes.Spec, defaults: Defaults | None = None) -> Program:
    """Resolve one parsed spec, starting from the run's defaults (a device, a tolerance) when given. Raises
    SpecError with every semantic error of the file."""
    scope = Scope(spec.path)
    if defaults is not None:
        scope.device = defaults.device if defaults.device is not None else scope.device  # type: ignore[assignment]
        scope.tolerance = defaults.tolerance or scope.tolerance
    for statement in spec.statements:
        if isinstance(statement, nodes.Quote):
            scope.quote = statement.text
            continue
        try:
            STATEMENTS[type(statement)](statement, scope)
        except Invalid as problem:
            scope.errors.append(problem.diagnostic)
        if not isinstance(statement, nodes.Setting):
            scope.quote = None
    if scope.errors:
        raise SpecError(scope.errors)
    return Program(scope.path, scope.claims, scope.workloads)
