"""The command line: exit codes, the text and JSON reports, explain and devices."""
import json
import subprocess
import sys

from gpuspec.cli import main

LESSON = """device H100-SXM
x*2 on 4096² bf16 is memory-bound, ≈20µs, 62 waves
"""
FAILING = LESSON + "x*2 on 4096² bf16 is memory-bound, 70 waves\n"


def write(tmp_path, text, name="spec.gpu"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_exit_code_is_zero_when_every_claim_holds(tmp_path, capsys):
    assert main(["check", str(write(tmp_path, LESSON))]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "3 passed, 0 failed"


def test_exit_code_is_one_when_a_claim_fails_and_the_failure_shows_value_and_derivation(tmp_path, capsys):
    path = write(tmp_path, FAILING)
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:3:36: fail: x*2 on 4096² bf16 is memory-bound, 70 waves" in out
    assert "waves = 62.06, which does not round to 70 waves" in out
    assert "waves = blocks / blocks_per_wave = 65,536 / 1,056 = 62.06" in out
    assert out.splitlines()[-1] == "4 passed, 1 failed"


def test_exit_code_is_two_for_invalid_input(tmp_path, capsys):
    path = write(tmp_path, "device H10\n")
    assert main(["check", str(path)]) == 2
    out = capsys.readouterr().out
    assert f"{path}:1:1: error[unknown-device]: unknown device `H10`" in out
    assert "help: did you mean" in out


def test_folders_are_searched_for_spec_files(tmp_path, capsys):
    write(tmp_path, LESSON, "a.gpu")
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", LESSON, "b.gpu")
    write(tmp_path, "not a spec", "notes.txt")
    assert main(["check", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "6 passed, 0 failed"


def test_a_missing_path_is_invalid_input(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nope.gpu")]) == 2
    assert "no such file or folder" in capsys.readouterr().out


def test_verbose_lists_every_claim(tmp_path, capsys):
    main(["check", "-v", str(write(tmp_path, LESSON))])
    out = capsys.readouterr().out
    assert out.count("PASS ") == 3


def test_json_report(tmp_path, capsys):
    main(["check", "--format", "json", str(write(tmp_path, FAILING))])
    report = json.loads(capsys.readouterr().out)
    assert report["version"] == 1
    assert report["summary"] == {"passed": 4, "failed": 1, "skipped": 0, "errors": 0}
    failed = [r for r in report["results"] if r["status"] == "fail"][0]
    assert {k: failed[k] for k in ("line", "claim", "metric", "expected", "unit", "source")} == {
        "line": 3, "claim": "70 waves", "metric": "waves", "expected": "70 waves", "unit": "", "source": "model"}
    assert abs(failed["actual"] - 65_536 / 1_056) < 1e-9
    time = [r for r in report["results"] if r["metric"] == "time"][0]
    assert time["unit"] == "s" and abs(time["actual"] - 67_108_864 / 3.35e12) < 1e-15
    bound = report["results"][0]
    assert bound["actual"] == "memory" and bound["unit"] is None


def test_json_errors_carry_file_line_and_column(tmp_path, capsys):
    main(["check", "--format", "json", str(write(tmp_path, "device H100\nx*2 on 4096² bf16 is ≈\n"))])
    [error] = json.loads(capsys.readouterr().out)["errors"]
    assert (error["line"], error["column"]) == (2, 23)


def test_explain_prints_every_derivation(tmp_path, capsys):
    path = write(tmp_path, LESSON)
    assert main(["explain", f"{path}:2"]) == 0
    out = capsys.readouterr().out
    assert "t_mem = bytes_moved / hbm_bandwidth = 67.1 MB / 3.35 TB/s = 20.0 µs" in out
    assert "S-HPCT:" in out  # the reference behind the bandwidth


def test_devices_lists_the_catalog_and_shows_one_device(capsys):
    assert main(["devices"]) == 0
    listing = capsys.readouterr().out
    for name in ("H100-SXM", "H100-PCIe", "H200", "A100-80GB", "A100-40GB", "B200", "L40S", "L4", "RTX-4090"):
        assert name in listing
    assert main(["devices", "h100-sxm5"]) == 0
    detail = capsys.readouterr().out
    assert detail.startswith("H100-SXM:") and "[S-HPCT]" in detail


def test_misuse_exits_two(capsys):
    assert main(["devices", "H10"]) == 2
    try:
        main(["check"])
    except SystemExit as exit:
        assert exit.code == 2


def test_python_dash_m_runs_the_same_command(tmp_path, root):
    result = subprocess.run([sys.executable, "-m", "gpuspec", "check", str(write(tmp_path, LESSON))],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "3 passed, 0 failed"


def test_standard_input_is_read_for_a_dash(tmp_path):
    result = subprocess.run([sys.executable, "-m", "gpuspec", "check", "-"], input=FAILING, capture_output=True,
                            text=True, cwd=tmp_path)
    assert result.returncode == 1
    assert "<stdin>:3:36: fail:" in result.stdout


def test_update_says_what_it_did_on_stderr_beside_a_machine_format(tmp_path, capsys):
    import xml.etree.ElementTree as ElementTree

    for format, parse in (("json", json.loads), ("junit", ElementTree.fromstring)):
        path = write(tmp_path, FAILING)
        assert main(["check", "--update", "--format", format, str(path)]) == 0
        captured = capsys.readouterr()
        parse(captured.out)  # the report alone: nothing after it
        assert "updated 1 claim in 1 file" in captured.err and "updated" not in captured.out
        assert "62 waves\n" in path.read_text(encoding="utf-8").splitlines(keepends=True)[2]
    path = write(tmp_path, FAILING)
    assert main(["check", "--update", str(path)]) == 0  # beside the text report, on stdout as before
    assert capsys.readouterr().out.splitlines()[-1] == "updated 1 claim in 1 file"
