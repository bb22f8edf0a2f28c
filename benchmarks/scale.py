"""How gpuspec check scales: claims per second and peak memory for one spec of 1k, 10k and 100k claims, and for
a folder of 2,000 spec files. Each size is checked in a process of its own, so its peak RSS is its own.

Run: python benchmarks/scale.py [--sizes 1000 10000 100000] [--files 2000]

Time should grow linearly with the claims (flat claims/s) and peak RSS stay under 500 MB.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from check_speed import CLAIMS_PER_BLOCK, generate  # noqa: E402  (the same spec the speed benchmark checks)

# Checks the paths given, parsed afresh; prints seconds, verdicts and peak RSS as JSON.
CHILD = """
import json, resource, sys, time
from gpuspec.api import run_check
start = time.perf_counter()
report = run_check(sys.argv[1:])
seconds = time.perf_counter() - start
assert not report.diagnostics, [d.message for d in report.diagnostics][:3]
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux
print(json.dumps({"seconds": seconds, "claims": len(report.verdicts), "files": len(report.files), "peak": peak}))
"""
LIMIT = 500 * 2**20


def measure(paths: list[str]) -> dict:
    env = {**os.environ, "GPUSPEC_NO_CACHE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", CHILD, *paths], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)


def line(label: str, found: dict) -> str:
    rate = found["claims"] / found["seconds"]
    return (f"{label:>24}: {found['claims']:>9,} claims in {found['seconds']:7.2f} s = {rate:>9,.0f} claims/s, "
            f"peak RSS {found['peak'] / 2**20:6.1f} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--files", type=int, default=2_000)
    args = parser.parse_args()
    rates, peaks = [], []
    with tempfile.TemporaryDirectory(prefix="gpuspec-scale-") as name:
        folder = Path(name)
        for size in args.sizes:
            path = folder / f"claims-{size}.gpu"
            path.write_text(generate(size), encoding="utf-8")
            found = measure([str(path)])
            print(line(f"one spec, {size:,} claims", found), flush=True)
            rates.append(found["claims"] / found["seconds"])
            peaks.append(found["peak"])
        specs = folder / "specs"
        specs.mkdir()
        per_file = max(CLAIMS_PER_BLOCK, 50)
        for index in range(args.files):
            (specs / f"spec-{index:04}.gpu").write_text(generate(per_file), encoding="utf-8")
        found = measure([str(specs)])
        print(line(f"{found['files']:,} files", found))
        rates.append(found["claims"] / found["seconds"])
        peaks.append(found["peak"])
    slowest = min(rates) / max(rates)
    print(f"claims/s, slowest size against fastest: {slowest:.2f} (1.00 is perfectly linear)")
    print(f"peak RSS, largest: {max(peaks) / 2**20:.1f} MB "
          f"({'under' if max(peaks) < LIMIT else 'OVER'} the 500 MB budget)")
    return 0 if max(peaks) < LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
