"""Fuzz every gpuspec command at length: check (in each report format), explain, fmt, check --update, report,
the plot data and harness rendering, each on specs grown from the language, real specs mutated, odd Unicode,
random bytes and Markdown documents (under names a printer must escape), and check --results / --profile with
results files and profiles that are valid, mutated or hostile. Prints how many inputs ran, by strategy, command
and exit status, and every input that broke its command's property, each saved with a reproducer.

Run: python benchmarks/fuzz.py [--examples 100000] [--minutes 60] [--seed 0] [--jobs 2] [--failures DIR]
     python benchmarks/fuzz.py --replay DIR   (run a saved failure again and say what is wrong now)

The strategies and the properties are the test suite's (tests/fuzzing.py, tests/fuzz_properties.py);
tests/test_fuzz.py runs a few hundred of each in CI.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEMORY_LIMIT = 4 << 30  # bytes of address space a worker may use
CHUNK = 100  # examples per Hypothesis run: each runs afresh in a worker, so memory stays flat


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=100_000)
    parser.add_argument("--minutes", type=float, default=None, help="stop after this long (default: no limit)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: one a core)")
    parser.add_argument("--failures", default="fuzz-failures", help="where each failing input is saved")
    parser.add_argument("--commands", default=None, help="only these commands, comma-separated")
    parser.add_argument("--replay", metavar="DIR", help="run one saved failure again")
    args = parser.parse_args()
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    with tempfile.TemporaryDirectory(prefix="gpuspec-fuzz-") as scratch:
        os.environ["XDG_CACHE_HOME"] = str(Path(scratch) / "cache")  # thrown away at the end
        if args.replay:
            return replay(Path(args.replay), Path(scratch))
        return fuzz(args, Path(scratch))


def replay(where: Path, scratch: Path) -> int:
    import fuzz_properties

    case = fuzz_properties.load_reproducer(where)
    folder = scratch / "case"
    folder.mkdir()
    found = fuzz_properties.problem(case, folder)
    print(f"{case.command} {case.option} on {case.name!a} ({case.strategy}"
          + (f", {case.side_kind} file" if case.side_kind else "") + f"): {found or 'no problem now'}")
    return 1 if found else 0


# --- the workers ---------------------------------------------------------------------------------------------

_WORKER: dict = {}


def _start_worker(scratch: str, commands: tuple[str, ...]) -> None:
    import faulthandler

    faulthandler.enable()  # a worker that dies of a signal says where
    # An input that makes gpuspec take gigabytes is a failure to report (a MemoryError), not a machine to bring down.
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    own = tempfile.mkdtemp(dir=scratch)
    os.environ["XDG_CACHE_HOME"] = os.path.join(own, "cache")  # one cache folder per process
    os.environ.setdefault("GPUSPEC_FUZZ_PROFILE", "ci")
    folder = Path(own) / "case"
    folder.mkdir()
    _WORKER.update(folder=folder, commands=commands)

    # Pool.terminate's SIGTERM stops a worker between inputs; one that comes while a command runs is that
    # command's (exit 143, as gpuspec takes it), and the worker stops after it (see _chunk)
    signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(0))


def _chunk(task: tuple[int, int, int, str, float | None]) -> dict:
    """Run `size` examples with Hypothesis seeded by (seed, index); tallies and failures back to the parent."""
    import fuzz_properties
    from hypothesis import HealthCheck, Phase, given, seed, settings
    from hypothesis import strategies as st

    index, size, base, failures_dir, deadline = task
    folder, commands = _WORKER["folder"], _WORKER["commands"]
    inputs = st.one_of(*(fuzz_properties.cases(command) for command in commands))
    tally: dict = {"strategy": {}, "command": {}, "side": {}, "failures": [], "done": 0}

    class OutOfTime(Exception):
        pass

    def one(case):
        if deadline and time.time() > deadline:
            raise OutOfTime
        codes: dict = {}
        found = fuzz_properties.problem(case, folder, codes)
        if 143 in codes:  # gpuspec exits 143 only on a SIGTERM, and only the pool sends one: this worker stops
            os._exit(0)
        tally["done"] += 1
        _count(tally["strategy"], case.strategy)
        by_code = tally["command"].setdefault(case.command, {})
        for code in codes:
            _count(by_code, code)
        if case.side_kind:
            _count(tally["side"], f"{case.command} {case.side_kind}")
        if found:
            where = fuzz_properties.save_reproducer(case, found, Path(failures_dir))
            if any(failure[-1] == str(where) for failure in tally["failures"]):
                return  # Hypothesis drew the same input again
            tally["failures"].append((case.command, case.option, case.strategy, case.side_kind, case.name,
                                      found.splitlines()[0][:300] if found else "", str(where)))

    run = seed(base * 1_000_003 + index)(settings(
        max_examples=size, deadline=None, database=None, phases=[Phase.generate], derandomize=False,
        suppress_health_check=list(HealthCheck))(given(inputs)(one)))
    try:
        run()
    except OutOfTime:
        pass
    except Exception as error:  # the fuzzer's own failure (Hypothesis, memory): said, and the run goes on
        import traceback

        where = Path(failures_dir) / f"worker-{base}-{index}.txt"
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text(traceback.format_exc(), encoding="utf-8")
        tally["failures"].append(("fuzzer", "", "", None, "", f"{type(error).__name__}: {error}"[:300], str(where)))
    return tally


def _count(counts: dict, key) -> None:
    counts[key] = counts.get(key, 0) + 1


# --- the run -------------------------------------------------------------------------------------------------

def fuzz(args, scratch: Path) -> int:
    import fuzz_properties

    commands = tuple(args.commands.split(",")) if args.commands else fuzz_properties.COMMANDS
    unknown = set(commands) - set(fuzz_properties.COMMANDS)
    if unknown:
        print(f"unknown commands: {', '.join(sorted(unknown))}; they are {', '.join(fuzz_properties.COMMANDS)}")
        return 2
    failures_dir = Path(args.failures).resolve()
    started = time.time()
    deadline = started + args.minutes * 60 if args.minutes else None
    chunks = [(i, min(CHUNK, args.examples - i * CHUNK), args.seed, str(failures_dir), deadline)
              for i in range((args.examples + CHUNK - 1) // CHUNK)]
    totals: dict = {"strategy": {}, "command": {}, "side": {}, "failures": [], "done": 0}
    context = multiprocessing.get_context("spawn")  # forked from a parent with threads, a worker may deadlock
    with context.Pool(args.jobs, _start_worker, (str(scratch), commands), maxtasksperchild=8) as pool:
        for tally in pool.imap_unordered(_chunk, chunks):
            _merge(totals, tally)
            for failure in tally["failures"]:
                command, option, strategy, side, name, line, where = failure
                print(f"FAILURE ({command} {option}, {strategy}{', ' + side if side else ''}, {name!a}): {line}\n"
                      f"  saved in {where}", flush=True)
            elapsed = time.time() - started
            print(f"  {totals['done']:,} inputs, {elapsed:,.0f} s, {len(totals['failures'])} failures",
                  file=sys.stderr, flush=True)
    elapsed = time.time() - started
    total = totals["done"]
    print(f"inputs checked: {total:,} in {elapsed:,.1f} s = {total / max(elapsed, 1e-9):,.1f} inputs/s "
          f"({args.jobs} processes, seed {args.seed})")
    print("  by strategy: " + ", ".join(f"{k} {v:,}" for k, v in sorted(totals["strategy"].items())))
    print("  by command and exit status:")
    for command in commands:
        codes = totals["command"].get(command, {})
        shown = ", ".join(f"{_label(code)}: {n:,}" for code, n in sorted(codes.items(), key=lambda i: str(i[0])))
        print(f"    {command:8} {sum(codes.values()):>7,}  ({shown})")
    if totals["side"]:
        print("  results files and profiles: " + ", ".join(f"{k} {v:,}" for k, v in sorted(totals["side"].items())))
    if total < args.examples:
        print(f"  stopped at the time limit, short of the {args.examples:,} asked for")
    print(f"failures: {len(totals['failures'])}")
    for command, option, strategy, side, name, line, where in totals["failures"]:
        print(f"--- {command} {option} ({strategy}{', ' + side if side else ''}), {name!a}: {line}\n    {where}")
    return 1 if totals["failures"] else 0


def _label(code) -> str:
    return f"exit {code}" if isinstance(code, int) else str(code)


def _merge(totals: dict, tally: dict) -> None:
    totals["done"] += tally["done"]
    totals["failures"].extend(tally["failures"])
    for part in ("strategy", "side"):
        for key, n in tally[part].items():
            totals[part][key] = totals[part].get(key, 0) + n
    for command, codes in tally["command"].items():
        mine = totals["command"].setdefault(command, {})
        for code, n in codes.items():
            mine[code] = mine.get(code, 0) + n


if __name__ == "__main__":
    sys.exit(main())
