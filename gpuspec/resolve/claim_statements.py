"""Claims and quantities: what each claim is about, the value and tolerance it states, and every arithmetic
expression with its dimension checked."""
from __future__ import annotations

from gpuspec import devices, metrics, nodes, units
from gpuspec.diagnostics import did_you_mean
from gpuspec.program import (
    Claim,
    Expected,
    FactRef,
    Literal,
    MetricRef,
    Operation,
    Ref,
    Tolerance,
)
from gpuspec.resolve.checked import (
    describe,
    dimension_of,
    expr_text,
    in_range,
    resolution,
    square_root,
    unit_hint,
    value_text,
)
from gpuspec.resolve.scope import Invalid, TensorName, ValueName, WorkloadName, invalid
from gpuspec.text import Span

# Functions over quantities (not tensors) in named values and claims.
_QUANTITY_FUNCTIONS = {"min", "max", "ceil", "floor", "round", "sqrt"}


class ClaimStatements:
    """The part of the resolver that resolves claims and quantities (mixed into Resolver)."""

    def _claims(self, block: nodes.Block, statement: str, workload, subject_ref: Ref | None) -> None:
        quote = self.quote
        for item in block.items:
            if isinstance(item, nodes.Quote):
                quote = item.text
                continue
            try:
                self.claims.append(self._claim(item, statement, workload, subject_ref, quote))
            except Invalid as problem:
                self.errors.append(problem.diagnostic)

    def direct_claim(self, direct: nodes.DirectClaim) -> None:
        self.claims.append(self._claim(direct.claim, direct.claim.text, None, None, self.quote))

    def _claim(self, claim: nodes.Claim, statement: str, workload, subject_ref: Ref | None, quote) -> Claim:
        value = claim.value
        if claim.subject is not None:
            subject = self._quantity(claim.subject, {}, workload)
        elif isinstance(value, nodes.Word):  # memory-bound
            if workload is None:
                raise invalid("bound-needs-workload", f"`{claim.text}` is a claim about a workload", claim.span)
            subject = MetricRef(workload, "bound", "bound")
        elif workload is not None:
            subject = MetricRef(workload, self._implied_metric(value, claim), "")
            subject = MetricRef(workload, subject.metric, subject.metric)
        else:
            subject = subject_ref
        expected = self._expected(value, subject, claim)
        tolerance = None
        if claim.tolerance is not None:
            if claim.comparator != "≈":
                raise invalid("tolerance-without-approx", "`±` goes with `≈` only", claim.tolerance.span,
                              f"write `≈ {value_text(value)} ± ...`")
            tolerance = self._tolerance(claim.tolerance.number, self._unit_text(claim.tolerance.unit,
                                        claim.tolerance.span), claim.tolerance.span, from_file=False)
            if tolerance.absolute is not None:
                written = self._unit_text(claim.tolerance.unit, claim.tolerance.span).dimension
                if written != dimension_of(subject):
                    raise invalid("dimension-mismatch", f"the tolerance is in {describe(written)}, but the claim "
                                  f"is in {describe(dimension_of(subject))}", claim.tolerance.span)
                centre = abs(expected.low / 2 + (expected.high if expected.high is not None else expected.low) / 2)
                if centre and tolerance.absolute > centre:  # type: ignore[operator]
                    raise invalid("tolerance-too-large", f"a tolerance of `{tolerance.written}` is more than the "
                                  f"`{expected.written}` claimed: the claim would hold for values of either sign",
                                  claim.tolerance.span,
                                  "write the interval as a range (`10–40 µs`) or a bound (`< 40 µs`)")
        elif claim.comparator == "≈":
            tolerance = self.scope.tolerance
        return Claim(claim.span, claim.text, statement, subject.text or claim.text, claim.comparator, subject,
                     expected, tolerance, self.scope.sources, quote, self.scope.sources_set)

    def _implied_metric(self, value, claim: nodes.Claim) -> str:
        phrase = value.phrase
        if phrase is None:
            raise invalid("which-metric", f"`{claim.text}` does not say which metric it is about", claim.span,
                          "add a unit or a word that names it (`62 waves`, `≈ 20 µs`), or write `waves = 62`")
        unit = self._unit(phrase)
        words = " ".join(phrase.words).lower()
        ratio = unit.symbol in ("%", "×", "x")
        if not ratio and not unit.noun and unit.dimension == units.COUNT and phrase.words:  # 16.8M elements
            unit = units.Unit(unit.symbol, unit.scale, unit.dimension, noun=phrase.words[0])
            words = " ".join(phrase.words[1:]).lower()
        if unit.noun:
            key = " ".join([metrics.singular(unit.noun.lower()), words]).strip()
            metric = metrics.NOUN_PHRASES.get(key) or metrics.NOUN_PHRASES.get(key.replace("sms", "sm"))
        elif ratio and words:  # `100% utilization`, `40% busy`: the words name it
            metric = metrics.canonical(words.replace(" ", "_"))
        else:
            metric = metrics.UNIT_PHRASES.get((unit.dimension, words))
        if metric is None:
            said = f"`{phrase.unit}{' ' + words if words else ''}`"
            raise invalid("which-metric", f"{said} does not name a metric", phrase.span,
                          "name the metric: `t_mem / t_math ≈ 80×`, `bytes_read = 33.5 MB`")
        return metric

    def _expected(self, value, subject: Ref, claim: nodes.Claim) -> Expected:
        dimension = dimension_of(subject)
        if isinstance(value, nodes.Word):
            if dimension is not None:
                raise invalid("expected-number", f"{subject.text or 'this'} is a number, not a word like "
                              f"`{value.text}`", value.span)
            allowed = metrics.WORDS.get(subject.metric, ()) if isinstance(subject, MetricRef) else ()
            if value.text not in allowed:
                what = subject.metric.replace("_", " ") if isinstance(subject, MetricRef) else "this"
                raise invalid("unknown-word", f"`{value.text}` is not a {what}", value.span,
                              did_you_mean(value.text, allowed) or f"use {', '.join(allowed)}")
            written = claim.text if claim.text.endswith("-bound") else value.text
            return Expected("word", value.text, None, 0.0, None, value.text, value.span, written)
        if dimension is None:
            words = ", ".join(metrics.WORDS.get(getattr(subject, "metric", ""), ()))
            raise invalid("expected-word", f"{subject.text} is a word ({words}), not a number", value.span)
        unit = self._unit(value.phrase) if value.phrase else units.Unit("", 1.0, units.COUNT)
        if unit.dimension != dimension:
            what = subject.text or "the value"
            raise invalid("dimension-mismatch", f"{what} is in {describe(dimension)}, "
                          f"but `{value_text(value)}` is in {describe(unit.dimension)}", value.span,
                          unit_hint(dimension))
        low = in_range(value.low, unit, value.low.span)
        high = in_range(value.high, unit, value.high.span) if value.high is not None else None
        if high is not None and high < low:
            raise invalid("empty-range", f"the range `{value_text(value)}` is empty", value.span,
                          "write the smaller number first")
        place = resolution(value.low, unit, value.low.span)
        return Expected(value.kind, low, high, place, unit, value_text(value), value.low.span, value.low.text)

    # --- units and quantities ---------------------------------------------------------------------

    def _unit(self, phrase: nodes.Phrase | None) -> units.Unit:
        if phrase is None:
            return units.Unit("", 1.0, units.COUNT)
        return self._unit_text(phrase.unit, phrase.span)

    def _unit_text(self, text: str | None, span: Span) -> units.Unit:
        if not text:
            return units.Unit("", 1.0, units.COUNT)
        try:
            return units.parse_unit(text)
        except units.UnknownUnit:
            raise invalid("unknown-unit", f"unknown unit `{text}`", span,
                          did_you_mean(text, units.known_units())) from None

    def _tolerance(self, number: nodes.Number, unit: units.Unit, span: Span, from_file: bool) -> Tolerance:
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

    def _quantity(self, expr: nodes.Expr, local: dict, workload=None) -> Ref:
        """A claim's subject or a named value's definition, as a reference with a checked dimension."""
        text = expr_text(expr)
        if isinstance(expr, nodes.Quantity):
            unit = self._unit_text(expr.unit, expr.span)
            return Literal(in_range(expr.number, unit, expr.span), unit.dimension, text)
        if isinstance(expr, nodes.Name):
            if workload is not None:
                metric = metrics.canonical(expr.id)
                if metric is not None:
                    return MetricRef(workload, metric, expr.id)
            bound = self.scope.names.get(expr.id)
            if isinstance(bound, ValueName):
                return bound.ref
            if isinstance(bound, WorkloadName):
                raise invalid("workload-as-number", f"`{expr.id}` is a workload, not a number", expr.span,
                              f"name one of its metrics, e.g. `{expr.id}.time`")
            if isinstance(bound, TensorName):
                raise invalid("tensor-as-number", f"`{expr.id}` is a tensor, not a number", expr.span,
                              f"claim about a workload over it, e.g. `{expr.id} * 2 is ≈ 20 µs`")
            raise self._unknown_name(expr.id, expr.span, metric_names=metrics.METRICS if workload else ())
        if isinstance(expr, nodes.Member):
            bound = self.scope.names.get(expr.owner)
            if not isinstance(bound, WorkloadName):
                if bound is None:
                    raise self._unknown_name(expr.owner, expr.span)
                raise invalid("not-a-workload", f"`{expr.owner}` is not a workload, so it has no metrics", expr.span)
            metric = metrics.canonical(expr.attribute)
            if metric is None:
                raise invalid("unknown-metric", f"unknown metric `{expr.attribute}`", expr.span,
                              did_you_mean(expr.attribute, [*metrics.METRICS, *metrics.ALIASES]))
            return MetricRef(bound.workload, metric, text)
        if isinstance(expr, nodes.DeviceField):
            device = self._require_device(expr.span)
            if expr.field_name not in devices.FIELDS:
                raise invalid("unknown-field", f"devices have no field `{expr.field_name}`", expr.span,
                              did_you_mean(expr.field_name, devices.FIELDS))
            if device.fact(expr.field_name) is None:
                raise invalid("missing-fact", f"device {device.name} has no `{expr.field_name}` in the catalog",
                              expr.span, f"set it: `device {device.name} with {expr.field_name} = ...`")
            return FactRef(device, expr.field_name, text)
        if isinstance(expr, nodes.Neg):
            operand = self._quantity(expr.operand, local, workload)
            return Operation("neg", (operand,), dimension_of(operand), text)
        if isinstance(expr, nodes.BinOp):
            left = self._quantity(expr.left, local, workload)
            right = self._quantity(expr.right, local, workload)
            return Operation(expr.op, (left, right), self._combine(expr, left, right), text)
        if isinstance(expr, nodes.Call):
            if expr.function not in _QUANTITY_FUNCTIONS:
                raise invalid("unknown-function", f"unknown function `{expr.function}`", expr.span,
                              did_you_mean(expr.function, sorted(_QUANTITY_FUNCTIONS)))
            args = tuple(self._quantity(a, local, workload) for a in expr.args)
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

    def _combine(self, expr: nodes.BinOp, left: Ref, right: Ref) -> units.Dimension:
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
