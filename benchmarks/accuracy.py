"""How close gpuspec's times are to published measurements: every figure of benchmarks/accuracy/corpus/ set against
the ideal model (datasheet ceilings) and the calibrated source (the published profile of the figure's device).

    python benchmarks/accuracy.py            per figure the measured time, the ideal, calibrated and left-out
                                             predictions with their errors; then the medians and worst by kind
    python benchmarks/accuracy.py --table    only the summary table, as README shows it
    python benchmarks/accuracy.py --counts   the corpus's figures by file and device, as its README shows them

Error = predicted time / measured time − 1 (a figure written as a rate is turned into a time first, by the
language's own counts: model/observed.py). A figure is *in-sample* when its calibrated prediction rests on a number
its own source (its `# origin:`) gave: a profile fact derived from that origin's measurements, or a catalog fact
citing it (its `# fits:` line names what the source gave); its calibrated error with the whole profile says how
well the profile fits. Every figure is also predicted *out-of-sample*: by a profile built without its origin (leave
one origin out), on its device with the catalog facts that cite that origin taken away too, which is the error a
user of a figure from a new source should expect. A figure that cannot be predicted without its source (a fact
only its source gives) has no out-of-sample error, and the table counts it.
"""
from __future__ import annotations

import functools
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import attrs  # noqa: E402

from gpuspec import api, model, published, units  # noqa: E402
from gpuspec.model.values import leaves  # noqa: E402
from gpuspec.sources import facts_used, rebind  # noqa: E402

CORPUS = ROOT / "benchmarks" / "accuracy" / "corpus"
KINDS = ("memory-bound", "norms", "launches", "matmul", "attention", "decode", "prefill", "collectives")
_COMMENT = re.compile(r"^#\s*(id|origin|fits):\s*(.*)$")
# The catalog (catalog/devices.toml) cites some of the corpus's origins for its own facts: a figure predicted
# without its origin must not lean on them either.
CATALOG_ORIGINS = {"S-RRZE": "rrze-gpu-benches", "S-MLE": "ml-engineering", "S-SB-GPU": "scaling-book",
                   "S-CC-H100": "chips-and-cheese"}


class Figure:
    def __init__(self, kind, name, meta, workload, line):
        self.kind, self.name, self.meta, self.workload, self.line = kind, name, meta, workload, line
        self.id, self.origin = meta["id"], meta["origin"]
        self.device = workload.device.name

    @functools.cached_property
    def calibrated(self):
        """The figure's time by its device's whole published profile, with its derivation."""
        return _time_value(self.workload, published.build(self.device).apply(self.workload.device))

    @property
    def in_sample(self) -> bool:
        """Whether the calibrated prediction rests on a number the figure's own source gave."""
        return self.origin in origins_used(self.calibrated, published.build(self.device))

    def errors(self) -> dict[str, float | None]:
        ideal = model.estimate(self.workload)
        measured = ideal["observed_time"].number
        times = {"ideal": ideal["time"].number, "calibrated": self.calibrated.number,
                 "out_of_sample": left_out_time(self)}
        return {"measured": measured, **times,
                **{f"{k}_error": None if v is None else v / measured - 1 for k, v in times.items()}}


def left_out_time(figure: Figure) -> float | None:
    """The figure's time by the profile built without its origin, on its device without the catalog facts that cite
    that origin; None when it cannot be computed without them."""
    left_out = published.build(figure.device, exclude=(figure.origin,))
    try:
        device = left_out.apply(without_origin(figure.workload.device, figure.origin))
        return _time_value(figure.workload, device).number
    except model.ModelError:
        return None


def without_origin(device, origin: str):
    """`device` without the catalog facts whose reference is `origin`'s."""
    refs = {ref for ref, cited in CATALOG_ORIGINS.items() if cited == origin}
    kept = {name: fact for name, fact in device.facts.items() if fact.reference not in refs}
    return attrs.evolve(device, facts=kept) if len(kept) < len(device.facts) else device


def _time_value(workload, device):
    return model.estimate(rebind(workload, device))["time"]


def origins_used(value, profile) -> set[str]:
    """The origins of the numbers a derivation rests on: of each profile fact it uses (its derivation's origins),
    and of each catalog fact whose reference CATALOG_ORIGINS names."""
    found = {CATALOG_ORIGINS[leaf.reference] for leaf in leaves(value) if leaf.reference in CATALOG_ORIGINS}
    for name in facts_used(value, profile):
        found.update((profile.derivations.get(name) or {}).get("origins", ()))
    return found


def _comments(path: Path) -> dict[int, dict[str, str]]:
    """The comment block above each line: line number -> {id, origin, fits}."""
    blocks, current = {}, {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        found = _COMMENT.match(line.strip())
        if found:
            current[found.group(1)] = found.group(2)
        elif line.strip() and not line.lstrip().startswith("#"):
            if current.keys() >= {"id", "origin", "fits"}:
                blocks[number] = current
            current = {} if "observed" in line else current
    return blocks


def figures() -> list[Figure]:
    found = []
    for kind in KINDS:
        path = CORPUS / f"{kind}.gpu"
        blocks = _comments(path)
        program = api.load_spec(path).program
        for span, text, workload in program.workloads:
            if getattr(workload, "observed", None) is None:
                continue
            meta = blocks.get(span.line)
            if meta is None:
                raise SystemExit(f"{path}:{span.line}: a figure without its # id, # origin and # fits lines")
            found.append(Figure(kind, text.split("=")[0].strip(), meta, workload, span.line))
    return found


def evaluate() -> list[tuple[Figure, dict]]:
    return [(f, f.errors()) for f in figures()]


def summary(rows) -> list[dict]:
    """One row per kind and one for all: counts, median and worst absolute errors (in percent)."""
    out = []
    for kind in (*KINDS, "all"):
        mine = [(f, e) for f, e in rows if kind in ("all", f.kind)]
        inside = [e for f, e in mine if f.in_sample]
        outside = [e["out_of_sample_error"] for _, e in mine if e["out_of_sample_error"] is not None]
        out.append({"kind": kind, "figures": len(mine), "in_sample": len(inside),
                    "ideal": _stats([e["ideal_error"] for _, e in mine]),
                    "in_sample_calibrated": _stats([e["calibrated_error"] for e in inside]),
                    "out_of_sample": _stats(outside), "unpredictable": len(mine) - len(outside)})
    return out


def _stats(errors: list[float]) -> tuple[float, float] | None:
    if not errors:
        return None
    absolute = [abs(e) * 100 for e in errors]
    return statistics.median(absolute), max(absolute)


def _cell(stats, unpredictable: int = 0) -> str:
    shown = "-" if stats is None else f"{stats[0]:.1f}% ({stats[1]:.0f}%)"
    return shown + (f", {unpredictable} not without its source" if unpredictable else "")


def table(rows) -> str:
    lines = ["| kind | figures | ideal model | calibrated, in-sample | calibrated, out-of-sample |",
             "| --- | --- | --- | --- | --- |"]
    for row in summary(rows):
        lines.append(f"| {row['kind']} | {row['figures']} ({row['in_sample']} in-sample) | {_cell(row['ideal'])} | "
                     f"{_cell(row['in_sample_calibrated'])} | {_cell(row['out_of_sample'], row['unpredictable'])} |")
    return "\n".join(lines)


def counts(found: list[Figure]) -> str:
    """The corpus by file and device (devices by how many figures they have, then by name), and how many figures
    of each file are in-sample (their time rests on a number their own source gave)."""
    by_device: dict[str, int] = {}
    for figure in found:
        by_device[figure.device] = by_device.get(figure.device, 0) + 1
    columns = sorted(by_device, key=lambda d: (-by_device[d], d))
    lines = ["| file | figures | " + " | ".join(columns) + " | in-sample |",
             "| --- | --- | " + " | ".join("---" for _ in columns) + " | --- |"]

    def row(label: str, mine: list[Figure]) -> str:
        cells = [str(sum(f.device == d for f in mine)) or "-" for d in columns]
        cells = [c if c != "0" else "-" for c in cells]
        return f"| {label} | {len(mine)} | " + " | ".join(cells) + f" | {sum(f.in_sample for f in mine)} |"

    for kind in KINDS:
        lines.append(row(f"`{kind}.gpu`", [f for f in found if f.kind == kind]))
    lines.append(row("all", found))
    return "\n".join(lines)


def _predicted(e: dict, source: str) -> str:
    """A prediction and its error, as one column shows it: `22.3 µs +4.3%` (`-` where there is none)."""
    if e[source] is None:
        return "-"
    return f"{units.format_si(e[source], units.TIME)} {e[source + '_error'] * 100:+6.1f}%"


def per_figure(rows) -> str:
    """One line per figure: what was measured, and each source's time with its error."""
    lines = [f"{'kind':13} {'figure':44} {'sample':6} {'measured':>10}  {'ideal':>18}  {'calibrated':>18}  "
             f"{'left out':>18}"]
    for f, e in rows:
        lines.append(f"{f.kind:13} {f.name[:44]:44} {'in' if f.in_sample else 'out':6} "
                     f"{units.format_si(e['measured'], units.TIME):>10}  {_predicted(e, 'ideal'):>18}  "
                     f"{_predicted(e, 'calibrated'):>18}  {_predicted(e, 'out_of_sample'):>18}")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    if "-h" in argv or "--help" in argv:
        print(__doc__.strip())
        return
    if "--counts" in argv:
        print(counts(figures()))
        return
    rows = evaluate()
    if "--table" not in argv:
        print(per_figure(rows))
        print()
    print("Median absolute error (worst in brackets); calibrated in-sample: figures whose source gave numbers to the")
    print("profile, with the whole profile; out-of-sample: every figure, its own source left out of the profile")
    print("and of the catalog facts that cite it (a figure that then has no prediction is counted).\n")
    print(table(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
