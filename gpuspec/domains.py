"""The values a harness feeds an elementwise expression: for each input tensor, a range that keeps every function
in its domain (log, sqrt and rsqrt of positive numbers, division by numbers away from zero, powers of positive
bases) and every intermediate value finite in the dtypes the expression computes in.

Found with interval arithmetic over the resolved AST: a first guess from how each tensor is used (`log(x - y)`
wants x above y), then repairs one tensor (or two) at a time from a ladder of ranges until no function is out
of its domain. NoInputs, with the reason, when none is found: a harness that would feed NaN to a correct kernel
and call it wrong is worse than no harness.
"""
from __future__ import annotations

import math

from gpuspec.tensors import MOVES, Apply, Node, Scalar, Tensor, cast_dtype

Interval = tuple[float, float]

SIGNED, POSITIVE, LARGE, SMALL, NEGATIVE = (-1.0, 1.0), (0.5, 1.5), (2.5, 3.5), (-0.5, 0.5), (-1.5, -0.5)
_LADDER = [SIGNED, POSITIVE, SMALL, LARGE, (0.1, 0.4), NEGATIVE, (0.9, 1.1)]
# the largest finite value of each floating dtype; values are kept well inside it
_FINITE = {"fp64": 1.7e308, "fp32": 3.4e38, "tf32": 3.4e38, "bf16": 3.38e38, "fp16": 65504.0, "fp8": 448.0}
_INTEGER = {"int64": (-2**63, 2**63 - 1), "int32": (-2**31, 2**31 - 1), "int16": (-2**15, 2**15 - 1),
            "int8": (-128, 127), "uint8": (0, 255), "bool": (0, 1)}
_HEADROOM = 16.0
_MOST_CONSTANTS = 16  # constants that suggest ranges of their own (x - 3 wants x above 3)
MAX_TRIALS = 400  # evaluations of the expression over trial ranges, at most


class NoInputs(ValueError):
    """No range of inputs keeps the expression in its functions' domains; the message says where."""


def expanded_power(node: Apply) -> int | None:
    """The exponent of `x ^ n` when n is a whole number from 1 to 8 (written as n multiplications, so any base
    will do); None for any other power, which is exp(n · log(x)) in Triton and needs a positive base."""
    exponent = node.args[1]
    if isinstance(exponent, Scalar) and float(exponent.value).is_integer() and 0 < exponent.value <= 8:
        return int(exponent.value)
    return None


def input_ranges(root: Node, dtypes: set[str]) -> dict[Tensor, Interval]:
    """A range of values for each tensor of `root` that keeps every operation in its domain and every value
    within the finite range of `dtypes` (those the expression is computed and stored in)."""
    tensors = list(dict.fromkeys(_tensors(root)))
    limit = min([_FINITE[d] for d in dtypes if d in _FINITE] or [_FINITE["fp32"]]) / _HEADROOM
    ladder = _ladder(root)
    guess = _guess(root)
    ranges = {t: _fit(t, guess.get(t, SIGNED)) or _fit(t, SIGNED) for t in tensors}
    trials = _Trials(root, limit)
    problems = trials.problems(ranges)
    while problems:
        under = list(dict.fromkeys(_tensors(problems[0][0])))
        repaired = _repair(trials, ranges, under, ladder, len(problems))
        if repaired is None:
            break
        ranges, problems = repaired
    if problems:
        node, need = problems[0]
        if next(_tensors(node), None) is None:
            raise NoInputs(f"`{_text(node)}` has no finite value")
        raise NoInputs(f"no inputs gpuspec tries {need.replace('{0}', _text(node))}, so a harness could not tell a "
                       "right kernel from a wrong one")
    return ranges


class _Trials:
    """The problems of trial ranges, each trial an evaluation of the whole expression, at most MAX_TRIALS of them
    (an expression of many tensors and constants would otherwise try a great many)."""

    def __init__(self, root: Node, limit: float):
        self.root, self.limit, self.left = root, limit, MAX_TRIALS

    def problems(self, ranges: dict) -> list | None:
        """The problems of `ranges`; None once the trials are used up."""
        if self.left <= 0:
            return None
        self.left -= 1
        return _problems(self.root, ranges, self.limit)

    def vanishes(self, ranges: dict) -> bool:
        """Whether every value of the result is within 1e-6 of zero."""
        low, high = _problems(self.root, ranges, math.inf, result=True)
        return max(abs(low), abs(high)) < 1e-6


def _repair(trials: _Trials, ranges: dict, under: list[Tensor], ladder: list[Interval], count: int):
    """Ranges with fewer problems, changing one of the tensors `under` the first problem (or else two), and their
    problems; None if no change helps. Of the changes that help most, the first in the ladder whose result does
    not vanish (0.1 ^ 1000000 is in the domain, but a kernel that writes zeros would pass on it)."""
    best, best_key = None, (count, True)
    for t in under:
        for candidate in ladder:
            trial = {**ranges, t: _fit(t, candidate)}
            if trial[t] is None or trial[t] == ranges[t]:
                continue
            found = trials.problems(trial)
            if found is None:
                return best
            key = (len(found), not found and trials.vanishes(trial))
            if key < best_key:
                best, best_key = (trial, found), key
    if best is None and 2 <= len(under) <= 4:
        for i, a in enumerate(under):
            for b in under[i + 1:]:
                for first in _LADDER:
                    for second in _LADDER:
                        trial = {**ranges, a: _fit(a, first), b: _fit(b, second)}
                        if trial[a] is None or trial[b] is None:
                            continue
                        found = trials.problems(trial)
                        if found is None or len(found) < count:
                            return None if found is None else (trial, found)
    return best


def _fit(tensor: Tensor, candidate: Interval) -> Interval | None:
    """`candidate` as the values the tensor's dtype can hold: whole numbers for integer dtypes (None if it
    holds none of them but zero)."""
    if tensor.dtype not in _INTEGER:
        return candidate
    low, high = _INTEGER[tensor.dtype]
    found = (max(math.ceil(candidate[0]), low), min(math.floor(candidate[1]), high))
    return found if found[0] <= found[1] and found != (0, 0) else None  # never all zeros


def _ladder(root: Node) -> list[Interval]:
    """The ranges repairs try, in order of preference: the usual small ones, ranges suggested by the expression's
    constants (above or below c for x - c; within 1/c for x · c; near 1 for x ^ c), then larger ones."""
    ladder = list(_LADDER[:3])
    constants = sorted({abs(float(s.value)) for s in _scalars(root) if s.value != 0})[:_MOST_CONSTANTS]
    for c in constants:
        if c > 1:
            ladder += [(-1 / c, 1 / c), (0.5 / c, 1.5 / c), (1 - 1 / c, 1 + 1 / c)]
        ladder += [(c + 0.5, c + 1.5), (-c - 1.5, -c - 0.5)]
    return list(dict.fromkeys(ladder + _LADDER[3:] + [(8.0, 12.0), (80.0, 120.0)]))


def _guess(root: Node) -> dict[Tensor, Interval]:
    """A first range for each tensor from what the operations above it need: a positive argument for log, sqrt,
    rsqrt, a divisor and a power's base; more than what is subtracted from it; and so on down."""
    wanted: dict[Tensor, Interval] = {}
    opposite = {POSITIVE: NEGATIVE, NEGATIVE: POSITIVE, LARGE: NEGATIVE, SMALL: SMALL}
    stack: list[tuple[Node, Interval | None]] = [(root, None)]
    while stack:
        node, need = stack.pop()
        if isinstance(node, Tensor):
            if need is not None and (node not in wanted or wanted[node] == SIGNED or need == LARGE):
                wanted[node] = need
            wanted.setdefault(node, SIGNED)
            continue
        if not isinstance(node, Apply):
            continue
        op, args = node.op, node.args
        if op in ("log", "sqrt", "rsqrt"):
            stack.append((args[0], POSITIVE))
        elif op == "div":
            stack += [(args[0], need), (args[1], POSITIVE)]
        elif op == "pow":
            stack += [(args[0], need if expanded_power(node) else POSITIVE), (args[1], None)]
        elif op == "sub":
            stack += [(args[0], LARGE if need else None), (args[1], POSITIVE if need else None)]
        elif op == "neg":
            stack.append((args[0], opposite.get(need) if need else None))
        elif op in ("exp", "sigmoid"):
            stack.append((args[0], None))  # positive whatever they are given
        elif op == "cos":
            stack.append((args[0], SMALL if need else None))
        else:  # add, mul, min, max, abs, square, relu, tanh, erf, sin, silu, gelu: positive from positive inputs
            stack += [(a, need) for a in args]
    return wanted


def _problems(root: Node, ranges: dict[Tensor, Interval], limit: float, result: bool = False):
    """Each operation whose argument may leave its domain, and each value that may not be finite, as (node, what
    it needs), innermost first; or, with `result`, the range of the root's value."""
    found: list[tuple[Node, str]] = []
    seen: dict[int, Interval] = {}

    def value(node: Node) -> Interval:
        key = id(node)
        if key in seen:
            return seen[key]
        if isinstance(node, Tensor):
            span = ranges[node]
        elif isinstance(node, Scalar):
            span = (float(node.value), float(node.value))
        else:
            args = [value(a) for a in node.args]
            need = _domain(node, args)
            if need:
                found.append((node, need))
                span = (-math.inf, math.inf)
            else:
                span = _apply(node, args)
            if not (-limit <= span[0] and span[1] <= limit) and not need:  # also where a bound is NaN
                found.append((node, f"keep `{{0}}` finite (within ±{limit:.3g}) in the dtypes it is computed in"))
        seen[key] = span
        return span

    whole = value(root)
    return whole if result else found


def _domain(node: Apply, args: list[Interval]) -> str | None:
    """What the operation needs of its arguments that they may not give (a phrase around `{0}`, its text), or
    None."""
    op = node.op
    if op in ("log", "rsqrt") and not args[0][0] > 0:
        return "keep the argument of `{0}` positive"
    if op == "sqrt" and not args[0][0] >= 0:
        return "keep the argument of `{0}` from going negative"
    if op == "div" and not (args[1][0] > 0 or args[1][1] < 0):
        return "keep the divisor in `{0}` away from zero"
    if op == "pow" and expanded_power(node) is None and not args[0][0] > 0:
        return "keep the base of `{0}` positive (a power other than 1 to 8 is exp(n · log(x)) in Triton)"
    return None


def _apply(node: Apply, args: list[Interval]) -> Interval:
    """The range of the operation's result over the ranges of its arguments (wider, never narrower)."""
    op = node.op
    if op in MOVES or cast_dtype(node):  # the same values (a cast rounds them, within the headroom)
        return args[0]
    if op in _MONOTONE:
        return _MONOTONE[op](args[0][0]), _MONOTONE[op](args[0][1])
    if op == "neg":
        return -args[0][1], -args[0][0]
    if op == "rsqrt":  # falling: the ends swap
        return 1 / math.sqrt(args[0][1]), _finite(lambda: 1 / math.sqrt(args[0][0]))
    if op in ("abs", "square", "relu"):
        low, high = args[0]
        if op == "relu":
            return max(low, 0.0), max(high, 0.0)
        least = 0.0 if low <= 0 <= high else min(abs(low), abs(high))
        most = max(abs(low), abs(high))
        return (least, most) if op == "abs" else (least * least, _finite(lambda: most * most))
    if op in ("sin", "cos"):
        return -1.0, 1.0
    if op in _DIPPING:  # silu, gelu: fall to a minimum, then rise
        at, lowest = _DIPPING[op]
        f = _DIPPING_FUNCTIONS[op]
        ends = (f(args[0][0]), f(args[0][1]))
        return (lowest if args[0][0] <= at <= args[0][1] else min(ends)), max(ends)
    if op in ("add", "sub"):
        (a, b), (c, d) = args
        return (_finite(lambda: a + c), _finite(lambda: b + d)) if op == "add" else \
            (_finite(lambda: a - d), _finite(lambda: b - c))
    if op == "mul":
        if node.args[0] == node.args[1]:  # x * x is a square, never negative
            return _apply(Apply("square", (node.args[0],)), [args[0]])
        return _product(args[0], args[1])
    if op == "div":
        low, high = args[1]
        return _product(args[0], (1 / high, 1 / low))
    if op == "pow":
        n = expanded_power(node)
        if n is not None:
            low, high = args[0]
            if n % 2:
                return _finite(lambda: low ** n), _finite(lambda: high ** n)
            least = 0.0 if low <= 0 <= high else min(abs(low), abs(high))
            return _finite(lambda: least ** n), _finite(lambda: max(abs(low), abs(high)) ** n)
        logs = (math.log(args[0][0]), math.log(args[0][1]))
        exponent = _product(logs, args[1])
        return _exp(exponent[0]), _exp(exponent[1])
    if op == "maximum":
        return max(args[0][0], args[1][0]), max(args[0][1], args[1][1])
    if op == "minimum":
        return min(args[0][0], args[1][0]), min(args[0][1], args[1][1])
    return -math.inf, math.inf  # an operation this module does not know: a value it cannot vouch for


def _finite(compute) -> float:
    """compute(), or infinity where it overflows (signed as it would be)."""
    try:
        return float(compute())
    except OverflowError:
        return math.inf


def _exp(x: float) -> float:
    return math.inf if x > 709 else math.exp(x)


def _product(a: Interval, b: Interval) -> Interval:
    corners = [_finite(lambda x=x, y=y: x * y) if not (math.isinf(x) or math.isinf(y)) or (x and y) else 0.0
               for x in a for y in b]
    return min(corners), max(corners)


def _sigmoid(x: float) -> float:
    return 1 / (1 + _exp(-x))


_DIPPING_FUNCTIONS = {
    "silu": lambda x: x * _sigmoid(x),
    "gelu": lambda x: 0.5 * x * (1 + math.erf(x / math.sqrt(2))),
}
_MONOTONE = {"exp": _exp, "log": math.log, "sqrt": math.sqrt, "tanh": math.tanh, "erf": math.erf, "sigmoid": _sigmoid}
# (where the function is lowest, its value there)
_DIPPING = {"silu": (-1.2784645, -0.2784645), "gelu": (-0.7517916, -0.1699712)}


def _tensors(node: Node):
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Tensor):
            yield n
        stack.extend(getattr(n, "args", ()))


def _scalars(node: Node):
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Scalar):
            yield n
        stack.extend(getattr(n, "args", ()))


def _text(node: Node) -> str:
    return node.text if isinstance(node, Apply) and node.text else getattr(node, "op", "the expression")
