"""Numbers that are not finite, or that overflow on the way, never pass a claim and never end in a traceback.

Each becomes a located error (file, line, column, a code, and what would be right) through `gpuspec check` (text and
JSON), `explain` and the pytest plugin; or, where the value is finite after all, a correct verdict.
"""
from __future__ import annotations

import json
import math
import re

import pytest
from conftest import H100, ROOT, run

from gpuspec import llm_catalog, model, units
from gpuspec.cli import main
from gpuspec.devices import lookup
from gpuspec.kinds.decode import DecodeStep
from gpuspec.model.values import NotFinite, Value, ceiling, quotient
from gpuspec.report import json as json_report

pytest_plugins = ["pytester"]

DECODE_WITH_CONTEXT = H100 + "d = decode llama2-7b, batch 1, context 2048\nd.compute_bound_batch > 1\n"
# (spec, line, column, code, words the message holds, words the help holds)
CASES = {
    "compute-bound-batch-never": (DECODE_WITH_CONTEXT, 3, 1, "no-value", "no batch makes this step compute-bound",
                                  "shorter contexts"),
    "zero-with-a-huge-exponent": (H100 + "x*2 on 4096² bf16 is ≈ 0e400 µs\n", 2, 24, "number-out-of-range", "0e400",
                                  "64-bit floats"),
    "underflow-to-zero": (H100 + "x*2 on 4096² bf16 is ≈ 1e-400 µs\n", 2, 24, "number-out-of-range",
                          "would become zero", "64-bit floats"),
    "too-large-with-its-unit": (H100 + "q = 1e300 PB\n", 2, 5, "number-out-of-range", "too large", "64-bit floats"),
    "underflow-in-a-named-value": (H100 + "q = 1e-400 s\nq ≈ 1 s\n", 2, 5, "number-out-of-range", "1e-400", None),
    "underflow-in-a-device-field": ("device G from H100-SXM with hbm_bandwidth = 1e-400 TB/s\n", 1, 45,
                                    "number-out-of-range", "1e-400", None),
    "underflow-in-an-observed-figure": (H100 + "decode llama3-8b, batch 1 observed 1e-400 tokens/s\n", 2, 36,
                                        "number-out-of-range", "1e-400", None),
    "underflow-in-a-setting": (H100 + "set sample_window = 1e-400 s\n", 2, 1, "number-out-of-range", "1e-400",
                               None),
    "underflow-in-a-tensor-expression": (H100 + "x*1e-400 on 4096² bf16 is memory-bound\n", 2, 3,
                                         "number-out-of-range", "1e-400", None),
    "a-power-that-overflows": (H100 + "q = 10 ^ 400\n", 2, 5, "bad-arithmetic", "10^400", None),
    "huge-batch": (H100 + "d = decode llama2-7b, batch 1e300\nd.time > 1 s\n", 3, 1, "not-finite", "infinite",
                   "batch = 1.000e300"),
    "huge-launch-cost": ("device H100-SXM with launch_cost = 1e306 s\nd = decode llama2-7b, batch 1\nd.time > 1 s\n",
                         3, 1, "not-finite", "the launch queue overflows: 480 launches at 1.00e306 s each",
                         "launch_cost = 1.00e306 s (set in the spec)"),
    "stream-with-a-huge-launch-cost": ("device H100-SXM with launch_cost = 1e306 s\nk = x*2 on 4096² bf16\n"
                                       "1000 launches of k is time > 1 s\n", 3, 23, "not-finite", "`time` cannot be",
                                       "launch_cost = 1.00e306 s (set in the spec)"),
    "huge-params": (H100 + "model m from llama2-7b with params = 1e308\nd = decode m, batch 1\nd.time > 1 s\n", 4, 1,
                    "not-finite", "`weight_bytes` is infinite", "params = 1.000e308 (set in the spec)"),
    "huge-prefill": (H100 + "p = prefill llama2-7b, batch 1e300, prompt 2048\np.time > 1 s\n", 3, 1, "not-finite",
                     "infinite", "batch = 1.000e300"),
    "huge-training-step": (H100 + "t = train llama2-7b, batch 1e300, context 2048\nt.time > 1 s\n", 3, 1,
                           "not-finite", "`flops` is infinite", "batch = 1.000e300"),
    "tiny-bandwidth": ("device H100-SXM with hbm_bandwidth = 1e-306 TB/s\nx*2 on 4096^4 bf16 is time > 1 s\n", 2, 23,
                       "not-finite", "`t_mem` is infinite", "hbm_bandwidth = 1.00e-294 B/s (set in the spec)"),
    "tolerance-over-100-percent": (H100 + "x*2 on 4096² bf16 is ≈ 20 µs ± 150%\n", 2, 30, "tolerance-too-large",
                                   "more than 100%", "range"),
    "tolerance-over-100-percent-by-default": (H100 + "set tolerance = 101%\n", 2, 1, "tolerance-too-large",
                                              "more than 100%", None),
    "tolerance-larger-than-the-claim": (H100 + "x*2 on 4096² bf16 is ≈ 20 µs ± 1e308 µs\n", 2, 30,
                                        "tolerance-too-large", "more than the `20 µs` claimed", "range"),
    "named-value-dividing-by-zero": (H100 + "a = 1 B / 0 s\n", 2, 5, "division-by-zero", "`1 B / 0 s` divides by zero",
                                     None),
    "more-kv-heads-than-heads": (H100 + "model m from llama2-7b with kv_heads = 64\n", 2, 29, "inconsistent-model",
                                 "kv_heads (64) is more than heads (32)", "divides heads"),
    "kv-heads-not-dividing-heads": (H100 + "model m from llama2-7b with kv_heads = 12\n", 2, 29, "inconsistent-model",
                                    "not a divisor of heads (32)", None),
    "more-experts-per-token-than-experts": (H100 + "model m from mixtral-8x7b with experts_per_token = 9\n", 2, 32,
                                            "inconsistent-model", "experts_per_token (9) is more than experts (8)",
                                            None),
    "params-smaller-than-the-experts": (H100 + "model m from mixtral-8x7b with params = 1000\n"
                                        "d = decode m, batch 1\nd.time < 1 s\n", 4, 1, "model",
                                        "fewer than its unrouted experts", "params"),
}


def strict_json(text: str):
    """JSON as a strict parser reads it: a bare NaN or Infinity is an error."""
    def refuse(constant):
        raise AssertionError(f"bare {constant} in the JSON report")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("name", list(CASES))
def test_each_case_is_a_located_error_in_the_text_report(name, tmp_path, capsys):
    spec, line, column, code, words, help_words = CASES[name]
    path = tmp_path / "t.gpu"
    path.write_text(spec, encoding="utf-8")
    assert main(["check", str(path)]) == 2
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    assert f"t.gpu:{line}:{column}: error[{code}]: " in out.out + out.err
    assert words in out.out + out.err
    assert "passed" in out.out + out.err and " 1 passed" not in out.out + out.err


@pytest.mark.parametrize("name", list(CASES))
def test_each_case_is_a_located_error_in_the_json_report(name, tmp_path, capsys):
    spec, line, column, code, words, help_words = CASES[name]
    path = tmp_path / "t.gpu"
    path.write_text(spec, encoding="utf-8")
    assert main(["check", "--format", "json", str(path)]) == 2
    report = strict_json(capsys.readouterr().out)
    found = [e for e in report["errors"] if e["code"] == code]
    assert [(e["line"], e["column"]) for e in found] == [(line, column)]
    assert words in found[0]["message"]
    if help_words is not None:
        assert help_words in found[0]["help"]
    assert all(r["status"] != "pass" or r["line"] != line for r in report["results"])


@pytest.mark.parametrize("name", ["compute-bound-batch-never", "huge-batch", "huge-launch-cost", "tiny-bandwidth",
                                  "huge-prefill", "huge-training-step", "params-smaller-than-the-experts"])
def test_explain_says_what_cannot_be_computed_and_why(name, tmp_path, capsys):
    spec, line, _, _, words, _ = CASES[name]
    path = tmp_path / "t.gpu"
    path.write_text(spec, encoding="utf-8")
    assert main(["explain", str(path)]) == 0
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    assert f"t.gpu:{line}: " in out.out
    assert "cannot compute" in out.out and words in out.out
    assert not re.search(r"\b(inf|nan)\b", out.out, re.IGNORECASE)


def test_explain_prints_the_readme_whose_decode_step_has_a_context(capsys):
    assert main(["explain", str(ROOT / "README.md")]) == 0
    out = capsys.readouterr().out
    assert "cannot compute compute_bound_batch: no batch makes this step compute-bound at context 4,096" in out
    assert "  step_time = " in out  # the other metrics of the step are still shown


def test_the_pytest_plugin_reports_an_error_item_not_an_internal_error(pytester):
    pytester.makefile(".gpu", a=DECODE_WITH_CONTEXT, b=CASES["tiny-bandwidth"][0], c=CASES["huge-launch-cost"][0])
    result = pytester.runpytest("-p", "no:randomly")
    output = "\n".join(result.outlines + result.errlines)
    assert "INTERNALERROR" not in output and "Traceback" not in output
    result.assert_outcomes(failed=3)
    # The failures' own lines (the short summary may repeat them, truncated to the terminal's width).
    located = [line for line in output.splitlines()
               if re.match(r"\S*\.gpu:\d+:\d+: error\[", line)]
    assert sorted(re.search(r"error\[([a-z-]+)\]", line)[1] for line in located) == \
        ["no-value", "not-finite", "not-finite"]


# --- the model: no value is ever infinite or NaN ---------------------------------------------------------------


def test_compute_bound_batch_has_no_value_exactly_when_no_batch_makes_decode_compute_bound():
    def step(batch, context):
        return model.estimate(DecodeStep(llm_catalog.lookup("llama2-7b"), lookup("H100-SXM"), batch, context, "eager",
                                         False, 15, "bf16", "bf16", 1 / 6))

    with pytest.raises(model.ModelError, match="no batch makes this step compute-bound"):
        step(1, 2048)["compute_bound_batch"]
    assert step(10**6, 2048)["bound"].number == "memory"  # indeed: even a million sequences stay memory-bound
    batch = step(1, 16)["compute_bound_batch"].number  # a short context has one
    assert step(batch, 16)["bound"].number == "compute" and step(batch - 1, 16)["bound"].number == "memory"


def test_a_prefill_has_a_compute_bound_batch_where_its_bound_says_so():
    report = run(H100 + "p = prefill llama2-7b, batch 1, prompt 2048\np.compute_bound_batch = 1\np is compute-bound\n")
    assert not report.diagnostics
    assert [v.status for v in report.verdicts] == ["pass", "pass"]


def test_a_huge_launch_cost_that_stays_finite_gives_a_finite_verdict():
    report = run("device H100-SXM with launch_cost = 1e305 s\nd = decode llama2-7b, batch 1\nd.time > 1 s\n")
    [verdict] = report.verdicts
    assert verdict.status == "pass" and verdict.actual.number == pytest.approx(480 * 1e305)


def test_a_tiny_bandwidth_that_stays_finite_gives_a_finite_verdict():
    report = run("device H100-SXM with hbm_bandwidth = 1e-305 TB/s\nx*2 on 4096² bf16 is time > 1 s\n")
    [verdict] = report.verdicts
    assert verdict.status == "pass" and math.isfinite(verdict.actual.number)
    assert verdict.actual.number == pytest.approx(2 * 2 * 4096**2 / 1e-293)


@pytest.mark.parametrize("number", [math.inf, -math.inf, math.nan, 10**400])
def test_a_value_cannot_hold_a_number_that_is_not_finite(number):
    with pytest.raises(NotFinite, match="`t` is"):
        Value("t", number, units.TIME)
    with pytest.raises(NotFinite):
        Value("t", 1.0, units.TIME, low=0.0, high=number)


class NotANumberSource:
    """A measured or calibrated source whose numbers are NaN (a corrupt results file or profile)."""

    def estimate(self, workload):
        class View:
            def __getitem__(self, name):
                return Value(name, math.nan, units.TIME)
        return View()

    def device(self, device):
        raise AssertionError("no device fact is claimed here")


@pytest.mark.parametrize("source", ["measured", "calibrated"])
def test_a_source_whose_numbers_are_not_finite_never_passes(source):
    from gpuspec.api import compile_text
    from gpuspec.text import SpecText
    from gpuspec.verdicts import Evidence, check

    spec = H100 + f"set sources = model, {source}\nk = x * 2 on 4096² bf16\n1000 launches of k is busy_share ≈ 100%\n"
    verdicts, problems = check(compile_text(SpecText("t.gpu", spec)), Evidence(**{source: NotANumberSource()}))
    other = [v for v in verdicts if v.source == source]
    assert not problems and [v.status for v in other] == ["skip"]
    assert "`busy_share` is not a number" in other[0].reason


def test_a_quotient_by_zero_says_which_input_is_zero():
    with pytest.raises(NotFinite, match="`rate` divides by zero: bytes / time, and time = 0"):
        quotient("rate", Value("bytes", 1.0, units.BYTES), Value("time", 0.0, units.TIME))


def test_rounding_a_huge_count_keeps_it_a_float():
    assert ceiling("c", Value("x", 1e300, units.COUNT)).number == 1e300
    assert ceiling("c", Value("x", 2.5, units.COUNT)).number == 3


# --- formatting and the JSON report ----------------------------------------------------------------------------


def test_numbers_far_from_any_prefix_are_written_in_scientific_notation():
    assert units.format_si(1e305, units.TIME) == "1.00e305 s"
    assert units.format_si(1e-293, units.BANDWIDTH) == "1.00e-293 B/s"
    assert units.format_si(20e-6, units.TIME) == "20.0 µs"
    assert units.significant(1.234e-12) == "1.23e-12"
    assert units.format_count(math.inf) == "inf"  # never int(inf)


def test_json_writes_numbers_it_cannot_hold_as_strings():
    data = {"a": [math.inf, -math.inf, math.nan, 1.5], "b": {"c": math.nan}}
    assert json_report._strict(data) == {"a": ["Infinity", "-Infinity", "NaN", 1.5], "b": {"c": "NaN"}}


def test_json_of_a_real_run_is_strict(capsys):
    assert main(["check", "--format", "json", str(ROOT / "specs")]) == 0
    report = strict_json(capsys.readouterr().out)
    assert report["summary"]["failed"] == 0 and not report["errors"]
