"""Inputs the fuzzer found, each once a broken property, minimised and kept: run through the same property as the
fuzz tests (tests/fuzz_properties.py), with what the command must now say asserted too."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from fuzz_properties import Case, problem, run


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory(prefix="gpuspec-regressions-") as name:
        yield Path(name)


def _holds(case: Case, folder: Path) -> dict:
    codes: dict = {}
    found = problem(case, folder, codes)
    assert found is None, found
    return codes


# --- check ------------------------------------------------------------------------------------------------------

FOUND = {
    # `@` inside a quantity's expression: writing the expression back for the error raised KeyError('@')
    "matmul-operator-in-a-quantity": "device H100-SXM\nv = 2 * (3 @ 4)\n",
    "matmul-under-a-power": "device H100-SXM\nc ^ a @ b:\n    8 waves started\n",
}


@pytest.mark.parametrize("text", list(FOUND.values()), ids=list(FOUND))
@pytest.mark.parametrize("format", ["text", "json"])
def test_quantities_holding_a_matmul_are_located_errors(folder, text, format):
    assert _holds(Case("mutated", "spec.gpu", text.encode("utf-8"), "check", format), folder) == {2: 1}


# --- fmt --------------------------------------------------------------------------------------------------------

def test_fmt_leaves_a_file_check_refuses_for_a_line_separator_as_it_is(folder):
    # check refuses U+2028 in spec text; fmt stripped it from a line's end, and the refused file then checked
    data = "device H100-SXM\u2028\nx = bf16[1024]\nx * 2 is 3 µs\n".encode("utf-8")
    assert _holds(Case("mutated", "spec.gpu", data, "fmt"), folder) == {2: 1}
    assert (folder / "spec.gpu").read_bytes() == data
    code, _, err = run(folder, "fmt", "spec.gpu")
    assert code == 2 and "spec.gpu:1:16: `\\u2028` is not a line break here" in err


# --- the GitHub format --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["##[error]x.gpu", "a ##[set-env name=X]b.gpu"])
def test_a_file_name_holding_the_older_workflow_command_syntax_is_broken_in_github_commands(folder, name):
    # `##[` runs as a command wherever it is in a line; the name was put into each ::error's file property as it is
    data = "device H100-SXM\nx = bf16[1024]\nx * 2 is 3 µs\n".encode("utf-8")
    assert _holds(Case("grown", name, data, "check", "github"), folder) == {1: 1}
    code, out, _ = run(folder, "check", "--format", "github", name)
    assert code == 1 and "##[" not in out and "file=" + name.replace("##[", "##\\x5b").replace(",", "%2C") in out


# --- check --update -------------------------------------------------------------------------------------------------

def test_update_rewriting_a_number_before_a_comma_is_only_a_number_changed(folder):
    # `waves ~ 515, threads = ...` became `waves ~ 0.5, threads = ...`: the property read `515,` as one number
    data = ("device L40S\nx = fp16[1000, 1, 100]\n"
            "w = x * 6,675 with 512 threads per block is waves ~ 515, threads = 207–243\n").encode("utf-8")
    codes = _holds(Case("grown", "spec.gpu", data, "update"), folder)
    assert 1 in codes or 0 in codes
    assert b"waves ~ 515," not in (folder / "spec.gpu").read_bytes()


# --- plot -----------------------------------------------------------------------------------------------------------

def test_a_point_off_every_axis_is_refused_at_its_line(folder):
    # a kernel floor of 1e300 µs puts the workload at 1e-291 FLOP/s: `plot` refuses it, naming the line
    data = ("device my-gpu from RTX-4090 with kernel_floor = 1e300us\nx = fp32[4096]\n"
            "w = x * 2:\n  intensity == 0 FLOP/B\n").encode("utf-8")
    assert _holds(Case("grown", "spec.gpu", data, "plot", "roofline"), folder) == {"error": 1}
    code, _, err = run(folder, "plot", "roofline", "spec.gpu", "--out", "r.svg")
    assert code == 2 and "spec.gpu:3: `w` cannot be placed on a roofline" in err


# --- explain ------------------------------------------------------------------------------------------------------

def test_a_line_past_the_end_names_a_file_whose_name_starts_with_a_workflow_command(folder):
    # mid-line, `::error ...` runs nothing, so the name is shown as written; the property expected it broken
    data = b"device H100-SXM\nx = bf16[1024]\nx * 2 is 3 \xc2\xb5s\n"
    name = "::error title=FORGED::x.gpu"
    assert _holds(Case("grown", name, data, "explain", "9"), folder) == {2: 1}
    code, _, err = run(folder, "explain", f"{name}:9")
    assert code == 2 and f"gpuspec explain: {name}:9: past the end of the file, which has 3 lines" in err
    assert not err.startswith("::")
