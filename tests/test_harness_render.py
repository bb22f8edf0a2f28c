"""Rendering harness programs: every workload renders to Python that compiles, the kernel code is what the
expression says, and no text from a spec can become code. Pure rendering: torch is never imported."""
from __future__ import annotations

import ast
import builtins
import math
import re

import jinja2
import pytest
from conftest import ROOT

from gpuspec import codegen, harness
from gpuspec.api import compile_text, load_spec
from gpuspec.codegen import Code, UnsafeValue
from gpuspec.templating import environment
from gpuspec.text import SpecText

LESSON = ROOT / "specs" / "gpu-execution.gpu"


def program_of(text: str, path: str = "t.gpu"):
    return compile_text(SpecText(path, text))


def plans_of(text: str):
    found, refused = harness.plans(program_of(text))
    return found, refused


def plan_for(text: str, statement_start: str) -> dict:
    found, _ = plans_of(text)
    matching = [p for p in found if p["raw"]["statement"].startswith(statement_start)]
    assert len(matching) == 1, [p["raw"]["statement"] for p in found]
    return matching[0]


def compiles(source: str, name: str = "harness.py") -> ast.Module:
    tree = ast.parse(source)
    compile(source, name, "exec")  # also catches what ast.parse lets through (duplicate arguments, bad nonlocal)
    return tree


def function(tree: ast.Module, name: str) -> ast.FunctionDef:
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    assert len(found) == 1, f"{name} defined {len(found)} times"
    return found[0]


def code_lines(source: str, name: str) -> list[str]:
    """The lines of the top-level function `name` (with its decorators), comments and blank lines left out."""
    node = function(ast.parse(source), name)
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    lines = source.splitlines()[first - 1:node.end_lineno]
    return [line for line in lines if line.strip() and not line.strip().startswith("#")]


def workloads_table(tree: ast.Module) -> list[tuple]:
    """WORKLOADS as (key, line, statement, device) literals, read back from the program's AST."""
    assign = next(n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "WORKLOADS")
    return [tuple(ast.literal_eval(e) for e in row.elts[:4]) for row in assign.value.elts]


def constant(tree: ast.Module, name: str):
    assign = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == name)
    return ast.literal_eval(assign.value)


# --- every workload of the lesson renders ------------------------------------------------------------------

@pytest.fixture(scope="module")
def lesson():
    program = load_spec(LESSON).program
    found, refused = harness.plans(program)
    return program, found, refused


def first_of_each_workload(program):
    """(key, line, statement) of each distinct workload, where it is first written: the same workload twice is
    measured once."""
    firsts = {}
    for span, text, w in program.workloads:
        firsts.setdefault(harness.workload_key(text, w), (span.line, text))
    return [(key, line, text) for key, (line, text) in firsts.items()]


def test_every_workload_of_the_lesson_has_a_plan_and_none_is_refused(lesson):
    program, found, refused = lesson
    assert refused == []
    assert [p["raw"]["line"] for p in found] == [line for _, line, _ in first_of_each_workload(program)]
    assert len(found) < len(program.workloads)  # x*2 on 4096² bf16 is written three ways, measured once
    assert {str(p["kind"]) for p in found} == {"elementwise", "stream", "decode"}


def test_the_lesson_renders_to_one_program_that_parses_and_compiles(lesson):
    program, found, refused = lesson
    source = harness.render(str(LESSON), found, refused)
    tree = compiles(source)
    table = workloads_table(tree)
    assert [(key, line, statement) for key, line, statement, _ in table] == first_of_each_workload(program)
    assert {device for *_, device in table} == {"H100-SXM"}
    assert constant(tree, "SPEC") == str(LESSON)
    for plan in found:  # each workload has its measuring function, and the program names it in WORKLOADS
        function(tree, f"measure_{plan['id']}")


def test_each_workload_of_the_lesson_renders_alone(lesson):
    program, found, _ = lesson
    for span, text, _ in program.workloads:
        alone, refused = harness.plans(program, span.line)
        assert [p["raw"]["statement"] for p in alone] == [text] and refused == []
        tree = compiles(harness.render(str(LESSON), alone, refused))
        assert [row[2] for row in workloads_table(tree)] == [text]


# --- golden code for small workloads -----------------------------------------------------------------------

SMALL = "device H100-SXM\nx = bf16[4096]\n"


def test_fused_x_times_2_plus_1_is_one_kernel_with_one_store_of_the_whole_expression():
    plan = plan_for(SMALL + "y = x * 2 + 1 fused:\n    1 kernels\n", "y =")
    source = harness.render("t.gpu", [plan], [])
    kernel = code_lines(source, f"{plan['id']}_kernel")
    assert plan["id"] == "y"  # the spec's own name
    assert kernel == [
        "@triton.jit",
        "def y_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):",
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
        "    if EVEN:  # n is a multiple of BLOCK: no bounds to check",
        "        mask = None",
        "    else:",
        "        mask = offs < n",
        "    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)",
        "    out = x * 2.0 + 1.0",
        "    tl.store(out_ptr + offs, out.to(out_ptr.dtype.element_ty), mask=mask)",
    ]
    assert "\n".join(kernel).count("tl.store(") == 1
    # fused: the timed run is the Triton kernel, on a bf16 output as the spec's dtype says
    run = ast.unparse(function(ast.parse(source), f"{plan['id']}_run"))
    assert "return y_fused(*inputs, out)" in run
    assert "poisoned(out_shape, torch.bfloat16)" in run
    launch = code_lines(source, f"{plan['id']}_fused")[-2]
    # the harness's own launch shape: 16 bf16 (two 16-byte vectors) per thread over 4 warps, whatever the model's
    # threads per block (the spec gives none here; the model's default is 256)
    assert "[(triton.cdiv(n, 2048),)]" in launch and "BLOCK=2048, EVEN=n % 2048 == 0, num_warps=4" in launch


def test_eager_emits_one_torch_call_per_operation_and_times_the_torch_version():
    plan = plan_for(SMALL + "y = gelu(x) * 2 + exp(x) eager:\n    3 kernels\n", "y =")
    assert str(plan["torch_expr"]) == "torch.nn.functional.gelu(x) * 2.0 + torch.exp(x)"
    assert str(plan["triton_expr"]) == "gelu(x) * 2.0 + tl.exp(x)"
    source = harness.render("t.gpu", [plan], [])
    assert code_lines(source, "y_eager")[-1] == "    return torch.nn.functional.gelu(x) * 2.0 + torch.exp(x)"
    run = ast.unparse(function(ast.parse(source), f"{plan['id']}_run"))
    assert "return y_eager(*inputs)" in run
    assert f"{plan['id']}_fused(*inputs, out)" in run  # the Triton kernel is still checked in eager mode


def test_a_small_run_shrinks_the_leading_dimensions_and_keeps_the_row():
    plan = plan_for("device H100-SXM\nx = fp16[4096, 4096]\nb = fp16[4096]\ny = x + b fused:\n    1 kernels\n",
                    "y =")
    assert str(plan["out_shape"]) == "(4096, 4096)" and str(plan["small_out_shape"]) == "(1, 4096)"
    assert [str(t["small_shape"]) for t in plan["inputs"]] == ["(1, 4096)", "(4096,)"]
    # a shape a small run keeps is written once
    assert [str(t["size"]) for t in plan["inputs"]] == ["(1, 4096) if args.small else (4096, 4096)", "(4096,)"]
    assert str(plan["out_dtype"]) == "torch.float16"
    assert str(plan["rtol"]) == "0.02"  # half precision is checked at half precision's tolerance


def test_functions_of_the_spec_become_the_matching_torch_and_triton_calls():
    x = "device H100-SXM\nx = fp32[1024]\n"
    cases = {
        "exp(x)": ("torch.exp(x)", "tl.exp(x)"),
        "log(x)": ("torch.log(x)", "tl.log(x)"),
        "sqrt(x)": ("torch.sqrt(x)", "tl.sqrt(x)"),
        "relu(x)": ("torch.relu(x)", "tl.maximum(x, 0.0)"),
        "sigmoid(x)": ("torch.sigmoid(x)", "tl.sigmoid(x)"),
        "x ^ 2": ("torch.pow(x, 2)", "whole_power(x, 2)"),
    }
    for expression, (torch_code, triton_code) in cases.items():
        plan = plan_for(x + f"y = {expression}:\n    1 kernels\n", "y =")
        assert (str(plan["torch_expr"]), str(plan["triton_expr"])) == (torch_code, triton_code), expression
    positive = plan_for(x + "y = log(x) + 1:\n    2 kernels\n", "y =")
    plain = plan_for(x + "y = exp(x) + 1:\n    2 kernels\n", "y =")
    assert (positive["inputs"][0]["low"], positive["inputs"][0]["high"]) == ("0.5", "1.5")  # log's domain
    assert (plain["inputs"][0]["low"], plain["inputs"][0]["high"]) == ("-1.0", "1.0")  # both signs


# --- every template renders --------------------------------------------------------------------------------

def matmul_plan():
    from gpuspec.api import compile_text
    from gpuspec.text import SpecText

    program = compile_text(SpecText("m.gpu", "device H100-SXM\na = bf16[256, 128]\nb = bf16[128, 64]\nc = a @ b\n"))
    [plan], _ = harness.plans(program)
    return plan


ROWWISE_SPEC = "device H100-SXM\nx = bf16[8192, 4096]\n" + "".join(
    f"{op}(x) {mode} is 1 kernels\n" for op in ("sum", "mean", "amax", "softmax", "layernorm", "rmsnorm")
    for mode in ("eager", "fused"))
ATTENTION_SPEC = ("device H100-SXM\nq = bf16[2, 32, 1024, 128]\nk = bf16[2, 8, 1024, 128]\nv = bf16[2, 8, 1024, 128]\n"
                  "m = bf16[2, 8, 1024, 128]\nattention(q, k, v) eager is 3 kernels\n"
                  "attention(q, k, v) fused is 1 kernels\nattention(m, k, v) fused is 1 kernels\n")


def checked_plans(text):
    program = compile_text(SpecText("r.gpu", text))
    found, refused = harness.plans(program)
    assert refused == []
    return found


def test_rowwise_and_attention_plans_render_each_variant():
    rowwise, attention = checked_plans(ROWWISE_SPEC), checked_plans(ATTENTION_SPEC)
    assert len(rowwise) == 12 and len(attention) == 3
    sources = {}
    for plan in rowwise + attention:
        source = environment().get_template(plan["template"]).render(w=plan)
        compiles(source, plan["template"])
        sources[(plan["template"], plan.get("op"), plan["fused"], plan.get("gqa"))] = source
    # each row-wise workload is its own Triton kernels, one per kernel of the model's; PyTorch only checks them
    fused_softmax, eager_softmax = (sources[("rowwise.py.jinja", "softmax", mode, None)] for mode in (True, False))
    assert "_softmax_fused_kernel[(rows,)]" in fused_softmax
    assert "torch.softmax" not in eager_softmax.split("_reference")[0]
    assert [line.split("[")[0].strip() for line in eager_softmax.splitlines() if "[(rows,)](" in line] == [
        "line9_rowwise_max_pass_kernel", "line9_rowwise_exp_and_sum_pass_kernel", "line9_rowwise_normalize_pass_kernel"]
    fused, eager = sources[("attention.py.jinja", None, True, True)], sources[("attention.py.jinja", None, False, True)]
    assert "enable_gqa=True" in fused and "_fused(q, k, v)" in fused
    assert "enable_gqa" not in sources[("attention.py.jinja", None, True, False)]
    assert "baddbmm" in eager and "_eager(q, k, v)" in eager and "_fused" not in eager


def test_every_template_in_templates_renders_to_python_that_compiles(lesson):
    _, found, refused = lesson
    by_kind = {str(p["kind"]): p for p in found}
    contexts = {
        "program.py.jinja": dict(spec=Code("'t.gpu'"), version=Code("'0'"), workloads=found,
                                 refused=[Code("('k', 'why'),")], helpers=frozenset()),
        "calibrate.py.jinja": dict(version=Code("'0'"), launches=codegen.literal(1000)),
        "probe.py.jinja": dict(version=Code("'0'")),
        "timer.py.jinja": {},
        "elementwise.py.jinja": dict(w=by_kind["elementwise"]),
        "stream.py.jinja": dict(w=by_kind["stream"]),
        "decode.py.jinja": dict(w=by_kind["decode"]),
        "matmul.py.jinja": dict(w=matmul_plan()),
        "rowwise.py.jinja": dict(w=checked_plans(ROWWISE_SPEC)[0]),
        "attention.py.jinja": dict(w=checked_plans(ATTENTION_SPEC)[0]),
    }
    names = harness.template_names()
    assert set(names) == set(contexts), "a template this test does not render"
    for name in names:
        source = environment().get_template(name).render(**contexts[name])
        compiles(source, name)
    calibrate = environment().get_template("calibrate.py.jinja").render(**contexts["calibrate.py.jinja"])
    assert "LAUNCHES = 1000" in calibrate


def test_the_program_of_each_kind_includes_its_template(lesson):
    _, found, refused = lesson
    source = harness.render("t.gpu", found, refused)
    tree = ast.parse(source)
    stream = next(p for p in found if str(p["kind"]) == "stream")
    decode = next(p for p in found if str(p["kind"]) == "decode")
    # a stream calls the functions of the workload it repeats, defined once, by that workload
    assert stream["kernel"]["id"] == "y5" and not stream["define_kernel"]
    function(tree, "y5_kernel")
    assert "y5_setup()" in ast.unparse(function(tree, f"measure_{stream['id']}"))
    assert "TIMER.sample(stream, 'host')" in ast.unparse(function(tree, f"measure_{stream['id']}"))
    assert "torch.matmul(h, matrix.t())" in ast.unparse(function(tree, f"measure_{decode['id']}"))


# --- injection: text from a spec stays text ------------------------------------------------------------------

TRIPLE_SINGLE, TRIPLE_DOUBLE, BACKSLASH = "'" * 3, '"' * 3, "\\"
HOSTILE = "\n".join([
    "device os.system from H100-SXM with sms = 66   # \"); os.system('echo pwned'); (\" "
    + TRIPLE_DOUBLE + " " + BACKSLASH,
    "\"a sentence over lines, with " + TRIPLE_SINGLE + " and a backslash " + BACKSLASH + " and",
    "__import__('os').system('echo pwned') and exec('pwned') and eval('pwned')\"",
    "\u201ccurly, with \"quotes\" and " + TRIPLE_SINGLE + " and " + TRIPLE_DOUBLE + " and os.system('pwned') "
    + BACKSLASH + "\u201d",
    "eval = bf16[1024]",
    "__import__ = fp32[1024]",
    "system = fp32[1024]",
    "a_tensor_name_far_too_long_to_become_an_identifier_in_a_generated_program = fp32[16]",
    "w = eval * 2 + __import__ fused:   # os.system(\"pwned\") " + TRIPLE_SINGLE + " " + TRIPLE_DOUBLE + " "
    + BACKSLASH + "n",
    "    \"os.system('pwned') " + BACKSLASH * 2 + "n " + TRIPLE_SINGLE + "\"",
    "    \u2248 2 \u00b5s",
    "a_tensor_name_far_too_long_to_become_an_identifier_in_a_generated_program * 2 is \u2248 2 \u00b5s",
    "system * 3 is \u2248 2 \u00b5s  # \")); os.system('pwned'); ((\" " + TRIPLE_SINGLE,
    "1000 launches of w is \u2248 5 ms  # " + BACKSLASH + "\"; exec(\"pwned\")",
    # names the transposing kernel and the stream of replays use themselves
    "rows = fp32[16, 16]",
    "cols = bf16[16, 16]",
    "replay = transpose(rows) + fp16(transpose(cols) * 2) - rows fused is \u2248 2 \u00b5s",
    "flat = 10 launches of replay as a CUDA graph",
    "set sync = per_launch",
    "20 launches of flat is \u2248 5 ms",
    "",
])

TEMPLATE_NAMES = {
    "BLOCK", "CUDA", "DEVICE", "FAKE_SECONDS", "GPUSPEC_VERSION", "REFUSED", "SPEC", "TIMER", "Timer", "WORKLOADS",
    "_", "actual", "atol", "caches", "clocks", "compare", "count", "criterion", "device", "dtype", "end", "error",
    "expected", "fields", "fn", "got", "gpu", "graph", "h", "handle", "hidden", "high", "host", "info", "inputs", "key",
    "kv_elements", "l2_bytes", "layer", "layers", "line", "low", "main", "mask", "matrix", "measure", "metrics", "n",
    "offs", "one", "out", "out_ptr", "out_shape", "parser", "partial", "poisoned", "problem", "props", "provenance",
    "random_input", "reason", "record", "reference", "report", "result", "results", "rows", "rtol", "run", "sample",
    "self", "shape", "shapes", "side", "size", "smi", "start", "statement", "step", "stream", "summary", "t", "text",
    "v", "values", "weights", "worst", "write_report", "__init__", "square", "silu", "gelu", "whole_power", "x",
    "launch", "launched", "launches", "flat", "replay", "replayed", "captured",
}
TEMPLATE_NAMES |= {"EVEN", "FUSED_ATTENTION", "attention_backend", "backend", "kernels", "mark", "marks", "names"}


def _names_in(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.alias):
            found.add((node.asname or node.name).split(".")[0])
    return found


# Every program carries gpuspec/timing.py and the measuring code of templates/timer.py.jinja: their names are the
# templates' own (the timer rendered alone, with nothing from any spec).
TEMPLATE_NAMES |= _names_in(environment().get_template("timer.py.jinja").render())
MODULES = {"torch", "triton", "tl", "timing", "math", "json", "os", "sys", "time", "subprocess", "platform",
           "datetime", "argparse", "args", "re", "threading"}
DANGEROUS_BUILTINS = {"eval", "exec", "compile", "__import__", "globals", "locals", "vars", "setattr", "delattr",
                      "breakpoint", "input", "__builtins__", "__loader__", "__spec__", "memoryview"}
SAFE_BUILTINS = {n for n in dir(builtins) if n not in DANGEROUS_BUILTINS}
def generated_names(found: list[dict]) -> set[str]:
    """The names codegen made for these plans: each workload's functions, and its inputs' names in the kernel."""
    names = set()
    for plan in found:
        for p in (plan, plan.get("kernel")):
            if p is None:
                continue
            names.update(f"{p['id']}_{part}" for part in ("kernel", "fused", "eager", "setup", "run"))
            names.add(f"measure_{p['id']}")
            for t in p.get("inputs", ()):
                names.update(str(t[field]) for field in ("name", "ptr", "len") if t[field])
            for t in p.get("loads", ()):  # a transposed load: its variable, its offsets and their sizes
                names.update(str(t[field]) for field in ("name", "rows", "cols", "offs") if t.get(field))
    return names


def allowed_name(name: str, generated: set[str]) -> bool:
    return name in TEMPLATE_NAMES or name in MODULES or name in SAFE_BUILTINS or name in generated


def called(node: ast.Call) -> str:
    return ast.unparse(node.func)


def without_strings(tree: ast.Module) -> str:
    """The program with every string constant emptied: what is left is code, not text."""

    class Empty(ast.NodeTransformer):
        def visit_Constant(self, node):
            return ast.Constant("") if isinstance(node.value, str) else node

    return ast.unparse(Empty().visit(ast.parse(ast.unparse(tree))))


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("spec") / "evil'''\"\\n.gpu")
    program = program_of(HOSTILE, path)
    found, refused = harness.plans(program)
    source = harness.render(path, found, refused)
    return path, program, found, refused, source


def test_a_hostile_spec_still_yields_plans_with_its_names_made_safe(hostile):
    _, program, found, refused, _ = hostile
    assert len(program.workloads) == 7
    assert len(found) == 7 and refused == []
    w = next(p for p in found if p["raw"]["statement"].startswith("w = "))
    replay = next(p for p in found if p["raw"]["statement"].startswith("replay = "))
    # the spec's `rows` and `cols` keep their names; the transposed loads' own sizes take the next ones
    assert [str(t["name"]) for t in replay["inputs"]] == ["rows", "cols"]
    assert [(str(t["name"]), str(t.get("rows")), str(t.get("cols"))) for t in replay["loads"]] == [
        ("rows", "None", "None"), ("rows_transposed", "rows2", "cols2"), ("cols_transposed", "rows3", "cols3")]
    # a builtin gets a trailing underscore, a dunder loses its underscores (and `import` is a keyword)
    assert w["id"] == "w" and [str(t["name"]) for t in w["inputs"]] == ["eval_", "import_"]
    long = next(p for p in found if p["raw"]["statement"].startswith("a_tensor"))
    assert str(long["inputs"][0]["name"]) == "a_tensor_name_far_too_long_to_become_an"  # 40 characters at most
    assert long["id"] == f"line{long['raw']['line']}_elementwise"


def test_hostile_text_renders_to_a_program_that_parses_and_compiles(hostile):
    *_, source = hostile
    compiles(source)


def test_hostile_statements_device_and_path_reach_the_program_only_as_the_same_strings(hostile):
    path, program, found, refused, source = hostile
    tree = ast.parse(source)
    assert constant(tree, "SPEC") == path
    table = workloads_table(tree)
    assert [row[2] for row in table] == [p["raw"]["statement"] for p in found]
    assert any('os.system("pwned")' in row[2] for row in table)  # the comment travels with the statement, as text
    assert {row[3] for row in table} == {"os.system"}
    assert constant(tree, "REFUSED") == refused


def test_no_hostile_text_survives_outside_string_literals(hostile):
    *_, source = hostile
    code = without_strings(ast.parse(source))
    # the spec's tensor names are identifiers in the kernels (`system`, `eval_`): nothing else of its text is code
    cleaned = re.sub(r"\b(system|eval_|import_)(_ptr)?\b", "", code)
    for marker in ("pwned", "system", "__import__", "exec(", "eval(", "import_"):
        assert marker not in cleaned, marker


def test_a_hostile_program_calls_nothing_that_runs_text_and_runs_only_nvidia_smi(hostile):
    *_, source = hostile
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = called(node)
        assert name not in {"os.system", "os.popen", "eval", "exec", "compile", "__import__"}
        assert not name.startswith(("os.exec", "os.spawn", "importlib")), name
        if name.startswith("subprocess."):
            assert name == "subprocess.run"
            assert isinstance(node.args[0], ast.List) and ast.literal_eval(node.args[0].elts[0]) == "nvidia-smi"


def test_every_name_in_a_hostile_program_is_one_the_templates_or_codegen_made(hostile):
    _, program, found, _, source = hostile
    generated = generated_names(found)
    tree = ast.parse(source)
    strays = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.alias):
            names = [(node.asname or node.name).split(".")[0]]
        strays.update(n for n in names if not allowed_name(n, generated))
    assert strays == set()
    # and the check has teeth: a name outside the list is caught
    assert not allowed_name("pwned", generated) and not allowed_name("eval", generated)
    assert not allowed_name("__import__", generated) and allowed_name("import__ptr", generated)


# --- codegen refuses what is not safe -----------------------------------------------------------------------

@pytest.mark.parametrize("name", [
    "class", "lambda", "None", "True", "__import__", "__x", "torch", "tl", "triton", "args", "os", "sys", "out",
    "mask", "BLOCK", "gpuspec", "1x", "a-b", "a b", "a.b", "x\n", "x;y", "é", "", "a" * 81, 123, None,
])
def test_identifier_refuses_keywords_dunders_reserved_and_non_identifiers(name):
    with pytest.raises(UnsafeValue):
        codegen.identifier(name)


def test_identifier_accepts_a_plain_name_as_code():
    assert codegen.identifier("t_x") == "t_x" and isinstance(codegen.identifier("t_x"), Code)
    assert codegen.identifier("a" * 80) == "a" * 80


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, "1", "1; import os", True, False, None, 1j, [1]])
def test_literal_refuses_non_finite_numbers_strings_and_booleans(value):
    with pytest.raises(UnsafeValue):
        codegen.literal(value)


def test_literal_writes_numbers_that_read_back_exactly():
    for value in (0, -3, 10 ** 30, 0.1, 1e-300, -2.5e17, 1 / 3):
        text = codegen.literal(value)
        assert isinstance(text, Code)
        assert ast.literal_eval(text) == value and type(ast.literal_eval(text)) is type(value)


@pytest.mark.parametrize("dtype", ["float32", "torch.float32", "bf16; import os", "fp4", "BF16", "", "__class__"])
def test_torch_dtype_refuses_unknown_dtypes(dtype):
    with pytest.raises(UnsafeValue):
        codegen.torch_dtype(dtype)


def test_torch_dtype_names_only_torch_attributes():
    assert codegen.torch_dtype("bf16") == "torch.bfloat16"
    assert codegen.torch_dtype("fp8") == "torch.float8_e4m3fn"
    assert all(re.fullmatch(r"torch\.[a-z0-9_]+", codegen.torch_dtype(d)) for d in codegen.TORCH_DTYPES)


@pytest.mark.parametrize("dims", [(0, 4), (4, -1), (2.5,), ("4",)])
def test_shape_refuses_zero_negative_fractional_and_text_dims(dims):
    with pytest.raises(UnsafeValue):
        codegen.shape(dims)


@pytest.mark.parametrize("dims", [(math.nan,), (math.inf,), ("4; import os",), (None,), (True,), (4, False)])
def test_shape_refuses_dims_that_are_not_whole_numbers_as_an_unsafe_value(dims):
    # harness.plans catches UnsafeValue (and HarnessError) only: a ValueError, OverflowError or TypeError from
    # int() would escape it as a crash instead of refusing the workload with the reason
    with pytest.raises(UnsafeValue):
        codegen.shape(dims)


def test_shape_is_a_tuple_literal():
    assert ast.literal_eval(codegen.shape((4096, 4096))) == (4096, 4096)
    assert ast.literal_eval(codegen.shape((7,))) == (7,)
    assert ast.literal_eval(codegen.shape(())) == ()


# --- templating: only codegen's output is placed -------------------------------------------------------------

def test_a_plain_string_placed_in_a_template_is_refused():
    template = environment().from_string("value = {{ v }}\n")
    with pytest.raises(UnsafeValue):
        template.render(v="__import__('os').system('pwned')")
    with pytest.raises(UnsafeValue):
        template.render(v=3)  # a number must come through codegen.literal too
    assert template.render(v=Code("1.5")) == "value = 1.5\n"
    assert template.render(v=True) == "value = True\n"


def test_a_plain_string_in_a_plan_fails_the_whole_render():
    plan = plan_for(SMALL + "y = x * 2 fused:\n    1 kernels\n", "y =")
    plan["triton_expr"] = "(t_x * 2.0)"  # right text, but not built by codegen
    with pytest.raises(UnsafeValue):
        harness.render("t.gpu", [plan], [])


def test_a_plan_missing_a_value_is_an_error_not_an_empty_string():
    plan = plan_for(SMALL + "y = x * 2 fused:\n    1 kernels\n", "y =")
    harness.render("t.gpu", [plan], [])  # complete, it renders
    del plan["triton_expr"]
    with pytest.raises(jinja2.UndefinedError):
        harness.render("t.gpu", [plan], [])


def test_the_program_template_without_a_top_level_value_is_an_error():
    template = environment().get_template("program.py.jinja")
    with pytest.raises(jinja2.UndefinedError):
        template.render(spec=Code("'t.gpu'"), workloads=[], refused=[])  # no version


def test_a_stream_of_a_row_wise_workload_is_modelled_but_not_measured():
    from gpuspec.api import compile_text
    from gpuspec.harness import plans
    from gpuspec.text import SpecText

    program = compile_text(SpecText("t.gpu", "device H100-SXM\nx = bf16[32, 1024]\ns = softmax(x) eager\n"
                                             "1000 launches of s is overhead-bound\n"))
    found, refused = plans(program)
    assert [plan["raw"]["statement"] for plan in found] == ["s = softmax(x) eager"]
    assert [reason for _, reason in refused] == ["no harness measures a stream of rowwise workloads yet"]


# --- sizes: offsets past int32, grids past CUDA's limit, launch counts past what a harness runs ---------------

def test_offsets_are_int64_from_two_to_the_31_elements_on_and_int32_below():
    head = "device H100-SXM\nbig = fp32[65536, 32768]\nrow = fp32[32768]\nsmall = fp32[65536, 32767]\n"
    cases = {"big * 2": True, "big + row": True, "small * 2": False, "row * 2": False}
    for expression, wide in cases.items():
        plan = plan_for(head + f"y = {expression} fused is ≈ 2 µs\n", "y =")
        source = harness.render("w.gpu", [plan], [])
        assert ("tl.program_id(0).to(tl.int64) * BLOCK" in source) is wide, expression
        assert ("offs = tl.program_id(0) * BLOCK" in source) is not wide, expression
    # a tensor just under 2^31 elements whose last block reaches past it: int64 too
    plan = plan_for("device H100-SXM\nx = fp32[2147483640]\ny = x * 2 fused is ≈ 2 µs\n", "y =")
    assert plan["wide"] is True


def test_more_programs_than_a_launch_grid_holds_is_refused_with_the_limit():
    program = program_of("device H100-SXM\nx = bf16[1000000000, 1000000000]\nx * 2 is ≈ 1 s\n", "g.gpu")
    found, refused = harness.plans(program)
    assert found == [] and "is more programs than one kernel launches (2,147,483,647)" in refused[0][1]


@pytest.mark.parametrize("spec, words", [
    ("x = fp32[4096]\ns = x * 2\n100001 launches of s is ≈ 1 s\n",
     "a stream of 100,001 launches is more than a harness runs (at most 100,000"),
    ("model big from llama3-8b with layers = 10000\ndecode big, batch 1, 11 kernels per layer is ≈ 1 s\n",
     "a step of 10,000 layers of 11 kernels is more than a harness runs (at most 100,000 kernels"),
], ids=["stream", "decode"])
def test_launch_counts_past_what_a_harness_runs_are_refused_with_the_limit(spec, words):
    found, refused = harness.plans(program_of("device H100-SXM\n" + spec, "l.gpu"))
    assert [p["raw"]["statement"] for p in found if str(p["kind"]) in ("stream", "decode")] == []
    assert any(words in reason for _, reason in refused), refused


@pytest.mark.parametrize("function", ["square({})", "silu({})", "gelu({})", "({}) ^ 8", "({}) ^ 3"])
def test_nested_functions_that_use_their_argument_twice_give_code_that_grows_linearly(function):
    # square(square(...)) written with its argument twice doubled the code at each level: 2^24 copies of x
    # from a 250-byte spec
    def nested(depth: int) -> str:
        text = "x"
        for _ in range(depth):
            text = function.format(text)
        return text

    sizes = []
    for depth in (10, 20):
        plan = plan_for(f"device H100-SXM\nx = fp32[4096]\ny = {nested(depth)} is ≈ 2 µs\n", "y =")
        sizes.append(len(plan["torch_expr"]) + len(plan["triton_expr"]))
    assert sizes[1] < 2.5 * sizes[0], sizes


# --- a harness never measures something else under the claim's name -------------------------------------------

@pytest.mark.parametrize("step, words", [
    ("decode llama3-8b, batch 1, tp 8 is ≈ 1 ms", "a step split over 8 GPUs (tp 8) runs on all of them"),
    ("prefill llama3-8b, batch 1, prompt 2048, kv fp8 is ≈ 1 ms", "a prefill's attention takes q, k and v in one "
                                                                  "dtype; fp8 k and v with bf16 weights"),
    ("decode llama3-8b, batch 1, weights fp8 is ≈ 1 ms", "fp8 weights need a scaled matmul it does not run"),
    ("decode llama3-8b, batch 1, weights int8 is ≈ 1 ms", "int8 weights need a scaled matmul it does not run"),
    ("decode llama3-8b, batch 1, 1 kernels per layer is ≈ 1 ms", "needs at least 2 kernels per layer"),
    ("decode llama3-8b, batch 1, host_ops 2739 eager is ≈ 1 ms", "not a model's code: the ops that code dispatches"),
    ("decode llama3-8b, batch 1, kv_repeat 4 is ≈ 1 ms", "its copies of the K and V heads (kv_repeat)"),
    ("decode llama3-8b, batch 1, attention math is ≈ 1 ms", "PyTorch's math attention are not what it runs"),
], ids=["tp", "prefill-fp8-kv", "fp8-weights", "int8-weights", "one-kernel", "host-ops", "kv-repeat", "math"])
def test_a_decode_step_the_harness_cannot_run_as_modelled_is_refused_with_the_reason(step, words):
    found, refused = harness.plans(program_of("device H100-SXM\n" + step + "\n", "d.gpu"))
    assert found == [] and len(refused) == 1
    assert words in refused[0][1], refused


@pytest.mark.parametrize("kv, dtype, elements", [("bf16", "torch.bfloat16", 2 * 8 * 128 * 4096),
                                                  ("fp32", "torch.float32", 2 * 8 * 128 * 4096),
                                                  ("fp8", "torch.uint8", 2 * 8 * 128 * 4096)])
def test_the_decode_harness_reads_its_kv_cache_in_the_kv_dtype(kv, dtype, elements):
    [plan], refused = harness.plans(program_of(f"device H100-SXM\ndecode llama3-8b, batch 1, context 4096, kv {kv} "
                                               "is ≈ 1 ms\n", "d.gpu"))
    assert refused == [] and str(plan["kv_dtype"]) == dtype
    source = harness.render("d.gpu", [plan], [])
    # one layer's cache: K and V, 8 KV heads of 128, 4,096 tokens; an fp8 cache read as the bytes it is
    assert f"random_input((256 if args.small else {elements},), {dtype})" in source
    assert str(plan["dtype"]) == "torch.bfloat16"  # the weights stay in their own dtype


@pytest.mark.parametrize("dtype, precision", [("tf32", "high"), ("fp32", "highest"), ("bf16", "highest")])
def test_a_matmul_runs_tf32_exactly_when_the_spec_says_tf32(dtype, precision):
    [plan], _ = harness.plans(program_of(f"device H100-SXM\na = {dtype}[256, 128]\nb = {dtype}[128, 64]\nc = a @ b\n"))
    measure_c = ast.unparse(function(ast.parse(harness.render("m.gpu", [plan], [])), "measure_c"))
    assert f"torch.set_float32_matmul_precision('{precision}')" in measure_c
    decode = harness.render("d.gpu", *harness.plans(program_of("device H100-SXM\ndecode llama3-8b, batch 1, weights "
                                                               f"{dtype} is ≈ 1 ms\n")))
    assert ('set_float32_matmul_precision("highest")' in decode) is (dtype == "fp32")


@pytest.mark.parametrize("step, tokens, few, small", [("prefill llama3-8b, batch 2, prompt 512", "1024", "32", 2),
                                                      ("prefill llama3-8b, batch 1, prompt 512 compiled", "512", "16",
                                                       0)])
def test_a_prefill_runs_its_matmuls_over_every_prompt_token_and_causal_attention(step, tokens, few, small):
    [plan], refused = harness.plans(program_of(f"device H100-SXM\n{step} is ≈ 1 ms\n", "p.gpu"))
    assert refused == [] and plan["prefill"] and plan["gqa"]  # llama3-8b: 32 heads over 8 KV heads
    measure = ast.unparse(function(ast.parse(harness.render("p.gpu", [plan], [])), f"measure_{plan['id']}"))
    assert f"h = random_input(({few} if args.small else {tokens}, hidden), torch.bfloat16)" in measure
    assert "scaled_dot_product_attention(q, keys[layer], values[layer], is_causal=True, enable_gqa=True)" in measure
    assert "caches" not in measure
    # the small kernels, which the model has take the kernel floor, work on one row a sequence
    assert ("small.mul_(1.0)" in measure) is (small > 0)


def test_a_decode_step_at_the_default_model_code_settings_keeps_its_results_key():
    # keys of saved results must not move because decode steps gained host_ops, attention and kv_repeat
    plain = program_of("device H100-SXM\ndecode llama3-8b, batch 1, context 4096 is ≈ 1 ms\n", "d.gpu")
    (_, statement, step), = plain.workloads
    text = harness._structure(step)
    assert "host_ops" not in text and "attention" not in text and "kv_repeat" not in text
    stated = program_of("device H100-SXM\ndecode llama3-8b, batch 1, context 4096, kv_repeat 4 is ≈ 1 ms\n", "e.gpu")
    (_, other, copied), = stated.workloads
    assert harness.workload_key(statement, step) != harness.workload_key(other, copied)
