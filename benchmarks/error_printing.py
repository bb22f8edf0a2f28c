"""How printing errors scales: seconds per error for a spec with 2k, 8k and 20k errors, in the text report (with
the line and caret of each), the JUnit report (which carries the same excerpts) and the GitHub annotations.

Run: python benchmarks/error_printing.py [--sizes 2000 8000 20000]

Printing should be linear in the errors: the time per error flat across sizes (each document is split into lines
once, not once per error). Checking the spec is not timed, only printing its report.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpuspec.api import check_text  # noqa: E402
from gpuspec.report import github, junit, text  # noqa: E402

PRINTERS = {"text": text.render, "junit": junit.render, "github": github.render}


def spec(errors: int) -> str:
    """A spec with one error per line, each a name that was never defined, on lines as long as real ones."""
    lines = "".join(f"v{i} = x * undefined_{i} + 2 * x\n" for i in range(errors))
    return "device H100-SXM\nx = bf16[4096, 4096]\n" + lines


def per_error(errors: int) -> dict[str, float]:
    """Seconds per error of each printer, for a report of `errors` errors."""
    report = check_text(spec(errors), "errors.gpu")
    assert len(report.diagnostics) == errors, (len(report.diagnostics), report.diagnostics[:2])
    found = {}
    for name, render in PRINTERS.items():
        start = time.perf_counter()
        render(report)
        found[name] = (time.perf_counter() - start) / errors
    return found


def error_printing(sizes: list[int]) -> dict[str, float]:
    """Print the seconds per error at each size; return each printer's largest size's time per error over the
    smallest's (1.0 is perfectly linear; printing that re-splits the document per error grows with the size)."""
    rows = {size: per_error(size) for size in sizes}
    for size, found in rows.items():
        cells = "  ".join(f"{name} {seconds * 1e6:7.1f} µs" for name, seconds in found.items())
        print(f"{size:>7,} errors, per error: {cells}", flush=True)
    growth = {name: rows[max(sizes)][name] / rows[min(sizes)][name] for name in PRINTERS}
    print(f"per-error time, {max(sizes):,} errors against {min(sizes):,}: "
          + ", ".join(f"{name} {ratio:.2f}x" for name, ratio in growth.items()) + " (1.00 is linear)")
    return growth


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000, 8_000, 20_000])
    args = parser.parse_args()
    growth = error_printing(sorted(args.sizes))
    return 0 if max(growth.values()) < 3 else 1  # quadratic printing grows with the size ratio (10x here)


if __name__ == "__main__":
    sys.exit(main())
