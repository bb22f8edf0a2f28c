"""Safe code for generated harnesses: identifiers checked, dtypes from a whitelist, numbers as literals, and
elementwise expressions re-emitted from the resolved AST as PyTorch and Triton code. Never imports torch."""
from __future__ import annotations

import builtins
import keyword
import math
import re

from gpuspec.domains import expanded_power
from gpuspec.tensors import Apply, Node, Scalar, Tensor, cast_dtype, is_constant

# A workload's name (at most _NAME_LENGTH, and a number) with its longest suffix (`_mean_of_squares_pass_kernel`)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,79}\Z")
# gpuspec dtype -> the torch attribute that names it. Nothing else reaches generated code.
TORCH_DTYPES = {"fp64": "float64", "fp32": "float32", "tf32": "float32", "fp16": "float16", "bf16": "bfloat16",
                "fp8": "float8_e4m3fn", "int64": "int64", "int32": "int32", "int16": "int16", "int8": "int8",
                "uint8": "uint8", "bool": "bool"}
_RESERVED = {"torch", "triton", "tl", "math", "json", "os", "sys", "time", "args", "ctx", "main", "out", "offs",
             "mask", "pid", "n", "BLOCK", "gpuspec", "out_ptr", "square", "silu", "gelu", "whole_power"}


class UnsafeValue(ValueError):
    """A value that cannot be placed in generated code."""


class Code(str):
    """Source text built by this module from checked parts; templates accept nothing else as code."""


_NAME_LENGTH = 40  # a spec's name longer than this is cut: a program reads better with short names
_BUILTINS = set(dir(builtins))


def name_from(text: str) -> str:
    """A plain identifier made from a name the spec wrote (or a description such as `line12_elementwise`): every
    run of other characters becomes `_`, leading and trailing `_` go, a leading digit gets `n`, and a keyword, a
    builtin or a name the program uses itself gets a trailing `_` (`class_`, as PEP 8 suggests)."""
    name = words(text)[:_NAME_LENGTH].rstrip("_") or "w"
    if name[0].isdigit():
        name = "n" + name
    if keyword.iskeyword(name) or name in _BUILTINS or name in _RESERVED:
        name += "_"
    return name


def words(text: str) -> str:
    """The letters and digits of `text`, each other run of characters one `_`: `exp-and-sum pass` ->
    `exp_and_sum_pass`."""
    return re.sub(r"[^A-Za-z0-9]+", "_", str(text)).strip("_")


class Names:
    """The identifiers of one scope of a generated program, each from `name_from` and none twice: a second `x`
    becomes `x2` (not `x_2`, which would begin with `x_` as x's own functions do). `clashes(name)` says where else
    a name may not go (the program's own names)."""

    def __init__(self, taken=(), clashes=lambda name: False):
        self.taken = set(taken)
        self.clashes = clashes

    def fresh(self, wanted: str) -> Code:
        return self.exact(name_from(wanted))

    def exact(self, base: str) -> Code:
        """`base` itself (a name this module made, such as `x_ptr` for input `x`), numbered if it is taken."""
        name, number = base, 2
        while name in self.taken or self.clashes(name):
            name, number = f"{base}{number}", number + 1
        self.taken.add(name)
        return identifier(name)


def identifier(name: str) -> Code:
    """`name` if it is a plain Python identifier that is no keyword and no name the harness uses itself."""
    if not isinstance(name, str) or not _IDENTIFIER.match(name) or keyword.iskeyword(name) or name in _RESERVED \
            or name.startswith("__"):
        raise UnsafeValue(f"{name!r} cannot be a name in generated code")
    return Code(name)


def literal(value: float | int) -> Code:
    """A finite number as a Python literal."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UnsafeValue(f"{value!r} is not a number")
    if isinstance(value, int):
        return Code(repr(value))
    if not math.isfinite(value):
        raise UnsafeValue(f"{value!r} is not a finite number")
    return Code(repr(float(value)))


def text(value: str) -> Code:
    """A str literal of any text (a path, a statement as written). repr escapes every control character and
    bidirectional mark; `##[`, which a CI log runs as a command wherever it stands, is written `##\\x5b`: the
    same string, shown as text when the program is printed."""
    if not isinstance(value, str):
        raise UnsafeValue(f"{value!r} is not text")
    return Code(repr(value).replace("##[", "##\\x5b"))


LINE_LENGTH = 120  # the longest line of a generated program, as gpuspec's own code


def long_text(value: str, indent: int, lead: int | None = None) -> Code:
    """`text(value)`, as one literal where it fits after `lead` columns (`indent`, the line's indentation, unless
    said), else as literals that Python joins, one per line inside brackets: a long statement or reason keeps to
    LINE_LENGTH."""
    whole = text(value)
    if (indent if lead is None else lead) + len(whole) + 2 <= LINE_LENGTH:  # room for a comma and a bracket
        return whole
    room = LINE_LENGTH - indent - 6
    pieces, piece = [], ""
    for char in value:
        if piece and len(text(piece + char)) > room:
            pieces.append(text(piece))
            piece = ""
        piece += char
    pieces.append(text(piece))
    inner = "\n" + " " * (indent + 4)
    return Code("(" + inner + inner.join(pieces) + "\n" + " " * indent + ")")


def wrapped(head: str, items: list[str], tail: str, indent: int) -> Code:
    """`head` + the items joined by commas + `tail` on one line if it fits, else the items packed on lines of
    their own one level in, the closing bracket on a line of its own (as black lays out a long call)."""
    line = head + ", ".join(items) + tail
    if indent + len(line) <= LINE_LENGTH:
        return Code(line)
    lines, current = [], ""
    inner = indent + 4
    for item in items:
        candidate = f"{current} {item}," if current else f"{item},"
        if current and inner + len(candidate) > LINE_LENGTH:
            lines.append(current)
            candidate = f"{item},"
        current = candidate
    lines.append(current)
    body = "".join("\n" + " " * inner + part for part in lines)
    return Code(head + body + "\n" + " " * indent + tail)


def expression_lines(code: Code, indent: int, lead: int) -> Code:
    """An emitted expression after `lead` columns of a line indented `indent`: as it is where it fits, else in
    brackets with its words packed on lines one level in (Python reads a bracketed expression over lines, and an
    emitted expression has no strings, so any space between its words may break a line)."""
    if indent + lead + len(code) <= LINE_LENGTH:
        return code
    inner = indent + 4
    lines, current = [], ""
    for word in str(code).split(" "):
        candidate = f"{current} {word}" if current else word
        if current and inner + len(candidate) > LINE_LENGTH:
            lines.append(current)
            candidate = word
        current = candidate
    lines.append(current)
    return Code("(\n" + "".join(" " * inner + line + "\n" for line in lines) + " " * indent + ")")


def row(items: list[str], indent: int) -> Code:
    """A tuple literal and its comma: on one line if it fits, else one item a line (texts as long_text lays them
    out), as black lays out a long one."""
    line = "(" + ", ".join(items) + "),"
    if indent + len(line) <= LINE_LENGTH and "\n" not in line:
        return Code(line)
    inner = " " * (indent + 4)
    return Code("(\n" + "".join(f"{inner}{item},\n" for item in items) + " " * indent + "),")


def torch_dtype(dtype: str) -> Code:
    if dtype not in TORCH_DTYPES:
        raise UnsafeValue(f"{dtype!r} is not a dtype the harness knows")
    return Code(f"torch.{TORCH_DTYPES[dtype]}")


def shape(dims) -> Code:
    """A shape as a tuple literal of positive whole numbers."""
    if any(isinstance(d, bool) for d in dims):
        raise UnsafeValue(f"{dims!r} is not a shape")
    try:
        sizes = [int(d) for d in dims]
    except (TypeError, ValueError, OverflowError):
        raise UnsafeValue(f"{dims!r} is not a shape") from None
    if any(d < 1 or d != dim for d, dim in zip(sizes, dims)):
        raise UnsafeValue(f"{dims!r} is not a shape")
    return Code(f"({sizes[0]},)" if len(sizes) == 1 else "(" + ", ".join(map(str, sizes)) + ")")


# op -> (PyTorch, Triton) spelling of the function; binary operators are written as operators. Each argument
# appears once: a function that needs its argument twice (square, silu, gelu) is a helper the program defines
# (templates/program.py.jinja), or nested calls would double the code at each level.
_FUNCTIONS = {
    "neg": ("torch.neg({0})", None),  # Triton: a unary minus (_emit)
    "abs": ("torch.abs({0})", "tl.abs({0})"),
    "relu": ("torch.relu({0})", "tl.maximum({0}, 0.0)"),
    "exp": ("torch.exp({0})", "tl.exp({0})"),
    "log": ("torch.log({0})", "tl.log({0})"),
    "sqrt": ("torch.sqrt({0})", "tl.sqrt({0})"),
    "rsqrt": ("torch.rsqrt({0})", "tl.rsqrt({0})"),
    "tanh": ("torch.tanh({0})", None),  # Triton: from the sigmoid (_emit)
    "sin": ("torch.sin({0})", "tl.sin({0})"),
    "cos": ("torch.cos({0})", "tl.cos({0})"),
    "erf": ("torch.erf({0})", "tl.erf({0})"),
    "square": ("torch.square({0})", "square({0})"),
    "sigmoid": ("torch.sigmoid({0})", "tl.sigmoid({0})"),
    "silu": ("torch.nn.functional.silu({0})", "silu({0})"),
    "gelu": ("torch.nn.functional.gelu({0})", "gelu({0})"),
    "maximum": ("torch.maximum({0}, {1})", "tl.maximum({0}, {1})"),
    "minimum": ("torch.minimum({0}, {1})", "tl.minimum({0}, {1})"),
}
_OPERATORS = {"add": ("+", 0), "sub": ("-", 0), "mul": ("*", 1), "div": ("/", 1)}  # symbol, precedence
# How tightly an emitted expression binds, as Python reads it: a sum, a product, a unary minus, or an atom (a
# name, a call, a non-negative number). An operand is bracketed only where Python would read it otherwise.
_SUM, _PRODUCT, _UNARY, _ATOM = range(4)


# A cast in a Triton kernel, whose values are float32: to a narrower float and back, so that it rounds as the
# cast does (a cast to fp32 or wider changes nothing there).
_TRITON_ROUNDING = {"bf16": "tl.bfloat16", "fp16": "tl.float16"}


def torch_expression(node: Node, names: dict[Tensor, Code]) -> Code:
    """The expression as PyTorch calls: one kernel per operation when run eagerly."""
    return Code(_emit(node, names, 0)[0])


def triton_expression(node: Node, names: dict[Tensor, Code]) -> Code:
    """The expression as Triton code over float32 values loaded from the inputs. A transposed input is its own
    load: `names` maps the transpose (the Apply node) to the variable it was loaded into."""
    return Code(_emit(node, names, 1)[0])


def _operand(emitted: tuple[str, int], tightness: int) -> str:
    """An emitted operand where an expression binding at least `tightness` is needed, bracketed if it binds less."""
    text, binds = emitted
    return text if binds >= tightness else f"({text})"


def _number(value: float) -> tuple[str, int]:
    text = literal(value)
    return text, _UNARY if text.startswith("-") else _ATOM


def _emit(node: Node, names: dict[Tensor, Code], which: int) -> tuple[str, int]:
    """(code, how tightly it binds). Operands keep the tree's grouping exactly: `a + (b + c)` keeps its brackets,
    since floating-point addition is not associative."""
    if isinstance(node, Tensor):
        return names[node], _ATOM
    if isinstance(node, Scalar):
        return _number(float(node.value))
    if not isinstance(node, Apply):
        raise UnsafeValue(f"{node!r} is not an elementwise operation")
    if is_constant(node):  # `sqrt(2) * x`: torch.sqrt and tl.sqrt take tensors, not numbers
        return _number(constant_value(node))
    if node.op == "transpose" and which == 1:  # loaded transposed (templates/elementwise.py.jinja)
        return names[node], _ATOM
    emitted = [_emit(a, names, which) for a in node.args]
    args = [text for text, _ in emitted]
    dtype = cast_dtype(node)
    if dtype is not None:
        if which == 0:
            return f"{_operand(emitted[0], _ATOM)}.to({torch_dtype(dtype)})", _ATOM
        if dtype not in _TRITON_ROUNDING:
            return emitted[0]
        return f"{_operand(emitted[0], _ATOM)}.to({_TRITON_ROUNDING[dtype]}).to(tl.float32)", _ATOM
    if node.op == "copy":
        return (f"torch.clone({args[0]})", _ATOM) if which == 0 else emitted[0]
    if node.op == "transpose":
        return f"torch.transpose({args[0]}, -2, -1).contiguous()", _ATOM
    if node.op in _OPERATORS:
        symbol, binds = _OPERATORS[node.op]
        return f"{_operand(emitted[0], binds)} {symbol} {_operand(emitted[1], binds + 1)}", binds
    if node.op == "pow":
        times = expanded_power(node)
        if times is not None:  # any sign of base; a helper, so that nested powers do not repeat their code
            return (f"torch.pow({args[0]}, {times})" if which == 0 else f"whole_power({args[0]}, {times})"), _ATOM
        # exp(n · log(x)): the harness gives such a power a positive base (gpuspec.domains)
        if which == 0:
            return f"torch.pow({args[0]}, {args[1]})", _ATOM
        base = _number(math.log(constant_value(node.args[0]))) if is_constant(node.args[0]) \
            else (f"tl.log({args[0]})", _ATOM)
        return f"tl.exp({_operand(base, _PRODUCT)} * {_operand(emitted[1], _UNARY)})", _ATOM
    if node.op in ("maximum", "minimum") and which == 0 and any(is_constant(a) for a in node.args):
        # torch.maximum takes two tensors; against a constant, PyTorch clamps
        tensor, constant = (args[1], args[0]) if is_constant(node.args[0]) else (args[0], args[1])
        return f"torch.clamp({tensor}, {'min' if node.op == 'maximum' else 'max'}={constant})", _ATOM
    if which == 1 and node.op == "neg":
        return f"-{_operand(emitted[0], _ATOM)}", _UNARY
    if which == 1 and node.op == "tanh":  # tanh(x) = 2 sigmoid(2x) - 1: Triton has no tanh of its own
        return f"2.0 * tl.sigmoid(2.0 * {_operand(emitted[0], _UNARY)}) - 1.0", _SUM
    if node.op not in _FUNCTIONS:
        raise UnsafeValue(f"no harness for the operation {node.op!r}")
    return _FUNCTIONS[node.op][which].format(*args), _ATOM


_CONSTANT_FUNCTIONS = {
    "neg": lambda x: -x, "abs": abs, "relu": lambda x: max(x, 0.0), "exp": math.exp, "log": math.log,
    "sqrt": math.sqrt, "rsqrt": lambda x: 1 / math.sqrt(x), "tanh": math.tanh, "sin": math.sin, "cos": math.cos,
    "erf": math.erf, "square": lambda x: x * x, "sigmoid": lambda x: 1 / (1 + math.exp(-x)),
    "silu": lambda x: x / (1 + math.exp(-x)), "gelu": lambda x: 0.5 * x * (1 + math.erf(x / math.sqrt(2))),
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "pow": lambda a, b: a ** b, "maximum": max, "minimum": min,
}


def constant_value(node: Node) -> float:
    """The value of an expression without tensors, as a finite float; UnsafeValue if it has none (1 / 0,
    log(-1), exp(1000))."""
    if isinstance(node, Scalar):
        return float(node.value)
    try:
        value = _CONSTANT_FUNCTIONS[node.op](*(constant_value(a) for a in node.args))
    except (ArithmeticError, ValueError, KeyError, TypeError):
        value = math.nan
    if not isinstance(value, float) or not math.isfinite(value):  # a power of a negative base is complex
        raise UnsafeValue(f"`{node.text or node.op}` has no finite value")
    return value


# The Triton functions the program defines for an expression that needs them (templates/program.py.jinja)
HELPERS = ("square", "silu", "gelu", "whole_power")


def helpers_called(code: Code) -> frozenset[str]:
    """The helpers a Triton expression calls (their names are reserved: no spec's name can look like one)."""
    return frozenset(re.findall(r"\b(" + "|".join(HELPERS) + r")\(", code))


def operations(node: Node) -> set[str]:
    if isinstance(node, Apply):
        return {node.op}.union(*(operations(a) for a in node.args))
    return set()
