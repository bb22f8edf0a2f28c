"""Tensors and elementwise expressions over them, as every kind of workload uses them: dtypes, shapes, broadcasting,
type promotion, and the functions an expression may call."""
from __future__ import annotations

import math
from typing import Union

from attrs import field

from gpuspec.record import ValueRecord, as_tuple, record

# dtype -> (bytes per element, canonical name).
DTYPES = {
    "fp64": (8, "fp64"), "float64": (8, "fp64"), "f64": (8, "fp64"), "double": (8, "fp64"),
    "fp32": (4, "fp32"), "float32": (4, "fp32"), "f32": (4, "fp32"), "float": (4, "fp32"),
    "tf32": (4, "tf32"),
    "fp16": (2, "fp16"), "float16": (2, "fp16"), "f16": (2, "fp16"), "half": (2, "fp16"),
    "bf16": (2, "bf16"), "bfloat16": (2, "bf16"),
    "fp8": (1, "fp8"), "e4m3": (1, "fp8"), "e5m2": (1, "fp8"), "float8": (1, "fp8"),
    "int64": (8, "int64"), "int32": (4, "int32"), "int16": (2, "int16"), "int8": (1, "int8"),
    "uint8": (1, "uint8"), "bool": (1, "bool"),
}
FLOAT_DTYPES = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8")
# Type promotion between tensors, as PyTorch does it: the wider float wins; bf16 with fp16 gives fp32. It is the
# language's rule (PyTorch's), not the model's: the resolver needs result dtypes, and so do harnesses.
_RANK = {"bool": 0, "uint8": 1, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "fp8": 5, "fp16": 6, "bf16": 6,
         "tf32": 7, "fp32": 7, "fp64": 8}

# The functions an elementwise expression may call, and the operators it may use. What each costs in FLOPs is the
# elementwise model's business (gpuspec/kinds/elementwise/rules.py).
UNARY_FUNCTIONS = ("neg", "abs", "relu", "exp", "log", "sqrt", "rsqrt", "tanh", "sin", "cos", "erf", "square",
                   "sigmoid", "silu", "gelu")
# A dtype's name called as a function converts to it (`fp32(x)`, `bf16(y)`, as PyTorch's `.to(torch.float32)`):
# floating dtypes only. The operation is `to_<dtype>`, and its result has that dtype whatever promotion would say.
CAST_DTYPES = ("fp64", "fp32", "fp16", "bf16", "fp8")
CASTS = {name: canonical for name, (_, canonical) in DTYPES.items() if canonical in CAST_DTYPES}
# Operations that move a tensor without arithmetic: `copy(x)` writes x again, `transpose(x)` writes x with its
# last two dimensions swapped (PyTorch's `.transpose(-2, -1).contiguous()`). Each takes a tensor, not an
# expression: a copy of a computed value is the value.
MOVES = ("copy", "transpose")
FUNCTIONS = {**dict.fromkeys(UNARY_FUNCTIONS, 1), "max": 2, "min": 2, **dict.fromkeys(MOVES, 1),
             **dict.fromkeys(CASTS, 1)}  # name -> how many arguments
BINARY_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "^": "pow", "max": "maximum", "min": "minimum"}


@record
class Tensor(ValueRecord):
    """A named input tensor: dtype and shape."""

    name: str
    dtype: str
    shape: tuple[int, ...] = field(converter=as_tuple)

    @property
    def elements(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return DTYPES[self.dtype][0]


@record
class Scalar(ValueRecord):
    """A constant in an elementwise expression."""

    value: float


@record
class Apply(ValueRecord):
    """One elementwise operation (one kernel in eager mode) over tensors, scalars or other operations."""

    op: str
    args: tuple["Node", ...] = field(converter=as_tuple)
    text: str = field(eq=False, default="")  # the operation as written, for messages


Node = Union[Tensor, Scalar, Apply]


def cast_op(dtype: str) -> str:
    """The operation that converts to `dtype` (a name CASTS knows)."""
    return f"to_{CASTS[dtype]}"


def cast_dtype(node: Node) -> str | None:
    """The dtype a cast converts to, or None for anything else."""
    if isinstance(node, Apply) and node.op.startswith("to_"):
        return node.op[3:]
    return None


def computed_dtypes(node: Node) -> set[str]:
    """Every dtype the expression's values take on the way: its inputs', its casts' and its result's."""
    found = {d for d in (result_dtype(node),) if d}
    for arg in getattr(node, "args", ()):
        found |= computed_dtypes(arg)
    return found


def without_tensor(function: str, written: str) -> tuple[str, str, str] | None:
    """What is wrong with a cast or a move (`fp32(2)`, `copy(2)`) of what is no tensor (a constant, or a value with
    a unit), as (code, message, help); None for any other function. The same words inside a tensor expression and
    on their own (`y = fp32(2.0)`)."""
    if function in CASTS:
        return ("bad-cast", f"`{written}` casts a constant, which has no dtype of its own",
                "cast the tensor expression the constant is part of")
    if function in MOVES:
        return ("move-operand", f"`{function}` takes a named tensor (or a workload's result), not a constant: "
                f"`{written}` has nothing to {'copy' if function == 'copy' else 'transpose'}",
                f"name the tensor first (`x = bf16[4096, 4096]`), then {function}(x)")
    return None


def is_constant(node: Node) -> bool:
    return isinstance(node, Scalar) or (isinstance(node, Apply) and all(is_constant(a) for a in node.args))


def result_dtype(node: Node) -> str | None:
    """The dtype of a node's result, or None for a constant."""
    if isinstance(node, Tensor):
        return node.dtype
    if isinstance(node, Scalar):
        return None
    if cast_dtype(node) is not None:
        return cast_dtype(node)
    dtypes = [d for d in (result_dtype(a) for a in node.args) if d]
    if not dtypes:
        return None
    best = max(dtypes, key=lambda d: _RANK[d])
    if {"fp16", "bf16"} <= set(dtypes) and _RANK[best] == _RANK["bf16"]:
        return "fp32"
    return best


def result_shape(node: Node) -> tuple[int, ...]:
    """The broadcast shape of a node's result (numpy rules); ValueError if shapes do not broadcast."""
    if isinstance(node, Tensor):
        return node.shape
    if isinstance(node, Scalar):
        return ()
    if node.op == "transpose":
        inner = result_shape(node.args[0])
        return (*inner[:-2], inner[-1], inner[-2])
    shape: tuple[int, ...] = ()
    for arg in node.args:
        shape = broadcast(shape, result_shape(arg))
    return shape


def broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    # The usual cases, each what the rule below gives for it: equal shapes, and a scalar's () with a shape whose
    # dimensions are all at least 1 (a 0 would come out as 1).
    if a == b:
        return tuple(a)
    if not a and min(b) >= 1:
        return tuple(b)
    if not b and min(a) >= 1:
        return tuple(a)
    out = []
    for x, y in zip(reversed((1,) * (len(b) - len(a)) + a), reversed((1,) * (len(a) - len(b)) + b)):
        if x != y and 1 not in (x, y):
            raise ValueError(f"shapes {list(a)} and {list(b)} do not broadcast")
        out.append(max(x, y))
    return tuple(reversed(out))
