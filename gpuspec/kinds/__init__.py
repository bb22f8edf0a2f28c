"""The kinds of workload, one package each (gpuspec/kinds/<kind>/): the registry.

A kind's package holds its record and its declaration (`KIND`, what every stage asks of it); its stages are
resolve.py, rules.py and harness.py beside them, imported by the stage that needs them. Adding a kind is one
package and one line below (ARCHITECTURE.md has the recipe).
"""
from __future__ import annotations

from gpuspec import nodes
from gpuspec.kinds import attention, collective, decode, elementwise, matmul, rowwise, stream, training
from gpuspec.kinds.kind import Kind

# In recognition order: the first kind that recognizes a subject is its kind; elementwise, the fallback, is last.
KINDS: tuple[Kind, ...] = (
    matmul.KIND,
    rowwise.KIND,
    attention.KIND,
    stream.KIND,
    decode.KIND,
    training.KIND,
    collective.KIND,
    elementwise.KIND,
)
FALLBACK = elementwise.KIND
_BY_NAME = {kind.name: kind for kind in KINDS}


def by_name(name: str) -> Kind:
    return _BY_NAME[name]


def of(workload) -> Kind:
    """The kind of a workload."""
    return _BY_NAME[workload.kind]


def recognizing(expr: nodes.Expr) -> Kind:
    """The kind a subject written as `expr` is (elementwise when no other kind recognizes it)."""
    return next(kind for kind in KINDS if kind.recognizes(expr))


def mode_words() -> tuple[str, ...]:
    """Every mode word some kind takes (`set mode = ...` takes these)."""
    return tuple(dict.fromkeys(word for kind in KINDS for word in kind.modes))
