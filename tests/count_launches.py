"""What a harness function launches, as torch.profiler sees it on the CPU: run by tests/test_harness_kernels.py in
a subprocess, as `python count_launches.py PROGRAM CALLS`, where CALLS is JSON: [name, setup, call] each, Python
that the test wrote (never a spec's text). Prints {name: [what one call launched, in order]}.

A Triton kernel (run by the interpreter) shows as `triton::<its name>`: its launch is wrapped in a profiler range
of that name. A PyTorch kernel shows as the innermost aten operator that computes something: allocations and views
launch nothing, and an operator another one calls is counted once, where it computes (aten::mul calling
aten::copy_ on the CPU is one kernel)."""
import json
import os
import runpy
import sys

os.environ["TRITON_INTERPRET"] = "1"
import torch  # noqa: E402  (after the interpreter switch)
import triton.runtime.interpreter as interpreter  # noqa: E402

# No kernel runs for these: they allocate, or make a view of what exists
NOT_KERNELS = {"aten::empty", "aten::empty_like", "aten::empty_strided", "aten::new_empty", "aten::view",
               "aten::reshape", "aten::_reshape_alias", "aten::as_strided", "aten::expand", "aten::transpose",
               "aten::t", "aten::unsqueeze", "aten::squeeze", "aten::permute", "aten::slice", "aten::select",
               "aten::detach", "aten::alias", "aten::resolve_conj", "aten::resolve_neg", "aten::lift_fresh",
               "aten::_unsafe_view", "aten::result_type", "aten::set_", "aten::to", "aten::contiguous"}
_run = interpreter.InterpretedFunction.run


def _counted(self, *args, **kwargs):
    with torch.profiler.record_function(f"triton::{self.fn.__name__}"):
        return _run(self, *args, **kwargs)


interpreter.InterpretedFunction.run = _counted


def inside_triton(event) -> bool:
    parent = event.cpu_parent
    while parent is not None:
        if parent.name.startswith("triton::"):
            return True
        parent = parent.cpu_parent
    return False


def computes(event) -> bool:
    return event.name.startswith("aten::") and event.name not in NOT_KERNELS


def computes_below(event) -> bool:
    return any(computes(child) or computes_below(child) for child in event.cpu_children)


def launched(events) -> list[str]:
    found = []
    for event in sorted(events, key=lambda e: e.time_range.start):
        if event.name.startswith("triton::"):
            found.append(event.name)
        elif computes(event) and not inside_triton(event) and not computes_below(event):
            found.append(event.name)
    return found


program, calls = sys.argv[1], json.loads(sys.argv[2])
sys.argv = [program, "--device", "cpu", "--fake-timer"]
space = runpy.run_path(program, run_name="counted")  # defines the program's functions; its main does not run
found = {}
for name, setup, call in calls:
    exec(setup, space)
    eval(call, space)  # once before, so that nothing done only the first time is counted
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiler:
        eval(call, space)
    found[name] = launched(profiler.events())
print("LAUNCHED " + json.dumps(found))
