"""A claim's text and place are what was written, from its first character to its last: a claim or statement that
opens or closes with a bracket keeps it (the brackets are tokens no node carries) in the text report, JSON and
the standalone report."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpuspec.api import check_text, run_check
from gpuspec.cli import main
from gpuspec.parse import parse
from gpuspec.text import SpecText

PRELUDE = "device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2\n"


def claims(text: str) -> list[tuple[str, int, int, int, int]]:
    """(text, line, column, end line, end column) of every claim."""
    report = check_text(text, "t.gpu")
    assert not report.diagnostics, [d.message for d in report.diagnostics]
    return [(v.claim.text, v.claim.span.line, v.claim.span.column, v.claim.span.end_line, v.claim.span.end_column)
            for v in report.verdicts]


@pytest.mark.parametrize("line,text", [
    ("(y.t_mem + y.t_math) ≈ 20 µs", "(y.t_mem + y.t_math) ≈ 20 µs"),
    ("((y.t_mem) + y.t_math) ≈ 20 µs", "((y.t_mem) + y.t_math) ≈ 20 µs"),
    ("( y.t_mem + y.t_math ) ≈ 20 µs", "( y.t_mem + y.t_math ) ≈ 20 µs"),
    ("(y.t_mem + y.t_math) / (2) ≈ 10 µs", "(y.t_mem + y.t_math) / (2) ≈ 10 µs"),
    ("y.t_mem / (y.t_math) ≈ 80×", "y.t_mem / (y.t_math) ≈ 80×"),
    ("max(y.t_mem, y.t_math) ≈ 20 µs", "max(y.t_mem, y.t_math) ≈ 20 µs"),
])
def test_a_direct_claim_is_its_whole_text_from_the_first_character(line, text):
    assert claims(PRELUDE + line + "\n") == [(text, 4, 1, 4, len(text) + 1)]


def test_a_claim_in_a_block_that_opens_with_a_bracket_starts_at_the_bracket():
    found = claims(PRELUDE + "z = x * 3:\n    (t_mem + t_math) ≈ 20 µs\n    62 waves\n")
    assert found[0] == ("(t_mem + t_math) ≈ 20 µs", 5, 5, 5, 29)
    assert found[1][:3] == ("62 waves", 6, 5)


def test_a_claim_whose_brackets_span_lines_starts_at_its_opening_bracket():
    [found] = claims(PRELUDE + "(\n    y.t_mem + y.t_math) ≈ 20 µs\n")
    assert found == ("(\n    y.t_mem + y.t_math) ≈ 20 µs", 4, 1, 5, 32)


def test_statements_keep_the_brackets_at_their_ends():
    spec = parse(SpecText("t.gpu", "device H100-SXM\nx = bf16[4096, 4096]\ny = exp(x)\nz = ((x + 1))\n"
                                   "(x + 1) * 2 on 4096² bf16 is memory-bound\nw = max(x, (x))\n"))
    texts = [getattr(s, "text", None) for s in spec.statements]
    assert texts[2:] == ["y = exp(x)", "z = ((x + 1))", "(x + 1) * 2 on 4096² bf16 is memory-bound",
                         "w = max(x, (x))"]
    assert [(s.span.column, s.span.end_column) for s in spec.statements[2:]] == [(1, 11), (1, 14), (1, 42), (1, 16)]
    binding = spec.statements[1]
    assert (binding.span.column, binding.span.end_column) == (1, 21)  # `x = bf16[4096, 4096]`, `]` included


def test_a_bracket_that_belongs_to_an_enclosing_expression_is_left_to_it():
    spec = parse(SpecText("t.gpu", "device H100-SXM\nw = (2 + 3) * 4\nv = 2 * (3 + 4)\n"))
    first, second = spec.statements[1:]
    assert first.text == "w = (2 + 3) * 4" and second.text == "v = 2 * (3 + 4)"
    operand = second.expr.right  # `3 + 4`: its own span stops inside the brackets
    assert (operand.span.column, operand.span.end_column) == (10, 15)


def test_the_statement_of_a_claim_opened_by_a_bracket_is_whole_in_every_report(tmp_path, capsys):
    path = tmp_path / "a.gpu"
    path.write_text(PRELUDE + "(y.t_mem + y.t_math) ≈ 40 µs\n(x + 1) * 2 on 4096² bf16 is 70 waves\n",
                    encoding="utf-8")
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:4:1: fail: (y.t_mem + y.t_math) ≈ 40 µs\n    claim: (y.t_mem + y.t_math) ≈ 40 µs\n" in out
    assert f"{path}:5:30: fail: (x + 1) * 2 on 4096² bf16 is 70 waves\n" in out
    main(["check", "--format", "json", str(path)])
    first, second = json.loads(capsys.readouterr().out)["results"]
    assert (first["claim"], first["column"], first["statement"]) == (
        "(y.t_mem + y.t_math) ≈ 40 µs", 1, "(y.t_mem + y.t_math) ≈ 40 µs")
    assert second["statement"] == "(x + 1) * 2 on 4096² bf16 is 70 waves"


def test_the_standalone_report_shows_a_claim_opened_by_a_bracket_whole(tmp_path):
    (tmp_path / "a.gpu").write_text(PRELUDE + "(y.t_mem + y.t_math) ≈ 40 µs\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "gpuspec", "report", "a.gpu", "--out", "r.html"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    assert "(y.t_mem + y.t_math) ≈ 40 µs" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_spans_of_bracketed_claims_agree_between_markdown_and_a_spec_file(tmp_path):
    (tmp_path / "doc.md").write_text("- item\n\n  ```gpu\n  " + PRELUDE.replace("\n", "\n  ")
                                     + "(y.t_mem + y.t_math) ≈ 20 µs\n  ```\n", encoding="utf-8")
    [verdict] = run_check([str(tmp_path / "doc.md")]).verdicts
    assert (verdict.claim.text, verdict.claim.span.line, verdict.claim.span.column) == (
        "(y.t_mem + y.t_math) ≈ 20 µs", 7, 3)
