"""Small hostile specs stay small: each spec below is under 1 KB, and each command on it must finish in under 1 s
and 200 MB, with a result or a located error saying what is too large. Each case runs in a process of its own;
its times and peak RSS are that process's (os.wait4 returns the rusage of the one child it reaps).

Run: python benchmarks/limits.py [--only NAME ...] [--seconds 1] [--megabytes 200]

Prints one line per case (command, wall and CPU seconds, peak RSS, exit code, what it printed first), then the
worst of each against the targets, beside each command's figures on a plain spec (start-up: Python, gpuspec, the
catalog; for plot and report also matplotlib and a drawing, which cost about a second whatever the spec, so they
are held to their start-up plus the target). The time target applies to CPU seconds, which other work on a
shared machine does not inflate the way it does wall time. Exits 1 if any case misses a target, prints a
traceback or exits with a code other than 0, 1 or 2.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
H100 = "device H100-SXM\n"
SMALL = H100 + "x = bf16[4096]\nsmall = x * 2\n"
NS = "set sample_window = 1 ns\n"

# name -> spec text; the numbers a user writes that the work could grow with, each pushed far
CASES = {
    "baseline": H100 + "x = bf16[4096]\nx * 2 is ≈ 2 µs\n",
    "baseline-stream": SMALL + "1000 launches of small is ≈ 5 ms\n",
    "launches-1e7-1s-cost": H100.replace("\n", " with launch_cost = 1 s\n") + NS + "x = bf16[4096]\nsmall = x * 2\n"
                            "10000000 launches of small is ≈ 1 s\n",
    "launches-1e7-override": SMALL + NS + "s = 10000000 launches of small:\n    utilization ≈ 40%\n    ≈ 50 s\n",
    "launches-1e18": SMALL + NS + "1000000000000000000 launches of small is utilization ≈ 40%, ≈ 1 s\n",
    "launches-1e18-graph": SMALL + NS + "1000000000000000000 launches of small as a CUDA graph is ≈ 1 s\n",
    "launches-eager-1e15": H100 + NS + "x = bf16[4096]\ny = exp(x) * 2 + x / 3 - 1 eager\n"
                           "1000000000000000 launches of y is utilization ≈ 40%, ≈ 1 s, idle_share ≈ 50%\n",
    "launches-rowwise-1e15": H100 + NS + "x = bf16[32, 1024]\ns = softmax(x) eager\n"
                             "1000000000000000 launches of s is utilization ≈ 40%\n",
    "layers-666666": H100 + NS + "model big from llama3-8b with layers = 666666\n"
                     "decode big, batch 1, 15 kernels per layer is ≈ 1 s, utilization ≈ 50%\n",
    "layers-1e15": H100 + NS + "model big from llama3-8b with layers = 1e15\n"
                   "decode big, batch 1 is ≈ 1 s, utilization ≈ 50%\n",
    "kernels-per-layer-1e9": H100 + NS + "decode llama3-8b, batch 1, 1000000000 kernels per layer is ≈ 1 s, "
                             "utilization ≈ 50%\n",
    "kernels-and-layers-1e6": H100 + NS + "model big from llama3-8b with layers = 1000000\n"
                              "decode big, batch 1, 1000000 kernels per layer is utilization ≈ 50%\n",
    "kernels-and-layers-graph": H100 + NS + "model big from llama3-8b with layers = 1e15\n"
                                "decode big, batch 1, 1000000000 kernels per layer as a CUDA graph is ≈ 1 s\n",
    "batch-context-1e15": H100 + NS + "decode llama3-8b, batch 1000000000000000, context 1000000000000000 "
                          "is ≈ 1 s, utilization ≈ 50%\n",
    "prefill-1e15": H100 + "prefill llama3-8b, batch 1000000000000000, prompt 1000000000000000 is ≈ 1 s\n",
    "train-gpus-1e15": H100 + "train llama3-8b, batch 1000000000000000, context 8192, gpus 1000000000000000 "
                       "is ≈ 1 s\n",
    "tp-1e15": H100 + "decode llama3-8b, batch 1, tp 1000000000000000 is ≈ 1 s\n",
    "collective-1e15-gpus": H100 + "all_reduce(1 GB) across 1000000000000000 GPUs over nvlink is ≈ 1 s\n",
    "tensor-1e18-waves": H100 + "x = bf16[1000000000, 1000000000]\nx * 2 is ≈ 1 s, waves ≈ 1, blocks ≈ 1\n",
    "matmul-tiles-1e18": H100 + "a = bf16[16000000, 16000000]\nb = bf16[16000000, 16000000]\n"
                         "a @ b with 16x16 tiles is ≈ 1 s, waves ≈ 1\n",
    "attention-1e6": H100 + "q = bf16[1000, 1000, 1000000, 1000]\nattention(q, q, q) eager is ≈ 1 s\n",
    "rowwise-1e18": H100 + "x = bf16[1000000000, 1000000000]\nsoftmax(x) eager is ≈ 1 s\n",
    "power-8-of-8": H100 + "x = bf16[4096^8]\nx * 2 is ≈ 1 s\n",
    "exponent-1e6": H100 + "x = bf16[4096]\nx ^ 1000000 is ≈ 1 s\n",
    "threads-1e18": H100 + "x = bf16[4096]\nx * 2 with 1000000000000000000 threads is ≈ 1 s\n",
    "window-1e-300": SMALL + "set sample_window = 1e-300 s\n1000000 launches of small is utilization ≈ 40%\n",
    "launch-cost-1e-300": H100.replace("\n", " with launch_cost = 1e-300 s\n") + NS
                          + "x = bf16[4096]\nsmall = x * 2\n10000000 launches of small is ≈ 1 s\n",
    "big-number": H100 + "v = 1e308 B\nw = v * v\nw ≈ 1 B\n",
    "graph-nodes-1e-300": H100.replace("\n", " with kernel_floor = 1e-300 s, graph_node_cost = 1e-300 s\n")
                          + "x = bf16[16]\nsmall = x * 2\n"
                          "1000000000000000000 launches of small as a CUDA graph is ≈ 1 s\n",
    "nested-squares": H100 + "x = fp32[4096]\ny = " + "square(" * 24 + "x" + ")" * 24 + " is ≈ 2 µs\n",
    "domain-search": H100 + "".join(f"t{k} = fp32[64]\n" for k in range(8)) + "log(" + " - ".join(
        f"t{k}" for k in range(8)) + "".join(f" - {k}.5" for k in range(16)) + ") is ≈ 2 µs\n",
}
# the spec each command's start-up is measured on: a plain one, and for pictures one with a stream to draw
BASELINES = {"check": "baseline", "explain": "baseline", "harness": "baseline", "fmt": "baseline",
             "plot": "baseline-stream", "report": "baseline-stream"}
DRAWING = {"plot", "report"}
# the other commands on the cases where they do the most
COMMANDS = {
    "check": lambda path: ["check", path],
    "explain": lambda path: ["explain", path],
    "harness": lambda path: ["harness", path],
    "fmt": lambda path: ["fmt", "--check", path],
    "plot": lambda path: ["plot", "timeline", "--out", path + ".svg", path],
    "report": lambda path: ["report", "--out", path + ".html", path],
}
EXTRA = [("explain", name) for name in ("launches-1e7-1s-cost", "layers-666666", "kernels-per-layer-1e9",
                                        "tensor-1e18-waves", "matmul-tiles-1e18")] + \
        [("harness", name) for name in ("launches-1e18", "layers-666666", "kernels-per-layer-1e9", "power-8-of-8",
                                        "exponent-1e6", "tensor-1e18-waves", "matmul-tiles-1e18", "domain-search",
                                        "nested-squares")] + \
        [("fmt", name) for name in ("launches-1e7-1s-cost", "layers-666666")] + \
        [(command, name) for command in ("plot", "report") for name in ("launch-cost-1e-300", "graph-nodes-1e-300",
                                                                         "launches-1e18")]


def measure(argv: list[str], path: Path) -> tuple[float, float, int, int, str]:
    """(wall seconds, CPU seconds, peak RSS in bytes, exit code, output) of `gpuspec ARGV` on the spec at `path`,
    in a fresh process."""
    env = {**os.environ, "GPUSPEC_NO_CACHE": "1", "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "gpuspec", *argv], stdout=output,
                                 stderr=subprocess.STDOUT, env=env, cwd=str(path.parent))
        _, status, usage = os.wait4(child.pid, 0)  # this child's own rusage
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        text = output.read().decode("utf-8", "replace")
    cpu = usage.ru_utime + usage.ru_stime
    return seconds, cpu, usage.ru_maxrss * 1024, child.returncode, text  # ru_maxrss is in kilobytes on Linux


def summary(text: str) -> str:
    """The line that says what happened: the first error, else the first failure or the summary."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for marker in ("Traceback", "error[", ": fail", "passed"):
        found = next((line for line in lines if marker in line), None)
        if found:
            return found.split(": ", 1)[-1] if marker == "error[" else found
    return lines[0] if lines else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these cases")
    parser.add_argument("--seconds", type=float, default=1.0, help="the time target per case (default 1 s)")
    parser.add_argument("--megabytes", type=float, default=200.0, help="the memory target (default 200 MB)")
    args = parser.parse_args()
    runs = [("check", name) for name in CASES if name not in BASELINES.values()] + EXTRA
    if args.only:
        runs = [(command, name) for command, name in runs if name in args.only]
    runs = [(command, BASELINES[command]) for command in dict.fromkeys(c for c, _ in runs)] + runs
    baselines: dict[str, tuple[float, float, int]] = {}
    worst_wall, worst_cpu, worst_memory, bad = (0.0, ""), (0.0, ""), (0, ""), []
    with tempfile.TemporaryDirectory(prefix="gpuspec-limits-") as folder:
        for command, name in runs:
            path = Path(folder) / f"{name}.gpu"
            path.write_text(CASES[name], encoding="utf-8")
            size = len(CASES[name].encode("utf-8"))
            assert size < 1024, f"{name} is {size} bytes: a case must be under 1 KB"
            wall, cpu, peak, code, text = measure(COMMANDS[command](str(path)), path)
            label = f"{command} {name}"
            print(f"{label:>36} {size:4} B  wall {wall:5.2f} s  cpu {cpu:5.2f} s  {peak / 1e6:5.1f} MB  exit {code}  "
                  f"{summary(text)[:100]}", flush=True)
            if name == BASELINES[command] and command not in baselines:
                baselines[command] = (wall, cpu, peak)
                continue
            worst_wall, worst_cpu = max(worst_wall, (wall, label)), max(worst_cpu, (cpu, label))
            worst_memory = max(worst_memory, (peak, label))
            # a picture costs its drawing whatever the spec: plot and report are held to their own start-up + 1 s
            allowed = args.seconds if command not in DRAWING else baselines[command][1] + args.seconds
            if cpu >= allowed or peak >= args.megabytes * 1e6 or code not in (0, 1, 2) or "Traceback" in text:
                bad.append(label)
    for command, (wall, cpu, peak) in baselines.items():
        print(f"start-up ({command} of {BASELINES[command]}): wall {wall:.2f} s, cpu {cpu:.2f} s, {peak / 1e6:.1f} MB")
    print(f"slowest: wall {worst_wall[0]:.2f} s ({worst_wall[1]}), cpu {worst_cpu[0]:.2f} s ({worst_cpu[1]}); "
          f"target under {args.seconds:g} s of CPU (plot and report: their start-up + {args.seconds:g} s)")
    print(f"largest: {worst_memory[0] / 1e6:.1f} MB ({worst_memory[1]}); target under {args.megabytes:g} MB")
    cases = len(runs) - len(baselines)
    print(f"{cases - len(bad)} of {cases} within the targets" + (f"; missed: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
