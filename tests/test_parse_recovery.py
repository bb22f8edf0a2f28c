"""A spec with syntax errors: every error of it reported in one run (the statements that did parse resolved too,
without errors that only follow from a line that did not), no claim of it judged; and quotes, which must never take
claims into their words unseen. The cases as users meet them are in tests/documents/syntax.md."""
from __future__ import annotations

import json
import time

import pytest

from gpuspec.api import check_text
from gpuspec.cli import main
from gpuspec.parse import LONGEST_QUOTE, SyntaxErrors, parse
from gpuspec.text import SpecText

H100 = "device H100-SXM\nx = bf16[4096, 4096]\n"


def errors(text: str, path: str = "t.gpu") -> list[tuple[int, int, str]]:
    report = check_text(text, path)
    assert not report.verdicts, "a spec with errors has no claim judged"
    return [(d.span.line, d.span.column, d.code) for d in report.diagnostics]


def test_the_semantic_errors_of_a_file_with_a_syntax_error_are_reported(tmp_path, capsys):
    spec = tmp_path / "s.gpu"
    spec.write_text(H100 + "y = x * * 2\nx * 2 is ≈ 20 uss\ndevice H10-SXM\n", encoding="utf-8")
    assert main(["check", "--format", "json", str(spec)]) == 2
    report = json.loads(capsys.readouterr().out)
    found = [(e["line"], e["column"], e["code"]) for e in report["errors"]]
    assert found == [(3, 9, "syntax"), (4, 15, "unknown-unit"), (5, 1, "unknown-device")]
    assert report["summary"]["passed"] == report["summary"]["failed"] == 0


def test_a_false_claim_in_a_file_with_a_syntax_error_is_never_judged():
    report = check_text(H100 + "x * 2 is ≈ 99 µs\ny = x *** 2\nx * 2 is ≈ 20 µs\n", "t.gpu")
    assert not report.verdicts and [d.code for d in report.diagnostics] == ["syntax"]
    assert report.exit_code == 2


@pytest.mark.parametrize("broken", [
    "y = x * * 2",                # a workload
    "y = bf16[4096,",             # a tensor, its bracket never closed: the lines after it are read into it
    "y = (2 +",
    "y = 2 µs is ≈ 2 µs, )",
])
def test_a_name_a_line_that_did_not_parse_would_define_is_no_error_where_it_is_used(broken):
    uses = ("y.time ≈ 20 µs\nz = y * 2\nz.time ≈ 1 µs\nall_gather(y) across 8 GPUs is ≈ 1 ms\n"
            "10 launches of y is 10 launches\n")
    found = errors(H100 + broken + "\n" + uses + "x * 2 is ≈ 20 uss\n")
    assert [code for _, _, code in found].count("syntax") >= 1
    assert "unknown-name" not in [code for _, _, code in found]
    assert found[-1] == (9, 15, "unknown-unit")


def test_after_a_device_or_model_line_that_did_not_parse_nothing_needs_it():
    found = errors("device mine from H100-SXM with sms = 66 66\ndevice mine\nx = bf16[64]\nx * 2 is ≈ 1 µs\n"
                   "model m from llama3-8b with layers = 40 40\ndecode m, batch 1 is ≈ 1 ms\nm.layers = 40\n"
                   "x * 2 is ≈ 2 uss\n")
    assert found == [(1, 41, "syntax"), (5, 41, "syntax"), (8, 14, "unknown-unit")]


def test_a_claim_line_that_did_not_parse_leaves_the_rest_of_its_block_checked():
    found = errors(H100 + "w = 2 µs:\n    ≈ 2 µs ≈\n    ≈ 2 uss\ny = x * 2:\n    62 waves ≈\n    ≈ 20 uss\n")
    assert found == [(4, 12, "syntax"), (5, 9, "unknown-unit"), (7, 15, "syntax"), (8, 10, "unknown-unit")]


@pytest.mark.parametrize("bad", ["  62 waves", "        62 waves", "\t62 waves", "      62 waves"])
def test_after_a_line_indented_wrongly_the_block_is_read_on(bad):
    # too little (matching no enclosing block), too far (an indentation where no block opens), a tab
    found = errors(H100 + f"w = x * 2:\n    ≈ 20 µs\n{bad}\n    foo bar\n    ≈ 20 uss\nv = x *** 2\n")
    assert [line for line, _, _ in found] == [5, 6, 7, 8]
    assert [code for _, _, code in found][1:] == ["syntax", "unknown-unit", "syntax"]
    assert found[0][2] in ("bad-indentation", "syntax")


def test_a_run_of_lines_indented_wrongly_is_one_error_and_the_block_goes_on():
    found = errors(H100 + "w = x * 2:\n    ≈ 20 µs\n        62 waves\n        63 waves\n\n        # note\n"
                   "    ≈ 20 uss\n  1 waves\n  2 waves\n    ≈ 2 uss\n")
    assert found == [(5, 1, "syntax"), (9, 10, "unknown-unit"), (10, 3, "bad-indentation"), (12, 9, "unknown-unit")]


def test_indentation_outside_a_block_still_costs_only_that_line():
    found = errors(H100 + "device.sms = 132\n    device.sms = 132\nx * 2 is ≈ 20 uss\n")
    assert found == [(4, 1, "syntax"), (5, 15, "unknown-unit")]


@pytest.mark.parametrize("mark, closing", [("[", "]"), ("(", ")")])
def test_a_bracket_never_closed_is_an_error_at_its_mark_and_reading_goes_on(mark, closing):
    opened = "x = bf16[4096, 4096" if mark == "[" else "v = max(2 µs, 3 µs"
    report = check_text(H100 + f"{opened}\n\n\ny = x * 2 is ≈ 20 uss\nz = x *** 2\n", "t.gpu")
    found = [(d.span.line, d.span.column, d.code) for d in report.diagnostics]
    column = opened.index(mark) + 1
    assert found == [(3, column, "syntax"), (6, 19, "unknown-unit"), (7, 8, "syntax")]
    first = report.diagnostics[0]
    assert first.message == f"this `{mark}` is never closed: the lines after it, up to 6:1, were read inside its brackets"
    assert f"close it with `{closing}`" in first.help
    # at the end of the file, and at the end of a statement that goes on over lines
    assert errors(H100 + "x * 2 is ≈ 20 µs\ny = (x * 2") == [(4, 5, "syntax")]
    assert errors(H100 + "y = max(2 µs,\n3 µs\nz = x * 2 is ≈ 20 uss\n") == [(3, 8, "syntax"), (5, 19, "unknown-unit")]


def test_a_bracket_closed_later_or_on_its_own_line_keeps_the_error_where_the_parse_stopped():
    found = errors(H100 + "y = max(2 µs,\n* 3 µs)\nz = x * 2 is ≈ 20 uss\n")
    assert (found[0], found[-1]) == ((4, 1, "syntax"), (5, 19, "unknown-unit"))
    assert errors(H100 + "y = bf16[4096, 4096 4096\nz = x * 2 is ≈ 20 uss\n") == [(3, 21, "syntax"),
                                                                                (4, 19, "unknown-unit")]
    assert errors(H100 + "y = bf16[4096, 4096]\nz = x * 2 is ≈ 20 uss\n") == [(4, 19, "unknown-unit")]


def test_a_bracket_never_closed_in_markdown_is_located_in_the_document():
    document = "# Notes\n\n```gpu\n" + H100 + "y = bf16[4096,\nz = x * 2 is ≈ 20 uss\n```\n"
    found = [(d.span.line, d.span.column, d.code) for d in check_text(document, "post.md").diagnostics]
    assert found == [(6, 9, "syntax"), (7, 19, "unknown-unit")]


def test_a_quote_never_closed_is_an_error_and_reading_goes_on():
    for mark in ('"', "“"):
        found = errors(H100 + f"{mark}The multiply reads x once\nx * 2 is ≈ 20 uss\ny = x *** 2\n")
        assert found == [(3, 1, "syntax"), (4, 15, "unknown-unit"), (5, 8, "syntax")]
    assert errors(H100 + 'x * 2 is ≈ 20 µs\n"never closed') == [(4, 1, "syntax")]
    # a quote left open before another closes at the other's opening mark: the error says so
    report = check_text(H100 + '"one\n"two"\nx * 2 is ≈ 20 uss\n', "t.gpu")
    first = report.diagnostics[0]
    assert (first.span.line, first.span.column, first.code) == (4, 2, "syntax")
    assert "the quoted sentence opened at 3:1 ends at the `\"` before this" in first.help


def test_a_claim_inside_a_quote_is_an_error_not_a_silent_pass(tmp_path, capsys):
    spec = tmp_path / "q.gpu"
    spec.write_text(H100 + '"abc\nx * 2 is ≈ 99 µs\n"\nx * 2 is ≈ 20 µs\n', encoding="utf-8")
    assert main(["check", str(spec)]) == 2
    out = capsys.readouterr().out
    assert f"{spec}:4:1: error[open-quote]: this line reads as a claim, but it is inside the quoted sentence " \
           "opened at 3:1, so it is not checked" in out
    assert "0 passed, 0 failed" in out


@pytest.mark.parametrize("line, what", [
    ("x * 2 is ≈ 99 µs", "a claim"),
    ("y = x * 2 is memory-bound", "a claim"),
    ("device.sms = 132", "a claim"),
    ("62 waves", "a claim"),           # a claim of a block
    ("in practice ≈ 22 µs", "a claim"),
    ("memory-bound", "a claim"),
    ("device B200", "a statement"),
    ("set tolerance = 5%", "a statement"),
    ("z = bf16[16]", "a statement"),
    ("w = 2 GB", "a statement"),
    ("x * 2 is ≈ 99 µs   # with a comment", "a claim"),
    ("370GB/s", "a claim"),          # a bandwidth claimed of a block: end the sentence with a full stop
])
def test_each_line_inside_a_quote_that_reads_as_code_is_found(line, what):
    for indent, head in (("", ""), ("    ", "y = x * 2:\n")):
        text = H100 + head + f'{indent}"The sentence\n{indent}{line}\n{indent}ends here."\n'
        report = check_text(text, "t.gpu")
        (error,) = report.diagnostics
        assert (error.code, error.span.column) == ("open-quote", len(indent) + 1)
        assert f"reads as {what}" in error.message and "so it is not checked" in error.message
        assert "close the quote" in error.help


@pytest.mark.parametrize("words", [
    "67.1 MB, which at 3.35 TB/s takes about 20 µs.",
    "torch.compile and CUDA graphs.",
    "132 × 8 = 1,056 blocks per wave, ≈ 62 waves.",
    "not that the chip was busy.",
    "(≈ 40 µs against ≈ 20 µs if fused into one).",
    "370GB/s.",
    "the model",
    "“a quote in the quote”",
    "“a quote” then words",
])
def test_prose_over_several_lines_is_a_quote(words):
    report = check_text(H100 + f'"A sentence that runs on\n{words}"\nx * 2 is ≈ 20 µs\n', "t.gpu")
    assert not report.diagnostics and [v.status for v in report.verdicts] == ["pass"]


def test_a_quote_over_too_many_lines_is_taken_for_one_left_open():
    inside = "\n".join(["words"] * LONGEST_QUOTE)
    assert not check_text(H100 + f'"{inside}"\nx * 2 is ≈ 20 µs\n', "t.gpu").diagnostics
    inside = "\n".join(["words"] * (LONGEST_QUOTE + 1))
    report = check_text(H100 + f'"{inside}"\nx * 2 is ≈ 20 µs\n', "t.gpu")
    (error,) = report.diagnostics
    assert (error.code, error.span.line, error.span.column) == ("open-quote", 3, 1)
    assert f"runs over {LONGEST_QUOTE + 1} lines, to the `\"` at {LONGEST_QUOTE + 3}:6" in error.message


def test_a_quote_in_markdown_is_located_in_the_document():
    document = "# Notes\n\nSome prose.\n\n```gpu\n" + H100 + '"abc\nx * 2 is ≈ 99 µs\n"\n```\n'
    report = check_text(document, "post.md")
    (error,) = report.diagnostics
    assert (error.code, error.span.line, error.span.column) == ("open-quote", 9, 1)
    assert "opened at 8:1" in error.message


def test_a_document_s_number_checks_are_resolved_beside_a_block_s_syntax_error():
    document = ("```gpu\ndevice H100-SXM\nv = bf16[4096]\nsmall = v * 2\ntiny = 1000 launches of small\n"
                "y = v *** 2\n```\n\nThe launches take 5.0 ms<!-- gpu: ≈ tiny.tme -->.\n")
    found = [(d.span.line, d.code) for d in check_text(document, "post.md").diagnostics]
    assert found == [(6, "syntax"), (9, "unknown-metric")]


def test_what_did_parse_is_kept_with_the_errors():
    with pytest.raises(SyntaxErrors) as raised:
        parse(SpecText("t.gpu", H100 + "y = x * * 2\nz = x * 3 is ≈ 20 µs\n"))
    partial = raised.value.partial
    assert [type(s).__name__ for s in partial.statements] == ["DeviceStatement", "TensorBinding", "Unparsed",
                                                             "Subject"]
    assert partial.statements[2].names == ("y",)


@pytest.mark.parametrize("text", [
    '"' * 1001,
    '"\n' * 3001,
    "\n".join(f'"{i}' for i in range(2000)),
    "x = (\n" + '"a\n' * 500 + ")\n",
    '"a\n' + "x * 2 is ≈ 1 µs\n" * 5000 + '"\n',
    "y = x:\n" + '    "a\n' * 300 + "    62 waves\n",
    "“" + "a\n" * 50 + "”" * 3,
    "device H100-SXM\n" + "y = x * * 2\n" * 2000,
    "device H100-SXM\n" + "y = (\n* 2\n" * 2000,             # brackets never closed, each its own error
    "device H100-SXM\n" + "y = [" * 3000 + "\nz = 1\n",
    "device H100-SXM\nw = x * 2:\n    62 waves\n" + "  62 waves\n        62 waves\n" * 2000,
    '"' + "x * 2 is ≈ 99 µs\n" * 11 + '"\n',
])
def test_hostile_quotes_and_errors_end_in_located_errors_quickly(text):
    start = time.perf_counter()
    report = check_text(text, "h.gpu")
    assert time.perf_counter() - start < 20
    assert report.diagnostics and all(d.span is not None and d.span.line >= 1 for d in report.diagnostics)
    assert not report.verdicts
