"""The table of a measuring run: per workload, the model's time beside the calibrated and measured ones.

Run: python scripts/measurement_table.py CHECK.json   (the output of `gpuspec check --format json --measure ...`)
"""
from __future__ import annotations

import json
import sys

TIME_METRICS = ("time", "step_time")


def rows(report: dict) -> list[list[str]]:
    """One row per (file, statement) and time metric: model, calibrated, measured, and measured vs model."""
    table: dict[tuple, dict[str, float]] = {}
    for result in report["results"]:
        if result["metric"] not in TIME_METRICS or not isinstance(result.get("actual"), (int, float)):
            continue
        key = (result["file"], result["line"], result["statement"], result["metric"])
        table.setdefault(key, {})[result["source"]] = result["actual"]
    found = []
    for (file, line, statement, metric), values in sorted(table.items()):
        model, calibrated, measured = (values.get(s) for s in ("model", "calibrated", "measured"))
        error = f"{(measured - model) / model * 100:+.1f}%" if model and measured is not None else "—"
        found.append([f"{file}:{line}", statement, metric, _us(model), _us(calibrated), _us(measured), error])
    return found


def _us(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1e6:,.2f} µs"


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        report = json.load(handle)
    header = ["where", "workload", "metric", "model", "calibrated", "measured", "measured vs model"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows(report):
        print("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")


if __name__ == "__main__":
    main()
