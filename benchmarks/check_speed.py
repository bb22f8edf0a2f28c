"""How fast gpuspec checks: claims per second on a generated spec, and start-up against a bare import.

Run: python benchmarks/check_speed.py [--claims N]
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


def generate(claims: int) -> str:
    lines = ["device H100-SXM", "set tolerance = 10%"]
    for i in range(claims // CLAIMS_PER_BLOCK):
        n = 1024 * (1 + i % 64)  # large enough that no kernel sits on the kernel floor
        elements = n * 4096
        t_us = 2 * 4 * elements / 3.35e12 * 1e6
        waves = (elements / 256) / 1056
        lines.append(TEMPLATE.format(i=i, n=n, elements=f"{elements:,}", t_us=t_us, waves=waves))
    return "\n".join(lines) + "\n"


def walls(commands: list[list[str]], runs: int) -> list[float]:
    """The median wall time of each command; runs alternate between the commands so drift hits all alike."""
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for i, command in enumerate(commands):
            start = time.perf_counter()
            subprocess.run(command, cwd=ROOT, check=False, capture_output=True)
            times[i].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


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
        run_check([str(path)])  # warm the parser cache
        seconds = []
        for _ in range(5):
            start = time.perf_counter()
            report = run_check([str(path)])
            seconds.append(time.perf_counter() - start)
    checked = len(report.verdicts)
    assert not report.diagnostics and report.count("fail") == 0, report.summary
    best, middle = min(seconds), statistics.median(seconds)
    print(f"claims checked: {checked:,} in {best:.3f} s best, {middle:.3f} s median of 5 = "
          f"{checked / best:,.0f} claims/s best, {checked / middle:,.0f} median (target ≥ 5,000)")

    # The console script, as users run it; `python -m gpuspec` where it is not installed. Its parse cache is on, as
    # for users: a spec that has not changed since the last run is not parsed again.
    del os.environ["GPUSPEC_NO_CACHE"]
    script = shutil.which("gpuspec", path=str(Path(sys.executable).parent))
    gpuspec = [script, "check", "specs/"] if script else [sys.executable, "-m", "gpuspec", "check", "specs/"]
    bare = [sys.executable, "-c", "import lark, attrs, jinja2"]
    walls([gpuspec], 1)  # the first run may fill the parser and catalog caches
    cold = ["env", "GPUSPEC_NO_CACHE=1", *gpuspec]
    with tempfile.TemporaryDirectory() as folder:
        # While writing: one spec changed since the last run (a line appended each time), the others cached.
        copy = Path(folder) / "specs"
        shutil.copytree(ROOT / "specs", copy)
        edited = copy / "norms.gpu"
        one_edited = ["sh", "-c", f'echo "# edit $$" >> "{edited}" && exec "$@"', "sh",
                      *gpuspec[:-1], str(copy)]
        walls([one_edited], 1)
        check_s, bare_s, cold_s, edit_s = walls([gpuspec, bare, cold, one_edited], args.runs)
    print(f"{Path(gpuspec[0]).name} check specs/: {check_s * 1000:.0f} ms (median of {args.runs}); "
          f"{edit_s * 1000:.0f} ms with one spec edited ({edit_s / bare_s:.2f}× the import); "
          f"{cold_s * 1000:.0f} ms with nothing cached (every spec and catalog parsed afresh) "
          f"({cold_s / bare_s:.2f}×)")
    print(f"import lark, attrs, jinja2: {bare_s * 1000:.0f} ms (median of {args.runs})")
    print(f"ratio: {check_s / bare_s:.2f}× (target ≤ 1.5×)")
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
