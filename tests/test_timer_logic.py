"""The measuring code every program carries (templates/timer.py.jinja), driven without a GPU.

A generated program is loaded as a module in a subprocess (under the Triton interpreter, with gpuspec and lark
unimportable), and its Timer is given stand-ins for what only a GPU has: CUDA events that log when they are
recorded, a flush and a stream-hold kernel that log when they run, and a clock. The log shows the order nvbench's
method needs (flush, hold, start event, the work, end event, release, wait), and the stand-ins play the faults: a
hold that times out, a throttled clock. The hold kernel itself runs under the interpreter.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from gpuspec import measure

DRIVER = textwrap.dedent("""\
    import json, runpy, sys, types
    for name in ("gpuspec", "lark", "attrs"):
        sys.modules[name] = None  # as on the GPU machine: importing them fails
    sys.argv = [sys.argv[1], "--device", "cpu", "--budget", "0.05"]
    g = runpy.run_path(sys.argv[0], run_name="generated_program")
    g = g["Timer"].__init__.__globals__  # the program's own globals (run_path returns a copy)
    torch, timing, log = g["torch"], g["timing"], []
    found = {}

    # the hold kernel under the interpreter: released at once, or never (then it gives up and says so)
    flag = torch.tensor([1, 0], dtype=torch.int32)
    g["hold_kernel"][(1,)](flag, 1000)
    found["released"] = flag.tolist()
    flag = torch.tensor([0, 0], dtype=torch.int32)
    g["hold_kernel"][(1,)](flag, 5)
    found["timed_out"] = flag.tolist()

    class Event:
        def __init__(self, enable_timing):
            self.at = None
        def record(self):
            log.append("event")
        def elapsed_time(self, other):
            return 2.0  # milliseconds, for whatever the events enclose
        def synchronize(self):
            log.append("wait")

    class Cuda:
        Event = Event
        @staticmethod
        def synchronize():
            log.append("sync")

    class Torch:
        cuda = Cuda
        def __getattr__(self, name):
            return getattr(torch, name)

    class Flush:
        bytes = 123
        def __call__(self):
            log.append("flush")

    class Clocks:
        source, max_mhz, now = "stand-in", 1980.0, 1980.0
        def reading(self):
            return self.now

    timeouts = []

    def hold_kernel_stand_in(flag, spins, num_warps):
        log.append("hold")
        flag[1] = 1 if timeouts and timeouts.pop() else 0

    class Launch:
        def __getitem__(self, grid):
            return hold_kernel_stand_in

    timer = g["Timer"]()  # made as on the CPU, then given the GPU's parts
    g.update(CUDA=True, torch=Torch(), hold_kernel=Launch())
    timer.flush, timer.clocks = Flush(), Clocks()
    timer.hold.mode, timer.hold.why = "flag", ""
    timer.hold.flag = torch.zeros(2, dtype=torch.int32)
    release = timer.hold.release
    timer.hold.release = lambda: (log.append("release"), release())[1]
    work = lambda: log.append("work")

    sample = timer.gpu(work)
    found["order"] = log[:]
    found["seconds"] = sample.seconds
    log.clear()
    found["repeat_seconds"] = timer.gpu(work, repeat=4, cold=False).seconds
    found["repeat_order"] = log[:]
    log.clear()
    Clocks.now = 900.0
    found["throttled"] = timer.gpu(work).dropped
    Clocks.now = 1980.0
    timeouts.append(True)
    found["timeout"] = timer.gpu(work).dropped
    log.clear()
    found["unheld_order"] = (timer.gpu(work, held=False), log[:])[1]

    # a whole sampling run in which the first hold times out: that sample is dropped, the rest are taken unheld
    timer.criterion = lambda: timing.FixedCount(3)
    g["launched"] = lambda fn: [["stand-in", 1]]
    timeouts[:] = [True]
    log.clear()
    summary = timer.sample(work)
    found["summary"] = {k: summary[k] for k in ("samples", "dropped", "method", "median", "clock_mhz")}
    found["holds_in_run"] = log.count("hold")
    print(json.dumps(found))
    """)


@pytest.fixture(scope="module")
def driven(tmp_path_factory):
    folder = tmp_path_factory.mktemp("timer")
    program = folder / "probe.py"
    program.write_text(measure.probe_source(), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUSPEC_")}
    env["TRITON_INTERPRET"] = "1"
    done = subprocess.run([sys.executable, "-c", DRIVER, str(program)], capture_output=True, text=True, timeout=300,
                          env=env, cwd=folder)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_hold_kernel_returns_when_released_and_says_when_it_gave_up(driven):
    assert driven["released"] == [1, 0]
    assert driven["timed_out"] == [0, 1]


def test_a_cold_sample_flushes_then_holds_the_stream_before_the_start_event_and_releases_after_the_end(driven):
    assert driven["order"] == ["flush", "hold", "event", "work", "event", "release", "wait"]
    assert driven["seconds"] == pytest.approx(2e-3)


def test_repeats_share_one_pair_of_events_and_divide_the_time(driven):
    assert driven["repeat_order"] == ["hold", "event", "work", "work", "work", "work", "event", "release", "wait"]
    assert driven["repeat_seconds"] == pytest.approx(2e-3 / 4)


def test_a_throttled_clock_or_a_timed_out_hold_drops_the_sample_with_the_reason(driven):
    assert driven["throttled"] == "throttled: SM clock under 75% of its 1980 MHz maximum"
    assert driven["timeout"].startswith("the stream hold timed out")


def test_a_sample_taken_without_a_hold_launches_no_hold_kernel(driven):
    assert driven["unheld_order"] == ["flush", "event", "work", "event", "wait"]


def test_after_a_hold_times_out_the_rest_of_the_run_is_taken_unheld_and_says_so(driven):
    summary = driven["summary"]
    assert summary["samples"] == 3 and summary["median"] == pytest.approx(2e-3)
    assert summary["dropped"] == {}  # the hold timed out in the first warm-up call, whose sample is discarded anyway
    assert driven["holds_in_run"] == 1  # that one, and no more
    assert "stream not held" in summary["method"] and "L2 flushed by reading 123 bytes" in summary["method"]
    assert summary["clock_mhz"]["median"] == 1980.0
