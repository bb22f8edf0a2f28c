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
