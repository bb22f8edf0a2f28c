"""`device ...` and `model ...` statements: an entry of the catalog, or a new one from a base, with the facts the
spec sets checked (dimension, range, facts that contradict each other)."""
from __future__ import annotations

import attrs

from gpuspec import devices, llm_catalog, nodes, units
from gpuspec.devices import Fact
from gpuspec.diagnostics import did_you_mean
from gpuspec.resolve.checked import constant, dimension_of, expr_text, same_dimension
from gpuspec.resolve.quantities import quantity
from gpuspec.resolve.scope import Invalid, Scope, after_failed, invalid
from gpuspec.text import Span


def device(statement: nodes.DeviceStatement, scope: Scope) -> None:
    """`device X`, or `device mine from X with f = v, ...`: the device the workloads below run on.

    Rebound (`check --device NAME`), the statement is checked as written (an unknown X is still an error), then NAME
    takes X's place: `device X` is NAME; a derived device keeps its name and its overrides, applied to NAME as they
    were to X (a fact written as `device.f * 0.9` is 0.9 of NAME's), and stands for NAME, so that NAME's
    measurements and profiles are compared with it (`from none` too: NAME's facts under the ones it sets)."""
    if statement.base is not None:
        _new_name(scope, "device", statement)
    defined = scope.devices.get(statement.name) if statement.base is None else None
    if defined is not None and not statement.assignments:  # `device tpu-v5e` again, after the spec defined it
        scope.device, scope.device_span, scope.device_unknown = defined, statement.span, False
        return
    scope.device, scope.device_unknown = None, True  # until this statement is known good: see require_device
    if defined is not None:  # `device mine with f = v` after defining `mine`: its facts, some changed
        base, name = defined, statement.name
    elif statement.base is None:
        base = devices.lookup(statement.name)
        if base is None:
            failed = after_failed(scope, statement.name, statement.span)
            if failed is not None:  # `device mine` after a definition of mine that failed
                raise failed
            raise invalid("unknown-device", f"unknown device `{statement.name}`", statement.span,
                          _device_hint(statement.name, scope)
                          or "`gpuspec devices` lists the catalog; define a new device with "
                             f"`device {statement.name} from H100-SXM with ...`")
        name = base.name
    else:
        if statement.base.lower() == "none":
            base = devices.blank(statement.name)
        else:
            base = scope.devices.get(statement.base) or devices.lookup(statement.base)
            if base is None:
                failed = after_failed(scope, statement.base, statement.span)
                if failed is not None:
                    raise failed
                raise invalid("unknown-device", f"unknown device `{statement.base}`", statement.span,
                              _device_hint(statement.base, scope))
        name = statement.name
    if scope.rebind is not None and statement.base not in scope.devices and defined is None:
        base = scope.rebind  # a device the spec defined was rebound when it was defined
        name = base.name if statement.base is None else name
    facts: dict[str, Fact] = {}
    scope.device = base  # device.field in an override refers to the base's facts
    for assignment in _once_each(scope, statement):
        try:
            facts[assignment.name] = _override(scope, assignment)
        except Invalid as problem:
            scope.errors.append(problem.diagnostic)
    found = base.with_facts(name, facts) if facts or name != base.name else base
    if scope.rebind is not None and found is not base and getattr(base, "stands_for", None) is None:
        found = attrs.evolve(found, stands_for=base.name)
    scope.device, scope.device_span, scope.device_unknown = found, statement.span, False
    if statement.base is not None or defined is not None:
        scope.devices[statement.name] = found
    if statement.base is not None:
        scope.definitions[("device", statement.name.lower())] = (statement.name, statement.span)


def model(statement: nodes.ModelStatement, scope: Scope) -> None:
    if statement.base is None:
        raise invalid("model-needs-base", f"`model {statement.name}` defines a model, so it needs a base",
                      statement.span, f"write `model {statement.name} from llama3-8b with layers = ...`, or "
                      f"`from none` and every field")
    _new_name(scope, "model", statement)
    if statement.base.lower() == "none":
        base = llm_catalog.blank(statement.name)
    else:
        base = scope.models.get(statement.base) or llm_catalog.lookup(statement.base)
        if base is None:
            failed = after_failed(scope, statement.base, statement.span)
            if failed is not None:
                raise failed
            raise invalid("unknown-model", f"unknown model `{statement.base}`", statement.span,
                          did_you_mean(statement.base, [*scope.models, *llm_catalog.known_names()]))
    facts = {}
    flags = {}
    for assignment in _once_each(scope, statement):
        try:
            if assignment.name in _MODEL_FLAGS:  # `tied_embeddings = yes`: a yes or no, also written 1 or 0
                flags[assignment.name] = _flag(scope, assignment)
                continue
            if assignment.name not in llm_catalog.FIELDS:
                raise invalid("unknown-field", f"models have no field `{assignment.name}`", assignment.span,
                              did_you_mean(assignment.name, [*llm_catalog.FIELDS, *_MODEL_FLAGS]))
            ref = quantity(scope, assignment.value)
            value = constant(ref, assignment.value.span)
            same_dimension(dimension_of(ref), units.COUNT, assignment.name, assignment.value.span)
            if value != int(value) or value < 1:
                raise invalid("bad-field", f"{assignment.name} must be a whole number of at least 1",
                              assignment.value.span)
            facts[assignment.name] = Fact(assignment.name, value, value, units.COUNT, ref.text,
                                          note="set in the spec")
        except Invalid as problem:
            scope.errors.append(problem.diagnostic)
    found = attrs.evolve(base.with_facts(statement.name, facts), defined_from=statement.base, **flags)
    # A model with no `params` of its own counts them from its shape, and so does one whose spec changes its base's
    # shape (`layers = 64`): the base's count is for the base's shape. `params = ...` in the spec wins.
    reshaped = any(name in facts for name in (*llm_catalog.SHAPE, "experts")) or any(
        flags[name] != getattr(base, name) for name in flags)
    counted_before = "from the shape" in ((found.fact("params").note or "") if found.fact("params") else "")
    if "params" not in facts and (reshaped or counted_before):
        recounted = llm_catalog.with_shape_params(
            attrs.evolve(found, facts={k: v for k, v in found.facts.items() if k != "params"}))
        if recounted.fact("params") is not None:  # else the base's count stands: its shape is not all known
            found = recounted
    found = llm_catalog.with_shape_params(found)
    spans = {assignment.name: assignment.span for assignment in statement.assignments}
    for problem in _inconsistent(found, spans, statement.span):
        scope.errors.append(problem.diagnostic)
    scope.models[statement.name] = found
    scope.definitions[("model", statement.name.lower())] = (statement.name, statement.span)


def _new_name(scope: Scope, kind: str, statement: nodes.DeviceStatement | nodes.ModelStatement) -> None:
    """A device or model a spec defines takes a name of its own: not a catalog entry's name or alias (matched as
    `device X` matches them, ignoring case), which `device X` would then stand for two ways, nor one the spec has
    defined already (the later would silently win)."""
    name, where = statement.name, statement.name_span or statement.span
    catalog = devices.lookup(name) if kind == "device" else llm_catalog.lookup(name)
    if catalog is not None:
        alias = "" if catalog.name.lower() == name.lower() else "a name of "
        base = catalog.name if statement.base is None or statement.base.lower() == "none" else statement.base
        raise invalid("catalog-name", f"`{name}` is {alias}the catalog {kind} {catalog.name}: a {kind} defined "
                      f"here takes a name of its own, or `{name}` would stand for two {kind}s", where,
                      f"choose another name; `{kind} mine from {base} with ...` overrides a catalog {kind}")
    earlier = scope.definitions.get((kind, name.lower()))
    if earlier is not None:
        written, span = earlier
        line = f" on line {span.line}" if span is not None else ""
        spelled = f" as `{written}`" if written != name else ""
        raise invalid("duplicate-name", f"{kind} `{name}` is already defined{line}{spelled}", where,
                      f"choose another name; `{kind} {written}` selects the one defined"
                      + (f", and `device {written} with ...` changes some of its facts for what follows"
                         if kind == "device" else ""))


def _once_each(scope: Scope, statement: nodes.DeviceStatement | nodes.ModelStatement) -> list[nodes.Assignment]:
    """The assignments of a statement, each field once: a second `sms = ...` is an error (at it, naming the first)
    and is left out."""
    first: dict[str, nodes.Assignment] = {}
    kept = []
    for assignment in statement.assignments:
        earlier = first.setdefault(assignment.name, assignment)
        if earlier is assignment:
            kept.append(assignment)
            continue
        where = f" at {earlier.span.line}:{earlier.span.column}" if earlier.span is not None else ""
        written, before = (f"{a.name} = {expr_text(a.value)}" for a in (assignment, earlier))
        scope.errors.append(invalid("duplicate-setting", f"`{written}` sets `{assignment.name}` again: `{before}`"
                                    f"{where} set it already", assignment.span,
                                    f"keep one: `{before}` or `{written}`" if written != before
                                    else "write it once").diagnostic)
    return kept


_MODEL_FLAGS = ("tied_embeddings", "qkv_bias")


def unparsed(statement: nodes.Unparsed, scope: Scope) -> None:
    """A statement that did not parse (a spec read in spite of its syntax errors): what it would have defined is
    not known, and what uses it is no error of its own. After a `device` line, no device is known until the next."""
    for name in statement.names:
        if name not in scope.names:
            scope.failed.setdefault(name, "")
    if statement.device is not None:
        scope.device, scope.device_span, scope.device_unknown = None, statement.span, True
        if statement.device and statement.device not in scope.devices:
            scope.failed.setdefault(statement.device, "device")
    if statement.model and statement.model not in scope.models:
        scope.failed.setdefault(statement.model, "model")


_YES_NO = {"yes": True, "true": True, "no": False, "false": False}


def _flag(scope: Scope, assignment: nodes.Assignment) -> bool:
    written = assignment.value
    if isinstance(written, nodes.Name) and written.id.lower() in _YES_NO and written.id not in scope.names:
        return _YES_NO[written.id.lower()]
    ref = quantity(scope, assignment.value)
    value = constant(ref, assignment.value.span)
    same_dimension(dimension_of(ref), units.COUNT, assignment.name, assignment.value.span)
    if value not in (0, 1):
        raise invalid("bad-field", f"{assignment.name} is a yes or no: write {assignment.name} = yes (or 1) or no "
                      "(or 0)", assignment.value.span)
    return bool(value)


def _override(scope: Scope, assignment: nodes.Assignment) -> Fact:
    if assignment.name not in devices.FIELDS:
        raise invalid("unknown-field", f"devices have no field `{assignment.name}`", assignment.span,
                      did_you_mean(assignment.name, devices.FIELDS))
    ref = quantity(scope, assignment.value)
    value = constant(ref, assignment.value.span)
    dimension = devices.FIELDS[assignment.name][0]
    same_dimension(dimension_of(ref), dimension, assignment.name, assignment.value.span)
    if dimension == units.COUNT and (value != int(value) or value < 1):
        raise invalid("bad-field", f"{assignment.name} must be a whole number of at least 1", assignment.value.span)
    if value <= 0:
        raise invalid("bad-field", f"{assignment.name} must be more than zero", assignment.value.span)
    return Fact(assignment.name, value, value, dimension, ref.text, note="set in the spec")


def _inconsistent(found, spans: dict[str, Span], span: Span) -> list[Invalid]:
    """Fields of a model that contradict each other: more KV heads than heads, more experts per token than experts.
    Each error points at the field the spec set (or the statement, when both came from the base)."""
    problems = []
    for few, many, rule in (("kv_heads", "heads", "each key/value head serves a group of query heads, so kv_heads "
                             "divides heads (kv_heads = heads without grouped-query attention)"),
                            ("experts_per_token", "experts", "a token is routed to some of the experts")):
        low, high = found.fact(few), found.fact(many)
        if low is None or high is None:
            continue
        wrong = low.value > high.value or (few == "kv_heads" and high.value % low.value)
        if wrong:
            relation = "more than" if low.value > high.value else "not a divisor of"
            problems.append(invalid("inconsistent-model", f"{few} ({units.format_count(low.value)}) is {relation} "
                                    f"{many} ({units.format_count(high.value)})",
                                    spans.get(few) or spans.get(many) or span, rule))
    return problems


def _device_hint(name: str, scope: Scope) -> str | None:
    """The devices a misspelt name may mean, each by its own name once (an alias such as H100-SXM5 suggests
    H100-SXM)."""
    named = {spelling: devices.lookup(spelling).name for spelling in devices.known_names()}
    return did_you_mean(name, [*scope.devices, *named], named)
