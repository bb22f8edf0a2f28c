"""Workloads -> harness programs: a plan of checked values for each workload, from its kind's harness module
(gpuspec/kinds/<kind>/harness.py), rendered through templates/*.jinja.

The plan holds only identifiers, dtypes, shapes and numbers that gpuspec.codegen has checked, and code that it
emitted from the resolved AST; no text from a spec reaches a program except as a string literal. Never imports
torch: rendering works anywhere, running needs a GPU (or the Triton interpreter, for tests).
"""
from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import re

from gpuspec import codegen, kinds
from gpuspec.codegen import Code, UnsafeValue
from gpuspec.planning import TOO_DEEP, HarnessError
from gpuspec.program import Program
from gpuspec.resources import data_dir
from gpuspec.version import __version__

_STAGES: dict[str, object] = {}
# Workload fields added after results files were first saved, and their defaults: a workload at its default keeps
# the key it had before the field existed.
_LATER_OPTIONS = {"launched_from": "pytorch", "timing": "alone", "embedding": "gathered", "host_ops": None,
                  "attention": "fused", "kv_repeat": 1}


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
        # An observed figure changes what a workload implies, not what a harness measures. Fields added after keys
        # were first saved keep the old keys at their defaults: who launches, how a figure was timed, whether a
        # decode reads its embedding table and what its model code does (_LATER_OPTIONS), and any field marked to be
        # left out at its default (attention's causal and implementation).
        fields = (f"{a.name}={_structure(getattr(value, a.name))}" for a in attrs.fields(type(value))
                  if a.eq and a.name != "observed" and not (a.name in _LATER_OPTIONS
                                                            and getattr(value, a.name) == _LATER_OPTIONS[a.name])
                  and not (a.metadata.get("omit_from_key_at_default") and getattr(value, a.name) == a.default))
        return f"{type(value).__name__}({','.join(fields)})"
    if isinstance(value, (list, tuple)):
        return "(" + ",".join(_structure(v) for v in value) + ")"
    return repr(value)


def plans(program: Program, line: int | None = None) -> tuple[list[dict], list[tuple[str, str]]]:
    """The plan of every measurable workload of `program` (or of the one at `line`), and (key, reason) for
    each workload that cannot be measured."""
    names = workload_names(program)
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
            plan = _plan(workload, names[key], lambda other: names.get(workload_key("", other)))
        except (HarnessError, UnsafeValue) as error:
            refused.append((key, str(error)))
            continue
        except RecursionError:
            refused.append((key, TOO_DEEP))
            continue
        plan.update(key=codegen.text(key), line=codegen.literal(span.line), statement=codegen.text(statement),
                    device=codegen.text(workload.device.name),
                    raw={"key": key, "line": span.line, "statement": statement})
        plan["row"] = codegen.row([plan["key"], plan["line"], _texts(statement, plan["statement"]),
                                   _texts(workload.device.name, plan["device"]), f"measure_{plan['id']}"], 4)
        found.append(plan)
    ids = {p["id"] for p in found}
    for plan in found:  # a workload another repeats (a stream's kernel) is defined once, by itself where it is here
        if "kernel" in plan:
            plan["define_kernel"] = plan["kernel"]["id"] not in ids
    return found, refused


_NAMED = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)")  # `y = x * 2 fused`: a named workload


def workload_names(program: Program) -> dict[str, Code]:
    """Each workload's name in its harness program, by key: the spec's own (`y` of `y = x * 2`), else its line and
    kind (`line12_elementwise`). The same for the whole file, whichever workloads are rendered. A name is taken
    only if none of the functions its workload defines (`y_kernel`, `measure_y`, as its kind's `defines` lists
    them) is a name the program or another workload defines already."""
    defined = set(_program_names())
    chosen: dict[str, Code] = {}
    for span, statement, workload in program.workloads:
        key = workload_key(statement, workload)
        if key in chosen:
            continue
        stage = _stage(kinds.of(workload))

        def functions(name: str, workload=workload, stage=stage) -> list[str]:
            return stage.defines(workload, name) if stage is not None else [f"measure_{name}"]

        namer = codegen.Names(chosen.values(), clashes=lambda name: any(f in defined for f in functions(name)))
        named = _NAMED.match(statement)
        chosen[key] = namer.fresh(named.group(1) if named else f"line{span.line}_{workload.kind}")
        defined.update(functions(chosen[key]))
    return chosen


@functools.lru_cache(maxsize=1)
def _program_names() -> frozenset[str]:
    """The names the program defines at its top level whatever it measures (functions, classes, constants)."""
    from gpuspec.templating import environment

    source = environment().get_template("program.py.jinja").render(
        spec=Code("''"), version=Code("''"), workloads=[], refused=[],
        helpers=frozenset([*codegen.HELPERS, "poisoned", "attention_backend", "FUSED_ATTENTION", "vector_kernels"]))
    found = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.Assign):
            found.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(found)


def _stage(kind):
    """The kind's harness module (gpuspec/kinds/<kind>/harness.py), or None where no harness measures the kind."""
    if not kind.measured_leaves:
        return None
    stage = _STAGES.get(kind.name)
    if stage is None:
        stage = _STAGES[kind.name] = importlib.import_module(f"gpuspec.kinds.{kind.name}.harness")
    return stage


def _plan(workload, name: Code, name_of) -> dict:
    """The plan of one workload, from its kind's harness module: `name` is its name in the program, `name_of` gives
    another workload's (a stream's kernel)."""
    kind = kinds.of(workload)
    device = getattr(workload, "device", None)
    if device is not None and device.model_only:  # an AMD GPU, a TPU: the model holds, no harness runs there
        raise HarnessError(f"{device.name} is model-only: {device.model_only}")
    stage = _stage(kind)
    if stage is None:
        raise HarnessError(f"no harness measures {kind.article}: {kind.unmeasured}")
    return stage.plan(workload, name, name_of)


def render(path: str, workload_plans: list[dict], refused: list[tuple[str, str]]) -> str:
    """The harness program for one spec file."""
    from gpuspec.templating import environment

    template = environment().get_template("program.py.jinja")
    # The program carries gpuspec/timing.py itself (templating.timing_rules): it runs where gpuspec is not installed.
    # It defines the helper functions its workloads call, and no others.
    helpers = frozenset().union(*(plan.get("helpers", ()) for plan in workload_plans))
    return template.render(spec=codegen.long_text(str(path), 0, lead=len("SPEC = ")), version=Code(repr(__version__)),
                           workloads=workload_plans,
                           refused=[codegen.row([codegen.text(k), _texts(r, codegen.text(r))], 4) for k, r in refused],
                           helpers=helpers)


def _texts(value: str, one_line: Code) -> Code:
    """A text in a WORKLOADS or REFUSED row: on its line if it fits a row laid out one item a line, else split."""
    return one_line if 8 + len(one_line) + 1 <= codegen.LINE_LENGTH else codegen.long_text(value, 8)


def template_names() -> list[str]:
    return sorted(p.name for p in data_dir("templates").glob("*.jinja"))
