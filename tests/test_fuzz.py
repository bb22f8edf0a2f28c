"""Fuzzing: specs grown from the language and real specs mutated, each checked twice.

Every input must end in a result (exit 0 or 1) or in gpuspec's own error with a location (exit 2): never
another exception, a hang or a second run that differs. The strategies and the property are in fuzzing.py;
GPUSPEC_FUZZ_PROFILE=large runs ten times as many examples, and `benchmarks/fuzz.py` runs 100,000.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from fuzzing import FORMATS, ROOT, fuzz_settings, mutated_specs, odd_unicode_specs, problem, valid_specs
from hypothesis import Phase, given, settings
from hypothesis import strategies as st


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory(prefix="gpuspec-fuzz-") as name:
        yield Path(name)


def test_grown_specs_end_in_a_result_or_a_located_error(folder):
    outcomes: dict[int, int] = {}

    @fuzz_settings(0.8)
    @given(text=valid_specs(), format=st.sampled_from(FORMATS))
    def grown(text, format):
        found = problem(text.encode("utf-8"), folder, format, outcomes)
        assert found is None, found

    grown()
    # The grown specs exercise the check path, not only the parser: most are valid, and their claims both
    # hold and fail, so the model's numbers were compared.
    total = sum(outcomes.values())
    assert outcomes.get(0, 0) + outcomes.get(1, 0) >= 0.8 * total, outcomes
    assert outcomes.get(0, 0) >= 0.05 * total and outcomes.get(1, 0) >= 0.3 * total, outcomes


@fuzz_settings(1.6)
@given(data=mutated_specs())
def test_mutated_real_specs_end_in_a_result_or_a_located_error(folder, data):
    found = problem(data, folder)
    assert found is None, found


@fuzz_settings(0.6)
@given(data=odd_unicode_specs(), format=st.sampled_from(("text", "json")))
def test_odd_unicode_ends_in_a_result_or_a_located_error(folder, data, format):
    found = problem(data, folder, format)
    assert found is None, found


@fuzz_settings(0.3)
@given(data=st.binary(max_size=300))
def test_random_bytes_end_in_a_result_or_a_located_error(folder, data):
    found = problem(data, folder)
    assert found is None, found


@settings(fuzz_settings(0.02), phases=[Phase.generate])  # each example is two processes: no shrinking
@given(grown=st.lists(valid_specs(), min_size=15, max_size=15), mutated=st.lists(mutated_specs(), min_size=15,
                                                                                  max_size=15))
def test_a_folder_of_specs_gives_the_same_report_in_processes_with_other_hash_seeds(grown, mutated):
    """Set and dict order may differ between processes (string hashing is salted): the report must not."""
    with tempfile.TemporaryDirectory(prefix="gpuspec-fuzz-") as name:
        for index, text in enumerate(grown):
            (Path(name) / f"grown-{index:02}.gpu").write_text(text, encoding="utf-8")
        for index, data in enumerate(mutated):
            (Path(name) / f"mutated-{index:02}.gpu").write_bytes(data)
        reports = []
        for seed in ("1", "2"):
            env = {**os.environ, "PYTHONHASHSEED": seed, "GPUSPEC_NO_CACHE": "1"}
            done = subprocess.run([sys.executable, "-m", "gpuspec", "check", "--format", "json", name], cwd=ROOT,
                                  capture_output=True, text=True, encoding="utf-8", env=env, timeout=300)
            assert done.returncode in (0, 1, 2) and "Traceback" not in done.stderr, done.stderr[-3000:]
            reports.append(done.stdout)
        first, second = (json.loads(report)["results"] + json.loads(report)["errors"] for report in reports)
        differ = [(a, b) for a, b in zip(first, second) if a != b]
        assert not differ and len(first) == len(second), differ[:3]
        assert reports[0] == reports[1]


# --- inputs the fuzzer found: each once ended in a traceback ----------------------------------------------------

FOUND = {
    # `@` inside a quantity's expression: writing the expression back for the error raised KeyError('@')
    "matmul-operator-in-a-quantity": "device H100-SXM\nv = 2 * (3 @ 4)\n",
    "matmul-under-a-power": "device H100-SXM\nc ^ a @ b:\n    8 waves started\n",
}


@pytest.mark.parametrize("text", list(FOUND.values()), ids=list(FOUND))
@pytest.mark.parametrize("format", ["text", "json"])
def test_inputs_the_fuzzer_found(folder, text, format):
    outcomes: dict[int, int] = {}
    found = problem(text.encode("utf-8"), folder, format, outcomes)
    assert found is None, found
    assert outcomes == {2: 1}  # each is invalid, and says where
