"""The terminal report: a mark per claim, each failure with its value and derivation, errors with a caret.

Every line passes through report.safe: what a user wrote is shown, never acted on by a terminal or a CI log.
"""
from __future__ import annotations

from collections.abc import Mapping

from attrs import evolve

from gpuspec.diagnostics import Diagnostic
from gpuspec.model.values import Value
from gpuspec.report import Report
from gpuspec.report.safe import log_line, masked, shown_line
from gpuspec.verdicts import Verdict

_MARKS = {"pass": ".", "fail": "F", "skip": "s"}


WHOLE = 64  # levels of a derivation that `-v` shows: every one, down to each device fact and its source


def render(report: Report, verbose: int = 0) -> str:
    """The text report: a mark per claim (`verbose` 0); a line per claim, each failure's whole derivation (1,
    `-v`); and each passing claim's derivation under its line too (2, `-vv`)."""
    level = int(verbose)
    lines: list[str] = []
    documents = Documents(report.texts)
    by_file: dict[str, list[Verdict]] = {}
    for verdict in report.verdicts:
        by_file.setdefault(verdict.claim.span.file, []).append(verdict)
    if level:
        for verdict in report.verdicts:
            claim = verdict.claim
            status = verdict.status.upper()
            lines.append(f"{status:4} {claim.span}: {claim.text}  [{verdict.source}]  {verdict.message}")
            if level >= 2 and verdict.status != "fail" and verdict.actual is not None:  # a failure's is below
                lines.extend("    " + line for line in derivation(verdict.actual, depth=WHOLE))
    else:
        for path, verdicts in by_file.items():
            lines.append(f"{path} {''.join(_MARKS[v.status] for v in verdicts)}")
    by_claim: dict[int, list[Verdict]] = {}
    for verdict in report.verdicts:
        by_claim.setdefault(id(verdict.claim), []).append(verdict)
    failures = [v for v in report.verdicts if v.status == "fail"]
    if failures:
        lines.append("")
    for verdict in failures:
        lines.extend(failure(verdict, by_claim[id(verdict.claim)], whole=bool(level), depth=WHOLE if level else 3))
    if failures and not level and any(shortened(v.actual) for v in failures):
        lines.append("(-v shows each failure's whole derivation)")
    if report.warnings:
        lines.append("")
        for warning in report.warnings:
            lines.extend(error(warning, documents, kind="warning"))
    if report.diagnostics:
        lines.append("")
        for diagnostic in report.diagnostics:
            lines.extend(error(diagnostic, documents))
        count = len(report.diagnostics)
        files = len({d.span.file for d in report.diagnostics if d.span})
        lines.append(f"{count} error{'s' * (count != 1)} in {files or 1} file{'s' * (files > 1)}")
    if report.rebound is not None:
        lines.append(report.rebound.line())
    nothing = report.nothing_checked()
    if nothing:
        lines.append(nothing)
    lines.append(report.summary_line())
    return "\n".join(shown_line(line) for line in lines) + "\n"


def sources_line(verdicts: list[Verdict]) -> str:
    """Every source's value for one claim, side by side: `model 20.03 µs ✓ · measured 22.90 µs ✗`."""
    from gpuspec.verdicts import show

    parts = []
    for v in verdicts:
        if v.actual is None:
            parts.append(f"{v.source} —")
        else:
            where = f" ({v.profile})" if v.profile else ""
            parts.append(f"{v.source} {show(v.actual, v.claim.expected)}{where} {'✓' if v.status == 'pass' else '✗'}")
    return " · ".join(parts)


def realistic_line(verdict: Verdict) -> str:
    """The ideal value beside what a real device takes: `ideal 20.03 µs; a real H100-SXM: ≈ 22.3 µs (published
    profile of H100-SXM)`."""
    from gpuspec.verdicts import show

    device = next((w.device.name for w in _workloads(verdict.claim.subject)), None)
    real = f"a real {device}" if device else "on a real device"
    if verdict.source == "model":
        ideal, realistic, profile = verdict.actual, verdict.realistic, verdict.realistic_profile
    else:
        ideal, realistic, profile = verdict.ideal, verdict.actual, verdict.profile
    where = f" ({profile})" if profile else ""
    return (f"ideal {show(ideal, verdict.claim.expected)}; {real}: "
            f"≈ {show(realistic, verdict.claim.expected)}{where}")


def _workloads(ref):
    workload = getattr(ref, "workload", None)
    if workload is not None:
        yield workload
    for child in getattr(ref, "args", ()) or ((ref.expr,) if hasattr(ref, "expr") else ()):
        yield from _workloads(child)


def failure(verdict: Verdict, siblings: list[Verdict] | None = None, whole: bool = True, depth: int = 3) \
        -> list[str]:
    """A failure: where, the claim, the value against the interval, and its derivation: the tree to `depth`
    levels, or (not whole) the lines that decide it."""
    claim = verdict.claim
    # a message may hold text from a results file (a harness's reason, a GPU's name): shown, never acted on
    lines = [f"{claim.span}: fail: {claim.statement}",
             f"    claim: {claim.text}",
             f"    {verdict.message}  [{verdict.source}]"]
    if siblings and len(siblings) > 1:
        lines.append(f"    sources: {sources_line(siblings)}")
    if verdict.realistic is not None or verdict.ideal is not None:
        lines.append(f"    {realistic_line(verdict)}")
    if claim.quote:
        lines.append(f"    quote: “{claim.quote}”")
    if verdict.actual is not None:
        lines.extend("    " + line for line in failed_derivation(verdict, depth, whole))
    return [shown_line(line) for line in lines]


def failed_derivation(verdict: Verdict, depth: int = 3, whole: bool = True) -> list[str]:
    """A failure's derivation (the tree to `depth` levels, or, not whole, the lines that decide it), its value with
    the digits the message gave it where fewer would hide why the claim fails, so that the two agree."""
    assert verdict.actual is not None
    shown = derivation(verdict.actual, depth) if whole else deciding(verdict.actual)
    result = _result(verdict)
    return [verdict.actual.derivation(result), *shown[1:]] if result is not None else shown


def _result(verdict: Verdict) -> str | None:
    """The failing value as the message shows it, where the derivation's fewer digits would hide why the claim
    fails: where they would seem to make it hold (`= 562 FLOP/B` for 562.5 FLOP/B, which fails `= 562 FLOP/B`), or,
    for a claim of `=` (which holds to the digits written), are fewer than the claim's own (`= 295 FLOP/B` for
    295.34 FLOP/B, which fails `= 295.4 FLOP/B`). None where they cannot be mistaken."""
    from attrs import evolve

    from gpuspec.verdicts import holds, show

    value, expected = verdict.actual, verdict.claim.expected
    if value is None or isinstance(value.number, str) or expected.unit is None or value.low != value.high:
        return None
    formatted, shown = value.format(), show(value, expected)
    number, _, unit = formatted.partition(" ")
    if shown == formatted or unit != expected.unit.symbol:
        return None
    try:
        rounded = float(number.replace(",", "")) * expected.unit.scale
    except ValueError:
        return None
    if holds(evolve(value, number=rounded), verdict.claim):
        return shown
    coarser = _place(number) * expected.unit.scale > expected.resolution * 1.000001
    return shown if verdict.claim.comparator == "=" and coarser else None


def _place(number: str) -> float:
    """The place value of a formatted number's last digit: 1 for `295`, 0.01 for `295.34`, 1e22 for `3.60e24`."""
    mantissa, _, exponent = number.replace(",", "").lower().partition("e")
    return 10.0 ** (int(exponent or 0) - len(mantissa.partition(".")[2]))


def deciding(value: Value) -> list[str]:
    """The one or two lines of value's derivation that decide it: its own, then the input that settles it, the
    winning term of a max or min (`time = max(t_mem, t_math, floor)`, then `t_mem = ...`) or the largest of a
    sum. A renaming is seen through; a given value is its one line."""
    lines = [value.derivation()]
    while value.rule == "{0}" and value.inputs and value.inputs[0].name == value.name:
        value = value.inputs[0]  # its line is its input's
    called = value.inputs[0].name if value.rule == "{0}" and value.inputs else None
    while value.rule == "{0}" and value.inputs:
        value = value.inputs[0]
    if called is not None and value.rule is not None:
        # a renaming of a computed value (`kernel_time = the repeated workload's time`): that value's formula, under
        # the name the line above gives it, is what decides it
        return [*lines, "  " + _called(value, called)]
    decider = _decider(value)
    if decider is not None:
        line = _called(*decider)
        if line != lines[0]:
            lines.append("  " + line)
    return lines


def _decider(value: Value) -> tuple[Value, str] | None:
    """The input that settles value, if one does and it has a derivation worth a line, with the name value's formula
    gives it (a renamed input is derived under that name)."""
    numeric = [i for i in value.inputs if not isinstance(i.number, str)]
    if not numeric or value.rule is None:
        return None
    if value.rule.startswith(("max(", "min(")):
        found = next((i for i in numeric if i.number == value.number), None)
    elif value.rule.replace(" ", "").replace("{", "").replace("}", "").replace("+", "").isdigit():  # a sum
        found = max(numeric, key=lambda i: abs(i.number))  # type: ignore[arg-type]
    else:
        return None
    if found is None:
        return None
    called = found.name
    while found.rule == "{0}" and found.inputs:
        found = found.inputs[0]
    if found.rule is None and found.reference is None:
        return None
    return found, called


def shortened(value: Value | None) -> bool:
    """Whether the deciding lines leave out some of value's derivation."""
    return value is not None and len(derivation(value)) > len(deciding(value))


def derivation(value: Value, depth: int = 3) -> list[str]:
    """The value's derivation, then those of its inputs, indented, to `depth` levels, each value once (an
    operand written twice, `y.time + y.time`, is derived once)."""
    lines: list[str] = []
    seen: set[int] = set()
    said: set[str] = set()

    def walk(v: Value, level: int, called: str | None = None) -> None:
        while v.rule == "{0}" and v.inputs[0].name == v.name:  # a renaming to its own name: its input's line
            v = v.inputs[0]
        if id(v) in seen or level > depth:
            return
        seen.add(id(v))
        if v.rule is None and v.reference is None and level > 0:
            return
        if v.rule == "{0}" and level > 0:  # a plain renaming says nothing new: its value is derived under its name
            walk(v.inputs[0], level, called or v.name)
            return
        line = _called(v, called)
        if line in said:
            return
        said.add(line)
        lines.append("  " * level + line)
        for child in v.inputs:
            walk(child, level + 1)

    walk(value, 0)
    return lines


def _called(value: Value, name: str | None) -> str:
    """Value's derivation under the name its parent's formula gives it (`kernel_time = max(t_mem, ...)` under
    `busy_time = kernels × kernel_time`, where the value is the repeated workload's `time`): a device fact keeps its
    own name too (`host_time = graph_launch_cost = 2.50 µs [S-RRZE]`)."""
    if name is None or name == value.name:
        return value.derivation()
    if value.rule is None:
        return f"{name} = {value.derivation()}"
    return evolve(value, name=name).derivation()


class Documents:
    """Each file's text split into lines once, when a diagnostic first needs a line of it: printing N errors
    of one document is linear in N, not N times its length."""

    def __init__(self, texts: Mapping[str, str]):
        self.texts = texts
        self._lines: dict[str, list[str]] = {}

    def line(self, path: str, number: int) -> str | None:
        """The 1-based line `number` of the file at `path`, without its line break; None if there is none."""
        if path not in self._lines:
            if path not in self.texts:
                return None
            self._lines[path] = split(self.texts[path])
        lines = self._lines[path]
        return lines[number - 1] if 0 < number <= len(lines) else None


def split(text: str) -> list[str]:
    # Lark counts lines by \n only (a lone \r or U+2028 does not end one), so positions are in these lines.
    return text.split("\n")


def error(diagnostic: Diagnostic, texts: Documents | Mapping[str, str], kind: str = "error") -> list[str]:
    """A diagnostic as an error (or warning) with its line and a caret under the place. Pass the same
    Documents for every diagnostic of a run: a plain mapping is split again on each call."""
    documents = texts if isinstance(texts, Documents) else Documents(texts)
    span = diagnostic.span
    where = f"{span}: " if span else ""
    lines = [shown_line(f"{where}{kind}[{diagnostic.code}]: {diagnostic.message}")]
    text = documents.line(span.file, span.line) if span is not None else None
    if text is not None and not text.strip() and diagnostic.code == "unreadable":
        text = None  # a file that could not be read has no line to show
    if text is not None:
        text = text.rstrip("\r")
        shown_text = log_line(masked(text.expandtabs(4)))
        # tabs widen the line before the caret; an escaped workflow command widens it too
        column = len(log_line(masked(text[:span.column - 1]).expandtabs(4))) + 1
        if len(shown_text) > 160:  # very long lines: show the part around the error
            start = max(0, column - 60)
            shown_text, column = "…" + shown_text[start:start + 120] + "…", column - start + 1
        same_line = span.end_line == span.line
        width = max(1, (span.end_column - span.column) if same_line else len(text) - span.column + 1)
        lines.append(shown_line(f"    {shown_text}"))
        lines.append(f"    {' ' * (column - 1)}{'^' * min(width, 120)}")
    if diagnostic.help:
        lines.append(shown_line(f"    help: {diagnostic.help}"))
    return lines
