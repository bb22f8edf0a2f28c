"""Deeply nested expressions and very long lines: a result or a clean, located error from every command that
reads a spec (check, fmt, explain, harness), never a RecursionError or another traceback."""
from __future__ import annotations

import ast
import re

import pytest

from gpuspec import harness
from gpuspec.api import compile_text
from gpuspec.cli import main
from gpuspec.text import SpecText

HEAD = "device H100-SXM\nx = bf16[4096]\n"
ERROR_LINE = re.compile(r"^(.+?):(\d+):(\d+): error\[([a-z-]+)\]: ", re.M)


def deep(depth: int) -> dict[str, str]:
    return {
        f"parentheses-{depth}": HEAD + "y = " + "(" * depth + "x" + ")" * depth + " * 2 is ≈ 2 µs\n",
        f"sum-chain-{depth}": HEAD + "y = x" + " + x" * depth + " is ≈ 2 µs\n",
        f"functions-{depth}": HEAD + "y = " + "exp(" * depth + "x" + ")" * depth + " is ≈ 2 µs\n",
        f"value-parentheses-{depth}": "device H100-SXM\nv = " + "(" * depth + "1 B" + ")" * depth + "\nv ≈ 1 B\n",
        f"negations-{depth}": "device H100-SXM\nv = " + "-" * depth + "1\nv ≈ 1\n",
        f"squares-{depth}": "device H100-SXM\nv = 1" + "²" * depth + "\nv ≈ 1\n",
        f"claim-arithmetic-{depth}": HEAD + "y = x * 2:\n    t_mem" + " + t_mem" * depth + " ≈ 1 ms\n",
    }


LONG = 10_000
CASES = {
    **deep(150), **deep(300), **deep(1_000), **deep(20_000),
    "long-name": "device H100-SXM\n" + "a" * LONG + " = bf16[4096]\n" + "a" * LONG + " * 2 is ≈ 2 µs\n",
    "long-number": "device H100-SXM\nv = " + "1" * LONG + "\n",
    "long-decimal": "device H100-SXM\nv = 0." + "1" * LONG + " B\nv ≈ 0.1 B\n",
    "long-shape": "device H100-SXM\nx = bf16[" + ", ".join(["1"] * (LONG // 3)) + "]\nx * 2 is ≈ 2 µs\n",
    "long-claim-list": HEAD + "x * 2 is " + ", ".join(["≈ 2 µs"] * (LONG // 8)) + "\n",
    "long-quote": '"' + "word " * (LONG // 5) + '"\n' + HEAD + "x * 2 is ≈ 2 µs\n",
    "long-comment": "#" + "c" * LONG + "\n" + HEAD + "x * 2 is ≈ 2 µs  # " + "c" * LONG + "\n",
    "long-decode": "device H100-SXM\ndecode llama3-8b" + ", batch 1" * (LONG // 9) + " is ≈ 1 ms\n",
    "long-product-shape": "device H100-SXM\nx * 2 on " + " x ".join(["2"] * (LONG // 4)) + " bf16 is ≈ 2 µs\n",
    "long-dims-x": "device H100-SXM\nx * 2 on " + "x".join(["2"] * (LONG // 2)) + " bf16 is ≈ 2 µs\n",
    "long-unit-word": HEAD + "x * 2 is ≈ 2 " + "µ" * LONG + "s\n",
    "long-indented-block": HEAD + "y = x * 2:\n" + "".join(f"    {i + 1} waves\n" for i in range(LONG // 10)),
    "long-whitespace": HEAD + "x * 2" + " " * LONG + "is ≈ 2 µs\n",
}


def run(argv, capsys):
    try:
        code = main(argv)
    except BaseException as error:  # noqa: B036 -- a traceback would have reached the user
        pytest.fail(f"{argv[0]} raised {type(error).__name__}: {str(error)[:300]}", pytrace=False)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, captured.out, captured.err


@pytest.mark.parametrize("name", list(CASES))
def test_every_command_gives_a_result_or_a_clean_error(name, tmp_path, capsys):
    path = tmp_path / "case.gpu"
    path.write_text(CASES[name], encoding="utf-8")
    assert len(CASES[name]) >= 150
    code, out, _ = run(["check", str(path)], capsys)
    assert code in (0, 1, 2)
    if code == 2:
        errors = list(ERROR_LINE.finditer(out))
        assert errors and all(e.group(1) == str(path) and int(e.group(2)) >= 1 for e in errors), out[-2000:]
    else:
        assert "error[" not in out
    for command in (["fmt", "--check"], ["explain"], ["harness"]):
        code, out, err = run([*command, str(path)], capsys)
        assert code in (0, 1, 2), (command, code)
        if command == ["harness"] and code == 0:
            ast.parse(out)  # a program Python can read, however deep the spec's expression


def test_a_workload_too_deep_for_a_generated_program_is_refused_and_the_others_are_measured():
    # a sum of 201 terms is written as Python reads it, without brackets (x + x + ...): it nests no deeper than a
    # sum of two. Functions of functions, or a sum grouped to the right, nest as deep as they are written.
    text = HEAD + "deep = x" + " + x" * 200 + " is ≈ 2 µs\nfunctions = " + "exp(" * 200 + "x" + ")" * 200 \
        + " fused is ≈ 2 µs\nshallow = x * 3 is ≈ 2 µs\nright = " + "x + (" * 160 + "x" + ")" * 160 + " is ≈ 2 µs\n"
    program = compile_text(SpecText("deep.gpu", text))
    found, refused = harness.plans(program)
    assert [plan["raw"]["line"] for plan in found] == [3, 5]
    assert len(refused) == 2 and all("nested too deeply for a generated program" in reason for _, reason in refused)
    compile(harness.render("deep.gpu", found, refused), "harness.py", "exec")


def test_a_deep_workload_has_a_key_and_is_checked_against_saved_results(tmp_path, capsys):
    path = tmp_path / "deep.gpu"
    path.write_text(HEAD + "deep = x" + " + x" * 250 + " is ≈ 2 µs\n", encoding="utf-8")
    program = compile_text(SpecText(str(path), path.read_text(encoding="utf-8")))
    (_, statement, workload), = program.workloads
    assert re.fullmatch(r"[0-9a-f]{16}", harness.workload_key(statement, workload))
    results = tmp_path / "results.json"
    results.write_text('{"version": 1, "runs": []}', encoding="utf-8")
    code, out, _ = run(["check", str(path), "--results", str(results)], capsys)
    assert code in (0, 1) and "error[" not in out


# --- numbers a spec writes that the work could grow with: computed in closed form, or refused where located ---

NS = "set sample_window = 1 ns\n"


def test_ten_million_one_second_launches_in_nanosecond_windows_are_computed(tmp_path, capsys):
    # 139 bytes that took 40 s and 1.4 GB when the queue was played out launch by launch
    text = "device H100-SXM with launch_cost = 1 s\n" + NS + "x = bf16[4096]\nsmall = x * 2\n" \
        "s = 10000000 launches of small:\n    ≈ 10,000,000 s ± 0.1%\n    utilization < 0.001%\n    overhead-bound\n"
    path = tmp_path / "launches.gpu"
    path.write_text(text, encoding="utf-8")
    assert len(text.encode("utf-8")) < 1024
    code, out, _ = run(["check", str(path)], capsys)
    assert code == 0, out


def test_a_decode_step_of_666666_layers_is_computed(tmp_path, capsys):
    from conftest import verdicts

    found = verdicts("device H100-SXM\n" + NS + "model big from llama3-8b with layers = 666666\n"
                     "decode big, batch 1, 15 kernels per layer:\n    kernels = 9,999,990\n    utilization > 10%\n")
    assert [v.status for v in found] == ["pass", "pass"]


def test_a_billion_kernels_per_layer_is_computed():
    from conftest import verdicts

    found = verdicts("device H100-SXM with launch_cost = 5 µs\n" + NS +
                     "decode llama3-8b, batch 1, 1000000000 kernels per layer:\n    launches = 32,000,000,000\n"
                     "    overhead-bound\n    ≈ 160,000 s ± 1%\n")
    assert [v.status for v in found] == ["pass", "pass", "pass"]


def test_sampled_utilization_too_costly_to_count_is_a_located_error_with_the_limit(tmp_path, capsys):
    path = tmp_path / "rows.gpu"
    path.write_text("device H100-SXM\n" + NS + "model big from llama3-8b with layers = 1000000\n"
                    "decode big, batch 1, 1000000 kernels per layer is utilization ≈ 50%, ≈ 1 s\n",
                    encoding="utf-8")
    code, out, _ = run(["check", str(path)], capsys)
    assert code == 2
    error, = ERROR_LINE.finditer(out)
    assert (error.group(1), error.group(2), error.group(4)) == (str(path), "4", "model")
    assert "gpuspec takes at most 10,000" in out and "set sample_window" in out


@pytest.mark.parametrize("device, stream", [
    ("device H100-SXM with launch_cost = 1e-300 s\n", "10000000 launches of small"),
    ("device H100-SXM with kernel_floor = 1e-300 s, graph_node_cost = 1e-300 s\n",
     "1000000000000000000 launches of small as a CUDA graph"),
], ids=["launch-cost-1e-300", "graph-nodes-1e-300"])
def test_a_timeline_draws_a_bounded_number_of_launches(tmp_path, device, stream):
    from gpuspec.plot import data, select

    path = tmp_path / "t.gpu"
    path.write_text(device + "x = bf16[16]\nsmall = x * 2\n" + stream + " is ≈ 1 s\n", encoding="utf-8")
    subjects = [s for s in select.subjects(select.load_targets([(str(path), None)])) if s.workload.kind == "stream"]
    lane, = data.timeline(subjects).lanes
    assert 0 < len(lane.host) <= data.MAX_DRAWN + 1 and 0 < len(lane.gpu) <= data.MAX_DRAWN + 1


# --- the builder's work grows with the text, not with its square ---

def _lines_run_in_parse(text: str) -> int:
    """How many lines of gpuspec/parse.py run while parsing `text`: a count of work that, unlike a time, is the
    same on every machine and every run."""
    import sys

    from gpuspec import parse as parse_module
    from gpuspec.parse import parse

    lines = 0

    def trace(frame, event, arg):
        nonlocal lines
        if event == "line":
            lines += 1
        return trace

    def enter(frame, event, arg):
        return trace if event == "call" and frame.f_code.co_filename == parse_module.__file__ else None

    sys.settrace(enter)
    try:
        parse(SpecText("deep.gpu", text))
    finally:
        sys.settrace(None)
    return lines


@pytest.mark.parametrize("shape", [
    lambda depth: HEAD + "y = " + "exp(" * depth + "x" + ")" * depth + " is ≈ 2 µs\n",
    lambda depth: HEAD + "y = " + "max(x, " * depth + "(x)" + ")" * depth + " is ≈ 2 µs\n",
    lambda depth: HEAD + "(" * depth + "x" + ")" * depth + " * 2 is ≈ 2 µs\n",
    lambda depth: HEAD + "y = x * 2:\n" + "    (t_mem + t_math) ≈ 2 µs\n" * depth,
], ids=["functions", "functions-of-brackets", "parentheses", "bracketed-claims"])
def test_parsing_work_grows_linearly_with_depth(shape):
    # Widening every call over its closing bracket by scanning its text made a 20,000-deep `exp(` chain take
    # minutes: twice the depth was four times the work.
    small, large = _lines_run_in_parse(shape(300)), _lines_run_in_parse(shape(1200))
    assert large < 4.6 * small, (small, large)
