"""Generated harness programs read as programs written by hand: the spec's own names, no dead code, no brackets
Python does not need, and `ruff check` has nothing to say about any of them.

The rule set is gpuspec's own (pyproject.toml, [tool.ruff]), given on the command line so that no configuration
file can weaken it: pycodestyle errors and warnings (E, W), pyflakes (F: unused imports and names, undefined
names, redefinitions), bugbear (B: loop variables a closure captures late, mutable defaults, ...) and import order
(I), at the 120 columns gpuspec's code and its programs keep to (codegen.LINE_LENGTH). B905 (`zip` without
`strict=`) is left out, as in gpuspec's own code."""
from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

from gpuspec import codegen, harness
from gpuspec.api import compile_text, load_spec
from gpuspec.tensors import Apply, Scalar, Tensor
from gpuspec.text import SpecText

RUFF_RULES = ["--select", "E,W,F,B,I", "--ignore", "B905", "--line-length", str(codegen.LINE_LENGTH)]
BUNDLED = sorted((ROOT / "specs").glob("*.gpu")) + [ROOT / "README.md"]


def ruff() -> list[str]:
    """The ruff command (the `test` extra installs it): a style test that cannot run fails, it is not skipped."""
    found = shutil.which("ruff")
    if found:
        return [found]
    probe = subprocess.run([sys.executable, "-m", "ruff", "--version"], capture_output=True)
    if probe.returncode != 0:
        pytest.fail("ruff is not installed: `pip install -e .[test]` installs it")
    return [sys.executable, "-m", "ruff"]


def programs() -> dict[str, str]:
    """name -> source: every bundled spec's whole harness, and each of its workloads' alone."""
    found = {}
    for path in BUNDLED:
        program = load_spec(path).program
        plans, refused = harness.plans(program)
        if plans:
            found[f"{path.stem}.py"] = harness.render(str(path), plans, refused)
        for span, _, _ in program.workloads:
            alone, refused = harness.plans(program, span.line)
            if alone:
                found[f"{path.stem}_line{span.line}.py"] = harness.render(str(path), alone, refused)
    return found


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    folder = tmp_path_factory.mktemp("programs")
    sources = programs()
    for name, source in sources.items():
        (folder / name).write_text(source, encoding="utf-8")
    return folder, sources


def test_every_bundled_harness_passes_ruff_check(rendered):
    folder, sources = rendered
    assert len(sources) > 40  # every spec's program and each workload's: this test sees them all
    result = subprocess.run([*ruff(), "check", "--isolated", *RUFF_RULES, "--output-format", "json", str(folder)],
                            capture_output=True, text=True)
    problems = json.loads(result.stdout or "[]")
    shown = [f"{p['filename'].rsplit('/', 1)[-1]}:{p['location']['row']}: {p['code']} {p['message']}"
             for p in problems]
    assert shown == [] and result.returncode == 0, "\n".join(shown[:40]) or result.stderr


def test_the_calibration_program_passes_ruff_check_and_uses_every_name_it_defines(tmp_path):
    from gpuspec import measure

    source = measure.calibration_source(1000)
    path = tmp_path / "calibrate.py"
    path.write_text(source, encoding="utf-8")
    result = subprocess.run([*ruff(), "check", "--isolated", *RUFF_RULES, "--output-format", "json", str(path)],
                            capture_output=True, text=True)
    problems = [f"{p['location']['row']}: {p['code']} {p['message']}" for p in json.loads(result.stdout or "[]")]
    assert problems == [] and result.returncode == 0, "\n".join(problems) or result.stderr
    tree = ast.parse(source)
    defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    defined |= {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                if isinstance(t, ast.Name)}
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    assert defined - used == set()


def test_ruff_would_see_what_these_rules_forbid(tmp_path):
    # the check has teeth: an unused import, an undefined name and a long line are each reported
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\nprint(undefined)\nx = '" + "a" * 130 + "'\n", encoding="utf-8")
    result = subprocess.run([*ruff(), "check", "--isolated", *RUFF_RULES, "--output-format", "json", str(bad)],
                            capture_output=True, text=True)
    assert {p["code"] for p in json.loads(result.stdout)} == {"F401", "F821", "E501"}


def test_every_top_level_name_of_a_program_is_used(rendered):
    """No dead code: every function, class and constant a program defines is used in it (a helper no workload
    calls, an attention constant in a program without attention, are left out)."""
    _, sources = rendered
    for name, source in sources.items():
        tree = ast.parse(source)
        defined = set()
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, ast.Assign):
                defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        assert defined - used == set(), name


def test_no_choice_between_equal_values_and_no_constant_conditions(rendered):
    _, sources = rendered
    for name, source in sources.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.IfExp):
                assert ast.dump(node.body) != ast.dump(node.orelse), (name, ast.unparse(node))
            if isinstance(node, (ast.IfExp, ast.If)):
                assert not isinstance(node.test, ast.Constant), (name, ast.unparse(node))


def test_workloads_are_named_as_the_spec_names_them():
    program = load_spec(ROOT / "specs" / "gpu-execution.gpu").program
    names = harness.workload_names(program)
    by_statement = {statement: str(names[harness.workload_key(statement, w)])
                    for _, statement, w in program.workloads}
    assert by_statement["z_fused = x * 2 + 1 fused:"] == "z_fused"
    assert by_statement["z = x * 2 + 1 eager:"] == "z"
    assert by_statement["decode llama3-8b, batch 512 is compute-bound"] == "line182_decode"
    source = harness.render("g.gpu", *harness.plans(program))
    assert "def z_fused_kernel(" in source and "def measure_z_fused():" in source
    functions = [n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)]
    assert not any(re.search(r"[0-9a-f]{16}", name) for name in functions)  # no key in a name


@pytest.mark.parametrize("spec, expected", [
    # a workload whose functions would be another's: `y`'s eager function is `y_eager`
    ("y = x * 2\ny_eager = x + 1\n", {"y = x * 2": "y", "y_eager = x + 1": "y_eager"}),
    # an unnamed workload on line 3 and one named as that would be
    ("x * 3 is ≈ 1 µs\nline3_elementwise = x + 2\n",
     {"x * 3 is ≈ 1 µs": "line3_elementwise", "line3_elementwise = x + 2": "line3_elementwise2"}),
    # names the program uses itself, a builtin, a keyword-like and a name of a program function
    ("compare = x * 2\nrandom = x + 1\nhold = x * 4\nsum_ = x - 1\n",
     {"compare = x * 2": "compare", "random = x + 1": "random", "hold = x * 4": "hold2", "sum_ = x - 1": "sum_"}),
])
def test_workload_names_are_unique_identifiers_that_collide_with_nothing(spec, expected):
    program = compile_text(SpecText("n.gpu", "device H100-SXM\nx = bf16[1024]\n" + spec))
    names = harness.workload_names(program)
    got = {statement: str(names[harness.workload_key(statement, w)]) for _, statement, w in program.workloads}
    assert got == expected
    source = harness.render("n.gpu", *harness.plans(program))
    tree = ast.parse(source)
    top = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert len(top) == len(set(top))  # no function defined twice


@pytest.mark.parametrize("text, name", [
    ("__import__", "import_"), ("class", "class_"), ("eval", "eval_"), ("1x", "n1x"), ("a-b c", "a_b_c"),
    ("", "w"), ("___", "w"), ("é", "w"), ("out", "out_"), ("torch", "torch_"), ("a" * 80, "a" * 40),
])
def test_name_from_makes_a_safe_identifier_of_any_text(text, name):
    assert codegen.name_from(text) == name
    assert codegen.identifier(name) == name


# --- brackets only where Python needs them ---------------------------------------------------------------------

X, Y, Z = (Tensor(n, "fp32", (8,)) for n in "xyz")
NAMES = {X: codegen.Code("x"), Y: codegen.Code("y"), Z: codegen.Code("z")}


def apply(op, *args):
    return Apply(op, args, "")


def shape_of(node):
    """The expression tree as nested tuples: what Python reads from the code."""
    if isinstance(node, ast.BinOp):
        return (type(node.op).__name__, shape_of(node.left), shape_of(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return -node.operand.value  # a negative number
    if isinstance(node, ast.UnaryOp):
        return (type(node.op).__name__, shape_of(node.operand))
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant):
        return node.value
    return ast.unparse(node)


def tree_of(node):
    ops = {"add": "Add", "sub": "Sub", "mul": "Mult", "div": "Div"}
    if isinstance(node, Tensor):
        return NAMES[node]
    if isinstance(node, Scalar):
        return float(node.value)
    return (ops[node.op], tree_of(node.args[0]), tree_of(node.args[1]))


@pytest.mark.parametrize("expression, code", [
    (apply("add", apply("mul", X, Scalar(2.0)), Scalar(1.0)), "x * 2.0 + 1.0"),
    (apply("mul", apply("add", X, Y), Z), "(x + y) * z"),
    (apply("sub", X, apply("sub", Y, Z)), "x - (y - z)"),
    (apply("sub", apply("sub", X, Y), Z), "x - y - z"),
    (apply("add", X, apply("add", Y, Z)), "x + (y + z)"),  # float addition does not associate: kept as written
    (apply("div", X, apply("mul", Y, Z)), "x / (y * z)"),
    (apply("mul", X, Scalar(-1.5)), "x * -1.5"),
    (apply("div", apply("mul", X, Y), apply("add", Y, Z)), "x * y / (y + z)"),
])
def test_arithmetic_is_bracketed_only_where_python_needs_it_and_keeps_the_tree(expression, code):
    for emitted in (codegen.torch_expression(expression, NAMES), codegen.triton_expression(expression, NAMES)):
        assert emitted == code
        assert shape_of(ast.parse(emitted, mode="eval").body) == tree_of(expression)


def test_negation_and_tanh_in_triton_keep_their_operands_whole():
    assert codegen.triton_expression(apply("mul", Apply("neg", (apply("add", X, Y),), ""), Z), NAMES) == \
        "-(x + y) * z"
    assert codegen.triton_expression(apply("mul", Apply("tanh", (apply("add", X, Y),), ""), Z), NAMES) == \
        "(2.0 * tl.sigmoid(2.0 * (x + y)) - 1.0) * z"
