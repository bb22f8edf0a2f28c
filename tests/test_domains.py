"""The inputs a harness gives an expression lie in the domain of every function in it: sampled from the ranges
gpuspec.domains chooses, every value of the expression is a finite number (checked here by evaluating the
expression in Python at the corners and at random points of those ranges)."""
from __future__ import annotations

import itertools
import random

import pytest

from gpuspec import codegen, domains, harness
from gpuspec.api import compile_text
from gpuspec.tensors import UNARY_FUNCTIONS, Apply, Scalar, Tensor
from gpuspec.text import SpecText

HEAD = "device H100-SXM\nx = fp32[16, 256]\ny = fp32[16, 256]\nb = bf16[16, 256]\nh = fp16[16, 256]\n" \
       "i = int32[16, 256]\nu = uint8[256]\n"
UNARY = sorted(UNARY_FUNCTIONS)
EXPRESSIONS = [
    *[f"{f}(x)" for f in UNARY if f != "neg"], *[f"{f}(x - y)" for f in UNARY if f != "neg"], "-x", "-(x - y)",
    *[f"{f}(b)" for f in UNARY if f != "neg"],
    "x + y", "x - y", "x * y", "x / y", "1 / x", "b / x", "x ^ 0.5", "b ^ 2.5", "x ^ 3", "x ^ 10", "x ^ (0 - 1)",
    "x ^ y", "2 ^ x", "(x - y) ^ 0.5", "x ^ 1000000", "max(x, y)", "min(x, 0.5)", "log(x - 1)", "sqrt(x - 3)",
    "log(3 - x)", "log(-x)", "rsqrt(x * x)", "sqrt(1 - x * x)", "1 / (x - y)", "x / (y - 1)", "log(x / y)",
    "exp(h * 100)", "exp(x * 100)", "sqrt(i) * x", "log(u) + x", "log(x / 2 - 3)", "log(log(x))",
    "sqrt(log(x) - log(y))", "1 / (x * y - 2)", "log(x) / log(y)", "rsqrt(x - y) * log(y - 1)",
]


def workload(expression: str):
    program = compile_text(SpecText("d.gpu", HEAD + f"w = {expression} is ≈ 2 µs\n"))
    (_, _, found), = program.workloads
    return found


def substituted(node, values: dict[Tensor, float]):
    """The expression with each tensor replaced by a number."""
    if isinstance(node, Tensor):
        return Scalar(values[node])
    if isinstance(node, Apply):
        return Apply(node.op, tuple(substituted(a, values) for a in node.args), node.text)
    return node


def samples(ranges: dict[Tensor, tuple], count: int = 60):
    """Every corner of the ranges, then random points inside them."""
    tensors = list(ranges)
    yield from (dict(zip(tensors, corner)) for corner in itertools.product(*(ranges[t] for t in tensors)))
    rng = random.Random(7)
    for _ in range(count):
        yield {t: (rng.randint(*ranges[t]) if t.dtype in ("int32", "uint8") else rng.uniform(*ranges[t]))
               for t in tensors}


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_every_sampled_input_gives_a_finite_value(expression):
    w = workload(expression)
    ranges = domains.input_ranges(w.expr, {t.dtype for t in ranges_tensors(w.expr)})
    assert set(ranges) == set(ranges_tensors(w.expr))
    biggest = 0.0
    for point in samples(ranges):
        value = codegen.constant_value(substituted(w.expr, point))  # UnsafeValue if not a finite number
        biggest = max(biggest, abs(value))
    assert biggest > 1e-6, "every input gives (nearly) zero: a kernel writing zeros would pass"


def ranges_tensors(node) -> list[Tensor]:
    return list(dict.fromkeys(domains._tensors(node)))


def test_inputs_of_functions_without_a_domain_keep_their_sign():
    # relu, abs and the like are tested on negative inputs too: a kernel that computes x for relu(x) must fail
    for expression in ("relu(x)", "abs(x)", "silu(x)", "x * 2 + y", "tanh(x)"):
        w = workload(expression)
        assert all(low < 0 < high for low, high in domains.input_ranges(w.expr, {"fp32"}).values()), expression


def test_integer_tensors_get_whole_numbers_and_never_only_zeros():
    w = workload("sqrt(i) * x + u")
    ranges = {t.name: r for t, r in domains.input_ranges(w.expr, {"fp32", "int32", "uint8"}).items()}
    assert all(isinstance(end, int) for end in ranges["i"] + ranges["u"])
    assert ranges["i"][0] >= 1 and ranges["u"] != (0, 0) and ranges["u"][0] >= 0


@pytest.mark.parametrize("expression, words", [
    ("log(x - x)", "no inputs gpuspec tries keep the argument of `log(x - x)` positive"),
    ("1 / (x - x)", "keep the divisor in `1 / (x - x)` away from zero"),
    ("sqrt(0 - x * x - 1)", "keep the argument of `sqrt(0 - x * x - 1)` from going negative"),
    ("x * (1 / 0)", "`1 / 0` has no finite value"),
    ("x * (0 - 2) ^ 0.5", "`(0 - 2)^0.5` has no finite value"),
])
def test_an_expression_out_of_its_domain_for_every_input_is_refused_with_the_reason(expression, words):
    program = compile_text(SpecText("d.gpu", HEAD + f"w = {expression} is ≈ 2 µs\nok = x * 2 is ≈ 2 µs\n"))
    found, refused = harness.plans(program)
    assert [p["raw"]["statement"].split(" = ")[0] for p in found] == ["ok"]
    (_, reason), = refused
    assert words in reason, reason


def test_the_plan_carries_each_inputs_range_as_literals():
    program = compile_text(SpecText("d.gpu", HEAD + "w = log(x - 1) * y + sqrt(i) is ≈ 2 µs\n"))
    (plan,), _ = harness.plans(program)
    ranges = {str(t["name"]): (str(t["low"]), str(t["high"])) for t in plan["inputs"]}
    assert ranges == {"x": ("2.5", "3.5"), "y": ("-1.0", "1.0"), "i": ("1", "1")}
    source = harness.render("d.gpu", [plan], [])
    assert "x = random_input((16, 256), torch.float32, 2.5, 3.5)" in source


def test_a_power_of_a_constant_base_is_a_constant_logarithm_in_triton():
    w = workload("2 ^ x")
    names = {t: codegen.identifier(t.name) for t in ranges_tensors(w.expr)}
    assert codegen.triton_expression(w.expr, names) == "tl.exp(0.6931471805599453 * x)"
    assert codegen.torch_expression(w.expr, names) == "torch.pow(2.0, x)"
    w = workload("sqrt(2) * x")
    assert codegen.torch_expression(w.expr, names) == "1.4142135623730951 * x"


def test_a_hostile_expression_of_many_tensors_and_constants_is_settled_within_the_trials(monkeypatch):
    names = [f"t{k}" for k in range(12)]
    head = "device H100-SXM\n" + "".join(f"{n} = fp32[64]\n" for n in names)
    expression = "log(" + " - ".join(names) + "".join(f" - {k}.5" for k in range(20)) + ")"
    program = compile_text(SpecText("d.gpu", head + f"w = {expression} is ≈ 2 µs\n"))
    (_, _, w), = program.workloads
    calls = []
    real = domains._problems
    monkeypatch.setattr(domains, "_problems", lambda *a, **k: calls.append(1) or real(*a, **k))
    try:
        ranges = domains.input_ranges(w.expr, {"fp32"})
    except domains.NoInputs as error:
        assert "no inputs gpuspec tries keep the argument of" in str(error)
    else:
        assert all(low > 0 for low, _ in ranges.values())
    assert len(calls) <= 2 * domains.MAX_TRIALS + 2
