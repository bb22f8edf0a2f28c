"""Quantities: units and tolerances as written, and every arithmetic expression over numbers, named values,
metrics and device facts, with its dimension checked."""
from __future__ import annotations

import difflib

from gpuspec import devices, kinds, llm_catalog, metrics, nodes, tensors, units
from gpuspec.diagnostics import did_you_mean
from gpuspec.kinds.kind import MEMORY_METRICS
from gpuspec.program import (
    FactRef,
    Literal,
    MetricRef,
    Operation,
    Ref,
    Tolerance,
)
from gpuspec.resolve.checked import (
    constant,
    describe,
    dimension_of,
    expr_text,
    in_range,
    needs_model,
    square_root,
)
from gpuspec.resolve.scope import (
    Scope,
    TensorName,
    ValueName,
    WorkloadName,
    after_failed,
    invalid,
    require_device,
    unknown_name,
)
from gpuspec.text import Span

# Functions over quantities (not tensors) in named values and claims.
_QUANTITY_FUNCTIONS = {"min", "max", "ceil", "floor", "round", "sqrt"}


def unit(phrase: nodes.Phrase | None, number: nodes.Number | None = None) -> units.Unit:
    """The unit of a claimed value as written (`number`, where given, is the value's number: for the error)."""
    if phrase is None:
        return units.Unit("", 1.0, units.COUNT)
    if phrase.words and phrase.unit in nodes.COUNT_SUFFIXES:
        _suffix_before_unit(phrase, number)
    return unit_text(phrase.unit, phrase.span)


def _suffix_before_unit(phrase: nodes.Phrase, number: nodes.Number | None) -> None:
    """`67.1M FLOP`: a count suffix (`16.8M elements`) with a unit after it is no unit gpuspec reads; the error says
    how to write it (`67.1 MFLOP`)."""
    word = phrase.words[0]
    try:
        after = units.parse_unit(word)
    except units.UnknownUnit:
        return
    if after.dimension == units.COUNT:  # a counted noun: `16.8M elements`
        return
    written = f"{number.text if number is not None else ''}{phrase.unit} {word}"
    combined = units.suffixed_unit(phrase.unit, word)
    if combined is not None:
        fix = f"`{number.text} {combined}`" if number is not None else f"`{combined}`"
        help = f"write the prefix on the unit: {fix}"
    else:
        help = f"write the number in {word} without the suffix (`{phrase.unit}` is " \
               f"{units.format_count(nodes.COUNT_SUFFIXES[phrase.unit])})"
    raise invalid("suffix-before-unit", f"`{written}` puts a count suffix before a unit: `{phrase.unit}` counts, "
                  f"and `{word}` is a unit of its own", phrase.span, help)


def unit_text(text: str | None, span: Span) -> units.Unit:
    if not text:
        return units.Unit("", 1.0, units.COUNT)
    try:
        return units.parse_unit(text)
    except units.UnknownUnit:
        spelled = units.spelled_out(text)
        raise invalid("unknown-unit", f"unknown unit `{text}`", span,
                      f"did you mean `{spelled}`?" if spelled else did_you_mean(text, units.known_units())) from None


def tolerance(number: nodes.Number, unit: units.Unit, span: Span, from_file: bool) -> Tolerance:
    written = f"± {number.text}{unit.symbol if unit.symbol in ('%', '×') else ' ' + unit.symbol}".rstrip()
    if unit.symbol == "%":
        relative = in_range(number, unit, span)
        if relative > 1:  # past 100% the interval reaches below zero: the claim says nothing
            raise invalid("tolerance-too-large", f"a tolerance of `{written}` is more than 100%: the claim "
                          "would hold for values of either sign", span,
                          "write the interval as a range (`10–40 µs`) or a bound (`< 40 µs`)")
        return Tolerance(relative, None, written, from_file)
    if unit.dimension == units.COUNT and not unit.symbol:
        raise invalid("tolerance-unit", f"a tolerance of `{number.text}` needs a unit", span,
                      "write a percentage (`± 5%`) or a quantity (`± 2 µs`)")
    return Tolerance(None, in_range(number, unit, span), written, from_file)


def quantity(scope: Scope, expr: nodes.Expr, workload=None) -> Ref:
    """A claim's subject or a named value's definition, as a reference with a checked dimension. Inside a
    workload's claims (`workload` given) a bare metric name is that workload's metric."""
    text = expr_text(expr)
    if isinstance(expr, nodes.Quantity):
        written = unit_text(expr.unit, expr.span)
        return Literal(in_range(expr.number, written, expr.span), written.dimension, text)
    if isinstance(expr, nodes.Name):
        if workload is not None:
            metric = metrics.canonical(expr.id)
            if metric is not None:
                return MetricRef(workload, metric, expr.id)
        bound = scope.names.get(expr.id)
        if isinstance(bound, ValueName):
            return bound.ref
        if isinstance(bound, WorkloadName):
            raise invalid("workload-as-number", f"`{expr.id}` is a workload, not a number", expr.span,
                          f"name one of its metrics, e.g. `{expr.id}.time`")
        if isinstance(bound, TensorName):
            raise invalid("tensor-as-number", f"`{expr.id}` is a tensor, not a number", expr.span,
                          f"claim about a workload over it, e.g. `{expr.id} * 2 is ≈ 20 µs`")
        failed = after_failed(scope, expr.id, expr.span)
        if failed is not None:
            raise failed
        help = _model_field_help(expr.id, workload)
        if help is not None:
            raise invalid("unknown-name", f"unknown name `{expr.id}`", expr.span, help)
        raise unknown_name(scope, expr.id, expr.span, metric_names=metrics.METRICS if workload else ())
    if isinstance(expr, nodes.ModelFact):
        return model_fact(scope, expr.model, expr.attribute, text, expr.span)
    if isinstance(expr, nodes.WithUnit):
        inner = quantity(scope, expr.expr, workload)
        written = unit_text(expr.unit, expr.span)
        scale = Literal(written.scale, written.dimension, written.symbol)
        dimension = units.multiply(dimension_of(inner) or units.COUNT, written.dimension)
        if isinstance(inner, Literal) or (isinstance(inner, Operation) and not needs_model(inner)):
            # a number written as arithmetic (`8192^2 FLOP`): one value, shown as written
            return Literal(constant(inner, expr.span) * written.scale, dimension, text)
        return Operation("*", (inner, scale), dimension, text)
    if isinstance(expr, nodes.Member):
        bound = scope.names.get(expr.owner)
        if bound is None and (expr.owner in scope.models or llm_catalog.lookup(expr.owner) is not None):
            return model_fact(scope, expr.owner, expr.attribute, text, expr.span)
        if not isinstance(bound, WorkloadName):
            if bound is None and expr.owner in scope.failed:  # a workload that failed: its metric may still be wrong
                if scope.failed[expr.owner] in ("workload", "") and metrics.canonical(expr.attribute) is None:
                    raise invalid("unknown-metric", f"unknown metric `{expr.attribute}`", expr.span,
                                  did_you_mean(expr.attribute, [*metrics.METRICS, *metrics.ALIASES]))
                raise unknown_name(scope, expr.owner, expr.span)
            if bound is None:
                raise unknown_name(scope, expr.owner, expr.span)
            raise invalid("not-a-workload", f"`{expr.owner}` is not a workload, so it has no metrics", expr.span)
        metric = metrics.canonical(expr.attribute)
        if metric is None:
            raise invalid("unknown-metric", f"unknown metric `{expr.attribute}`", expr.span,
                          _model_field_help(expr.attribute, bound.workload)
                          or _metric_help(expr.attribute, bound.workload))
        return MetricRef(bound.workload, metric, text)
    if isinstance(expr, nodes.DeviceField):
        device = require_device(scope, expr.span)
        if expr.field_name not in devices.FIELDS:
            raise invalid("unknown-field", f"devices have no field `{expr.field_name}`", expr.span,
                          did_you_mean(expr.field_name, devices.FIELDS))
        if device.fact(expr.field_name) is None:
            why = device.absent.get(expr.field_name)
            raise invalid("missing-fact", f"device {device.name} has no `{expr.field_name}`"
                          + (f": {why}" if why else " in the catalog"), expr.span,
                          f"set it: `device {device.name} with {expr.field_name} = ...`")
        return FactRef(device, expr.field_name, text)
    if isinstance(expr, nodes.Neg):
        operand = quantity(scope, expr.operand, workload)
        return Operation("neg", (operand,), dimension_of(operand), text)
    if isinstance(expr, nodes.BinOp):
        left = quantity(scope, expr.left, workload)
        right = quantity(scope, expr.right, workload)
        return Operation(expr.op, (left, right), _combine(expr, left, right), text)
    if isinstance(expr, nodes.Call):
        problem = tensors.without_tensor(expr.function, expr_text(expr))
        if problem is not None and expr.args:  # `fp32(2.0)`, `copy(2)` with no tensor: as inside a tensor expression
            for arg in expr.args:  # the arguments' own errors first (a name not known, or whose definition failed)
                quantity(scope, arg, workload)
            code, message, help = problem
            raise invalid(code, message, expr.args[0].span, help)
        if expr.function not in _QUANTITY_FUNCTIONS:
            raise invalid("unknown-function", f"unknown function `{expr.function}`", expr.span,
                          did_you_mean(expr.function, sorted(_QUANTITY_FUNCTIONS)))
        args = tuple(quantity(scope, a, workload) for a in expr.args)
        wanted = 1 if expr.function in ("ceil", "floor", "round", "sqrt") else None
        if (wanted and len(args) != wanted) or not args:
            raise invalid("wrong-arguments", f"`{expr.function}` takes {wanted or 'one or more'} argument(s)",
                          expr.span)
        dims = {dimension_of(a) for a in args}
        if None in dims:
            raise invalid("word-in-arithmetic", "a word (a bound) cannot take part in arithmetic", expr.span)
        if expr.function in ("min", "max") and len(dims) > 1:
            raise invalid("dimension-mismatch", f"`{expr.function}` of values in different units", expr.span)
        dimension = dimension_of(args[0])
        if expr.function == "sqrt":
            dimension = square_root(dimension, expr.span)
        return Operation(expr.function, args, dimension, text)
    raise invalid("bad-expression", "this cannot be evaluated", getattr(expr, "span", None))


# What a model says by its name alone (`mistral-7b.kv_bytes_per_token`): its catalog fields, and these metrics of
# a decode step over it that need no device (weights and KV cache in bf16, as a decode step takes them by default).
MODEL_METRICS = ("params", "layers", "active_params", "bytes_per_weight", "weight_bytes", "kv_bytes_per_token")


def _metric_help(name: str, workload) -> str | None:
    """`did you mean` among the metrics a workload of this kind has (`idel_time` on an elementwise workload is not
    `idle_time`, which it does not have); and, where the closest metric is another kind's, which kinds have it."""
    kind = kinds.of(workload)
    own = {*kind.metrics, *MEMORY_METRICS, *(kind.observed_metrics if getattr(workload, "observed", None) else ())}
    hint = did_you_mean(name, [*own, *(alias for alias, metric in metrics.ALIASES.items() if metric in own)])
    closest = difflib.get_close_matches(name, [*metrics.METRICS, *metrics.ALIASES], n=1, cutoff=0.75)
    other = metrics.canonical(closest[0]) if closest else None
    if other is None or other in own:
        return hint
    having = [k.name for k in kinds.KINDS if other in k.metrics]
    listed = ", ".join(having[:-1]) + f" and {having[-1]}" if len(having) > 1 else "".join(having) or "other"
    where = f"`{other}` is a metric of {listed} workloads, not of {kind.article}"
    return f"{hint[:-1]} ({where})?" if hint else where


def _model_field_help(name: str, workload) -> str | None:
    """Help for a model's field (`hidden`) written where a workload's metric goes: where to find it instead (a
    close metric's name, `idle` for `hidden`, would be no help)."""
    if name not in llm_catalog.FIELDS or name in metrics.METRICS:
        return None
    model = getattr(workload, "model", None)
    owner = getattr(model, "name", None) or "MODEL"
    return f"`{name}` is a fact of the model, not a metric of the workload: write `{owner}.{name}`"


def model_fact(scope: Scope, name: str, attribute: str, text: str, span: Span) -> Ref:
    """A fact of a model named in the spec or the catalog: a field (`hidden`) or a metric that needs no device."""
    from gpuspec.devices import blank
    from gpuspec.kinds.decode import DecodeStep

    model = scope.models.get(name) or llm_catalog.lookup(name)
    if model is None:
        failed = after_failed(scope, name, span)
        if failed is not None:
            raise failed
        raise invalid("unknown-model", f"unknown model `{name}`", span,
                      did_you_mean(name, [*scope.models, *llm_catalog.known_names()])
                      or "`gpuspec models` lists the catalog")
    if attribute in MODEL_METRICS:
        # one decode step of it, at batch 1 with no context: only the metrics above are claimed of it
        step = DecodeStep(model, scope.device or blank("no device"), 1, 0, "eager", False, 15, "bf16", "bf16",
                          1 / 6, text=f"{name} (bf16 weights and KV cache)")
        return MetricRef(step, attribute, text)
    if attribute in llm_catalog.FIELDS:
        found = model.fact(attribute)
        if found is None:
            raise invalid("missing-fact", f"model {name} has no `{attribute}`", span,
                          f"set it: `model {name} from {name} with {attribute} = ...`")
        return Literal(found.value, units.COUNT, text)
    raise invalid("unknown-field", f"models have no fact `{attribute}`", span,
                  did_you_mean(attribute, [*llm_catalog.FIELDS, *MODEL_METRICS])
                  or f"a model's facts: {', '.join(sorted({*llm_catalog.FIELDS, *MODEL_METRICS}))}")


def _combine(expr: nodes.BinOp, left: Ref, right: Ref) -> units.Dimension:
    a, b = dimension_of(left), dimension_of(right)
    if a is None or b is None:
        raise invalid("word-in-arithmetic", "a word (a bound) cannot take part in arithmetic", expr.span)
    if expr.op in "+-":
        if a != b:
            raise invalid("dimension-mismatch", f"cannot {'add' if expr.op == '+' else 'subtract'} "
                          f"{describe(b)} {'to' if expr.op == '+' else 'from'} {describe(a)}", expr.span)
        return a
    if expr.op == "@":
        raise invalid("matmul-of-numbers", "`@` multiplies tensors, not numbers", expr.span)
    if expr.op == "*":
        return units.multiply(a, b)
    if expr.op == "/":
        return units.divide(a, b)
    if b != units.COUNT or not isinstance(right, Literal) or right.value != int(right.value):
        raise invalid("bad-power", "a power must be a whole number without a unit", expr.right.span)
    return units.power(a, int(right.value))
