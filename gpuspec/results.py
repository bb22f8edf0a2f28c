"""Measurements with their provenance: read a harness report, save and load results files, merge them.

A results file holds runs; a run is one harness program's report (the machine it ran on, when, with which
versions) and its measurements. Files from several machines combine by listing their runs together.
"""
from __future__ import annotations

import json
from pathlib import Path

from attrs import field

from gpuspec.files import read_json, write_atomically
from gpuspec.record import Record, record

VERSION = 1
STATUSES = ("ok", "wrong", "error")


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
    """The measurements in one harness program's JSON report. ResultsError if it is malformed."""
    if not isinstance(report, dict) or report.get("version") != VERSION:
        raise ResultsError("not a gpuspec harness report of version 1")
    provenance = report.get("provenance")
    if not isinstance(provenance, dict):
        raise ResultsError("the report has no provenance")
    found = []
    for item in _list(report.get("workloads")):
        try:
            status = item["status"]
            if status not in STATUSES:
                raise ResultsError(f"unknown status {status!r}")
            metrics = item.get("metrics", {}) if status == "ok" else {}
            for name, summary in metrics.items():
                if not isinstance(summary, dict) or not isinstance(summary.get("median"), (int, float)):
                    raise ResultsError(f"metric {name!r} has no median")
            found.append(Measurement(str(item["key"]), spec, int(item["line"]), str(item["statement"]), status,
                                     item.get("reason"), metrics, provenance))
        except (KeyError, TypeError, ValueError) as error:
            raise ResultsError(f"a malformed workload in the report: {error}") from None
    for item in _list(report.get("refused")):
        found.append(Measurement(str(item.get("key")), spec, 0, "", "error", f"no harness: {item.get('reason')}",
                                 {}, provenance))
    return found


def _list(value) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ResultsError("expected a list in the report")
    return value


def save(path: str | Path, measurements: list[Measurement]) -> None:
    """Write measurements as a results file: to a temporary file beside it, then renamed over it."""
    runs: dict[str, dict] = {}
    for m in measurements:
        run = runs.setdefault(json.dumps(m.provenance, sort_keys=True) + m.spec,
                              {"spec": m.spec, "provenance": m.provenance, "measurements": []})
        run["measurements"].append({"key": m.key, "line": m.line, "statement": m.statement, "status": m.status,
                                    "reason": m.reason, "metrics": m.metrics})
    text = json.dumps({"version": VERSION, "runs": list(runs.values())}, indent=1, ensure_ascii=False) + "\n"
    write_atomically(path, text)


def load(path: str | Path) -> list[Measurement]:
    """Every measurement in a results file. ResultsError (with the reason) if it is not one."""
    data = read_json(path, ResultsError)
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("runs"), list):
        raise ResultsError(f"{path} is not a gpuspec results file of version {VERSION}")
    found = []
    for run in data["runs"]:
        if not isinstance(run, dict):
            raise ResultsError(f"{path}: a run is not an object")
        report = {"version": VERSION, "provenance": run.get("provenance"), "workloads": run.get("measurements")}
        found.extend(from_report(report, str(run.get("spec", ""))))
    return found


def by_key(measurements: list[Measurement]) -> dict[str, list[Measurement]]:
    """Measurements grouped by workload key, in the order given (several machines may have measured one)."""
    grouped: dict[str, list[Measurement]] = {}
    for m in measurements:
        grouped.setdefault(m.key, []).append(m)
    return grouped
