"""The table of a measuring run: one row per workload measured and time metric, the model's and the calibrated time
beside the measured median, its spread, the samples, why sampling stopped, what was dropped, and measured / model.

Run: python scripts/measurement_table.py RESULTS.json [--profile PROFILE.json] [--probe PROBE.json]
(RESULTS.json from `gpuspec check --measure --save-results`, PROFILE.json from `gpuspec calibrate`).

The model and calibrated columns are computed for the GPU the measurement ran on, where the catalog knows it: a run
rebound to its GPU (`gpuspec check --device auto`, as scripts/gpu-verify runs it) is read rebound the same way, so a
spec written for the H100 and measured on an H200 is set beside the model's H200 figures, a derived device with its
overrides on the H200; a run that was not rebound is set beside the model of its GPU too (the spec's own device
overrides do not carry over then). The "model device" column says which device the model ran for.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# Time metrics by the kind of workload, in the order they are shown.
TIME_METRICS = ("time", "busy_time", "step_time", "gpu_time")


def model_times(spec: str, key: str, gpu: str | None, profile, device: str | None = None) -> tuple[str, dict, dict]:
    """(the device the model ran for, {metric: model seconds}, {metric: calibrated seconds}) of workload `key` of
    `spec`: on the catalog device of `gpu` where there is one, else on the spec's own.

    A run rebound to its GPU (`gpuspec check --device auto`, as scripts/gpu-verify measures) keyed each workload as
    rebound, so the spec is read rebound to that device (`device`, else the GPU's) first, then as written."""
    from gpuspec import devices, harness, model
    from gpuspec.api import load_spec
    from gpuspec.diagnostics import SpecError
    from gpuspec.sources import Calibrated, NotAvailable, rebind

    target = (devices.lookup(device) if device else None) or devices.for_gpu(gpu)
    workload = None
    for rebound in ((target, None) if target else (None,)):
        try:
            program = load_spec(spec, device=rebound).program
        except SpecError:
            continue
        workload = next((w for _, statement, w in program.workloads if harness.workload_key(statement, w) == key),
                        None)
        if workload is not None:
            break
    if workload is None:
        return "—", {}, {}
    if target and target.name != workload.device.hardware:
        workload = rebind(workload, target)
    modelled, calibrated = {}, {}
    for metric in TIME_METRICS:
        try:
            modelled[metric] = float(model.estimate(workload)[metric].number)
        except Exception:  # noqa: BLE001 -- a metric this kind has not: no cell
            continue
        if profile is not None:
            try:
                calibrated[metric] = float(Calibrated(profile).estimate(workload)[metric].number)
            except (NotAvailable, Exception):  # noqa: BLE001 -- another GPU's profile: no cell
                pass
    device = workload.device
    return (device.name if device.hardware == device.name else f"{device.name} ({device.hardware})"), modelled, \
        calibrated


def rows(results: dict, profile=None, device: str | None = None) -> list[list[str]]:
    found = []
    for run in results["runs"]:
        gpu = run["provenance"].get("gpu")
        for m in run["measurements"]:
            where = f"{run['spec']}:{m['line']}" if m["line"] else run["spec"]
            statement = " ".join(m["statement"].split())[:60] or f"workload {m['key']}"
            if m["status"] != "ok":
                found.append([where, statement, "—", "—", "—", "—", "—", "—", "—", "—", "—",
                              f"{m['status']}: {(m.get('reason') or '')[:80]}"])
                continue
            modelled_on, modelled, calibrated = model_times(run["spec"], m["key"], gpu, profile, device)
            for metric in TIME_METRICS:
                summary = m["metrics"].get(metric)
                if summary is None:
                    continue
                median = summary["median"]
                spread = (summary["p90"] - summary["p10"]) / median if median else 0.0
                ratio = f"{median / modelled[metric]:.2f}" if modelled.get(metric) else "—"
                dropped = sum((summary.get("dropped") or {}).values())
                found.append([where, statement, metric, modelled_on, _us(modelled.get(metric)),
                              _us(calibrated.get(metric)), _us(median), f"±{spread / 2:.1%}", str(summary["samples"]),
                              str(summary.get("stopped_by", "—")), str(dropped), ratio])
    return found


def _us(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1e6:,.2f} µs"


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="a results file (gpuspec check --measure --save-results)")
    parser.add_argument("--profile", help="a calibration profile (gpuspec calibrate --out)")
    parser.add_argument("--probe", help="the probe's report, summarised under the table")
    parser.add_argument("--device", help="the catalog device the run was rebound to (gpuspec check --device), when "
                                         "it is not the GPU the results name")
    args = parser.parse_args(argv)
    from gpuspec import profiles, results

    results.read_results(args.results)  # refused with the key and the reason if malformed
    data = json.loads(Path(args.results).read_text(encoding="utf-8"))
    profile = profiles.read_profile(args.profile) if args.profile and Path(args.profile).exists() else None
    provenance = data["runs"][0]["provenance"] if data["runs"] else {}
    print(f"Measured on {provenance.get('gpu') or 'no GPU'} (torch {provenance.get('torch', '?')}, triton "
          f"{provenance.get('triton', '?')}, {provenance.get('date', '?')}); stream hold "
          f"{provenance.get('stream_hold', '?')}; L2 flush {provenance.get('l2_flush') or 'none'}; SM clock from "
          f"{provenance.get('clock_source') or 'nowhere'}.\n")
    header = ["where", "workload", "metric", "model device", "model", "calibrated", "measured median", "spread",
              "samples", "stopped by", "dropped", "measured / model"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows(data, profile, args.device):
        print("| " + " | ".join(cell(c) for c in row) + " |")
    if args.probe and Path(args.probe).exists():
        print("\n" + probe_summary(json.loads(Path(args.probe).read_text(encoding="utf-8"))))
    return 0


def probe_summary(probe: dict) -> str:
    """The probe's answers in a few lines."""
    lines = ["Method probe:"]
    questions = probe.get("questions", {})
    hold = questions.get("stream_hold", {})
    for name in ("tiny_kernel", "one_mib_kernel"):
        if name in hold:
            lines.append(f"- {name}: held {_us(hold[name]['held']['median'])}, not held "
                         f"{_us(hold[name]['not_held']['median'])} (hold: {hold.get('hold_mode')})")
    flush = questions.get("l2_flush", {})
    for where in ("inside_l2", "beyond_l2"):
        if where in flush:
            kinds = ", ".join(f"{k} {_us(flush[where][k]['median'])}" for k in ("none", "write", "read", "rotate")
                              if k in flush[where])
            lines.append(f"- flush, {where} ({flush[where].get('working_set_bytes', 0):,} bytes): {kinds}")
    width = questions.get("vector_width", {})
    if "speedup" in width:
        lines.append(f"- vectorised over one element per thread: {width['speedup']:.2f}× faster")
    clocks = questions.get("clocks", {})
    if clocks:
        lines.append(f"- SM clock ({clocks.get('source')}): max {clocks.get('max_mhz')} MHz, under load "
                     f"{clocks.get('under_load_mhz')}, idle {clocks.get('idle_mhz')}")
    for name, answer in questions.items():
        if isinstance(answer, dict) and "error" in answer:
            lines.append(f"- {name}: failed: {answer['error'][:200]}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
