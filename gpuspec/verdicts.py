"""Claims against values: the comparison rules (=, ≈, bounds, ranges, words) and a Verdict per claim and source."""
from __future__ import annotations

import math

from gpuspec import metrics, model, units
from gpuspec.diagnostics import Diagnostic
from gpuspec.model.expressions import evaluate
from gpuspec.model.values import Value
from gpuspec.program import Claim, Expected, FactRef, MetricRef, Program
from gpuspec.record import Record, record

# Relative slack for floating-point noise when a value sits exactly on a boundary.
_EPSILON = 1e-12
_SKIP_REASONS = {
    "calibrated": "no calibration profile was given (`gpuspec calibrate`, then --profile FILE)",
    "measured": "measurements need `--measure` on a machine with a CUDA GPU, or --results FILE",
}


@record
class Verdict(Record):
    """The outcome of one claim against one source: pass, fail or skip, with the value and why."""

    claim: Claim
    source: str
    status: str  # "pass", "fail" or "skip"
    actual: Value | None
    reason: str | None = None  # why a claim was skipped
    hint: str | None = None    # for a failure: the usual mistake its number fits, if any
    profile: str | None = None  # a calibrated value: the profile it came from
    realistic: Value | None = None  # a model failure: what a real device takes (the calibrated source)
    realistic_profile: str | None = None  # and the profile that says so
    ideal: Value | None = None  # a calibrated failure: the model's (ideal) value beside it

    @property
    def message(self) -> str:
        """The computed value against the claim, in words (worked out only when shown)."""
        if self.actual is None:
            return self.reason or ""
        text = describe(self.actual, self.claim, self.status == "pass")
        return f"{text}; {self.hint}" if self.hint else text


def holds(actual: Value, claim: Claim) -> bool:
    """Whether `actual` satisfies the claim.

    =  the value rounds to the digits written (62 waves holds for 62.06; 33.5 MB fails for 33.55 MB)
    ≈  within the tolerance: relative to the claimed value, or absolute
    < ≤ > ≥  as written, for every value in the range if the value is a range
    a range `20–30` holds when the value lies within it, rounded to the digits written; `400+` when at least 400
    A value that is itself a range (a measured latency) meets `=` and `≈` when the two overlap.
    """
    expected = claim.expected
    if expected.kind == "word":  # a tie (`threads and warps`) holds for each of its words
        return expected.low in str(actual.number).split(" and ")
    low, high = actual.bounds
    want = float(expected.low)  # type: ignore[arg-type]
    half = expected.resolution / 2
    # Room for floating-point noise, but never so much that it moves a boundary by a digit written.
    slack = _EPSILON * max(abs(want), abs(low), abs(high), 1e-300)
    if half > 0:
        slack = min(slack, half / 1000)
    if expected.kind == "at_least":
        return low >= want - half - slack
    if expected.kind == "range":
        top = float(expected.high)  # type: ignore[arg-type]
        widen = _tolerance(claim, want / 2 + top / 2) if claim.comparator == "≈" else 0.0
        return want - half - widen - slack <= low and high < top + half + widen + slack
    comparator = claim.comparator
    if comparator == "=":
        if half == 0:  # a value written as arithmetic is exact: equal but for rounding noise
            return _overlap(low, high, want - slack, want + slack)
        return _overlap(low, high, want - half - slack, want + half - slack)
    if comparator == "≈":
        tolerance = _tolerance(claim, want)
        return _overlap(low, high, want - tolerance - slack, want + tolerance + slack)
    if comparator == "<":
        return high < want
    if comparator == "≤":
        return high <= want + slack
    if comparator == ">":
        return low > want
    return low >= want - slack


def allowed(claim: Claim) -> tuple[float, float] | None:
    """The interval of values the claim allows, in SI units, as `holds` judges it: `≈ 20 µs ± 10%` allows
    (18 µs, 22 µs), `62 waves` (61.5, 62.5) (what rounds to the digits written), `20–30 cycles` (19.5, 30.5), a
    value written as arithmetic exactly itself; a bound is open on one side (`< 25 µs`: (-inf, 25 µs)). None for
    a word (`memory-bound`). Whether an end itself is allowed follows the comparator (`<` leaves it out)."""
    expected = claim.expected
    if expected.kind == "word":
        return None
    want = float(expected.low)  # type: ignore[arg-type]
    half = expected.resolution / 2
    if expected.kind == "at_least":
        return want - half, math.inf
    if expected.kind == "range":
        top = float(expected.high)  # type: ignore[arg-type]
        widen = _tolerance(claim, want / 2 + top / 2) if claim.comparator == "≈" else 0.0
        return want - half - widen, top + half + widen
    comparator = claim.comparator
    if comparator == "=":
        return want - half, want + half
    if comparator == "≈":
        margin = _tolerance(claim, want)
        return want - margin, want + margin
    if comparator in ("<", "≤"):
        return -math.inf, want
    return want, math.inf


def _overlap(low: float, high: float, lower: float, upper: float) -> bool:
    if low == high:
        return lower <= low < upper if upper > lower else low == lower
    return low < upper and high >= lower


def _tolerance(claim: Claim, want: float) -> float:
    tolerance = claim.tolerance
    if tolerance is None:
        return 0.0
    return tolerance.absolute if tolerance.absolute is not None else abs(want) * tolerance.relative  # type: ignore[operator]


@record
class Evidence(Record):
    """What there is beside the model: a calibration profile and measurements (either may be absent)."""

    calibrated: object | None = None  # gpuspec.sources.Calibrated
    measured: object | None = None    # gpuspec.sources.Measured
    require_measure: bool = False     # a measured claim that cannot be measured fails instead of skipping


def _sources(claim: Claim, evidence: Evidence) -> tuple[str, ...]:
    """The file's sources, or the model plus each other source present that can say something about the claim."""
    if claim.sources_set:
        return claim.sources
    extra = []
    if evidence.calibrated is not None and _touches(claim.subject, _calibrated_metric):
        extra.append("calibrated")
    if evidence.measured is not None and _touches(claim.subject, _measured_metric):
        extra.append("measured")
    return tuple(dict.fromkeys([*claim.sources, *extra]))


def _touches(ref, wanted) -> bool:
    if isinstance(ref, MetricRef):
        return wanted(ref)
    if isinstance(ref, FactRef):
        return wanted(ref)
    return any(_touches(child, wanted) for child in (getattr(ref, "args", ()) or ((ref.expr,) if hasattr(ref, "expr")
                                                                                    else ())))


def _measured_metric(ref) -> bool:
    """What a measurement supplies: the metrics whose model value depends on a time a harness measures."""
    return isinstance(ref, MetricRef) and model.measurable(ref.workload, ref.metric)


def _calibrated_metric(ref) -> bool:
    """Metrics that depend on a ceiling a profile measures: times, rates, shares and bounds; and those ceilings."""
    from gpuspec.profiles import FACTS

    if isinstance(ref, FactRef):
        return ref.name in FACTS
    dimension = metrics.METRICS[ref.metric].dimension
    return dimension is None or dimension[0] != 0 or ref.metric.endswith(("share", "utilization", "batch"))


def _other_source(claim: Claim, source: str, evidence: Evidence) -> Verdict:
    from gpuspec.sources import NotAvailable

    provider = evidence.calibrated if source == "calibrated" else evidence.measured
    if provider is None and source == "calibrated":
        provider = _published()
    if provider is None:
        status = "fail" if source == "measured" and evidence.require_measure else "skip"
        return Verdict(claim, source, status, None, _SKIP_REASONS[source])
    try:
        actual = evaluate(claim.subject, provider.estimate, provider.device)
    except NotAvailable as reason:
        status = "fail" if source == "measured" and evidence.require_measure else "skip"
        return Verdict(claim, source, status, None, str(reason))
    except model.ModelError as error:
        return Verdict(claim, source, "skip", None, str(error))
    profile = _profile_of(provider, claim, actual) if source == "calibrated" else None
    passed = holds(actual, claim)
    ideal = None
    if source == "calibrated" and not passed:
        try:
            ideal = evaluate(claim.subject, model.estimate)
        except (model.ModelError, ArithmeticError, RecursionError):
            ideal = None
    # a check gpuspec adds (an observed figure's limits) says what to look at when it fails
    hint = claim.hint if not passed and claim.expected.span is None else None
    return Verdict(claim, source, "pass" if passed else "fail", actual, hint=hint, profile=profile, ideal=ideal)


def _published():
    """The calibrated source when no profile was given: each catalog device's published profile."""
    from gpuspec.sources import Published

    return Published()


def _device_of(ref):
    """The device of the first workload a claim's subject is about (None for a value over no workload)."""
    if isinstance(ref, MetricRef):
        return ref.workload.device
    if isinstance(ref, FactRef):
        return getattr(ref, "device", None)
    for child in getattr(ref, "args", ()) or ((ref.expr,) if hasattr(ref, "expr") else ()):
        found = _device_of(child)
        if found is not None:
            return found
    return None


def _profile_of(provider, claim: Claim, value: Value) -> str | None:
    """Which profile a calibrated value came from (the facts its derivation rests on say)."""
    from gpuspec.sources import NotAvailable

    device = _device_of(claim.subject)
    try:
        return provider.label(device, value) if device is not None else None
    except NotAvailable:
        return None


def _realistic(claim: Claim, evidence: Evidence) -> tuple[Value | None, str | None]:
    """What the calibrated source (the user's profile, else the published one) says of a claim the model fails:
    shown beside the ideal value, judging nothing."""
    from gpuspec.sources import NotAvailable

    if not _touches(claim.subject, _calibrated_metric):
        return None, None
    provider = evidence.calibrated or _published()
    try:
        actual = evaluate(claim.subject, provider.estimate, provider.device)
    except (NotAvailable, model.ModelError, ArithmeticError, RecursionError):
        return None, None
    return actual, _profile_of(provider, claim, actual)


def check(program: Program, evidence: Evidence | None = None) -> tuple[list[Verdict], list[Diagnostic]]:
    """Every claim of a program against each of its sources. Model errors become diagnostics."""
    evidence = evidence or Evidence()
    verdicts: list[Verdict] = []
    errors: list[Diagnostic] = []
    for claim in program.claims:
        for source in _sources(claim, evidence):
            if source != "model":
                verdicts.append(_other_source(claim, source, evidence))
                continue
            try:
                actual = evaluate(claim.subject, model.estimate)
            except model.ModelError as error:  # a NotFiniteError too: an overflow is an error, never a verdict
                # the checks an observed figure comes with share its span, and often its error: say it once
                if not any((e.code, e.message, e.span) == (error.code, str(error), claim.span) for e in errors):
                    errors.append(Diagnostic(error.code, str(error), claim.span, error.help))
                break
            except RecursionError:
                errors.append(Diagnostic("too-deep", "this claim's expression is nested too deeply to evaluate",
                                         claim.span, "split it into named values"))
                break
            passed = holds(actual, claim)
            realistic, profile = (None, None) if passed else _realistic(claim, evidence)
            hint = None if passed else _diagnose(actual, claim, realistic)
            verdicts.append(Verdict(claim, source, "pass" if passed else "fail", actual, None, hint,
                                    realistic=realistic, realistic_profile=profile))
    return verdicts, errors


def _diagnose(actual: Value, claim: Claim, realistic: Value | None = None) -> str | None:
    """The usual mistake a failing claim's number fits (gpuspec.mistakes), recomputing with other facts if needed;
    what a real device takes (`realistic`) competes with the slips, so that a measured figure is not blamed on one."""
    from gpuspec.mistakes import diagnose

    if claim.expected.span is None:  # a check gpuspec adds (an observed figure's limits): no number was written
        return claim.hint or ("the observed figure implies more than the device can do: check the figure and its "
                              "unit, the device, the batch and the dtypes")

    def reevaluate(name: str, number: float) -> Value:
        from attrs import evolve

        def device_of(device):
            fact = device.fact(name)
            return device.with_facts(device.name, {name: evolve(fact, low=number, high=number)}) if fact else device

        def estimate_of(workload):
            from gpuspec.sources import rebind

            return model.estimate(rebind(workload, device_of(workload.device)))

        return evaluate(claim.subject, estimate_of, device_of)

    try:
        return diagnose(actual, claim, holds, reevaluate, realistic)
    except (model.ModelError, ArithmeticError, ValueError):
        return None


def describe(actual: Value, claim: Claim, passed: bool) -> str:
    """`time = 20.03 µs, not ≈ 30 µs (± 10%: 27–33 µs)`: the computed value against the claim."""
    expected = claim.expected
    shown = show(actual, expected)
    if expected.kind == "word":
        return f"{claim.metric} is {shown}" if passed else f"{claim.metric} is {shown}, not {expected.low}"
    written = expected.written
    if expected.arithmetic:  # what the arithmetic comes to, with the digits that tell it from the value
        if passed:
            comes_to = show_number(float(expected.low), expected.unit)  # type: ignore[arg-type]
        else:
            shown, comes_to = _apart(actual, float(expected.low), expected.unit)  # type: ignore[arg-type]
        if comes_to != expected.written:
            written = f"{expected.written} = {comes_to}"
        if claim.comparator == "=" and not passed:
            return f"{claim.metric} = {shown}, not {written}"
    wanted = f"{'' if claim.comparator == '=' else claim.comparator + ' '}{written}"
    if claim.comparator == "≈" and claim.tolerance is not None and expected.kind == "point":
        margin = _tolerance(claim, float(expected.low))  # type: ignore[arg-type]
        wanted += f" ({claim.tolerance.written}: {_interval(float(expected.low), margin, expected.unit)})"  # type: ignore[arg-type]
    if expected.span is None and actual.note:  # a check gpuspec adds: what it was checked against, and why
        wanted += f" ({actual.note})"
    if passed:
        return f"{claim.metric} = {shown}, {wanted}" if claim.comparator != "=" else f"{claim.metric} = {shown}"
    if claim.comparator == "=" and expected.kind == "point":
        return f"{claim.metric} = {_fraction_shown(actual, expected, shown)}, which does not round to {written}"
    return f"{claim.metric} = {shown}, not {wanted}"


def _fraction_shown(actual: Value, expected: Expected, shown: str) -> str:
    """`shown` with the fraction a whole claim's rounding turns on: `123,456,789.5 B` where four digits say
    `123,456,790 B`, which reads as if it rounded to more than it does."""
    unit = expected.unit
    if unit is None or isinstance(actual.number, str) or actual.low is not None or _prefixed(actual.number, unit, 4):
        return shown
    scaled = actual.number / unit.scale
    if scaled == int(scaled) or "." in shown or abs(scaled) >= 2.0 ** 53:
        return shown
    return units.format_in(actual.number, unit, digits=len(f"{abs(scaled):.0f}") + 1)


def _apart(actual: Value, claimed: float, unit: units.Unit | None) -> tuple[str, str]:
    """The value and a claimed number in the claim's unit, with as many digits as it takes to tell them apart (up
    to what a double holds): `536,870,912 FLOP` against `268,435,456 FLOP`, `562.5` against `562.0`."""
    unit = unit or units.Unit("", 1.0, units.COUNT)
    if actual.low is not None and actual.high is not None and actual.low != actual.high:
        return show(actual, Expected("point", claimed, None, 0.0, unit, "")), units.format_in(claimed, unit)
    number = float(actual.number)  # type: ignore[arg-type]
    whole = [value / unit.scale for value in (number, claimed)]
    if unit.symbol not in ("%", "×") and all(w == int(w) and abs(w) < 2.0 ** 53 for w in whole):  # every digit
        joiner = "" if unit.symbol[:1] in ("", "/") else " "
        shown, comes_to = (f"{int(w):,}{joiner}{unit.symbol}" for w in whole)
        return shown, comes_to
    apart = abs(number - claimed) / unit.scale
    for digits in range(4, 18):
        shown, comes_to = units.format_in(number, unit, digits), units.format_in(claimed, unit, digits)
        # apart by more than half the last digit shown: 123,456,789.5 against 123,456,789, not 123,456,790
        last = 10 ** (math.floor(math.log10(abs(number / unit.scale) or 1)) - digits + 1)
        if shown != comes_to and apart > last / 2:
            break
    return shown, comes_to


def _prefixed(number: float, unit: units.Unit, digits: int) -> str | None:
    """`number` with the prefix that suits it, where in `unit` it would read `0.00002003 s` or `2.749e11 FLOP`
    (`20.03 µs`, `274.9 GFLOP`); None where the unit written reads well, or no prefix would do better (a count,
    a percentage, `3.8e25 FLOP`)."""
    scaled = abs(number) / unit.scale
    if (not scaled or 1e-3 <= scaled < 1e9 or unit.noun is not None or unit.symbol in ("%", "×")
            or unit.dimension in (units.COUNT, units.CYCLES)):
        return None
    shown = Value("", number, unit.dimension).format(digits=digits)
    return None if "e" in shown.split(" ")[0] else shown


def _interval(centre: float, margin: float, unit: units.Unit | None) -> str:
    """`27.0–33.0 µs`: the interval a tolerance allows, in the claim's unit (with a prefix where that unit would
    read `2.69e11–2.80e11 FLOP`: `269–280 GFLOP`)."""
    if unit is not None and _prefixed(centre, unit, 3) is not None:
        low, high = (Value("", n, unit.dimension).format() for n in (centre - margin, centre + margin))
        return f"{low.split(' ')[0]}–{high}" if low.split(" ")[1:] == high.split(" ")[1:] else f"{low} – {high}"
    scale = unit.scale if unit else 1.0
    symbol = unit.symbol if unit else ""
    low, high = units.significant((centre - margin) / scale), units.significant((centre + margin) / scale)
    joiner = "" if symbol in ("", "%", "×") or symbol.startswith("/") else " "
    return f"{low}–{high}{joiner}{symbol}"


def show(actual: Value, expected: Expected) -> str:
    """The computed value in the unit the claim was written in."""
    if isinstance(actual.number, str):
        return actual.number
    if actual.low is not None and actual.high is not None and actual.low != actual.high:
        return f"{show_number(actual.low, expected.unit)}–{show_number(actual.high, expected.unit)}"
    return show_number(actual.number, expected.unit, expected)


def show_number(number: float, unit: units.Unit | None, expected: Expected | None = None) -> str:
    """`number` in `unit`, with the digits the claim's own resolution asks for; a value so far from the unit that
    it would read `0.00002003 s` or `2.003e10 µs` is shown with the prefix that suits it (`20.03 µs`)."""
    if unit is None:
        return units.format_count(number)
    prefixed = _prefixed(number, unit, 4)
    if prefixed is not None:
        return prefixed
    decimals = 0
    if expected is not None and expected.unit is not None:
        step = expected.resolution / expected.unit.scale
        decimals = max(0, len(f"{step:.12f}".rstrip("0").partition(".")[2])) + 1 if 0 < step < 1 else 0
    text = units.format_in(number, unit, at_least_decimals=decimals)
    return text if unit.symbol else text.strip()
