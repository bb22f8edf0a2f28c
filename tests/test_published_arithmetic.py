"""The language for what published writing says: a claimed value written as its arithmetic (parsed, exact,
left alone by --update, kept by fmt, cached), a unit after a power, counts with k/M/G, counts per second, model
facts by name, devices defined and selected again, and every syntax error of a file reported together."""
from __future__ import annotations

import pytest

from gpuspec import cache, nodes
from gpuspec.api import Sources, check_text, compile_text, run_check
from gpuspec.cli import main
from gpuspec.diagnostics import SpecError
from gpuspec.fmt import fingerprint, format_spec, format_text
from gpuspec.markdown import extract
from gpuspec.parse import parse
from gpuspec.text import SpecText

MATMUL = "device H100-SXM\na = bf16[512, 512]\nb = bf16[512, 512]\nc = a @ b:\n"


def claim_of(line: str) -> nodes.ClaimNode:
    spec = parse(SpecText("a.gpu", MATMUL + f"    {line}\n"))
    return spec.statements[-1].claims.items[0]


def verdicts_of(lines: list[str]) -> list[tuple[str, str]]:
    text = MATMUL + "".join(f"    {line}\n" for line in lines)
    return [(v.status, v.message) for v in check_text(text, "a.gpu").verdicts]


# --- the value as arithmetic ---------------------------------------------------------------------------------

@pytest.mark.parametrize("written, formula", [
    ("flops = 2 * 512^3 FLOP", "2 * 512^3"),
    ("flops ≈ 2 × 512³ FLOP", "2 * 512^3"),
    ("= (512 + 0) * 2 * 512² FLOP", "(512 + 0) * 2 * 512^2"),
    ("flops = 10^-3 * 2 FLOP", "10^-3 * 2"),
])
def test_a_value_after_a_comparator_may_be_arithmetic_with_the_unit_after_it(written, formula):
    from gpuspec.resolve.checked import expr_text

    value = claim_of(written).value
    assert isinstance(value, nodes.Figure)
    assert expr_text(value.formula) == formula
    assert value.phrase.unit == "FLOP"
    assert value.text == written.split("= ", 1)[-1].split("≈ ", 1)[-1]


@pytest.mark.parametrize("written, kind, unit", [("t_mem / t_math ≈ 80×", "point", "×"),
                                                 ("flops = (268435456) FLOP", "point", "FLOP"),
                                                 ("≈ 20 µs", "point", "µs"), ("flops = 2–3 FLOP", "range", "FLOP")])
def test_one_number_stays_the_amount_it_always_was(written, kind, unit):
    value = claim_of(written).value
    assert isinstance(value, nodes.Amount) and value.kind == kind and value.phrase.unit == unit


def test_arithmetic_is_exact_equal_holds_to_rounding_noise_and_approx_takes_its_tolerance():
    found = verdicts_of(["flops = 2 * 512^3 FLOP",            # 268,435,456 exactly
                         "flops = (2 * 512^3 + 1) FLOP",      # one FLOP in 268 million: not noise
                         "flops ≈ (2 * 512^3 + 1) FLOP",      # within 10%
                         "flops ≈ 2.2 * 512^3 FLOP ± 5%"])    # 10% off
    assert [status for status, _ in found] == ["pass", "fail", "pass", "fail"]
    assert found[1][1] == "flops = 268,435,456 FLOP, not (2 * 512^3 + 1) FLOP = 268,435,457 FLOP"
    assert "not ≈ 2.2 * 512^3 FLOP = 295,279,002 FLOP (± 5%" in found[3][1]


def test_a_failure_shows_enough_digits_to_tell_the_value_from_what_the_arithmetic_comes_to():
    text = MATMUL + "    intensity = 2 * 512 / 6.001 FLOP/B\n"  # 170.64 against 170.67: apart at the 5th digit
    (verdict,) = check_text(text, "a.gpu").verdicts
    assert verdict.status == "fail"
    shown, comes_to = verdict.message.split(", not ")
    assert shown.split("= ")[1] != comes_to.split("= ")[1]


def test_update_leaves_arithmetic_alone_and_says_why(tmp_path, capsys):
    path = tmp_path / "a.gpu"
    text = MATMUL + "    flops = 4 * 512^3 FLOP\n    flops = 500 FLOP\n"
    path.write_text(text, encoding="utf-8")
    assert main(["check", "--update", str(path)]) == 1
    out = capsys.readouterr().out
    assert "updated 1 claim in 1 file; 1 failing claim needs a person (ranges, bounds, arithmetic" in out
    assert path.read_text(encoding="utf-8") == text.replace("= 500 FLOP", "= 268435456 FLOP")


def test_fmt_keeps_the_arithmetic_and_lays_it_out():
    text = (MATMUL + "    flops ≈ 2 ×  512³ FLOP\n    flops=2*512^3 FLOP\n    t_mem/t_math ≈ 80×\n"
            "rate = 1000/s\nrate is ≈ 1000/s\nmistral-7b.hidden = 4096\nd = decode mistral-7b, batch 1, context 32k\n")
    formatted = format_spec(text)
    assert "    flops ≈ 2 × 512³ FLOP\n    flops = 2 * 512^3 FLOP\n    t_mem / t_math ≈ 80×\n" in formatted
    assert "rate = 1000/s\nrate is ≈ 1000/s\nmistral-7b.hidden = 4096\n" in formatted
    assert "context 32k" in formatted
    assert fingerprint(formatted) == fingerprint(text)
    assert format_text(formatted) == formatted


def test_new_nodes_come_back_from_the_cache_node_for_node():
    from test_cache import same_nodes

    source = SpecText("c.gpu", MATMUL + "    flops = 2 × 512³ FLOP\nk = 8192^2 FLOP\nmistral-7b.layers = 32\n"
                      "s = 10k launches of c\n")
    spec = parse(source)
    cache.store(source, spec)
    back = cache.lookup(source)
    assert back is not None and same_nodes(spec, back)


def test_a_product_twenty_thousand_long_is_a_located_error_or_a_result_never_a_crash():
    text = MATMUL + "    flops = " + " * ".join(["2"] * 20_000) + " FLOP\n"
    report = check_text(text, "a.gpu")
    assert report.diagnostics and not report.verdicts
    assert all(d.span is not None and d.span.line == 5 for d in report.diagnostics), report.diagnostics


@pytest.mark.parametrize("value, code, words", [
    ("10^999", "number-out-of-range", "`10^999` is too large for gpuspec"),
    ("1 / 0", "division-by-zero", "`1 / 0` divides by zero"),
    ("0^-1", "division-by-zero", "divides by zero"),
    ("10^-200 * 10^-200", "number-out-of-range", "would become zero"),
    ("(0 - 2)^0.5", "bad-arithmetic", "is not a real number"),
    ("1e308 * 1e308", "number-out-of-range", "too large"),
    ("2^1e300", "number-out-of-range", "too large"),
])
def test_arithmetic_that_cannot_be_computed_is_an_error_at_its_place(value, code, words):
    with pytest.raises(SpecError) as raised:
        compile_text(SpecText("a.gpu", MATMUL + f"    flops = {value} FLOP\n"))
    (diagnostic,) = raised.value.diagnostics
    assert diagnostic.code == code and words in diagnostic.message
    assert diagnostic.span.line == 5 and diagnostic.span.column >= 13


def test_a_unit_after_a_power_is_the_powers():
    program = compile_text(SpecText("a.gpu", "device H100-SXM\nk = 8192^2 FLOP\nk is = 67,108,864 FLOP\n"
                                    "m = 8192² B\nm is = 8192 * 8192 B\n"))
    assert [c.subject.dimension for c in program.claims] == [(0, 0, 1, 0, 0), (0, 1, 0, 0, 0)]
    report = check_text("device H100-SXM\nk = 8192^2 FLOP\nk is = 67,108,864 FLOP\n", "a.gpu")
    assert [v.status for v in report.verdicts] == ["pass"]


# --- counts, rates, models, devices --------------------------------------------------------------------------

@pytest.mark.parametrize("text, value, resolution", [("10k", 1e4, 1e3), ("32Ki", 32768, 1024), ("1.5M", 1.5e6, 1e5),
                                                     ("62", 62, 1), ("8.03e9", 8.03e9, 1e7)])
def test_a_count_carries_its_suffix(text, value, resolution):
    number = nodes.Number(text, span=None)
    assert number.value == value and number.resolution == pytest.approx(resolution)


def test_a_count_per_second_and_a_clock_meet_where_one_is_claimed_in_the_others_unit():
    report = check_text("device H100-SXM\nr = 1 / device.launch_cost\nr ≈ 278k/s\nr ≈ 0.278 MHz\n"
                        "device.boost_clock ≈ 1.98e9/s\n", "a.gpu")
    assert [v.status for v in report.verdicts] == ["pass"] * 3


def test_a_counted_rate_takes_a_count_suffix_and_keeps_its_noun():
    # Llama 3 8B at batch 1 on an H100: 16.06 GB of weights at 3.35 TB/s is 4.79 ms a token, 208.6 tokens/s
    report = check_text("device H100-SXM\nstep = decode llama3-8b, batch 1:\n"
                        "    tokens_per_s ≈ 0.2k tokens/s\n    tokens_per_s < 1M tokens/s\n"
                        "    tokens_per_s ≈ 2k tokens/s\n", "a.gpu")
    assert [v.status for v in report.verdicts] == ["pass", "pass", "fail"]
    assert "k tokens/s" in report.verdicts[2].message
    (wrong,) = check_text("device H100-SXM\nstep = decode llama3-8b, batch 1 is tokens_per_s ≈ 2k wombats/s\n",
                          "a.gpu").diagnostics
    assert wrong.code == "unknown-unit" and "`k wombats/s`" in wrong.message
    assert format_text("x ≈ 1.2k  tokens/s\n") == "x ≈ 1.2k tokens/s\n"  # one unit, kept together


def test_model_facts_by_name_have_their_derivation():
    (verdict,) = check_text("mistral-7b.kv_bytes_per_token = 131,072 B\n", "a.gpu").verdicts
    assert verdict.status == "pass"
    assert "2 (K and V) × layers × kv_heads × head_dim × bytes_per_kv" in verdict.actual.derivation()


def test_a_device_defined_in_a_spec_is_selected_again_and_rebound_with_check_device(tmp_path):
    path = tmp_path / "d.gpu"
    path.write_text("device mine from H100-SXM with sms = 100\ndevice A100\ndevice mine\ndevice.sms = 100\n"
                    "device.hbm_bandwidth = 3.35 TB/s\n", encoding="utf-8")
    assert [v.status for v in run_check([str(path)]).verdicts] == ["pass", "pass"]
    rebound = run_check([str(path)], Sources(device="A100"))
    assert [v.status for v in rebound.verdicts] == ["pass", "fail"]  # its override kept, A100's bandwidth


# --- every syntax error -------------------------------------------------------------------------------------

def test_every_syntax_error_of_a_file_each_at_its_line():
    lines = ["device H100-SXM", "x = bf16[4096]"]
    broken = []
    for n in range(40):
        lines += [f"y{n} = x * {n + 1}:", "    62 waves", "    ≈ 20 µs"]
        if n % 3 == 0:
            lines[-1] = "    ≈"                       # a claim cut short: the block goes on
            broken.append(len(lines))
        elif n % 3 == 1:
            lines[-3] = f"y{n} = x *** 2:"            # a statement broken: its block goes with it
            broken.append(len(lines) - 2)
    with pytest.raises(SpecError) as raised:
        parse(SpecText("a.gpu", "\n".join(lines) + "\n"))
    assert [d.span.line for d in raised.value.diagnostics] == broken
    assert {d.code for d in raised.value.diagnostics} == {"syntax"}


def test_two_errors_in_one_block_are_both_reported():
    text = "device H100-SXM\nx = bf16[4]\ny = x * 2:\n    62 waves ≈\n    ≈ 20 µs\n    ≈ ≈\n    memory-bound\n"
    with pytest.raises(SpecError) as raised:
        parse(SpecText("a.gpu", text))
    assert [(d.span.line, d.span.column) for d in raised.value.diagnostics] == [(4, 15), (6, 7)]


def test_errors_in_two_markdown_blocks_are_reported_at_the_documents_lines_and_columns():
    document = ("# Title\n\n```gpu\ndevice H100-SXM\nx = bf16[4]\n```\n\ntext\n\n- item\n\n  ```gpu\n"
                "  y = x ** 2\n  z = x * 2 is ≈\n  ```\n")
    with pytest.raises(SpecError) as raised:
        parse(extract("doc.md", document))
    assert [(d.span.line, d.span.column) for d in raised.value.diagnostics] == [(13, 10), (14, 17)]


def test_reporting_stops_at_a_thousand_errors():
    text = "device H100-SXM\n" + "y = ***\n" * 3000
    with pytest.raises(SpecError) as raised:
        parse(SpecText("a.gpu", text))
    assert len(raised.value.diagnostics) == 1001
