"""The spec language: every way of writing a claim parses to the same meaning."""
import pytest
from conftest import H100, only, verdicts

from gpuspec import nodes
from gpuspec.parse import parse
from gpuspec.text import SpecText

LESSON_LINES = [
    "x*2 on 4096² bf16 is memory-bound, ≈20µs, 62 waves",
    "x*2 on 4096^2 bf16 is memory-bound, ~20us, 62 waves",
]


@pytest.mark.parametrize("line", LESSON_LINES)
def test_the_lesson_sentence_holds_in_both_spellings(line):
    found = verdicts(H100 + line)
    assert [v.claim.metric for v in found] == ["bound", "time", "waves"]
    assert all(v.status == "pass" for v in found)


@pytest.mark.parametrize("shape", ["4096²", "4096^2", "4096 x 4096", "4096×4096", "4096x4096", "bf16[4096, 4096]"])
def test_shapes_in_every_spelling(shape):
    spec = H100 + (f"x*2 on {shape} is 65,536 blocks" if "[" in shape else f"x*2 on {shape} bf16 is 65,536 blocks")
    assert only(spec).status == "pass"


@pytest.mark.parametrize("unicode, ascii", [("≈", "~"), ("≤", "<="), ("≥", ">="), ("–", ".."), ("±", "+-")])
def test_every_symbol_has_an_ascii_spelling(unicode, ascii):
    claims = {"≈": "{} 20 µs", "≤": "{} 21 µs", "≥": "{} 20 µs", "–": "= 19{}21 µs", "±": "≈ 20 µs {} 5%"}
    a = H100 + "x = bf16[4096, 4096]\ny = x * 2\ny.time " + claims[unicode].format(unicode)
    b = H100 + "x = bf16[4096, 4096]\ny = x * 2\ny.time " + claims[unicode].format(ascii)
    assert only(a).status == only(b).status == "pass"
    assert only(a).claim.comparator == only(b).claim.comparator


def test_digit_separators_and_exponents():
    spec = (H100 + "x = bf16[4096, 4096]\ny = x * 2\n"
            "y.elements = 16,777,216\ny.elements = 1.6777216e7\ny is 16.8M elements")
    assert all(v.status == "pass" for v in verdicts(spec))


def test_multi_line_form_with_quotes_comments_and_options():
    spec = H100 + '''
# a comment
x = bf16[4096, 4096]
z = x * 2 + 1 fused with 128 threads per block:   # options after the expression
    "One kernel, because it is fused."
    1 kernels                 # a claim per line
    ≈ 20 µs, memory-bound     # or several, separated by commas
    threads_per_block = 128
'''
    found = verdicts(spec)
    assert [v.status for v in found] == ["pass"] * 4
    assert found[0].claim.quote == "One kernel, because it is fused."


def test_named_values_are_quantities_with_units():
    spec = H100 + "weights = 8.03e9 * 2 B\nweights / device.hbm_bandwidth ≈ 4.8 ms\nweights is ≈ 16 GB"
    assert [v.status for v in verdicts(spec)] == ["pass", "pass"]


def test_quote_on_the_line_before_a_claim_travels_with_it():
    [verdict] = verdicts(H100 + '"The chip has 132 SMs."\ndevice.sms = 132')
    assert verdict.claim.quote == "The chip has 132 SMs."


def test_a_quote_may_run_over_several_lines():
    [verdict] = verdicts(H100 + '"The chip has\n   132 SMs."\ndevice.sms = 132')
    assert verdict.claim.quote == "The chip has 132 SMs."


def test_device_overrides_and_definitions():
    spec = "device H100-SXM with hbm_bandwidth = 3.0 TB/s\nx = bf16[4096, 4096]\n(x*2) is ≈ 22.4 µs ± 1%"
    assert only(spec).status == "pass"
    spec = "device tiny from H100-SXM with sms = 66\nx*2 on 4096² bf16 is 124.1 waves"
    assert only(spec).status == "pass"


def test_parser_keeps_positions():
    spec = parse(SpecText("f.gpu", "device H100\nx*2 on 4096² bf16 is 62 waves\n"))
    subject = spec.statements[1]
    assert isinstance(subject, nodes.Subject)
    claim = subject.claims.items[0]
    assert (claim.span.line, claim.span.column) == (2, 22)


def test_results_convert_to_the_unit_written():
    assert only(H100 + "w = 16 GB\nw / device.hbm_bandwidth ≈ 4776 us").status == "pass"
