"""What the resolver knows at a point of a spec: the device, the settings, the names defined so far; and the error
that stops one statement while the rest of the file is still checked."""
from __future__ import annotations

from gpuspec.devices import Device
from gpuspec.diagnostics import Diagnostic
from gpuspec.program import (
    Ref,
    Tolerance,
)
from gpuspec.text import Span
from gpuspec.workloads import (
    Elementwise,
    Tensor,
)

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

    def __init__(self, workload: Elementwise, line: int):
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
    """What is known at a point in the file: device, settings, and names defined so far."""

    def __init__(self):
        self.device: Device | None = None
        self.device_span: Span | None = None
        self.tolerance = Tolerance(DEFAULT_TOLERANCE, None, "± 10%", True)
        self.threads_per_block = DEFAULT_THREADS_PER_BLOCK
        self.sources: tuple[str, ...] = ("model",)
        self.sources_set = False
        self.mode = "eager"
        self.registers_per_thread: int | None = None
        self.shared_memory_per_block: float | None = None
        self.sample_window: float | None = None
        self.models: dict[str, object] = {}
        self.names: dict[str, WorkloadName | ValueName | TensorName] = {}
