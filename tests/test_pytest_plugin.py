"""The pytest plugin, run for real in a temporary project with pytester: items, ids, failures, Markdown,
invalid specs, JUnit properties and skips."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

pytest_plugins = ["pytester"]

SPEC = """device H100-SXM
x = bf16[4096, 4096]
y = x * 2:
    16,777,216 elements
    62 waves
    70 waves
device.sms = 132
"""
# Four claims: three hold, `70 waves` fails (62.06 waves).
PASSING = "device H100-SXM\ndevice.sms = 132\n"
DOC = """# Notes

Some prose about the gpu.

- The multiply:

  ```gpu
  device H100-SXM
  x*2 on 4096² bf16 is 62 waves, memory-bound
  ```
"""
PLAIN_DOC = "# Nothing here\n\nJust prose about a gpu.\n"


def lines_follow(result, *lines: str) -> None:
    """`lines` appear one after another in the output; the first may be preceded by anything (a folder),
    the others are whole lines; a trailing `...` stands for the rest of a line."""
    patterns = []
    for i, line in enumerate(lines):
        rest = line.endswith("...")
        body = re.escape(line[:-3] if rest else line)
        patterns.append(("(.*/)?" if i == 0 else "") + body + (".*" if rest else "") + "$")
    result.stdout.re_match_lines(patterns, consecutive=True)


def collected_ids(result) -> list[str]:
    """The node ids that `--collect-only -q` printed."""
    return [line for line in result.outlines if "::" in line and not line.startswith(("=", " "))]


def test_every_claim_of_a_gpu_file_is_one_item(pytester):
    pytester.makefile(".gpu", a=SPEC)
    result = pytester.runpytest("--collect-only", "-q")
    assert collected_ids(result) == [
        "a.gpu::y = x * 2 | 16,777,216 elements",
        "a.gpu::y = x * 2 | 62 waves",
        "a.gpu::y = x * 2 | 70 waves",
        "a.gpu::device.sms = 132",
    ]


def test_a_failing_claim_fails_the_run_and_prints_as_the_cli_prints_it(pytester):
    pytester.makefile(".gpu", a=SPEC)
    result = pytester.runpytest()
    result.assert_outcomes(passed=3, failed=1)
    assert result.ret == 1
    lines_follow(result,
                 "a.gpu:6:5: fail: y = x * 2:",
                 "    claim: 70 waves",
                 "    waves = 62.06, which does not round to 70 waves  [model]",
                 "    waves = blocks / blocks_per_wave = 65,536 / 1,056 = 62.06",
                 "(pytest -v shows the whole derivation)")
    assert "blocks = ⌈elements / threads_per_block⌉" not in result.stdout.str()  # short by default
    lines_follow(result, "FAILED a.gpu::y = x * 2 | 70 waves...")


def test_with_v_a_failure_shows_its_whole_derivation(pytester):
    pytester.makefile(".gpu", a=SPEC)
    result = pytester.runpytest("-v")
    lines_follow(result,
                 "    waves = blocks / blocks_per_wave = 65,536 / 1,056 = 62.06",
                 "      blocks = ⌈elements / threads_per_block⌉ = ⌈16,777,216 / 256⌉ = 65,536...")
    assert "(pytest -v shows" not in result.stdout.str()


def _cli_failure(path, verbose: int) -> list[str]:
    """The failure block `gpuspec check` prints (with -v when `verbose`): from its `fail:` line to its last."""
    from gpuspec.api import run_check
    from gpuspec.report.text import render

    cli = render(run_check([str(path)]), verbose=verbose).split("\n")
    start = next(i for i, line in enumerate(cli) if ": fail: " in line)
    end = next(i for i in range(start + 1, len(cli)) if not cli[i].startswith("    "))
    return cli[start:end]


@pytest.mark.parametrize("verbose", [0, 1])
def test_a_failing_claim_shows_the_same_lines_as_gpuspec_check(pytester, verbose):
    path = pytester.makefile(".gpu", a=SPEC.replace("62 waves", "≈ 30 µs"))  # a time: its deciding lines are two
    block = _cli_failure(path, verbose)  # the claim, the value and the deciding lines (-v: the whole derivation)
    assert len(block) == (6 if not verbose else 12), block
    result = pytester.runpytest(*(["-v"] if verbose else []))
    at = result.outlines.index(block[0])
    assert result.outlines[at:at + len(block)] == block


def test_a_passing_file_passes_the_run(pytester):
    pytester.makefile(".gpu", ok=PASSING)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert result.ret == 0


def test_k_selects_claims_by_their_text(pytester):
    pytester.makefile(".gpu", a=SPEC)
    result = pytester.runpytest("-k", "waves", "-v")
    result.assert_outcomes(passed=1, failed=1, deselected=2)
    ran = [re.sub(r" (PASSED|FAILED) .*$", "", line) for line in result.outlines if line.startswith("a.gpu::")]
    assert sorted(ran) == ["a.gpu::y = x * 2 | 62 waves", "a.gpu::y = x * 2 | 70 waves"]
    result = pytester.runpytest("-k", "elements")
    result.assert_outcomes(passed=1, deselected=3)
    result = pytester.runpytest("-k", "device.sms")
    result.assert_outcomes(passed=1, deselected=3)


def test_rerunning_one_collected_node_id_runs_exactly_that_item(pytester):
    pytester.makefile(".gpu", a=SPEC)
    ids = collected_ids(pytester.runpytest("--collect-only", "-q"))
    assert len(ids) == 4
    for node_id, outcome in zip(ids, ("passed", "passed", "failed", "passed")):
        result = pytester.runpytest(node_id, "-v")
        assert result.parseoutcomes() == {outcome: 1}, (node_id, result.outlines)
        assert any(line.startswith(node_id + " ") and outcome.upper() in line for line in result.outlines), (
            node_id, result.outlines)


def test_ids_are_the_same_on_every_collection(pytester):
    pytester.makefile(".gpu", a=SPEC)
    first = collected_ids(pytester.runpytest("--collect-only", "-q"))
    second = collected_ids(pytester.runpytest("--collect-only", "-q"))
    assert first == second and len(first) == 4


def test_the_same_claim_twice_in_one_file_gets_distinct_usable_ids(pytester):
    pytester.makefile(".gpu", twice="device H100-SXM\ndevice.sms = 132\ndevice.sms = 132\n")
    ids = collected_ids(pytester.runpytest("--collect-only", "-q"))
    assert len(ids) == 2 and len(set(ids)) == 2
    for node_id in ids:
        assert pytester.runpytest(node_id).parseoutcomes() == {"passed": 1}


def test_markdown_is_not_collected_by_default(pytester):
    pytester.makefile(".gpu", ok=PASSING)
    pytester.makefile(".md", doc=DOC)
    result = pytester.runpytest("--collect-only", "-q")
    assert collected_ids(result) == ["ok.gpu::device.sms = 132"]


def test_markdown_is_collected_with_the_option(pytester):
    pytester.makefile(".md", doc=DOC, plain=PLAIN_DOC)
    result = pytester.runpytest("--gpuspec-markdown", "-v")
    result.assert_outcomes(passed=2)
    ids = [line.rsplit(" PASSED", 1)[0] for line in result.outlines if line.startswith("doc.md::")]
    assert ids == ["doc.md::x*2 on 4096² bf16 is 62 waves, memory-bound | 62 waves",
                   "doc.md::x*2 on 4096² bf16 is 62 waves, memory-bound | memory-bound"]
    assert not any(line.startswith("plain.md") for line in result.outlines)


def test_markdown_is_collected_with_the_ini_setting(pytester):
    pytester.makefile(".md", doc=DOC)
    pytester.makeini("[pytest]\ngpuspec_markdown = true\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=2)


def test_markdown_is_collected_with_the_setting_in_pyproject(pytester):
    pytester.makefile(".md", doc=DOC)
    pytester.makepyprojecttoml("[tool.pytest.ini_options]\ngpuspec_markdown = true\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=2)


def test_the_ini_setting_false_leaves_markdown_alone(pytester):
    pytester.makefile(".md", doc=DOC)
    pytester.makeini("[pytest]\ngpuspec_markdown = false\n")
    result = pytester.runpytest()
    assert result.parseoutcomes().get("passed") is None
    assert result.ret == 5  # no tests collected


def test_a_failing_markdown_claim_reports_the_documents_line_and_column(pytester):
    pytester.makefile(".md", doc=DOC.replace("62 waves", "70 waves"))
    result = pytester.runpytest("--gpuspec-markdown")
    result.assert_outcomes(passed=1, failed=1)
    lines_follow(result, "doc.md:9:24: fail: x*2 on 4096² bf16 is 70 waves, memory-bound", "    claim: 70 waves",
                 "    waves = 62.06, which does not round to 70 waves  [model]")


def test_a_spec_that_does_not_parse_is_one_failing_item_with_the_error_at_file_line_col(pytester):
    pytester.makefile(".gpu", bad="device H100-SXM\ndevice.sms = 132\nx*2 on 4096² bf16 is $ memory-bound\n")
    result = pytester.runpytest("-v")
    result.assert_outcomes(failed=1)
    assert result.ret == 1
    lines_follow(result,
                 "bad.gpu:3:22: error[syntax]: unexpected character `$`...",
                 "    x*2 on 4096² bf16 is $ memory-bound",
                 "                         ^")
    lines_follow(result, "bad.gpu::errors FAILED...")


def test_a_spec_that_does_not_resolve_is_a_failing_item_with_the_error(pytester):
    pytester.makefile(".gpu", bad="device H10-SXM\ndevice.sms = 132\n")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    lines_follow(result,
                 "bad.gpu:1:1: error[unknown-device]: unknown device `H10-SXM`",
                 "    device H10-SXM",
                 "    ^^^^^^^^^^^^^^",
                 "    help: did you mean `H100-SXM`...")


def test_a_malformed_markdown_block_is_a_failing_item_at_the_documents_position(pytester):
    pytester.makefile(".md", doc="# Doc\n\n- item\n\n  ```gpu\n  device H100-SXM\n  x*2 on 4096² bf16 is $ 3\n  ```\n")
    result = pytester.runpytest("--gpuspec-markdown")
    result.assert_outcomes(failed=1)
    lines_follow(result,
                 "doc.md:7:24: error[syntax]: unexpected character `$`...",
                 "      x*2 on 4096² bf16 is $ 3",
                 "                           ^")


def test_junitxml_carries_file_line_and_column_of_each_claim(pytester):
    pytester.makefile(".gpu", a=SPEC)
    result = pytester.runpytest("--junitxml=out.xml")
    assert result.ret == 1
    root = ET.parse(pytester.path / "out.xml").getroot()
    cases = list(root.iter("testcase"))
    found = {}
    for case in cases:
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        found[case.get("name")] = (properties.get("file"), properties.get("line"), properties.get("column"),
                                   case.find("failure") is not None)
    path = str(pytester.path / "a.gpu")
    assert found == {
        "y = x * 2 | 16,777,216 elements": (path, "4", "5", False),
        "y = x * 2 | 62 waves": (path, "5", "5", False),
        "y = x * 2 | 70 waves": (path, "6", "5", True),
        "device.sms = 132": (path, "7", "1", False),
    }


@pytest.mark.parametrize("verbose", [False, True])
def test_junitxml_carries_the_failure_as_pytest_prints_it(pytester, verbose):
    pytester.makefile(".gpu", a=SPEC)
    pytester.runpytest("--junitxml=out.xml", *(["-v"] if verbose else []))
    (failure,) = ET.parse(pytester.path / "out.xml").getroot().iter("failure")
    assert "waves = blocks / blocks_per_wave = 65,536 / 1,056 = 62.06" in failure.text
    whole = "blocks = ⌈elements / threads_per_block⌉" in failure.text
    assert whole == verbose and ("(pytest -v shows the whole derivation)" in failure.text) != verbose


def test_claims_whose_sources_are_all_skipped_are_skipped_with_the_reason(pytester):
    pytester.makefile(".gpu", m="device H100-SXM\nset sources = measured\nx*2 on 4096² bf16 is ≈ 20 µs\n")
    result = pytester.runpytest("-rs")
    result.assert_outcomes(skipped=1)
    assert result.ret == 0
    assert any(line.startswith("SKIPPED") and "measurements need `--measure`" in line for line in result.outlines)


def test_a_claim_with_one_source_passing_and_one_skipped_passes(pytester):
    pytester.makefile(".gpu", m="device H100-SXM\nset sources = model, measured\nx*2 on 4096² bf16 is ≈ 20 µs\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)


def test_items_are_reported_at_the_claims_line(pytester):
    pytester.makefile(".gpu", a=SPEC)
    items, _ = pytester.inline_genitems()
    assert [item.location[1] for item in items] == [3, 4, 5, 6]  # 0-based lines of the four claims
    assert re.match(r".*a\.gpu:6:5: 70 waves$", items[2].location[2])


def test_a_markdown_claims_node_id_can_be_rerun_alone(pytester):
    pytester.makefile(".md", doc=DOC)
    ids = collected_ids(pytester.runpytest("--gpuspec-markdown", "--collect-only", "-q"))
    assert ids == ["doc.md::x*2 on 4096² bf16 is 62 waves, memory-bound | 62 waves",
                   "doc.md::x*2 on 4096² bf16 is 62 waves, memory-bound | memory-bound"]
    result = pytester.runpytest("--gpuspec-markdown", ids[1], "-v")
    assert result.parseoutcomes() == {"passed": 1}
    assert any(line.startswith(ids[1] + " PASSED") for line in result.outlines)


def test_junitxml_of_a_markdown_claim_carries_the_documents_line_and_column(pytester):
    pytester.makefile(".md", doc=DOC)
    pytester.runpytest("--gpuspec-markdown", "--junitxml=out.xml")
    root = ET.parse(pytester.path / "out.xml").getroot()
    found = [{p.get("name"): p.get("value") for p in case.iter("property")} for case in root.iter("testcase")]
    path = str(pytester.path / "doc.md")
    assert found == [{"file": path, "line": "9", "column": "24"}, {"file": path, "line": "9", "column": "34"}]


HOSTILE = ("device H100-SXM\nx = bf16[4096, 4096]\n"
           "y = x * 2:  # \x1b]0;pwned\x07 \x1b[2J\u202eevil ::error title=FORGED::x ##[error]forged\n"
           "    62 waves\n    70 waves\n")


def test_statement_text_in_item_names_cannot_act_on_the_terminal_or_a_ci_log(pytester):
    # The item names held the statement raw: its comment's OSC, CSI and bidi sequences reached pytest's lines
    pytester.makefile(".gpu", a=HOSTILE)
    result = pytester.runpytest("-v", "-rA")
    result.assert_outcomes(passed=1, failed=1)
    output = "\n".join(result.outlines + result.errlines)
    for raw in ("\x1b", "\x07", "\u202e", "##["):
        assert raw not in output, raw
    assert not any(line.lstrip().startswith("::") for line in result.outlines)
    assert "\\x1b]0;pwned\\x07 \\x1b[2J\\u202eevil" in output  # shown, escaped, not dropped
    ids = collected_ids(pytester.runpytest("--collect-only", "-q"))
    assert [node_id.count("::") for node_id in ids] == [1, 1]  # the comment's `::` is not a node id separator
    for node_id, outcome in zip(ids, ("passed", "failed")):
        assert pytester.runpytest(node_id).parseoutcomes() == {outcome: 1}, node_id


# --- the other sources: a calibration profile and saved results, as `gpuspec check --profile/--results` -------

# 20.03 µs by the catalog's bandwidth (the model fails it), 71.4 µs by a profile that measured 1 TB/s (with the
# published profile's 4.28 µs lone-kernel latency, which it lacks).
SLOW = "device H100-SXM\nx * 2 on 4096² bf16 is ≈ 67 µs\n"
SLOW_PROFILE = ('{"version": 1, "gpu": "NVIDIA H100 80GB HBM3", "provenance": {"gpu": "NVIDIA H100 80GB HBM3"}, '
                '"facts": {"hbm_bandwidth": 1e12}}')


def _sources_of_the_claim(result) -> list[str]:
    # Only the failure's own report: with CI set in the environment, pytest's short summary repeats the message whole.
    report = result.outlines
    for index, line in enumerate(report):
        if "short test summary info" in line:
            report = report[:index]
            break
    return [line.strip() for line in report if line.strip().endswith(("[model]", "[calibrated]", "[measured]"))]


def test_without_a_profile_a_claim_only_the_calibrated_source_holds_fails(pytester):
    pytester.makefile(".gpu", a=SLOW)
    pytester.runpytest().assert_outcomes(failed=1)


def test_a_profile_on_the_command_line_is_the_calibrated_source(pytester):
    pytester.makefile(".gpu", a=SLOW)
    pytester.makefile(".json", profile=SLOW_PROFILE)
    result = pytester.runpytest("--gpuspec-profile", "profile.json")
    result.assert_outcomes(failed=1)  # the model still fails it: a failure against any source fails the claim
    assert _sources_of_the_claim(result) == ["time = 20.03 µs, not ≈ 67 µs (± 10%: 60.3–73.7 µs)  [model]"]
    # the profile's 1 TB/s, and the lone kernel's latency it lacks from H100-SXM's published profile
    result.stdout.fnmatch_lines(["*sources: model 20.03 µs ✗ · calibrated 71.39 µs (your profile *profile.json; "
                                 "lone_kernel_latency from the published profile of H100-SXM) ✓"])


def test_a_profile_in_the_ini_file_is_read_relative_to_the_ini_file(pytester):
    pytester.makefile(".gpu", a="device H100-SXM\nset sources = calibrated\nx * 2 on 4096² bf16 is ≈ 67 µs\n")
    (pytester.path / "calibration").mkdir()
    (pytester.path / "calibration" / "h100.json").write_text(SLOW_PROFILE, encoding="utf-8")
    pytester.makeini("[pytest]\ngpuspec_profile = calibration/h100.json\n")
    result = pytester.runpytest("--rootdir", str(pytester.path), str(pytester.path / "a.gpu"))
    result.assert_outcomes(passed=1)
    pytester.makeini("[pytest]\n")
    # no profile of one's own: the H100-SXM's published profile is the calibrated source, and its 26.5 µs fails it
    # (timed alone: 4.28 µs of lone-kernel latency + 67.1 MB at 3.015 TB/s)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*time = 26.54 µs, not ≈ 67 µs (± 10%: 60.3–73.7 µs)  ?calibrated?"])


def test_saved_results_are_the_measured_source(pytester):
    import json

    from gpuspec import api, harness, timing

    spec = pytester.makefile(".gpu", a="device H100-SXM\nset sources = measured\nx * 2 on 4096² bf16 is ≈ 67 µs\n")
    span, statement, workload = api.load_spec(spec).program.workloads[0]

    def results(seconds: float) -> str:
        summary = {**timing.summarize([seconds] * 9).to_dict(), "stopped_by": "noise"}
        return json.dumps({"version": 1, "runs": [{"spec": str(spec), "provenance": {"gpu": "NVIDIA H100 80GB HBM3"},
                                                   "measurements": [{"key": harness.workload_key(statement, workload),
                                                                     "line": span.line, "statement": statement,
                                                                     "status": "ok", "metrics": {"time": summary}}]}]})

    pytester.makefile(".json", near=results(66e-6), far=results(90e-6))
    pytester.runpytest("--gpuspec-results", "near.json").assert_outcomes(passed=1)
    pytester.runpytest("--gpuspec-results", "far.json").assert_outcomes(failed=1)
    pytester.makeini("[pytest]\ngpuspec_results =\n    near.json\n")
    pytester.runpytest().assert_outcomes(passed=1)
    pytester.runpytest("--gpuspec-results", "far.json").assert_outcomes(failed=1)  # the command line wins
    pytester.makeini("[pytest]\n")
    pytester.runpytest().assert_outcomes(skipped=1)


@pytest.mark.parametrize("option, content, words", [
    ("--gpuspec-profile", '{"version": 1, "facts": {"hbm_bandwidth": "fast"}}', "facts.hbm_bandwidth"),
    ("--gpuspec-profile", None, "bad.json"),
    ("--gpuspec-results", '{"version": 1, "runs": [{"spec": 1}]}', "runs?0?.spec"),
])
def test_a_bad_profile_or_results_file_fails_the_specs_errors_item_naming_it(pytester, option, content, words):
    pytester.makefile(".gpu", a=PASSING)
    if content is not None:
        pytester.makefile(".json", bad=content)
    result = pytester.runpytest(option, "bad.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([f"*bad.json*{words}*"])
    assert "Traceback" not in result.stdout.str()


# --- Markdown named on the command line, and [tool.gpuspec] ------------------------------------------------------

PROSE_DOC = DOC + "\nThe multiply runs 62<!-- gpu: = tiny.waves --> waves.\n\n```gpu\ntiny = x * 2 on 4096² bf16\n```\n"


def test_a_markdown_file_named_on_the_command_line_is_collected_without_the_option(pytester):
    pytester.makefile(".md", doc=DOC, other=DOC)
    result = pytester.runpytest("doc.md", "-v")
    result.assert_outcomes(passed=2)
    assert not any(line.startswith("other.md") for line in result.outlines)  # only the file named


def test_a_named_markdown_file_is_collected_whatever_the_ini_setting_says(pytester):
    pytester.makefile(".md", doc=DOC)
    pytester.makeini("[pytest]\ngpuspec_markdown = false\n")
    result = pytester.runpytest(str(pytester.path / "doc.md"))  # an absolute path names it too
    result.assert_outcomes(passed=2)


def test_a_named_markdown_file_without_gpu_blocks_warns_and_runs_nothing(pytester):
    pytester.makefile(".md", plain=PLAIN_DOC)
    result = pytester.runpytest("plain.md")
    assert result.ret == 5  # no tests ran, not "not found"
    assert "no gpu blocks to collect" in result.stdout.str()
    assert "not found" not in result.stdout.str() + result.stderr.str()


def test_a_markdown_items_node_id_given_alone_is_collected_without_the_option(pytester):
    pytester.makefile(".md", doc=DOC)
    result = pytester.runpytest("doc.md::x*2 on 4096² bf16 is 62 waves, memory-bound | 62 waves", "-v")
    result.assert_outcomes(passed=1)


def test_number_checks_in_prose_are_items_of_their_own(pytester):
    pytester.makefile(".md", doc=PROSE_DOC)
    result = pytester.runpytest("doc.md", "-v")
    result.assert_outcomes(passed=3)
    assert any(line.startswith("doc.md::tiny.waves = 62 PASSED") for line in result.outlines)


def test_tool_gpuspec_turns_on_markdown_for_the_whole_tree(pytester):
    pytester.makefile(".md", doc=DOC)
    pytester.makepyprojecttoml("[tool.gpuspec]\nmarkdown = true\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=2)


def test_the_ini_setting_wins_over_tool_gpuspec(pytester):
    pytester.makefile(".md", doc=DOC)
    pytester.makepyprojecttoml("[tool.gpuspec]\nmarkdown = true\n\n[tool.pytest.ini_options]\n"
                               "gpuspec_markdown = false\n")
    assert pytester.runpytest().ret == 5
    assert pytester.runpytest("--gpuspec-markdown").parseoutcomes().get("passed") == 2  # and the option wins over both


def test_tool_gpuspec_sets_the_device_and_tolerance_of_specs_that_set_none(pytester):
    pytester.makefile(".gpu", a="x*2 on 4096² bf16 is ≈ 22 µs\n")  # 20.03 µs on an H100-SXM
    pytester.makepyprojecttoml('[tool.gpuspec]\ndevice = "H100-SXM"\ntolerance = "5%"\n')
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)  # 20.03 µs is within 10% of 22 µs, not within 5%
    assert "time = 20.03 µs, not ≈ 22 µs (± 5%: 20.9–23.1 µs)" in result.stdout.str()
    pytester.makepyprojecttoml('[tool.gpuspec]\ndevice = "H100-SXM"\n')
    pytester.runpytest().assert_outcomes(passed=1)


def test_tool_gpuspec_excludes_files_when_the_ini_names_none(pytester):
    pytester.makefile(".gpu", ok=PASSING)
    (pytester.path / "drafts").mkdir()
    (pytester.path / "drafts" / "wrong.gpu").write_text("device H100-SXM\ndevice.sms = 1\n", encoding="utf-8")
    pytester.makepyprojecttoml('[tool.gpuspec]\nexclude = ["drafts"]\n')
    pytester.runpytest().assert_outcomes(passed=1)


def test_a_profile_in_tool_gpuspec_is_the_calibrated_source_unless_pytest_names_one(pytester):
    pytester.makefile(".gpu", a="device H100-SXM\nset sources = calibrated\nx * 2 on 4096² bf16 is ≈ 67 µs\n")
    pytester.makefile(".json", slow=SLOW_PROFILE, fast=SLOW_PROFILE.replace("1e12", "3.35e12"))
    pytester.makepyprojecttoml('[tool.gpuspec]\nprofile = "slow.json"\n')
    pytester.runpytest().assert_outcomes(passed=1)  # 67.1 µs at the profile's 1 TB/s
    pytester.runpytest("--gpuspec-profile", "fast.json").assert_outcomes(failed=1)  # the option wins: 20.0 µs


@pytest.mark.parametrize("table, code, where", [
    ("[tool.gpuspec]\nmarkdwn = true\n", "unknown-config-key", ":2:1:"),
    ('[tool.gpuspec]\ndevice = "H100-SXMM"\n', "unknown-device", ":2:1:"),
    ("[tool.gpuspec]\nmarkdown = 1\n", "bad-config", ":2:1:"),
    ('[tool.gpuspec]\ntolerance = 5\n', "bad-config", ":2:1:"),
])
def test_a_mistake_in_tool_gpuspec_is_a_located_usage_error(pytester, table, code, where):
    pytester.makefile(".gpu", ok=PASSING)
    pytester.makepyprojecttoml(table)
    result = pytester.runpytest()
    assert result.ret == 4  # pytest's usage error
    output = result.stdout.str() + result.stderr.str()
    assert f"pyproject.toml{where}" in output and f"error[{code}]" in output, output
    assert "Traceback" not in output and "INTERNALERROR" not in output


def test_a_pyproject_that_is_not_toml_is_pytests_own_usage_error_at_its_place(pytester):
    pytester.makefile(".gpu", ok=PASSING)
    pytester.makepyprojecttoml("[tool.gpuspec\nmarkdown = true\n")  # pytest reads the file before any plugin
    result = pytester.runpytest()
    assert result.ret == 4 and "(at line 1, column 14)" in result.stderr.str()


def test_tool_gpuspec_markdown_globs_choose_the_documents_collected(pytester):
    (pytester.path / "docs").mkdir()
    (pytester.path / "docs" / "post.md").write_text(DOC, encoding="utf-8")
    (pytester.path / "notes").mkdir()
    (pytester.path / "notes" / "n.md").write_text(DOC, encoding="utf-8")
    pytester.makepyprojecttoml('[tool.gpuspec]\nmarkdown = ["docs/**/*.md"]\n')
    result = pytester.runpytest("--collect-only", "-q")
    assert {item.split("::")[0] for item in collected_ids(result)} == {"docs/post.md"}
    assert {item.split("::")[0] for item in collected_ids(pytester.runpytest("--collect-only", "-q",
                                                                             "--gpuspec-markdown"))} == {
        "docs/post.md", "notes/n.md"}  # the option wins: every document


def test_tool_gpuspec_sources_apply_to_specs_that_set_none(pytester):
    pytester.makefile(".gpu", a=PASSING)
    pytester.makepyprojecttoml('[tool.gpuspec]\nsources = ["measured"]\n')
    result = pytester.runpytest("-rs")
    result.assert_outcomes(skipped=1)  # checked against the measured source alone, and nothing was measured
    assert "measurements need `--measure`" in result.stdout.str()
