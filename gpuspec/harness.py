"""Workloads -> harness programs: a plan of checked values for each workload, from its kind's harness module
(gpuspec/kinds/<kind>/harness.py), rendered through templates/*.jinja.

The plan holds only identifiers, dtypes, shapes and numbers that gpuspec.codegen has checked, and code that it
emitted from the resolved AST; no text from a spec reaches a program except as a string literal. Never imports
torch: rendering works anywhere, running needs a GPU (or the Triton interpreter, for tests).
"""
from __future__ import annotations

import hashlib
import importlib

from gpuspec import codegen, kinds
from gpuspec.version import __version__
from gpuspec.codegen import Code, UnsafeValue
from gpuspec.planning import TOO_DEEP, HarnessError
from gpuspec.program import Program
from gpuspec.resources import data_dir

_STAGES: dict[str, object] = {}


def workload_key(statement: str, workload) -> str:
    """A stable name for a workload: from what it is (its expression, shapes, dtypes, options, device and model),
    not from where it is or what is claimed about it, so that saved results survive edits to claims and comments.
    (`statement` is kept in the signature for callers that know it; it does not enter the key.)"""
    try:
        text = f"{workload.kind}|{_structure(workload)}"
    except RecursionError:  # an expression too deep to walk: no harness measures it, so the statement names it
        text = f"{workload.kind}|statement|{statement}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _structure(value) -> str:
    """What a workload is, as text: attrs fields that take part in equality, recursively; catalog entries by name
    and the facts a spec changed."""
    import attrs

    from gpuspec.devices import Device
    from gpuspec.llm_catalog import Model

    if isinstance(value, (Device, Model)):
        changed = ",".join(f"{n}={value.fact(n).value!r}" for n in value.overridden if value.fact(n) is not None)
        # a derived device rebound to another GPU (`check --device`) is another workload than on its own base
        name = value.name if getattr(value, "stands_for", None) is None else f"{value.name}@{value.stands_for}"
        return f"{type(value).__name__}({name};{changed})"
    if attrs.has(type(value)):
        # An observed figure changes what a workload implies, not what a harness measures. A stream launched from
        # PyTorch (the default, and what a harness does) keeps the key it had before streams could say who launches.
        fields = (f"{a.name}={_structure(getattr(value, a.name))}" for a in attrs.fields(type(value))
                  if a.eq and a.name != "observed" and not (a.name == "launched_from"
                                                            and getattr(value, a.name) == "pytorch"))
        return f"{type(value).__name__}({','.join(fields)})"
    if isinstance(value, (list, tuple)):
        return "(" + ",".join(_structure(v) for v in value) + ")"
    return repr(value)


def plans(program: Program, line: int | None = None) -> tuple[list[dict], list[tuple[str, str]]]:
    """The plan of every measurable workload of `program` (or of the one at `line`), and (key, reason) for
    each workload that cannot be measured."""
    found, refused = [], []
    seen: set[str] = set()
    for span, statement, workload in program.workloads:
        if line is not None and not span.line <= line <= span.end_line:
            continue
        key = workload_key(statement, workload)
        if key in seen:  # the same workload written twice is measured once
            continue
        seen.add(key)
        try:
            plan = _plan(workload, key)
        except (HarnessError, UnsafeValue) as error:
            refused.append((key, str(error)))
            continue
        except RecursionError:
            refused.append((key, TOO_DEEP))
            continue
        plan.update(key=codegen.text(key), line=codegen.literal(span.line), statement=codegen.text(statement),
                    device=codegen.text(workload.device.name),
                    raw={"key": key, "line": span.line, "statement": statement})
        found.append(plan)
    return found, refused


def _plan(workload, key: str) -> dict:
    """The plan of one workload, from its kind's harness module (gpuspec/kinds/<kind>/harness.py)."""
    kind = kinds.of(workload)
    if not kind.measured_leaves:
        raise HarnessError(f"no harness measures {kind.article}: {kind.unmeasured}")
    stage = _STAGES.get(kind.name)
    if stage is None:
        stage = _STAGES[kind.name] = importlib.import_module(f"gpuspec.kinds.{kind.name}.harness")
    return stage.plan(workload, key)


def render(path: str, workload_plans: list[dict], refused: list[tuple[str, str]]) -> str:
    """The harness program for one spec file."""
    from gpuspec.templating import environment

    template = environment().get_template("program.py.jinja")
    # The program carries gpuspec/timing.py itself (templating.timing_rules): it runs where gpuspec is not installed
    return template.render(spec=codegen.text(str(path)), version=Code(repr(__version__)), workloads=workload_plans,
                           refused=[(codegen.text(k), codegen.text(r)) for k, r in refused])


def template_names() -> list[str]:
    return sorted(p.name for p in data_dir("templates").glob("*.jinja"))
