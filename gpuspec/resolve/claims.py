"""Claims: what each is about (a metric of a workload, a named value, an expression), the value and tolerance it
states, and the sentence it checks."""
from __future__ import annotations

import math
import sys

from gpuspec import metrics, nodes, units
from gpuspec.diagnostics import did_you_mean
from gpuspec.program import Claim, Expected, MetricRef, Ref
from gpuspec.resolve.checked import (
    arithmetic,
    describe,
    dimension_of,
    in_range,
    resolution,
    unit_hint,
    value_text,
)
from gpuspec.resolve.quantities import quantity, tolerance, unit, unit_text
from gpuspec.resolve.scope import FOLLOWING, Invalid, Scope, invalid


def claims(scope: Scope, block: nodes.Block, statement: str, workload, subject_ref: Ref | None) -> None:
    """The claims of a block, each about `workload` (or the value `subject_ref`); an error stops only its claim."""
    quote = scope.quote
    for item in block.items:
        if isinstance(item, nodes.Quote):
            quote = item.text
            continue
        try:
            scope.claims.append(claim(scope, item, statement, workload, subject_ref, quote))
        except Invalid as problem:
            scope.errors.append(problem.diagnostic)


class _Unknown:
    """What the claims of a workload that could not be resolved are checked against: a workload of no kind."""

    model = None


def claims_alone(scope: Scope, block: nodes.Block, statement: str, workload: bool) -> None:
    """The claims of a workload (`workload`) or a value that could not be resolved, each checked for what does not
    depend on it (its units, tolerance and, of a workload's, the metric its words name), so that an error of the
    claim is found with the workload's own. Nothing is claimed."""
    for item in block.items:
        if isinstance(item, nodes.Quote):
            continue
        try:
            if workload:
                claim(scope, item, statement, _Unknown(), None, None)
            else:
                value = item.value
                if getattr(value, "phrase", None) is not None:
                    unit(value.phrase)
                if item.tolerance is not None:
                    unit_text(item.tolerance.unit, item.tolerance.span)
        except Invalid as problem:
            if problem.diagnostic.code not in FOLLOWING:
                scope.errors.append(problem.diagnostic)


def direct_claim(direct: nodes.DirectClaim, scope: Scope) -> None:
    """A claim on a line of its own (`device.hbm_bandwidth = 3.35 TB/s`)."""
    try:
        scope.claims.append(claim(scope, direct.claim, direct.claim.text, None, None, scope.quote))
    except Invalid as problem:
        if problem.diagnostic.code in FOLLOWING:  # about a name that failed: the value written may still be wrong
            claims_alone(scope, nodes.Block([direct.claim], span=direct.span), direct.claim.text, False)
        raise


def claim(scope: Scope, written: nodes.ClaimNode, statement: str, workload, subject_ref: Ref | None, quote) -> Claim:
    value = written.value
    if written.subject is not None:
        subject = quantity(scope, written.subject, workload)
    elif isinstance(value, nodes.Word):  # memory-bound
        if workload is None:
            raise invalid("bound-needs-workload", f"`{written.text}` is a claim about a workload", written.span)
        subject = MetricRef(workload, "bound", "bound")
    elif workload is not None:
        metric = _implied_metric(value, written)
        subject = MetricRef(workload, metric, metric)
    else:
        subject = subject_ref
    expected = _expected(value, subject, written)
    allowed = None
    if written.tolerance is not None:
        if written.comparator != "≈":
            raise invalid("tolerance-without-approx", "`±` goes with `≈` only", written.tolerance.span,
                          f"write `≈ {value_text(value)} ± ...`")
        given = unit_text(written.tolerance.unit, written.tolerance.span)
        allowed = tolerance(written.tolerance.number, given, written.tolerance.span, from_file=False)
        if allowed.absolute is not None:
            if given.dimension != dimension_of(subject):
                raise invalid("dimension-mismatch", f"the tolerance is in {describe(given.dimension)}, but the claim "
                              f"is in {describe(dimension_of(subject))}", written.tolerance.span)
            centre = abs(expected.low / 2 + (expected.high if expected.high is not None else expected.low) / 2)
            if centre and allowed.absolute > centre:  # type: ignore[operator]
                raise invalid("tolerance-too-large", f"a tolerance of `{allowed.written}` is more than the "
                              f"`{expected.written}` claimed: the claim would hold for values of either sign",
                              written.tolerance.span,
                              "write the interval as a range (`10–40 µs`) or a bound (`< 40 µs`)")
    elif written.comparator == "≈":
        allowed = scope.tolerance
        if allowed.absolute is not None and allowed.dimension is not None and \
                allowed.dimension != dimension_of(subject):
            raise _misfit(allowed, written, dimension_of(subject))
    if written.practice:  # about real hardware: what a device of that name takes, by a profile or a harness
        return Claim(written.span, written.text, statement, subject.text or written.text, written.comparator,
                     subject, expected, allowed, PRACTICE_SOURCES, quote, True)
    return Claim(written.span, written.text, statement, subject.text or written.text, written.comparator, subject,
                 expected, allowed, scope.sources, quote, scope.sources_set)


def _misfit(allowed, written: nodes.ClaimNode, dimension) -> Invalid:
    """A default tolerance with a unit (`set tolerance = 5 s`, [tool.gpuspec], --tolerance) on a claim of another
    dimension: refused where the tolerance was written (at the claim when that is no file: a command's option)."""
    given = f"{allowed.origin or 'the tolerance'}: `{allowed.written}` is in {describe(allowed.dimension)}"
    claim = f"`{written.text}` ({written.span})" if allowed.place is not None else "this claim"
    return invalid("dimension-mismatch", f"{given}, but {claim} is in {describe(dimension)}",
                   allowed.place or written.span,
                   "a tolerance with a unit fits the claims of its dimension alone: make it a percentage (`5%`), or "
                   "give this claim a tolerance of its own, in its unit (`≈ N unit ± M unit`)")


# The sources a claim written after `in practice` is checked against (the model's ideal value is shown beside them).
PRACTICE_SOURCES = ("calibrated", "measured")


def _implied_metric(value, written: nodes.ClaimNode) -> str:
    """The metric a claim without a subject is about, from its unit and words (`62 waves`, `≈ 20 µs`)."""
    phrase = value.phrase
    if phrase is None:
        raise invalid("which-metric", f"`{written.text}` does not say which metric it is about", written.span,
                      "add a unit or a word that names it (`62 waves`, `≈ 20 µs`), or write `waves = 62`")
    found = unit(phrase, getattr(value, "low", None))
    words = " ".join(phrase.words).lower()
    ratio = found.symbol in ("%", "×", "x")
    if not ratio and not found.noun and found.dimension == units.COUNT and phrase.words:  # 16.8M elements
        found = units.Unit(found.symbol, found.scale, found.dimension, noun=phrase.words[0])
        words = " ".join(phrase.words[1:]).lower()
    if found.noun:
        key = " ".join([metrics.singular(found.noun.lower()), words]).strip()
        metric = metrics.NOUN_PHRASES.get(key) or metrics.NOUN_PHRASES.get(key.replace("sms", "sm"))
    elif ratio and words:  # `100% utilization`, `40% busy`: the words name it
        metric = metrics.canonical(words.replace(" ", "_"))
    else:
        metric = metrics.UNIT_PHRASES.get((found.dimension, words))
    if metric is None:
        said = f"`{phrase.unit}{' ' + words if words else ''}`"
        raise invalid("which-metric", f"{said} does not name a metric", phrase.span,
                      "name the metric: `t_mem / t_math ≈ 80×`, `bytes_read = 33.5 MB`")
    return metric


def _expected(value, subject: Ref, written: nodes.ClaimNode) -> Expected:
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
        shown = written.text if written.text.endswith("-bound") else value.text
        return Expected("word", value.text, None, 0.0, None, value.text, value.span, shown)
    if dimension is None:
        words = ", ".join(metrics.WORDS.get(getattr(subject, "metric", ""), ()))
        raise invalid("expected-word", f"{subject.text} is a word ({words}), not a number", value.span)
    given = unit(value.phrase, getattr(value, "low", None)) if value.phrase else units.Unit("", 1.0, units.COUNT)
    given = _per_second(given, dimension)
    if given.dimension != dimension:
        what = subject.text or "the value"
        raise invalid("dimension-mismatch", f"{what} is in {describe(dimension)}, "
                      f"but `{value_text(value)}` is in {describe(given.dimension)}", value.span,
                      unit_hint(dimension))
    if isinstance(value, nodes.Figure):  # arithmetic: exact, so `=` holds to rounding noise and `≈` takes its tolerance
        comes_to = arithmetic(value.formula) * given.scale
        if not math.isfinite(comes_to) or (comes_to != 0 and abs(comes_to) < sys.float_info.min):
            raise invalid("number-out-of-range", f"`{value.text}` is out of the range gpuspec computes in",
                          value.span, "gpuspec computes in 64-bit floats: about 2.2e-308 to 1.8e308 in SI units")
        return Expected("point", comes_to, None, 0.0, given, value.text, value.span, value.text, arithmetic=True)
    low = in_range(value.low, given, value.low.span)
    high = in_range(value.high, given, value.high.span) if value.high is not None else None
    if high is not None and high < low:
        raise invalid("empty-range", f"the range `{value_text(value)}` is empty", value.span,
                      "write the smaller number first")
    place = resolution(value.low, given, value.low.span)
    return Expected(value.kind, low, high, place, given, value_text(value), value.low.span, value.low.text)


def _per_second(given: units.Unit, dimension) -> units.Unit:
    """A clock written for a count per second, or the reverse: Hz is one per second, and a cycle a count, so
    `1.5 GHz` claims 1.5e9/s and `1.98e9/s` a 1.98 GHz clock."""
    if given.dimension == units.FREQUENCY and dimension == units.PER_SECOND \
            or given.dimension == units.PER_SECOND and dimension == units.FREQUENCY:
        return units.Unit(given.symbol, given.scale, dimension, given.noun)
    return given
