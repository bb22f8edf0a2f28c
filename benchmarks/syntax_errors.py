"""What reporting every syntax error of a file costs: a spec of 10,000 lines parsed clean, and the same spec with
100 of its lines broken (a claim cut short in a block, a statement with a stray operator, taking turns), in one
process, as a ratio of the clean parse's time. Each side is the best of several rounds.

Run: python benchmarks/syntax_errors.py [--lines 10000] [--errors 100] [--rounds 5]

After an error the parse starts again at the next statement (or the next claim of its block) and reads on, so
the broken file should take about as long as the clean one (a ratio near 1), never a multiple of it.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpuspec.diagnostics import SpecError  # noqa: E402
from gpuspec.parse import parse  # noqa: E402
from gpuspec.text import SpecText  # noqa: E402

HEADER = ["device H100-SXM", "x = bf16[4096, 4096]"]
# A statement with a block of claims, five lines: the unit the file repeats.
BLOCK = ["y{n} = x * 2 + {n}:", "    62 waves", "    ≈ 20 µs ± 5%", "    flops = 2 * 4096^2 FLOP",
         "    67.1 MB moved"]


def clean(lines: int) -> list[str]:
    body = []
    n = 0
    while len(HEADER) + len(body) < lines:
        body.extend(line.format(n=n) for line in BLOCK)
        n += 1
    return HEADER + body[: lines - len(HEADER)]


def broken(text: list[str], errors: int) -> list[str]:
    """Every so many blocks, one line broken: a claim cut short (`≈` alone) or a header with `***`."""
    out = list(text)
    blocks = [i for i, line in enumerate(out) if line.startswith("y")]
    step = max(1, len(blocks) // errors)
    for count, index in enumerate(blocks[::step][:errors]):
        if count % 2:
            out[index] = out[index].replace("x * 2", "x *** 2")
        else:
            out[index + 2] = "    ≈"
    return out


def best(text: str, rounds: int) -> tuple[float, int]:
    source = SpecText("bench.gpu", text)
    times, found = [], 0
    for _ in range(rounds):
        start = time.perf_counter()
        try:
            parse(source)
            found = 0
        except SpecError as error:
            found = len(error.diagnostics)
        times.append(time.perf_counter() - start)
    return min(times), found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--errors", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    good = clean(args.lines)
    bad = broken(good, args.errors)
    parse(SpecText("warm.gpu", "\n".join(HEADER) + "\n"))  # build the parser outside the timing
    clean_time, _ = best("\n".join(good) + "\n", args.rounds)
    broken_time, found = best("\n".join(bad) + "\n", args.rounds)
    print(f"clean:  {args.lines:,} lines parsed in {clean_time * 1000:.0f} ms")
    print(f"broken: {args.lines:,} lines with {args.errors} broken, {found} errors reported, "
          f"in {broken_time * 1000:.0f} ms")
    print(f"ratio:  {broken_time / clean_time:.2f}x the clean parse")
    return 0 if found == args.errors else 1


if __name__ == "__main__":
    sys.exit(main())
