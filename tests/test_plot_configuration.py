"""`gpuspec report`, `plot` and `harness` read [tool.gpuspec] by the rule `check` keeps (Config.under): its device,
tolerance, sources, profile, results and paths apply where the command gives none, and each takes `--device` as
check does. A report that holds errors says how many."""
from __future__ import annotations

import json

import pytest

from gpuspec.cli import main
from gpuspec.report import EXIT_FAILED, EXIT_INVALID, EXIT_OK

pytest.importorskip("matplotlib")

# 20.03 µs on an H100-SXM, 7% from 21.5 µs: it holds at ± 10% and fails at ± 5%; the spec names no device, so only
# the table's device makes it checkable.
SPEC = "x = bf16[4096, 4096]\ny = x * 2:\n    time ≈ 21.5 µs\n"
DOC = "# Post\n\n```gpu\nx * 2 on 4096² bf16 is ≈ 20.5 µs\n```\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.gpu").write_text(SPEC, encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "post.md").write_text(DOC, encoding="utf-8")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "c.gpu").write_text("device H100-SXM\nv = fp32[4]\nw = v + v is ≈ 1 s\n",
                                                  encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.gpuspec]\ndevice = "H100-SXM"\ntolerance = "10%"\n'
                                             'paths = ["specs", "docs"]\n', encoding="utf-8")
    return tmp_path


def test_report_checks_what_check_checks_under_the_table(project, capsys):
    assert main(["check", "--format", "json"]) == EXIT_OK
    checked = json.loads(capsys.readouterr().out)["summary"]
    assert main(["report", "specs", "docs", "--out", "r.md"]) == EXIT_OK
    assert capsys.readouterr().out == "2 passed, 0 failed; report written to r.md\n"
    assert checked == {"passed": 2, "failed": 0, "skipped": 0, "errors": 0}
    assert main(["report", "--out", "r.html"]) == EXIT_OK  # the table's paths: not elsewhere/
    assert capsys.readouterr().out == "2 passed, 0 failed; report written to r.html\n"
    assert "elsewhere" not in (project / "r.html").read_text(encoding="utf-8")


def test_report_takes_the_tables_tolerance_and_the_commands_device(project, capsys):
    (project / "pyproject.toml").write_text('[tool.gpuspec]\ndevice = "H100-SXM"\ntolerance = "5%"\n',
                                            encoding="utf-8")
    assert main(["report", "specs", "--out", "r.md"]) == EXIT_FAILED  # ± 5%: 21.5 µs is 7% from 20.03 µs
    capsys.readouterr()
    assert main(["report", "docs", "--out", "r.md", "--device", "A100-80GB"]) == EXIT_FAILED  # rebound: 1.6x slower
    assert "A100-80GB" in (project / "r.md").read_text(encoding="utf-8")


def test_a_report_with_errors_says_how_many(project, capsys):
    assert main(["report", "specs", "--out", "r.md", "--device", "H10O"]) == EXIT_INVALID
    assert capsys.readouterr().out == "0 passed, 0 failed, 1 error; report written to r.md\n"
    (project / "pyproject.toml").write_text("", encoding="utf-8")
    assert main(["report", "specs", "elsewhere", "--out", "r.md"]) == EXIT_INVALID  # no device for a.gpu
    assert capsys.readouterr().out == "0 passed, 1 failed, 1 error; report written to r.md\n"


def test_report_locates_the_tables_profile_at_its_key(project, capsys):
    (project / "pyproject.toml").write_text('[tool.gpuspec]\ndevice = "H100-SXM"\nprofile = "nope.json"\n',
                                            encoding="utf-8")
    assert main(["report", "specs", "--out", "r.md"]) == EXIT_INVALID
    assert "pyproject.toml:3" in (project / "r.md").read_text(encoding="utf-8")


def test_plot_and_harness_take_the_tables_device(project, capsys):
    assert main(["plot", "roofline", "specs/a.gpu", "--out", "p.svg"]) == EXIT_OK
    assert "on 1 device written to p.svg" in capsys.readouterr().out
    assert main(["plot", "timeline", "specs", "--out", "t.svg"]) == EXIT_INVALID  # no stream, but no device error
    assert "no launch streams" in capsys.readouterr().err
    assert main(["harness", "specs/a.gpu:2"]) == EXIT_OK
    assert "'H100-SXM'" in capsys.readouterr().out
    assert main(["harness", "specs/a.gpu:2", "--device", "A100-80GB"]) == EXIT_OK
    assert "'A100-80GB'" in capsys.readouterr().out
    (project / "pyproject.toml").write_text("", encoding="utf-8")
    assert main(["harness", "specs/a.gpu"]) == EXIT_INVALID  # without the table, the spec names no device
    assert "no-device" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["harness", "specs/a.gpu"], ["plot", "roofline", "specs", "--out", "p.svg"],
                                  ["plot", "timeline", "specs", "--out", "p.svg"]])
@pytest.mark.parametrize(("device", "words"), [("auto", "measures nothing"), ("H10O", "unknown device `H10O`")])
def test_a_device_that_cannot_be_had_is_a_usage_error(project, capsys, argv, device, words):
    assert main([*argv, "--device", device]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert err.startswith(f"usage: gpuspec {' '.join(argv[:2] if argv[0] == 'plot' else argv[:1])}") and words in err
    assert not (project / "p.svg").exists()


def test_a_mistake_in_the_table_stops_each_command_located(project, capsys):
    (project / "pyproject.toml").write_text('[tool.gpuspec]\ndevise = "H100-SXM"\n', encoding="utf-8")
    for argv in (["report", "--out", "r.md"], ["harness", "specs/a.gpu"], ["plot", "roofline", "specs", "--out",
                                                                          "p.svg"]):
        assert main(argv) == EXIT_INVALID
        assert "pyproject.toml:2:1: error[unknown-config-key]" in capsys.readouterr().err, argv
