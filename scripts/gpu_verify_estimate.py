"""How long scripts/gpu-verify takes on one GPU, at most: counted from the bundled specs' workloads and the sampling
budget, with the fixed costs below taken as upper bounds.

Run: python scripts/gpu_verify_estimate.py [--budget SECONDS] [--probe-budget SECONDS]

Sampling stops at the budget (timing.measure checks it after every sample), so a metric costs its budget plus what
is outside it; the costs outside it are the assumptions here. They are generous guesses for an H200, to be replaced
by the wall times of a first GPU run: scripts/gpu-verify writes each step's seconds to log.txt.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 480.0  # seconds: the GPU machine is lent for 15 minutes in all, and a run must leave room to rerun

# Upper bounds of the costs outside sampling, in seconds.
STARTUP = 8.0  # one program: import torch and triton, the CUDA context, NVML, the flush buffer, the hold's self-test
PER_METRIC = 0.6  # one metric beyond its budget: 25 ms of warm-up, the sample that crosses the budget, one profiled call
SETUP = {  # one workload: inputs made and filled, the float32 reference check, graph capture
    "elementwise": 1.0, "stream": 2.0, "decode": 6.0, "matmul": 1.0, "rowwise": 0.5, "attention": 1.0}
METRICS = {"elementwise": 1, "stream": 2, "decode": 2, "matmul": 1, "rowwise": 1, "attention": 1}  # timed on a GPU
TRITON_COMPILE = 3.0  # one generated Triton kernel, compiled at its first launch
# calibrate's figures at the whole budget: the copy, 6 launch figures (eager launches, a stream's kernels back to
# back, two graphs, a graph replay, a lone kernel), the bf16 matmul by torch and by Triton, 2 latency walks
CALIBRATE_FIGURES = 11
# and the points of its sweeps and ladders, each sampled for SHORT_BUDGET at most (templates/calibrate.py.jinja):
# fp16 and tf32 matmuls (2), the bf16 GEMM sweep (5 sizes), the L2 read ladder (9 working sets), the exp kernel,
# flash attention (5 shapes)
CALIBRATE_SHORT_FIGURES = 22
SHORT_BUDGET = 0.25
# 2 GiB copy buffers, 8192² matmul inputs and their fp32 reference, the fp16 and tf32 checks, the 256 MiB chain, the
# L2 ladder's buffers and its kernel's and the exp kernel's compiles, flash attention's inputs and checks
CALIBRATE_SETUP = 35.0
PROBE_FIGURES = 17  # 5 hold, 10 flush (2 working sets × 5), 2 vector widths
PROBE_SETUP = 15.0  # 256 MiB inputs, compiles, 1.5 s of clock readings
FIXED = 12.0  # unpacking the wheels, gpuspec's own start-up per step, the table


def estimate(budget: float, probe_budget: float) -> list[tuple[str, float, str]]:
    """(step, seconds, how) for each step of scripts/gpu-verify."""
    sys.path.insert(0, str(ROOT))
    from gpuspec import harness
    from gpuspec.api import load_spec

    steps = [("probe", STARTUP + PROBE_SETUP + PROBE_FIGURES * (probe_budget + PER_METRIC),
              f"{STARTUP:g} + {PROBE_SETUP:g} + {PROBE_FIGURES} figures × ({probe_budget:g} + {PER_METRIC:g})"),
             ("calibrate", STARTUP + CALIBRATE_SETUP + CALIBRATE_FIGURES * (budget + PER_METRIC)
              + CALIBRATE_SHORT_FIGURES * (min(budget, SHORT_BUDGET) + PER_METRIC),
              f"{STARTUP:g} + {CALIBRATE_SETUP:g} + {CALIBRATE_FIGURES} figures × ({budget:g} + {PER_METRIC:g}) + "
              f"{CALIBRATE_SHORT_FIGURES} sweep points × ({min(budget, SHORT_BUDGET):g} + {PER_METRIC:g})")]
    for spec in sorted((ROOT / "specs").glob("*.gpu")):
        plans, _ = harness.plans(load_spec(spec).program)
        if not plans:
            continue
        kinds = [str(p["kind"]) for p in plans]
        metrics = sum(METRICS[k] for k in kinds)
        # every generated Triton kernel compiles at its first launch: count them in the program itself
        kernels = harness.render(str(spec), plans, []).count("@triton.jit")
        seconds = STARTUP + sum(SETUP[k] for k in kinds) + metrics * (budget + PER_METRIC) + kernels * TRITON_COMPILE
        steps.append((f"check {spec.name}", seconds,
                      f"{STARTUP:g} + setup of {len(kinds)} workloads + {metrics} metrics × ({budget:g} + "
                      f"{PER_METRIC:g}) + {kernels} compiles × {TRITON_COMPILE:g}"))
    steps.append(("wheels, start-ups, table", FIXED, "fixed"))
    return steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=1.5, help="seconds of sampling per metric")
    parser.add_argument("--probe-budget", type=float, default=1.0, help="seconds of sampling per probe figure")
    args = parser.parse_args(argv)
    steps = estimate(args.budget, args.probe_budget)
    total = sum(seconds for _, seconds, _ in steps)
    for step, seconds, how in steps:
        print(f"{step:28} {seconds:6.1f} s   {how}")
    print(f"{'total':28} {total:6.1f} s   (limit {LIMIT:g} s)")
    return 0 if total <= LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
