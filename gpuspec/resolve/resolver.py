"""The resolver: a spec's statements in order, each by its own function over the Scope (what is known so far and
what has been found); every semantic error of a file, together."""
from __future__ import annotations

from gpuspec import nodes
from gpuspec.devices import Device
from gpuspec.diagnostics import SpecError
from gpuspec.program import Defaults, Program
from gpuspec.resolve import catalogs, claims, settings, subjects, tensor_expressions
from gpuspec.resolve.scope import AFTER_FAILED_DEVICE, Invalid, Scope

# The function that resolves each kind of statement. A quote is kept for the claims that follow it.
STATEMENTS = {
    nodes.DeviceStatement: catalogs.device,
    nodes.ModelStatement: catalogs.model,
    nodes.Setting: settings.setting,
    nodes.TensorBinding: tensor_expressions.tensor_binding,
    nodes.Subject: subjects.subject,
    nodes.DirectClaim: claims.direct_claim,
}


def resolve(spec: nodes.Spec, defaults: Defaults | None = None, device: Device | None = None) -> Program:
    """Resolve one parsed spec, starting from the run's defaults (a device, a tolerance) when given. Raises
    SpecError with every semantic error of the file.

    `device` rebinds the spec to that catalog device (`check --device`): every `device` statement stands for it
    (resolve/catalogs.py says how a derived device is rebound), and so does a default device."""
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
        if not isinstance(statement, nodes.Setting):
            scope.quote = None
    errors = [error for error in scope.errors if error.code != AFTER_FAILED_DEVICE]
    if scope.errors:
        raise SpecError(errors or scope.errors)
    return Program(scope.path, scope.claims, scope.workloads)
