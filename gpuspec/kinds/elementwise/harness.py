"""The plan for templates/elementwise.py.jinja: the expression as a Triton kernel (fused) or PyTorch ops (eager),
its inputs in ranges that keep every function in its domain, and the launch it takes."""
from __future__ import annotations

import math

from gpuspec import codegen, domains
from gpuspec.codegen import Code
from gpuspec.kinds.elementwise import Elementwise
from gpuspec.planning import INT32_MAX, MAX_GRID, HarnessError, shallow, sized, small
from gpuspec.tensors import DTYPES, Apply, Tensor, cast_dtype, computed_dtypes, result_dtype, result_shape
from gpuspec.units import format_count

# Names the template's functions use (their locals, and the program's functions they call), which an input of the
# spec's may not take: `random_input = random_input(...)` would make the function a local of setup
_TEMPLATE_LOCALS = ("inputs", "out_shape", "reference", "run", "problem", "EVEN", "random_input", "poisoned",
                    "compare", "TIMER")


def plan(workload: Elementwise, name: Code, name_of=None) -> dict:
    root = workload.expr
    if not codegen.operations(root) and isinstance(root, Tensor):
        raise HarnessError("a bare tensor does no work to measure")
    out_shape = result_shape(root)
    tensors = _inputs(root)
    _check_casts(root)
    small_out = small(out_shape)
    local = codegen.Names([*_TEMPLATE_LOCALS, *defines(workload, name)])  # its own functions too: y_kernel
    names = {t: local.fresh(t.name) for t in tensors}  # the spec's own names, made safe where they must be
    transposes = _transposes(root)
    loaded = {**names, **{node: local.fresh(f"{node.args[0].name}_transposed") for node in transposes}}
    torch_expr = shallow(codegen.torch_expression(root, names))
    triton_expr = shallow(codegen.triton_expression(root, loaded))
    out_dtype = result_dtype(root) or "fp32"
    try:  # values in every function's domain: x ^ 0.5 of a negative x is NaN, however right the kernel
        ranges = domains.input_ranges(root, computed_dtypes(root) | {out_dtype})
    except domains.NoInputs as error:
        raise HarnessError(str(error)) from None
    plain = set(_plain_uses(root))
    flipped = {node.args[0] for node in transposes}
    if transposes:  # rows and columns shrink alike, so that a square tensor stays square
        small_out = (*[1] * (len(out_shape) - 2), *(min(d, _SMALL_SIDE) for d in out_shape[-2:]))
    inputs = []
    for t in tensors:
        # the shape the kernel sees: the tensor's own, or as transposed where it is only read transposed
        seen = t.shape if t in plain or t not in flipped else (*t.shape[:-2], t.shape[-1], t.shape[-2])
        if t in plain and t in flipped and t.shape[-1] != t.shape[-2]:
            raise HarnessError(f"`{t.name}` is read both as it is and transposed; the harness does that only for "
                               "a square matrix")
        per_row = _per_row(seen, out_shape) and t in plain and t not in flipped
        if not per_row and (len(seen) > len(out_shape) or tuple(out_shape[len(out_shape) - len(seen):]) != seen):
            if math.prod(t.shape) != 1:
                raise HarnessError(f"the harness broadcasts inputs only along leading dimensions, or one value a "
                                   f"row ({t.name})")
        shrunk = small_out[len(small_out) - len(seen):] if seen else ()
        if seen != t.shape:
            shrunk = (*shrunk[:-2], shrunk[-1], shrunk[-2])
        if per_row:
            shrunk = (*small_out[:-1], 1)
        shrunk = t.shape if math.prod(t.shape) == 1 else shrunk  # one element stays one: the kernel loads it once
        index = "per_row" if per_row else _index_kind(t, out_shape)  # how the kernel finds its elements
        full_shape, small_shape = codegen.shape(t.shape), codegen.shape(shrunk)
        inputs.append({"index": index, "name": names[t], "ptr": local.exact(f"{names[t]}_ptr"),
                       "len": local.exact(f"{names[t]}_len") if index in ("rows", "per_row") and t in plain
                       else None,
                       "dtype": codegen.torch_dtype(t.dtype), "shape": full_shape, "small_shape": small_shape,
                       "size": sized(full_shape, small_shape),
                       "low": codegen.literal(ranges[t][0]), "high": codegen.literal(ranges[t][1])})
    loads = [entry for t, entry in zip(tensors, inputs) if t in plain]  # each load in the kernel: see the template
    for node in transposes:
        source = inputs[tensors.index(node.args[0])]
        loads.append(_transposed_load(node, loaded[node], source, local, out_shape))
    low_precision = computed_dtypes(root) | {out_dtype}
    # The harness's own launch shape, not the model's threads per block (see templates/elementwise.py.jinja)
    block, num_warps = vector_launch({t.dtype for t in tensors} | {out_dtype})
    largest = max([math.prod(out_shape), *(math.prod(t.shape) for t in tensors)])
    if -(-largest // block) > MAX_GRID:
        raise HarnessError(f"{format_count(largest)} elements in blocks of {block} is more programs than one kernel "
                           f"launches ({MAX_GRID:,})")
    loose = bool(low_precision & {"bf16", "fp16", "fp8"})  # eager intermediates round at the inputs' precision
    pointers = [t["ptr"] for t in inputs]
    constants = [f"{t['len']}: tl.constexpr" for t in inputs if t["len"]]
    constants += [f"{c}: tl.constexpr" for t in loads if t["index"] == "transposed" for c in (t["rows"], t["cols"])]
    values = [t["name"] for t in inputs]
    lengths = [f"{t['len']}={t['name']}.numel()" if t["index"] == "rows" else f"{t['len']}=out.shape[-1]"
               for t in inputs if t["len"]]
    # a transposed input of shape (..., columns, rows) is read as the output's (..., rows, columns)
    lengths += [f"{c}={t['source']}.shape[{axis}]" for t in loads if t["index"] == "transposed"
                for c, axis in ((t["rows"], -1), (t["cols"], -2))]
    block_code = codegen.literal(block)  # Triton wants a power of two
    full_out, small_out_code = codegen.shape(out_shape), codegen.shape(small_out)
    return {
        "template": "elementwise.py.jinja", "kind": Code("elementwise"), "id": name,
        "mode": Code("fused" if workload.mode == "fused" else "eager"), "inputs": inputs, "loads": loads,
        "back_to_back": workload.timing == "back_to_back",  # how the spec's figure was timed
        "helpers": codegen.helpers_called(triton_expr) | {"poisoned", "vector_kernels"},  # see program.py.jinja
        "out_dtype": codegen.torch_dtype(out_dtype), "out_shape": full_out, "small_out_shape": small_out_code,
        "out_size": sized(full_out, small_out_code),
        "block": block_code,
        "wide": largest + block > INT32_MAX,  # offsets past int32, up to a block beyond the last element
        "num_warps": codegen.literal(num_warps),
        "signature": codegen.wrapped(f"def {name}_kernel(", [*pointers, "out_ptr", "n", *constants,
                                     "BLOCK: tl.constexpr", "EVEN: tl.constexpr"], "):", 0),
        "launch": codegen.wrapped(f"{name}_kernel[(triton.cdiv(n, {block_code}),)](", [
            *values, "out", "n", *lengths, f"BLOCK={block_code}", f"EVEN=n % {block_code} == 0",
            f"num_warps={num_warps}"], ")", 4),
        "fused_def": codegen.wrapped(f"def {name}_fused(", [*values, "out"], "):", 0),
        "eager_def": codegen.wrapped(f"def {name}_eager(", values, "):", 0),
        "setup_return": codegen.wrapped("return [", values, f"], {sized(full_out, small_out_code)}", 4),
        # laid out within the line length after `return ` and `out = ` (templates/elementwise.py.jinja)
        "torch_expr": codegen.expression_lines(torch_expr, 4, 7),
        "triton_expr": codegen.expression_lines(triton_expr, 4, 6),
        # bf16 keeps 8 bits of mantissa; the interpreter and the GPU may round differently from float32
        "rtol": codegen.literal(0.02 if loose else 1e-4),
        "atol": codegen.literal(0.02 if loose else 1e-5),
    }


_SMALL_SIDE = 64  # a `--small` run's rows and columns of a transposing expression (64 × 64 = SMALL_ELEMENTS)
VECTOR_BYTES = 16  # the widest global load and store a thread issues (LDG.E.128 / ld.global.v4.b32)


def vector_launch(dtypes: set[str]) -> tuple[int, int]:
    """(BLOCK, num_warps) of a memory-bound elementwise kernel: 4 warps, and per thread two whole 16-byte vectors
    of the narrowest dtype (at least 8 elements), so every load and store is full width and each thread has
    several in flight. BLOCK is 1024 (fp32), 2048 (bf16) or 4096 (fp8)."""
    narrowest = min((DTYPES[d][0] for d in dtypes if d in DTYPES), default=4)
    warps = 4
    per_thread = max(8, 2 * VECTOR_BYTES // narrowest)
    return 32 * warps * per_thread, warps


def _per_row(shape: tuple[int, ...], out_shape: tuple[int, ...]) -> bool:
    """Whether an input holds one value per row of the output (a row statistic kept as [..., rows, 1], as
    `mean(-1, keepdim=True)` leaves it): the kernel reads element offs // the output's row length."""
    return len(shape) == len(out_shape) >= 2 and shape[-1] == 1 and shape[:-1] == out_shape[:-1] and \
        out_shape[-1] > 1 and math.prod(shape) > 1


def _index_kind(t: Tensor, out_shape: tuple[int, ...]) -> str:
    """How the kernel indexes input `t` from the output's offsets: "same" (as many elements as the output, in its
    order: the offsets themselves, nothing to compute), "scalar" (one element, loaded once) or "rows" (the output's
    trailing dimensions, repeated along the leading ones: offset modulo the input's length, a compile-time
    constant)."""
    elements = math.prod(t.shape)
    if elements == math.prod(out_shape):
        return "same"
    return "scalar" if elements == 1 else "rows"


def _check_casts(root) -> None:
    """A HarnessError for a cast the harness cannot run as modelled: PyTorch does no arithmetic on fp8 tensors, so
    a cast to fp8 can only be the last operation."""
    stack = list(getattr(root, "args", ()))
    while stack:
        node = stack.pop()
        if cast_dtype(node) == "fp8":
            raise HarnessError(f"`{node.text or 'a cast to fp8'}` feeds another operation, and PyTorch does no "
                               "arithmetic on fp8 tensors: only the result may be cast to fp8")
        stack.extend(getattr(node, "args", ()))


def _transposes(root) -> list[Apply]:
    """The transposes of the expression, each once, left to right (each is its own load in the Triton kernel)."""
    found: dict[Apply, None] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, Apply) and node.op == "transpose":
            found[node] = None
        else:
            stack.extend(reversed(getattr(node, "args", ())))
    return list(found)


def _plain_uses(root) -> list[Tensor]:
    """The tensors the expression reads as they are (not through a transpose)."""
    found: dict[Tensor, None] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, Tensor):
            found[node] = None
        elif not (isinstance(node, Apply) and node.op == "transpose"):
            stack.extend(reversed(getattr(node, "args", ())))
    return list(found)


def _transposed_load(node: Apply, name: Code, source: dict, local: codegen.Names, out_shape: tuple[int, ...]) -> dict:
    """The load of a transposed input: output offset o over (..., rows, cols) reads the input at
    (o // (rows · cols)) · rows · cols + (o % cols) · rows + (o // cols) % rows; rows and cols are the program's
    (a `--small` run shrinks them), passed as compile-time constants."""
    if math.prod(result_shape(node)) != math.prod(out_shape):
        raise HarnessError(f"the harness transposes a tensor only where it is as large as the output "
                           f"(`{node.text or 'transpose'}` is broadcast)")
    return {"index": "transposed", "name": name, "ptr": source["ptr"], "len": None, "source": source["name"],
            "rows": local.exact("rows"), "cols": local.exact("cols"), "offs": local.exact("transposed_offs")}


def _inputs(node) -> list[Tensor]:
    found: dict[Tensor, None] = {}

    def walk(n):
        if isinstance(n, Tensor):
            found[n] = None
        for a in getattr(n, "args", ()):
            walk(a)

    walk(node)
    return list(found)


def defines(workload: Elementwise, name: str) -> list[str]:
    """The functions templates/elementwise.py.jinja defines for a workload of this name (a stream that repeats it
    defines them all but the last)."""
    return [f"{name}_{part}" for part in ("kernel", "fused", "eager", "setup", "run")] + [f"measure_{name}"]
