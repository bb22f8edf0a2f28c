"""Measurements with their provenance: read a harness report, save and load results files, merge them.

A results file holds runs; a run is one harness program's report (the machine it ran on, when, with which
versions) and its measurements. Files from several machines combine by listing their runs together.
"""
from __future__ import annotations

import json
from pathlib import Path

from attrs import field

from gpuspec import schema
from gpuspec.files import json_bytes, read_json, write_atomically
from gpuspec.record import Record, record

VERSION = schema.VERSION
STATUSES = schema.STATUSES


class ResultsError(ValueError):
    """A results file or harness report that is not what gpuspec wrote."""


@record
class Measurement(Record):
    """What one harness measured for one workload: timing summaries by metric, or why there are none."""

    key: str
    spec: str
    line: int
    statement: str
    status: str  # ok, wrong (the kernel's result was wrong), error (it crashed, hung or ran out of memory)
    reason: str | None
    metrics: dict = field(factory=dict)  # metric -> {"median": seconds, "p10", "p90", "samples", ...}
    provenance: dict = field(factory=dict)

    @property
    def gpu(self) -> str:
        return self.provenance.get("gpu") or f"{self.provenance.get('device', 'unknown')} (no GPU)"


def from_report(report: dict, spec: str) -> list[Measurement]:
    """The measurements in one harness program's JSON report. ResultsError, naming the key, if it is malformed or
    holds numbers that are not finite or contradict each other (a broken GPU run). Reasons and statements too long
    to keep are cut (a compiler's error text)."""
    if not isinstance(report, dict) or report.get("version") != VERSION:
        raise ResultsError("not a gpuspec harness report of version 1")
    report = {**report, **{part: _cut(report[part]) for part in ("workloads", "refused") if part in report}}
    try:
        schema.REPORT.check(report, "")
    except schema.Invalid as problem:
        raise ResultsError(f"in the report, {problem}") from None
    provenance = dict(report["provenance"])
    found = [_measurement(item, spec, provenance) for item in report.get("workloads", [])]
    found += [Measurement(item["key"], spec, 0, "", "error", f"no harness: {item['reason']}", {}, provenance)
              for item in report.get("refused", [])]
    return found


def read_report(path: str | Path, spec: str) -> list[Measurement]:
    """The measurements in the report a harness program wrote to `path`. ResultsError with the reason if it is
    not a report gpuspec can use."""
    return from_report(read_json(path, ResultsError, what="a harness report"), spec)


def _measurement(item: dict, spec: str, provenance: dict) -> Measurement:
    """A measurement the schema passed; timings only when it went well."""
    metrics = {name: dict(summary) for name, summary in item.get("metrics", {}).items()} \
        if item["status"] == "ok" else {}
    return Measurement(item["key"], spec, item["line"], item["statement"], item["status"], item.get("reason"),
                       metrics, provenance)


# Text kept for people to read, and how much of it: longer is cut (with a note) rather than refused.
_CUT = {"reason": schema.REASON_LONGEST, "statement": schema.STATEMENT_LONGEST}


def _cut(items):
    """`items` with each reason and statement that is text cut to what is kept; anything else as it was, for the
    check to name."""
    if not isinstance(items, list):
        return items
    return [{**item, **{name: schema.shortened(item[name], longest) for name, longest in _CUT.items()
                        if isinstance(item.get(name), str)}} if isinstance(item, dict) else item for item in items]


def save(path: str | Path, measurements: list[Measurement]) -> None:
    """Write measurements as a results file: to a temporary file beside it, then renamed over it. Reasons and
    statements too long to keep are cut; ResultsError (and nothing written) for a measurement `read_results`
    would refuse."""
    runs: dict[str, dict] = {}
    for m in measurements:
        try:
            schema.PROVENANCE.check(m.provenance, "provenance")
        except schema.Invalid as problem:
            raise ResultsError(f"cannot save {path}: the measurement {schema.describe(m.key)}: {problem}") from None
        run = runs.setdefault(json.dumps(m.provenance, sort_keys=True) + repr(m.spec),
                              {"spec": m.spec, "provenance": m.provenance, "measurements": []})
        run["measurements"] += _cut([{"key": m.key, "line": m.line, "statement": m.statement, "status": m.status,
                                      "reason": m.reason, "metrics": m.metrics}])
    data = {"version": VERSION, "runs": list(runs.values())}
    try:
        schema.RESULTS.check(data, "")
    except schema.Invalid as problem:
        raise ResultsError(f"cannot save {path}: {problem}") from None
    write_atomically(path, json_bytes(data))


def read_results(path: str | Path) -> list[Measurement]:
    """Every measurement in a results file. ResultsError (naming the file, the key and what would be right) if it
    is not one."""
    data = schema.read_checked(path, ResultsError, schema.RESULTS, ("runs", list), "a results file",
                               "a gpuspec results file")
    return [_measurement(item, run["spec"], dict(run["provenance"]))
            for run in data["runs"] for item in run["measurements"]]


def by_key(measurements: list[Measurement]) -> dict[str, list[Measurement]]:
    """Measurements grouped by workload key, in the order given (several machines may have measured one)."""
    grouped: dict[str, list[Measurement]] = {}
    for m in measurements:
        grouped.setdefault(m.key, []).append(m)
    return grouped
