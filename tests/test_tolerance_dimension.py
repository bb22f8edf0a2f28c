"""A default tolerance with a unit (`set tolerance = 5 s`, `tolerance` of [tool.gpuspec], --tolerance, the Python
API's tolerance=) fits the claims of its own dimension alone: on a claim of another it is refused where it was
written (at the claim, for an option), never turned into an interval in the claim's unit (`± 5 s: 67.0–67.0 MB`).
A percentage fits every claim."""
from __future__ import annotations

import pytest

import gpuspec
from gpuspec.api import check_text
from gpuspec.cli import main
from gpuspec.report import EXIT_INVALID, EXIT_OK

BLOCK = "x = bf16[4096, 4096]\nscale = x * 2:\n    bytes_moved ≈ 67 MB\n    time ≈ 20 µs\n"
SPEC = "device H100-SXM\n" + BLOCK
HELP = "a tolerance with a unit fits the claims of its dimension alone"


def test_set_tolerance_with_a_unit_refuses_a_claim_of_another_dimension_at_its_line():
    report = check_text("device H100-SXM\nset tolerance = 5 s\n" + BLOCK, "t.gpu")
    (error,) = report.diagnostics
    assert error.code == "dimension-mismatch" and (error.span.file, error.span.line) == ("t.gpu", 2)
    assert error.message == ("`set tolerance`: `± 5 s` is in time (s), but `bytes_moved ≈ 67 MB` (t.gpu:5:5) is in "
                             "bytes (B)")
    assert HELP in error.help and not any("67.0–67.0" in v.message for v in report.verdicts)


def test_set_tolerance_of_the_claims_dimension_and_percentages_are_taken():
    for setting in ("set tolerance = 1 MB\n", "set tolerance = 5%\n"):
        report = check_text("device H100-SXM\n" + setting + "x = bf16[4096, 4096]\ny = x * 2:\n"
                            "    bytes_moved ≈ 67 MB\n", "t.gpu")
        assert not report.diagnostics and [v.status for v in report.verdicts] == ["pass"], setting
    report = check_text("device H100-SXM\nset tolerance = 5 s\nset tolerance = 5%\n" + BLOCK, "t.gpu")
    assert not report.diagnostics  # a later setting replaces it


def test_a_claims_own_tolerance_wins_over_a_default_of_another_dimension():
    report = check_text("device H100-SXM\nset tolerance = 5 s\nx = bf16[4096, 4096]\ny = x * 2:\n"
                        "    bytes_moved ≈ 67 MB ± 1 MB\n", "t.gpu")
    assert not report.diagnostics and [v.status for v in report.verdicts] == ["pass"]


def test_the_table_s_tolerance_is_refused_at_its_key(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.gpu").write_text(SPEC, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.gpuspec]\ndevice = "H100-SXM"\ntolerance = "5 s"\n',
                                             encoding="utf-8")
    assert main(["check", "a.gpu"]) == EXIT_INVALID
    out = capsys.readouterr().out
    assert ("pyproject.toml:3:1: error[dimension-mismatch]: [tool.gpuspec] `tolerance`: `± 5 s` is in time (s), "
            "but `bytes_moved ≈ 67 MB` (a.gpu:4:5) is in bytes (B)\n    tolerance = \"5 s\"\n    ^") in out
    assert "67.0–67.0" not in out
    (tmp_path / "pyproject.toml").write_text('[tool.gpuspec]\ntolerance = "5%"\n', encoding="utf-8")
    assert main(["check", "a.gpu"]) == EXIT_OK


@pytest.mark.parametrize("given", ["5 s", "± 2 µs", "+-1 ns"])
def test_the_option_s_tolerance_is_refused_at_the_claim(tmp_path, capsys, given):
    path = tmp_path / "a.gpu"
    path.write_text(SPEC, encoding="utf-8")
    assert main(["check", "--tolerance", given, str(path)]) == EXIT_INVALID
    out = capsys.readouterr().out
    assert f"{path}:4:5: error[dimension-mismatch]: --tolerance: `" in out
    assert "is in time (s), but this claim is in bytes (B)" in out and "67.0–67.0" not in out


def test_the_python_api_s_tolerance_is_refused_at_the_claim():
    report = gpuspec.check(SPEC, tolerance="5 s", config=False)
    (error,) = report.errors
    assert (error.code, error.line, error.column) == ("dimension-mismatch", 4, 5)
    assert error.message.startswith("tolerance=: `± 5 s` is in time (s), but this claim is in bytes (B)")
    assert gpuspec.check(SPEC, tolerance="5%", config=False).ok
