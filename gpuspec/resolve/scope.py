"""What the resolver knows at a point of a spec (the device, the settings, the names defined so far) and what it has
found (claims, workloads, errors): the Scope every statement's function works on; and the error that stops one
statement while the rest of the file is still checked."""
from __future__ import annotations

from gpuspec.devices import Device
from gpuspec.diagnostics import Diagnostic, did_you_mean
from gpuspec.program import (
    Claim,
    Ref,
    Tolerance,
)
from gpuspec.tensors import Tensor
from gpuspec.text import Span

DEFAULT_THREADS_PER_BLOCK = 256
DEFAULT_TOLERANCE = 0.10


class Invalid(Exception):
    """One semantic error; caught per claim or statement so the rest of the file is still checked."""

    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic


def invalid(code: str, message: str, span: Span | None, help: str | None = None) -> Invalid:
    """The error to raise: a diagnostic with its code, words, place and help."""
    return Invalid(Diagnostic(code, message, span, help))


class Binding:
    """What a name in the file stands for, and the line that defined it."""

    __slots__ = ("line",)

    def __init__(self, line: int):
        self.line = line


class WorkloadName(Binding):
    __slots__ = ("workload",)

    def __init__(self, workload, line: int):
        super().__init__(line)
        self.workload = workload


class ValueName(Binding):
    __slots__ = ("ref",)

    def __init__(self, ref: Ref, line: int):
        super().__init__(line)
        self.ref = ref


class TensorName(Binding):
    __slots__ = ("tensor",)

    def __init__(self, tensor: Tensor, line: int):
        super().__init__(line)
        self.tensor = tensor


class Scope:
    """One spec being resolved: what is known at the current statement (device, settings, names defined so far),
    and what has been found (claims, workloads, every error of the file)."""

    def __init__(self, path: str, rebind: Device | None = None):
        self.path = path
        self.rebind = rebind  # the catalog device every `device` statement stands for (`check --device`), if any
        self.device: Device | None = None
        self.device_span: Span | None = None
        self.device_unknown = False  # the last `device` statement failed: its error stands for what needs it
        self.devices: dict[str, Device] = {}  # the devices the spec defined (`device mine from H100-SXM ...`)
        self.tolerance = Tolerance(DEFAULT_TOLERANCE, None, "± 10%", True)
        self.threads_per_block = DEFAULT_THREADS_PER_BLOCK
        self.sources: tuple[str, ...] = ("model",)
        self.sources_set = False
        self.mode = "eager"
        self.registers_per_thread: int | None = None
        self.shared_memory_per_block: float | None = None
        self.sample_window: float | None = None
        self.launched_from = "pytorch"  # who launches a stream's kernels (`set launched_from = cpp`)
        self.sync = "none"  # whether the host waits for the GPU after each launch (`set sync = per_launch`)
        self.timing = "alone"  # how figures about kernels were timed (`set timing = back_to_back`)
        self.nccl_algorithm = "auto"  # NCCL's algorithm for collectives (`set nccl_algorithm = ring`)
        self.nccl_launch = "eager"  # how collectives were called (`set nccl_launch = graph`)
        self.attention_implementation = "auto"  # the kernel of a fused attention (`set attention_implementation = ...`)
        self.models: dict[str, object] = {}
        # Where each device and model the spec defined was defined: (kind, name in lower case) -> (name, span)
        self.definitions: dict[tuple[str, str], tuple[str, Span | None]] = {}
        self.names: dict[str, WorkloadName | ValueName | TensorName] = {}
        # Names, devices and models whose definition failed (an error of its own, or a line that did not parse),
        # each with what it was to be: "workload", "value", "tensor", "device", "model", or "" where that is not
        # known. What uses them is not an error of its own.
        self.failed: dict[str, str] = {}
        self.quote: str | None = None  # the sentence the next claims check, if one was quoted
        self.claims: list[Claim] = []
        self.workloads: list[tuple[Span, str, object]] = []
        self.errors: list[Diagnostic] = []


# The code of the error a workload gets when the `device` statement above it failed: that statement's own error
# says what is wrong, so the resolver drops these rather than repeat it on every line that follows.
AFTER_FAILED_DEVICE = "after-failed-device"
# Likewise for a use of a name (a device, a model) whose definition failed: its error stands for the use's.
AFTER_FAILED_DEFINITION = "after-failed-definition"
FOLLOWING = frozenset({AFTER_FAILED_DEVICE, AFTER_FAILED_DEFINITION})  # errors that another error stands for


def after_failed(scope: Scope, name: str, span: Span | None) -> Invalid | None:
    """The error to raise for a use of `name` if its definition failed (dropped: that failure is the error), else
    None."""
    if name not in scope.failed:
        return None
    return invalid(AFTER_FAILED_DEFINITION, f"`{name}` was not defined: its definition has an error", span)


def require_device(scope: Scope, span: Span) -> Device:
    if scope.device is None:
        if scope.device_unknown:
            raise invalid(AFTER_FAILED_DEVICE, "the device above is not known", span)
        raise invalid("no-device", "no device is set for this workload", span,
                      "add a line such as `device H100-SXM` above it")
    return scope.device


def bind(scope: Scope, name: str, binding: Binding, span: Span) -> None:
    """Define `name`; an error if the file has defined it already."""
    if name in scope.names:
        line = scope.names[name].line
        raise invalid("duplicate-name", f"`{name}` is already defined on line {line}", span,
                      f"use a new name, or claim its value with `{name} is ...`")
    scope.names[name] = binding  # a value may share a metric's name; inside a workload's claims the metric wins


def unknown_name(scope: Scope, name: str, span: Span, tensors: bool = False, metric_names=()) -> Invalid:
    failed = after_failed(scope, name, span)
    if failed is not None:
        return failed
    known = [*scope.names, *metric_names]
    hint = did_you_mean(name, known)
    if hint is None and tensors:
        hint = f"define it first (`{name} = bf16[4096, 4096]`), or give its type with `on 4096² bf16`"
    return invalid("unknown-name", f"unknown name `{name}`", span, hint)
