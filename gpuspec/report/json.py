"""The JSON report: one versioned object with every result and error, for tools to read.

It is strict JSON (RFC 8259): a number that is not finite, which JSON cannot hold, is written as the string
"Infinity", "-Infinity" or "NaN" (the model refuses such values, so none should reach a report).
"""
from __future__ import annotations

import json
import math
import re

from gpuspec import units
from gpuspec.report import Report
from gpuspec.verdicts import Verdict

VERSION = 1


def to_dict(report: Report) -> dict:
    return {
        "version": VERSION,
        "results": [_result(v) for v in report.verdicts],
        "errors": [_diagnostic(d) for d in report.diagnostics],
        # what changes no verdict (a Markdown fence that is nearly a gpu block), with the fix
        "warnings": [_diagnostic(d) for d in report.warnings],
        # why no claim was checked (exit 5), in one line; null when some claim was, or an input is invalid
        "nothing_checked": report.nothing_checked(),
        # `check --device`: the catalog device every spec's `device` statements stood for; null when none
        "rebound": _rebound(report.rebound),
        "summary": report.summary,
    }


def _rebound(rebound) -> dict | None:
    if rebound is None:
        return None
    return {"device": rebound.device, "title": rebound.title, "asked": rebound.asked, "gpu": rebound.gpu,
            "line": rebound.line()}


def _diagnostic(diagnostic) -> dict:
    span = diagnostic.span
    return {"file": span.file if span else None, "line": span.line if span else None,
            "column": span.column if span else None, "code": diagnostic.code, "message": diagnostic.message,
            "help": diagnostic.help}


def _result(verdict: Verdict) -> dict:
    claim, actual = verdict.claim, verdict.actual
    number = None if actual is None else actual.number
    dimension = None if actual is None else actual.dimension
    result = {
        "file": claim.span.file,
        "line": claim.span.line,
        "column": claim.span.column,
        "claim": claim.text,
        "statement": claim.statement,
        "metric": claim.metric,
        "comparator": claim.comparator,
        "expected": claim.expected.written,
        "actual": number,
        "unit": units.si_symbol(dimension) if dimension is not None else None,
        "source": verdict.source,
        "status": verdict.status,
        "message": verdict.message,
        "quote": claim.quote,
    }
    if actual is not None and actual.low is not None and actual.low != actual.high:
        result["actual_range"] = [actual.low, actual.high]
    if claim.tolerance is not None:
        result["tolerance"] = claim.tolerance.written
    if actual is not None:
        result["derivation"] = actual.derivation()
    if verdict.profile:
        result["profile"] = verdict.profile
    if verdict.ideal is not None and isinstance(verdict.ideal.number, (int, float)):
        result["ideal"] = verdict.ideal.number
    if verdict.realistic is not None and isinstance(verdict.realistic.number, (int, float)):
        result["realistic"] = {"actual": verdict.realistic.number, "profile": verdict.realistic_profile}
    return result


def render(report: Report) -> str:
    data = to_dict(report)
    try:
        text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
    except ValueError:  # a number JSON cannot hold: written as a string instead of a bare NaN or Infinity
        text = json.dumps(_strict(data), indent=2, ensure_ascii=False, allow_nan=False)
    # A file name that is not UTF-8 holds lone surrogates (its bad bytes): written as JSON's \udcff escapes,
    # which read back as the same name, where the raw characters could not be encoded at all.
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m[0]):04x}", text) + "\n"


def _strict(data):
    """`data` with every float that is not finite replaced by its name as a string."""
    if isinstance(data, float) and not math.isfinite(data):
        return "NaN" if math.isnan(data) else ("Infinity" if data > 0 else "-Infinity")
    if isinstance(data, dict):
        return {key: _strict(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [_strict(item) for item in data]
    return data
