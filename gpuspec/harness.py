"""Workloads -> harness programs: a plan of checked values for each workload, rendered through templates/*.jinja.

The plan holds only identifiers, dtypes, shapes and numbers that gpuspec.codegen has checked, and code that it
emitted from the resolved AST; no text from a spec reaches a program except as a string literal. Never imports
torch: rendering works anywhere, running needs a GPU (or the Triton interpreter, for tests).
"""
from __future__ import annotations

import hashlib
import math

from gpuspec import __version__, codegen, domains
from gpuspec.codegen import Code, UnsafeValue
from gpuspec.program import Program
from gpuspec.resources import data_dir
from gpuspec.units import format_count
from gpuspec.workloads import (
    DTYPES,
    ROWWISE_OPS,
    Attention,
    DecodeStep,
    Elementwise,
    Matmul,
    Rowwise,
    Stream,
    Tensor,
    result_dtype,
    result_shape,
)

SMALL_ELEMENTS = 4096  # the largest tensor a `--small` run (under the Triton interpreter) builds
INT32_MAX = 2**31 - 1
MAX_GRID = 2**31 - 1  # programs in the first dimension of a launch grid, as CUDA allows
MAX_LAUNCHES = 100_000  # kernels of a stream or a decode step that a harness launches (and captures in a graph)
MEASURABLE = {
    "elementwise": ("time", "achieved_bandwidth", "bandwidth_utilization", "achieved_flop_rate"),
    "stream": ("time", "busy_time", "busy_share", "idle_time", "idle_share", "host_time", "launch_time"),
    "decode": ("step_time", "time", "gpu_time", "tokens_per_s", "busy_share", "overhead_share"),
    "matmul": ("time", "achieved_bandwidth", "bandwidth_utilization", "achieved_flop_rate", "flop_utilization"),
    "rowwise": ("time", "achieved_bandwidth", "bandwidth_utilization", "achieved_flop_rate"),
    "attention": ("time", "achieved_bandwidth", "bandwidth_utilization", "achieved_flop_rate"),
}


class HarnessError(ValueError):
    """A workload that no harness can measure as written (the reason says why)."""


def workload_key(statement: str, workload) -> str:
    """A stable name for a workload: from what it is (its expression, shapes, dtypes, options, device and model),
    not from where it is or what is claimed about it, so that saved results survive edits to claims and comments.
    (`statement` is kept in the signature for callers that know it; it does not enter the key.)"""
    try:
        text = f"{workload.kind}|{_structure(workload)}"
    except RecursionError:  # an expression too deep to walk: no harness measures it, so the statement names it
        text = f"{workload.kind}|statement|{statement}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _structure(value) -> str:
    """What a workload is, as text: attrs fields that take part in equality, recursively; catalog entries by name
    and the facts a spec changed."""
    import attrs

    from gpuspec.devices import Device
    from gpuspec.models import Model

    if isinstance(value, (Device, Model)):
        changed = ",".join(f"{n}={value.fact(n).value!r}" for n in value.overridden if value.fact(n) is not None)
        return f"{type(value).__name__}({value.name};{changed})"
    if attrs.has(type(value)):
        # An observed figure changes what a workload implies, not what a harness measures.
        fields = (f"{a.name}={_structure(getattr(value, a.name))}" for a in attrs.fields(type(value))
                  if a.eq and a.name != "observed")
        return f"{type(value).__name__}({','.join(fields)})"
    if isinstance(value, (list, tuple)):
        return "(" + ",".join(_structure(v) for v in value) + ")"
    return repr(value)


def plans(program: Program, line: int | None = None) -> tuple[list[dict], list[tuple[str, str]]]:
    """The plan of every measurable workload of `program` (or of the one at `line`), and (key, reason) for
    each workload that cannot be measured."""
    found, refused = [], []
    seen: set[str] = set()
    for span, statement, workload in program.workloads:
        if line is not None and not span.line <= line <= span.end_line:
            continue
        key = workload_key(statement, workload)
        if key in seen:  # the same workload written twice is measured once
            continue
        seen.add(key)
        try:
            plan = _plan(workload, key)
        except (HarnessError, UnsafeValue) as error:
            refused.append((key, str(error)))
            continue
        except RecursionError:
            refused.append((key, TOO_DEEP))
            continue
        plan.update(key=codegen.text(key), line=codegen.literal(span.line), statement=codegen.text(statement),
                    device=codegen.text(workload.device.name),
                    raw={"key": key, "line": span.line, "statement": statement})
        found.append(plan)
    return found, refused


def _plan(workload, key: str) -> dict:
    if isinstance(workload, Elementwise):
        return _elementwise(workload, key)
    if isinstance(workload, Stream):
        if not isinstance(workload.kernel, Elementwise):
            raise HarnessError(f"no harness measures a stream of {workload.kernel.kind} workloads yet")
        if workload.count > MAX_LAUNCHES:
            raise HarnessError(f"a stream of {format_count(workload.count)} launches is more than a harness runs "
                               f"(at most {MAX_LAUNCHES:,}: it captures every launch in one CUDA graph)")
        return {"template": "stream.py.jinja", "kind": Code("stream"), "id": codegen.identifier(f"w_{key}"),
                "kernel": _elementwise(workload.kernel, f"{key}_kernel"), "count": codegen.literal(workload.count),
                "graph": bool(workload.graph)}
    if isinstance(workload, DecodeStep):
        return _decode(workload, key)
    if isinstance(workload, Matmul):
        if workload.a.dtype not in ("bf16", "fp16", "fp32", "tf32", "fp64"):
            raise HarnessError(f"the matmul harness multiplies floating-point tensors, not {workload.a.dtype}")
        small = (min(workload.a.shape[-2], 64), min(workload.a.shape[-1], 64)), \
            (min(workload.b.shape[-2], 64), min(workload.b.shape[-1], 64))
        return {"template": "matmul.py.jinja", "kind": Code("matmul"), "id": codegen.identifier(f"w_{key}"),
                "a_shape": codegen.shape(workload.a.shape), "b_shape": codegen.shape(workload.b.shape),
                "small_a": codegen.shape(small[0]), "small_b": codegen.shape(small[1]),
                "dtype": codegen.torch_dtype(workload.a.dtype)}
    if isinstance(workload, Rowwise):
        return _rowwise(workload, key)
    if isinstance(workload, Attention):
        return _attention(workload, key)
    raise HarnessError(f"no harness measures a {workload.kind} workload")


def _rowwise(workload: Rowwise, key: str) -> dict:
    x = workload.x
    if x.dtype not in ("bf16", "fp16", "fp32", "fp64"):
        raise HarnessError(f"the row-wise harness works on bf16, fp16, fp32 and fp64 tensors, not {x.dtype}")
    if workload.op not in ROWWISE_OPS:
        raise HarnessError(f"no harness for `{workload.op}`")
    small = _small(x.shape)
    length = x.shape[-1]
    # a sum of n values rounded to bf16 is off by about √n rounding steps; softmax's outputs are about 1 / n
    atol = {"sum": 0.02 * math.sqrt(length), "softmax": 1e-3}.get(workload.op, 0.02)
    return {"template": "rowwise.py.jinja", "kind": Code("rowwise"), "id": codegen.identifier(f"w_{key}"),
            "op": workload.op, "fused": workload.mode == "fused", "shape": codegen.shape(x.shape),
            "small_shape": codegen.shape(small), "dtype": codegen.torch_dtype(x.dtype),
            "rtol": codegen.literal(0.02), "atol": codegen.literal(atol)}


def _attention(workload: Attention, key: str) -> dict:
    q, k = workload.q.shape, workload.k.shape
    group = q[1] // k[1]
    small_kv_heads = min(k[1], 2)
    small_q = (1, group * small_kv_heads, min(q[2], 64), min(q[3], 64))
    small_k = (1, small_kv_heads, min(k[2], 64), min(k[3], 64))
    return {"template": "attention.py.jinja", "kind": Code("attention"), "id": codegen.identifier(f"w_{key}"),
            "fused": workload.mode == "fused", "gqa": group > 1,
            "q_shape": codegen.shape(q), "kv_shape": codegen.shape(k),
            "small_q": codegen.shape(small_q), "small_kv": codegen.shape(small_k),
            "dtype": codegen.torch_dtype(workload.q.dtype)}


def _elementwise(workload: Elementwise, key: str) -> dict:
    root = workload.expr
    if not codegen.operations(root) and isinstance(root, Tensor):
        raise HarnessError("a bare tensor does no work to measure")
    out_shape = result_shape(root)
    tensors = _inputs(root)
    small_out = _small(out_shape)
    names = {t: codegen.identifier(f"t_{t.name}") for t in tensors}
    torch_expr = _shallow(codegen.torch_expression(root, names))
    triton_expr = _shallow(codegen.triton_expression(root, names))
    out_dtype = result_dtype(root) or "fp32"
    try:  # values in every function's domain: x ^ 0.5 of a negative x is NaN, however right the kernel
        ranges = domains.input_ranges(root, {t.dtype for t in tensors} | {out_dtype})
    except domains.NoInputs as error:
        raise HarnessError(str(error)) from None
    inputs = []
    for t in tensors:
        if len(t.shape) > len(out_shape) or tuple(out_shape[len(out_shape) - len(t.shape):]) != tuple(t.shape):
            if math.prod(t.shape) != 1:
                raise HarnessError(f"the harness broadcasts inputs only along leading dimensions ({t.name})")
        small = small_out[len(small_out) - len(t.shape):] if t.shape else ()
        small = t.shape if math.prod(t.shape) == 1 else small  # one element stays one: the kernel loads it once
        inputs.append({"index": _index_kind(t, out_shape),  # how the kernel finds its elements: see _index_kind
                       "name": names[t], "ptr": codegen.identifier(f"ptr_{t.name}"),
                       "len": codegen.identifier(f"len_{t.name}"), "label": Code(repr(t.name)),
                       "dtype": codegen.torch_dtype(t.dtype),
                       "shape": codegen.shape(t.shape), "small_shape": codegen.shape(small),
                       "elements": codegen.literal(math.prod(t.shape)),
                       "low": codegen.literal(ranges[t][0]), "high": codegen.literal(ranges[t][1])})
    low_precision = {t.dtype for t in tensors} | {out_dtype}
    # The harness's own launch shape, not the model's threads per block (see templates/elementwise.py.jinja)
    block, num_warps = vector_launch({t.dtype for t in tensors} | {out_dtype})
    largest = max([math.prod(out_shape), *(math.prod(t.shape) for t in tensors)])
    if -(-largest // block) > MAX_GRID:
        raise HarnessError(f"{format_count(largest)} elements in blocks of {block} is more programs than one kernel "
                           f"launches ({MAX_GRID:,})")
    loose = bool(low_precision & {"bf16", "fp16", "fp8"})  # eager intermediates round at the inputs' precision
    return {
        "template": "elementwise.py.jinja", "kind": Code("elementwise"), "id": codegen.identifier(f"w_{key}"),
        "mode": Code("fused" if workload.mode == "fused" else "eager"), "inputs": inputs,
        "out_dtype": codegen.torch_dtype(out_dtype), "out_shape": codegen.shape(out_shape),
        "small_out_shape": codegen.shape(small_out),
        "block": codegen.literal(block),  # Triton wants a power of two
        "wide": largest + block > INT32_MAX,  # offsets past int32, up to a block beyond the last element
        "num_warps": codegen.literal(num_warps),
        "torch_expr": torch_expr, "triton_expr": triton_expr,
        # bf16 keeps 8 bits of mantissa; the interpreter and the GPU may round differently from float32
        "rtol": codegen.literal(0.02 if loose else 1e-4),
        "atol": codegen.literal(0.02 if loose else 1e-5),
    }


VECTOR_BYTES = 16  # the widest global load and store a thread issues (LDG.E.128 / ld.global.v4.b32)


def vector_launch(dtypes: set[str]) -> tuple[int, int]:
    """(BLOCK, num_warps) of a memory-bound elementwise kernel: 4 warps, and per thread two whole 16-byte vectors
    of the narrowest dtype (at least 8 elements), so every load and store is full width and each thread has
    several in flight. BLOCK is 1024 (fp32), 2048 (bf16) or 4096 (fp8)."""
    narrowest = min((DTYPES[d][0] for d in dtypes if d in DTYPES), default=4)
    warps = 4
    per_thread = max(8, 2 * VECTOR_BYTES // narrowest)
    return 32 * warps * per_thread, warps


def _index_kind(t: Tensor, out_shape: tuple[int, ...]) -> str:
    """How the kernel indexes input `t` from the output's offsets: "same" (as many elements as the output, in its
    order: the offsets themselves, nothing to compute), "scalar" (one element, loaded once) or "rows" (the output's
    trailing dimensions, repeated along the leading ones: offset modulo the input's length, a compile-time
    constant)."""
    elements = math.prod(t.shape)
    if elements == math.prod(out_shape):
        return "same"
    return "scalar" if elements == 1 else "rows"


# Python reads at most 200 nested brackets; the templates put a generated expression inside a few of their own.
MAX_NESTING = 150
TOO_DEEP = f"the expression is nested too deeply for a generated program (at most {MAX_NESTING} levels)"


def _shallow(code: Code) -> Code:
    """`code`, if Python can read it: HarnessError when its brackets nest deeper than MAX_NESTING."""
    depth = deepest = 0
    for char in str(code):
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth -= 1
    if deepest > MAX_NESTING:
        raise HarnessError(TOO_DEEP)
    return code


def _inputs(node) -> list[Tensor]:
    found: dict[Tensor, None] = {}

    def walk(n):
        if isinstance(n, Tensor):
            found[n] = None
        for a in getattr(n, "args", ()):
            walk(a)

    walk(node)
    return list(found)


def _small(out_shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape of at most SMALL_ELEMENTS elements with the same trailing layout, for interpreter runs."""
    dims = list(out_shape) or [1]
    i = 0
    while math.prod(dims) > SMALL_ELEMENTS and i < len(dims) - 1:
        dims[i] = 1
        i += 1
    if math.prod(dims) > SMALL_ELEMENTS:
        dims[-1] = max(1, SMALL_ELEMENTS // max(1, math.prod(dims[:-1])))
    return tuple(dims)


def _decode(step: DecodeStep, key: str) -> dict:
    model = step.model
    fact = {name: int(model.fact(name).value) for name in ("params", "layers", "hidden", "vocab", "kv_heads",
                                                           "head_dim") if model.fact(name) is not None}
    if len(fact) < 6:
        raise HarnessError(f"model {model.name} lacks a fact the decode harness needs")
    per_layer = step.kernels_per_layer
    if fact["layers"] * per_layer > MAX_LAUNCHES:
        raise HarnessError(f"a step of {format_count(fact['layers'])} layers of {format_count(per_layer)} kernels is "
                           f"more than a harness runs (at most {MAX_LAUNCHES:,} kernels: it captures every launch in "
                           "one CUDA graph)")
    weight_kernels = max(1, min(7, per_layer - 1))
    attention = 1 if per_layer > weight_kernels else 0
    embedding = 0 if model.tied_embeddings else fact["vocab"] * fact["hidden"]
    weights_per_layer = (fact["params"] - embedding) // fact["layers"]
    rows = max(1, weights_per_layer // weight_kernels // fact["hidden"])
    kv = 2 * fact["kv_heads"] * fact["head_dim"] * step.context * step.batch
    return {
        "template": "decode.py.jinja", "kind": Code("decode"), "id": codegen.identifier(f"w_{key}"),
        "layers": codegen.literal(fact["layers"]), "hidden": codegen.literal(fact["hidden"]),
        "rows": codegen.literal(rows), "weight_kernels": codegen.literal(weight_kernels),
        "attention": bool(attention), "small_kernels": codegen.literal(per_layer - weight_kernels - attention),
        "kv_elements": codegen.literal(max(kv, 1)), "batch": codegen.literal(step.batch),
        "dtype": codegen.torch_dtype(step.weight_dtype if step.weight_dtype != "fp8" else "bf16"),
        "graph": bool(step.graph),
    }


def render(path: str, workload_plans: list[dict], refused: list[tuple[str, str]]) -> str:
    """The harness program for one spec file."""
    from gpuspec.templating import environment

    template = environment().get_template("program.py.jinja")
    # The program carries gpuspec/timing.py itself (templating.timing_rules): it runs where gpuspec is not installed
    return template.render(spec=codegen.text(str(path)), version=Code(repr(__version__)), workloads=workload_plans,
                           refused=[(codegen.text(k), codegen.text(r)) for k, r in refused])


def template_names() -> list[str]:
    return sorted(p.name for p in data_dir("templates").glob("*.jinja"))
