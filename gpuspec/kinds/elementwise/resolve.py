"""`x * 2 + 1 fused with 128 threads per block`: an elementwise workload, its mode, threads and the per-block
resources the file sets, within the device's limits."""
from __future__ import annotations

from gpuspec import nodes, units
from gpuspec.kinds.elementwise import KIND, Elementwise
from gpuspec.resolve import options
from gpuspec.resolve.checked import whole_number, within_limit
from gpuspec.resolve.scope import Scope, invalid, require_device
from gpuspec.resolve.tensor_expressions import tensor_expression
from gpuspec.tensors import Tensor


def resolve(subject: nodes.Subject, scope: Scope, local: dict[str, Tensor], statement: str) -> Elementwise:
    device = require_device(scope, subject.span)
    tree = tensor_expression(scope, subject.expr, local)
    threads = scope.threads_per_block
    if subject.options.threads is not None:
        threads = whole_number(subject.options.threads, units.Unit("", 1.0, units.COUNT),
                               subject.options.threads.span, "threads per block")
    mode = options.mode(KIND, subject, scope)
    if subject.options.tile is not None:
        raise invalid("tiles-need-matmul", "`with ... tiles` describes a matmul (`a @ b`)", subject.options.span)
    where = subject.options.threads.span if subject.options.threads is not None else subject.span
    within_limit(device, "max_threads_per_block", threads, "threads per block", where)
    within_limit(device, "max_registers_per_thread", scope.registers_per_thread, "registers per thread",
                 subject.span)
    within_limit(device, "shared_memory_per_block", scope.shared_memory_per_block,
                 "shared memory per block", subject.span)
    return Elementwise(tree, mode, threads, device, scope.registers_per_thread, scope.shared_memory_per_block,
                       text=statement, timing=scope.timing)
