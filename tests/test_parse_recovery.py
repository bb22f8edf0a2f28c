"""A spec with syntax errors: every error of it reported in one run (the statements that did parse resolved too,
without errors that only follow from a line that did not), no claim of it judged; and quotes, which must never take
claims into their words unseen. The cases as users meet them are in tests/documents/syntax.md."""
from __future__ import annotations

import json
import time

import pytest

from gpuspec.api import check_text
from gpuspec.cli import main
from gpuspec.parse import SyntaxErrors, parse
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


def test_a_quote_never_closed_is_an_error_and_reading_goes_on():
    for mark in ('"', "“"):
        found = errors(H100 + f"{mark}The multiply reads x once\nx * 2 is ≈ 20 uss\ny = x *** 2\n")
        assert found == [(3, 1, "syntax"), (4, 15, "unknown-unit"), (5, 8, "syntax")]
    assert errors(H100 + 'x * 2 is ≈ 20 µs\n"never closed') == [(4, 1, "syntax")]


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
    "“" + "a\n" * 50 + "”" * 3,
    "device H100-SXM\n" + "y = x * * 2\n" * 2000,
])
def test_hostile_quotes_and_errors_end_in_located_errors_quickly(text):
    start = time.perf_counter()
    report = check_text(text, "h.gpu")
    assert time.perf_counter() - start < 20
    assert report.diagnostics and all(d.span is not None and d.span.line >= 1 for d in report.diagnostics)
    assert not report.verdicts
