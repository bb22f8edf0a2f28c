"""How fast gpuspec checks: claims per second, in process and through the command line, and start-up against a bare
import. Each figure is printed beside its target (issue 17); the start-up figures are ratios measured in one run, the
commands taking turns, so that a busy machine slows them alike.

Run: python benchmarks/check_speed.py [--claims N] [--runs N]
"""
from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The targets of issue 17.
CLAIMS_PER_S = 5_000
WARM_RATIO = 1.5
COLD_RATIO = 2.0

# Each block of lines makes a new workload and several claims on it, as a real spec would.
TEMPLATE = """x{i} = bf16[{n}, 4096]
y{i} = x{i} * 2 + {i}:
    "A sentence that the claims below check."
    {elements} elements, ≈ {t_us:.3g} µs, memory-bound
    2 kernels, 1 round trip
    y{i}.t_mem / y{i}.t_math ≈ 80×
    waves ≈ {waves:.4g}
"""
CLAIMS_PER_BLOCK = 7
HBM = 3.35e12  # the H100-SXM's bandwidth, B/s
DTYPES = {"bf16": 2, "fp16": 2, "fp32": 4}


def generate(claims: int) -> str:
    lines = ["device H100-SXM", "set tolerance = 10%"]
    for i in range(claims // CLAIMS_PER_BLOCK):
        n = 1024 * (1 + i % 64)  # large enough that no kernel sits on the kernel floor
        elements = n * 4096
        t_us = 2 * 4 * elements / HBM * 1e6
        waves = (elements / 256) / 1056
        lines.append(TEMPLATE.format(i=i, n=n, elements=f"{elements:,}", t_us=t_us, waves=waves))
    return "\n".join(lines) + "\n"


def generate_one_liners(claims: int) -> str:
    """`x*2 on 4096² bf16 is ≈20µs` and its variants: one workload and one claim a line, each line another."""
    lines = ["device H100-SXM", "set tolerance = 10%"]
    for i in range(claims):
        dtype, op = list(DTYPES)[i % 3], ("*", "+", "/")[i // 3 % 3]
        if i % 4 == 0:
            side = 4096 + 1024 * (i // 4 % 5)
            shape, elements = f"{side}²", side * side
        else:
            rows = 1024 * (1 + i % 64)
            shape, elements = (f"{rows}×4096" if i % 2 else f"{rows} x 4096"), rows * 4096
        t_us = 2 * DTYPES[dtype] * elements / HBM * 1e6  # read once, written once
        lines.append(f"x{op}{2 + i % 7} on {shape} {dtype} is ≈{t_us:.3g}µs")
    return "\n".join(lines) + "\n"


def walls(commands: list[list[str]], runs: int, fresh_cache: set[int] = frozenset()) -> list[float]:
    """The median wall time of each command; runs alternate between the commands so drift hits all alike. The
    commands numbered in `fresh_cache` each run with a cache folder of their own, empty (made before the clock
    starts)."""
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for i, command in enumerate(commands):
            with tempfile.TemporaryDirectory(prefix="gpuspec-cold-") as empty:
                env = {**os.environ, "XDG_CACHE_HOME": empty} if i in fresh_cache else None
                start = time.perf_counter()
                done = subprocess.run(command, cwd=ROOT, check=False, capture_output=True, env=env)
                times[i].append(time.perf_counter() - start)
            if done.returncode not in (0, 1):
                raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr.decode()}")
    return [statistics.median(t) for t in times]


def met(value: float, target: float, at_most: bool) -> str:
    return "met" if (value <= target if at_most else value >= target) else "NOT met"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    os.environ["GPUSPEC_NO_CACHE"] = "1"  # claims per second of specs parsed afresh, as after an edit
    import gpuspec
    from gpuspec.api import run_check

    # An installed package has its bytecode compiled by pip; a source checkout may not (PYTHONDONTWRITEBYTECODE).
    compileall.compile_dir(Path(gpuspec.__file__).parent, quiet=1)

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "many.gpu"
        path.write_text(generate(args.claims), encoding="utf-8")
        run_check([str(path)])  # warm the parser
        seconds = []
        for _ in range(5):
            start = time.perf_counter()
            report = run_check([str(path)])
            seconds.append(time.perf_counter() - start)
    checked = len(report.verdicts)
    assert not report.diagnostics and report.count("fail") == 0, report.summary
    best, middle = min(seconds), statistics.median(seconds)
    print(f"claims checked in process: {checked:,} in {best:.3f} s best, {middle:.3f} s median of 5 = "
          f"{checked / best:,.0f} claims/s best, {checked / middle:,.0f} median "
          f"(target ≥ {CLAIMS_PER_S:,}: {met(checked / middle, CLAIMS_PER_S, False)})")

    # The console script, as users run it; `python -m gpuspec` where it is not installed. Its caches are on, as
    # for users: a spec that has not changed since the last run is not parsed again.
    del os.environ["GPUSPEC_NO_CACHE"]
    script = shutil.which("gpuspec", path=str(Path(sys.executable).parent))
    gpuspec = [script, "check"] if script else [sys.executable, "-m", "gpuspec", "check"]

    with tempfile.TemporaryDirectory() as folder:
        # One-line claims through the command line, cold: a new spec, an empty cache folder.
        one_liners = Path(folder) / "one-liners.gpu"
        one_liners.write_text(generate_one_liners(args.claims), encoding="utf-8")
        lines_s = walls([[*gpuspec, "-q", str(one_liners)]], 5, fresh_cache={0})[0]
        print(f"one-line claims through the command line, cold: {args.claims:,} in {lines_s:.3f} s (median of 5) = "
              f"{args.claims / lines_s:,.0f} claims/s (target ≥ {CLAIMS_PER_S:,}: "
              f"{met(args.claims / lines_s, CLAIMS_PER_S, False)})")

        bare = [sys.executable, "-c", "import lark, attrs, jinja2"]
        warm = [*gpuspec, "specs/"]
        walls([warm], 1)  # the first run may fill the parser and catalog caches
        # While writing: one spec changed since the last run (a line appended each time), the others cached.
        copy = Path(folder) / "specs"
        shutil.copytree(ROOT / "specs", copy)
        edited = copy / "norms.gpu"
        one_edited = ["sh", "-c", f'echo "# edit $$" >> "{edited}" && exec "$@"', "sh", *gpuspec, str(copy)]
        walls([one_edited], 1)
        # Cold: nothing cached, every spec and catalog parsed afresh, in an empty cache folder of its own.
        check_s, bare_s, cold_s, edit_s = walls([warm, bare, warm, one_edited], args.runs, fresh_cache={2})
    print(f"{Path(gpuspec[0]).name} check specs/ (median of {args.runs}): {check_s * 1000:.0f} ms warm, "
          f"{edit_s * 1000:.0f} ms with one spec edited, {cold_s * 1000:.0f} ms cold (nothing cached: every spec "
          "and catalog parsed afresh, an empty cache folder)")
    print(f"import lark, attrs, jinja2: {bare_s * 1000:.0f} ms (median of {args.runs})")
    print(f"warm: {check_s / bare_s:.2f}× the import (target ≤ {WARM_RATIO}×: "
          f"{met(check_s / bare_s, WARM_RATIO, True)})")
    print(f"cold: {cold_s / bare_s:.2f}× the import (target ≤ {COLD_RATIO:g}×: "
          f"{met(cold_s / bare_s, COLD_RATIO, True)})")
    print(f"one spec edited: {edit_s / bare_s:.2f}× the import")
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
