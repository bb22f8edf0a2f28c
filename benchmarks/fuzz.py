"""Fuzz gpuspec check at length: specs grown from the language, real specs mutated, odd Unicode and random bytes,
each checked twice. Prints how many inputs ran, how long it took, and every input that broke the property
(an exception, a hang, an error without a location, or a second run that differs).

Run: python benchmarks/fuzz.py [--examples 100000] [--minutes 60] [--seed 0]

The strategies and the property are the test suite's (tests/fuzzing.py); tests/test_fuzz.py runs a few
thousand of the same examples in CI.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHUNK = 2_000  # examples per Hypothesis run: each run starts afresh, so memory stays flat


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=100_000)
    parser.add_argument("--minutes", type=float, default=None, help="stop after this long (default: no limit)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    os.environ.setdefault("GPUSPEC_FUZZ_PROFILE", "ci")
    with tempfile.TemporaryDirectory(prefix="gpuspec-fuzz-") as name:
        os.environ["XDG_CACHE_HOME"] = name  # the parse cache the second runs read, thrown away at the end
        folder = Path(name) / "specs"
        folder.mkdir()
        return fuzz(args, folder)


def fuzz(args, folder: Path) -> int:
    import fuzzing
    from hypothesis import Phase, given, seed, settings
    from hypothesis import strategies as st

    # Each input: which strategy made it, then the input (a grown spec is checked in a random report format).
    inputs = st.one_of(
        st.tuples(st.just("grown"), fuzzing.valid_specs().map(lambda t: t.encode("utf-8")),
                  st.sampled_from(fuzzing.FORMATS)),
        st.tuples(st.just("mutated"), fuzzing.mutated_specs(), st.just("text")),
        st.tuples(st.just("mutated"), fuzzing.mutated_specs(), st.just("json")),
        st.tuples(st.just("unicode"), fuzzing.odd_unicode_specs(), st.sampled_from(("text", "json"))),
        st.tuples(st.just("bytes"), st.binary(max_size=400), st.just("text")),
    )
    counts: dict[str, int] = {}
    codes: dict[int, int] = {}
    failures: list[tuple[str, bytes, str, str]] = []
    started = time.perf_counter()
    deadline = started + args.minutes * 60 if args.minutes else None

    class OutOfTime(Exception):
        pass

    def one(example):
        if deadline and time.perf_counter() > deadline:
            raise OutOfTime
        kind, data, format = example
        counts[kind] = counts.get(kind, 0) + 1
        found = fuzzing.problem(data, folder, format, codes)
        if found:
            failures.append((kind, data, format, found))
            print(f"FAILURE ({kind}, {format}): {found.splitlines()[0]}\n  input: {data[:300]!r}", flush=True)

    done, chunk = 0, 0
    while done < args.examples:
        size = min(CHUNK, args.examples - done)
        run = seed(args.seed * 1_000_003 + chunk)(settings(max_examples=size, deadline=None, database=None,
                                                           phases=[Phase.generate], derandomize=False,
                                                           suppress_health_check=list(fuzzing.HealthCheck))
                                                  (given(inputs)(one)))
        before = sum(counts.values())
        try:
            run()
        except OutOfTime:
            pass
        done += sum(counts.values()) - before
        chunk += 1
        elapsed = time.perf_counter() - started
        print(f"  {done:,} inputs, {elapsed:,.0f} s", file=sys.stderr, flush=True)
        if deadline and time.perf_counter() > deadline:
            break
        if sum(counts.values()) == before:
            break
    elapsed = time.perf_counter() - started
    total = sum(counts.values())
    print(f"inputs checked: {total:,} (each twice) in {elapsed:,.1f} s = {total / elapsed:,.0f} inputs/s")
    print("  by strategy: " + ", ".join(f"{kind} {count:,}" for kind, count in sorted(counts.items())))
    print("  first runs ended: " + ", ".join(f"exit {code}: {count:,}" for code, count in sorted(codes.items())))
    if total < args.examples:
        print(f"  stopped at the time limit, short of the {args.examples:,} asked for")
    print(f"failures: {len(failures)}")
    for kind, data, format, found in failures:
        print(f"--- {kind}, --format {format}, input {data!r}\n{found}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
