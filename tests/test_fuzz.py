"""Fuzzing every command: check in each report format, explain, fmt, check --update, report, the plot data and
harness rendering, on specs grown from the language, real specs mutated, odd Unicode, random bytes and Markdown
documents (under names a printer must escape), and check with results files and profiles that are valid, mutated
or hostile. Each must keep its property (tests/fuzz_properties.py): one of its own exit statuses, errors with a
location, nothing raw in a human format, machine formats that parse, and its own promise (fmt and --update keep
what check reads, the harness program compiles, a results file never changes the model's verdict).

The CI profile tries the same inputs on every run (derandomized); GPUSPEC_FUZZ_PROFILE=large tries ten times as
many, new ones each time; `python benchmarks/fuzz.py` runs 100,000 on every core.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from fuzz_properties import FORMATS, Case, cases, problem, run
from fuzzing import ROOT, fuzz_settings, markdown_documents, mutated_specs, valid_profiles, valid_results, valid_specs
from hypothesis import Phase, given, settings
from hypothesis import strategies as st


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory(prefix="gpuspec-fuzz-") as name:
        yield Path(name)


def _holds(case: Case, folder: Path, codes: dict | None = None) -> None:
    found = problem(case, folder, codes)
    assert found is None, found


def test_grown_specs_end_in_a_result_or_a_located_error_in_every_format(folder):
    codes: dict = {}
    verdicts: dict = {}

    @fuzz_settings(0.35)
    @given(text=valid_specs(), format=st.sampled_from(FORMATS))
    def grown(text, format):
        case = Case("grown", "spec.gpu", text.encode("utf-8"), "check", format)
        _holds(case, folder, codes)
        if format == "json":  # the verdicts of the claims themselves, from the report _holds has just checked
            outcome = run(folder, "check", "--format", "json", case.name)
            for result in json.loads(outcome.out)["results"]:
                verdicts[result["status"]] = verdicts.get(result["status"], 0) + 1

    grown()
    # The grown specs exercise the check path, not only the parser: most are valid (a file of several claims
    # rarely has every one true, so most end in 1), and their claims both hold and fail, so the model's numbers
    # were compared.
    total = sum(codes.values())
    assert codes.get(0, 0) + codes.get(1, 0) >= 0.7 * total, codes
    assert codes.get(1, 0) >= 0.3 * total, codes
    claims = sum(verdicts.values())
    assert verdicts.get("pass", 0) >= 0.1 * claims and verdicts.get("fail", 0) >= 0.1 * claims, verdicts


@fuzz_settings(0.4)
@given(case=cases("check", ("mutated", "unicode", "bytes")))
def test_mutated_specs_odd_unicode_and_bytes_check_to_a_result_or_a_located_error(folder, case):
    _holds(case, folder)


@fuzz_settings(0.2)
@given(case=cases("check", ("markdown",)))
def test_markdown_documents_check_to_a_result_or_a_located_error(folder, case):
    _holds(case, folder)


@fuzz_settings(0.2)
@given(case=cases("prose", ("prose",)))
def test_numbers_in_prose_check_at_the_number_read_and_render_unseen(folder, case):
    _holds(case, folder)


@fuzz_settings(0.15)
@given(case=cases("update", ("prose",)))
def test_update_rewrites_only_the_failing_numbers_of_prose_which_then_pass(folder, case):
    _holds(case, folder)


@fuzz_settings(0.1)
@given(case=cases("fmt", ("prose",)))
def test_fmt_keeps_every_byte_of_prose_and_its_checks(folder, case):
    _holds(case, folder)


@fuzz_settings(0.3)
@given(case=cases("explain"))
def test_explain_prints_derivations_or_located_errors(folder, case):
    _holds(case, folder)


@fuzz_settings(0.25)
@given(case=cases("fmt"))
def test_fmt_keeps_what_check_reads_and_every_byte_it_does_not_lay_out(folder, case):
    _holds(case, folder)


@fuzz_settings(0.25)
@given(case=cases("update"))
def test_update_rewrites_only_failing_numbers_which_then_pass(folder, case):
    _holds(case, folder)


@settings(fuzz_settings(0.03), phases=[Phase.explicit, Phase.reuse, Phase.generate])  # each draws pictures
@given(case=cases("report"))
def test_report_is_written_well_formed_and_exits_as_check(folder, case):
    _holds(case, folder)


@fuzz_settings(0.3)
@given(case=cases("plot"))
def test_plot_data_are_finite_or_the_error_says_why(folder, case):
    _holds(case, folder)


@fuzz_settings(0.12)
@given(case=cases("harness"))
def test_harness_programs_compile_and_hold_spec_text_only_in_strings(folder, case):
    _holds(case, folder)


@fuzz_settings(0.2)
@given(case=cases("results"))
def test_results_files_valid_mutated_or_hostile_never_change_the_models_verdict(folder, case):
    _holds(case, folder)


@fuzz_settings(0.2)
@given(case=cases("profile"))
def test_profiles_valid_mutated_or_hostile_never_change_the_models_verdict(folder, case):
    _holds(case, folder)


@fuzz_settings(0.05)
@given(data=st.data())
def test_the_valid_results_files_and_profiles_the_fuzzer_mutates_are_valid(data, tmp_path_factory):
    """The files json_files starts from load without an error, and their measurements are of the spec's
    workloads (so the measured and calibrated sources are exercised, not only refused)."""
    from gpuspec import harness, profiles, results
    from gpuspec.api import compile_text
    from gpuspec.text import SpecText

    text = data.draw(valid_specs())
    folder = tmp_path_factory.mktemp("valid")
    (folder / "measured.json").write_text(json.dumps(data.draw(valid_results("spec.gpu", text.encode()))))
    (folder / "profile.json").write_text(json.dumps(data.draw(valid_profiles("spec.gpu", text.encode()))))
    loaded = results.read_results(folder / "measured.json")
    profiles.read_profile(folder / "profile.json")
    try:
        program = compile_text(SpecText("spec.gpu", text))
    except Exception:  # noqa: BLE001 -- a grown spec that does not check: no workloads to measure
        return
    keys = {harness.workload_key(statement, workload) for _, statement, workload in program.workloads}
    assert {m.key for m in loaded} - {"0123456789abcdef"} <= keys


@settings(fuzz_settings(0.006), phases=[Phase.generate])  # each example is two processes: no shrinking
@given(grown=st.lists(valid_specs(), min_size=15, max_size=15),
       mutated=st.lists(mutated_specs(), min_size=10, max_size=10),
       documents=st.lists(markdown_documents(), min_size=5, max_size=5))
def test_a_folder_of_specs_gives_the_same_report_in_processes_with_other_hash_seeds(grown, mutated, documents):
    """Set and dict order may differ between processes (string hashing is salted): the report must not."""
    with tempfile.TemporaryDirectory(prefix="gpuspec-fuzz-") as name:
        for index, text in enumerate(grown):
            (Path(name) / f"grown-{index:02}.gpu").write_text(text, encoding="utf-8")
        for index, data in enumerate(mutated):
            (Path(name) / f"mutated-{index:02}.gpu").write_bytes(data)
        for index, data in enumerate(documents):
            (Path(name) / f"document-{index:02}.md").write_bytes(data)
        reports = []
        for seed in ("1", "2"):
            env = {**os.environ, "PYTHONHASHSEED": seed, "GPUSPEC_NO_CACHE": "1"}
            done = subprocess.run([sys.executable, "-m", "gpuspec", "check", "--format", "json", name], cwd=ROOT,
                                  capture_output=True, text=True, encoding="utf-8", env=env, timeout=300)
            assert done.returncode in (0, 1, 2, 5) and "Traceback" not in done.stderr, done.stderr[-3000:]
            reports.append(done.stdout)
        first, second = (json.loads(report)["results"] + json.loads(report)["errors"] for report in reports)
        differ = [(a, b) for a, b in zip(first, second) if a != b]
        assert not differ and len(first) == len(second), differ[:3]
        assert reports[0] == reports[1]
