"""The Python API at the package top: gpuspec.check and gpuspec.explain on text, paths and folders, invalid input
returned located (never raised), the notebook table escaped, and `import gpuspec` cheap."""
from __future__ import annotations

import html
import json
import subprocess
import sys
from pathlib import Path

import pytest

import gpuspec

ROOT = Path(__file__).resolve().parent.parent
# x * 2 on 4096² bf16 moves 67.1 MB: 20.03 µs at the catalog's HBM bandwidth of an H100-SXM.
WORKLOAD = "x * 2 on 4096² bf16 is ≈ 20 µs, 62 waves\n"


def test_check_on_text_gives_each_verdict_with_its_value_interval_and_derivation():
    report = gpuspec.check("device H100-SXM\n" + WORKLOAD)
    assert isinstance(report, gpuspec.Report) and report.ok and report.exit_code == 0
    time, waves = list(report)
    assert (time.claim, time.source, time.status, time.expected, time.unit) == ("≈ 20 µs", "model", "pass", "20 µs",
                                                                               "s")
    assert time.value == pytest.approx(20.03e-6, rel=1e-3) and time.value_bounds == (time.value, time.value)
    assert time.interval == pytest.approx((18e-6, 22e-6))  # what `≈ 20 µs` allows at ± 10%: the report's 18.0–22.0
    assert time.shown_value == "20.0 µs" and time.tolerance == "± 10%"
    assert time.derivation.splitlines()[0].startswith("time = max(t_mem, t_issue, kernel_floor)")
    assert "\n  t_mem = bytes_moved / hbm_bandwidth" in time.derivation  # an input under its use
    assert "\n    hbm_bandwidth = 3.35 TB/s" in time.derivation
    assert (time.file, time.line) == ("<text>", 2)
    assert waves.claim == "62 waves" and waves.value == pytest.approx(62.06, abs=0.01)
    assert report.summary == {"passed": 2, "failed": 0, "skipped": 0, "errors": 0}


def test_device_and_tolerance_are_defaults_a_spec_overrides():
    report = gpuspec.check("x * 2 on 4096² bf16 is ≈ 21 µs\n", device="H100-SXM", tolerance="1%")
    (verdict,) = report
    assert verdict.status == "fail" and verdict.tolerance == "± 1%" and report.exit_code == 1
    assert report.failures[0].claim == "≈ 21 µs"
    # the spec's own device and tolerance win over the arguments
    own = gpuspec.check("device A100-80GB\nset tolerance = 50%\nx * 2 on 4096² bf16 is ≈ 21 µs\n",
                        device="H100-SXM", tolerance="1%")
    (verdict,) = own
    assert verdict.tolerance == "± 50%" and verdict.value > 30e-6  # the A100's slower HBM


def test_check_on_paths_and_folders(tmp_path):
    (tmp_path / "a.gpu").write_text("device H100-SXM\n" + WORKLOAD, encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.gpu").write_text("device H100-SXM\nx * 2 on 4096² bf16 is ≈ 99 µs\n", encoding="utf-8")
    folder = gpuspec.check(tmp_path)
    assert [(Path(v.file).name, v.status) for v in folder] == [("a.gpu", "pass"), ("a.gpu", "pass"),
                                                               ("b.gpu", "fail")]
    one = gpuspec.check([tmp_path / "a.gpu", str(tmp_path / "sub" / "b.gpu")])
    assert len(one) == 3 and len(one.files) == 2
    assert gpuspec.check(tmp_path / "a.gpu").ok


def test_the_bundled_specs_check_as_the_command_line_checks_them():
    report = gpuspec.check(ROOT / "specs")
    assert report.ok and len(report) > 200
    assert report.format("json") == json.dumps(json.loads(report.format("json")), indent=2, ensure_ascii=False) + "\n"
    assert str(report).splitlines()[-1] == f"{report.summary['passed']} passed, 0 failed"


def test_markdown_text_is_read_as_markdown_when_its_name_says_so():
    document = "# Post\n\nIt takes about 20 µs:\n\n```gpu\ndevice H100-SXM\n" + WORKLOAD + "```\n"
    report = gpuspec.check(document, name="post.md")
    assert report.ok and [v.line for v in report] == [7, 7]


@pytest.mark.parametrize(("arguments", "code", "words"), [
    (("device H100-SXM\nx * 2 on 4096² bf16 is ≈\n",), "syntax", "the line ends early"),
    (("\nx * 2 on 4096² bf16 is ≈ 20 µs\n",), "no-device", "no device"),
    (("device H100-SXM\nx * 2 on 4096² bf16 is ≈ 20 parsecs\n",), "unknown-unit", "parsecs"),
    (("device H100-SXM\r\nx * 2 on 4096² bf16 is ≈ 20 µs\u2028x\n",), "line-separator",
     "`\\u2028` is not a line break"),
])
def test_invalid_text_is_returned_located_not_raised(arguments, code, words):
    report = gpuspec.check(*arguments)
    (error,) = report.errors
    assert error.code == code and words in error.message and (error.file, error.line) == ("<text>", 2), error
    assert error.column >= 1 and report.exit_code == 2 and not report.ok
    assert str(error).startswith(f"<text>:2:{error.column}: error[{code}]")


def test_bad_arguments_and_paths_are_errors_of_the_report(tmp_path):
    report = gpuspec.check(WORKLOAD, device="H100SXM", tolerance="nan%")
    codes = {e.code: e for e in report.errors}
    assert "did you mean `H100-SXM`" in codes["unknown-device"].help
    assert codes["unknown-device"].message.startswith("device=: ") and codes["unknown-device"].file is None
    assert codes["bad-tolerance"].message == "tolerance=: `nan%` is not a tolerance"
    huge = gpuspec.check("device H100-SXM\n" + WORKLOAD, tolerance="1e400%").errors
    assert [e.code for e in huge] == ["number-out-of-range"]
    missing = gpuspec.check(tmp_path / "missing.gpu")
    assert [e.code for e in missing.errors] == ["no-such-path"] and missing.exit_code == 2
    (tmp_path / "latin1.gpu").write_bytes("device H100-SXM\n# caf\xe9\n".encode("latin-1"))
    unreadable = gpuspec.check(tmp_path / "latin1.gpu").errors
    assert [(e.code, e.line) for e in unreadable] == [("unreadable", 2)]


def test_a_wrong_call_raises_type_error():
    with pytest.raises(TypeError, match="spec text"):
        gpuspec.check(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="device must be a str"):
        gpuspec.check(WORKLOAD, device=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sources must be gpuspec.Sources"):
        gpuspec.check(WORKLOAD, sources={"profile": "p.json"})  # type: ignore[arg-type]


def test_sources_reach_the_run(tmp_path):
    report = gpuspec.check("device H100-SXM\n" + WORKLOAD, sources=gpuspec.Sources(profile=str(tmp_path / "no.json")))
    assert [e.code for e in report.errors] == ["bad-profile"] and "no.json" in report.errors[0].file


def test_explain_text_and_paths(tmp_path):
    explained = gpuspec.explain("device H100-SXM\n" + WORKLOAD)
    (item,) = explained
    assert item.title.startswith("x * 2 on 4096² bf16") and not explained.errors
    assert any(value.name == "time" for value in item.values)
    assert str(explained).startswith("<text>:2: x * 2 on 4096² bf16")
    path = tmp_path / "a.gpu"
    path.write_text(WORKLOAD, encoding="utf-8")
    assert len(gpuspec.explain(path, device="H100-SXM")) == 1
    broken = gpuspec.explain(path)  # no device: located, not raised
    assert [(e.code, e.line) for e in broken.errors] == [("no-device", 1)] and len(broken) == 0
    assert "error[no-device]" in str(broken)


HOSTILE = '<script>alert("x")</script> & <img src=x onerror=alert(1)> \u202e\x1b[31m'


def test_the_notebook_table_escapes_hostile_claim_text():
    quote = HOSTILE.replace('"', "'")
    report = gpuspec.check(f'device H100-SXM\n"{quote}"\n' + WORKLOAD, name=f"{HOSTILE}.gpu")
    assert report.ok and report.files == (f"{HOSTILE}.gpu",)
    shown = report._repr_html_()
    assert "<script" not in shown and "<img" not in shown and "\u202e" not in shown and "\x1b" not in shown
    assert html.escape("<script>") in shown and "\\u202e" in shown
    assert shown.count("<tr>") == 1 + len(report)  # a header and a row per verdict
    assert "2 passed, 0 failed" in shown
    assert shown.count("<details>") == 2 and "t_mem = bytes_moved / hbm_bandwidth" in shown  # each derivation


def test_the_notebook_table_shows_errors_escaped():
    report = gpuspec.check("device H100-SXM\nx * 2 on 4096² bf16 is ≈ 20 <script>\n", name=f"{HOSTILE}.gpu")
    shown = report._repr_html_()
    assert [e.code for e in report.errors] == ["syntax"] and "&lt;" in report.errors[0].message.replace("<", "&lt;")
    assert "error" in shown and "[syntax]" in shown and "onerror=alert" in shown
    assert "<script" not in shown and "<img" not in shown and "\u202e" not in shown


def test_importing_gpuspec_imports_no_dependency():
    code = ("import sys, gpuspec; heavy = [m for m in ('lark', 'jinja2', 'torch', 'triton', 'attrs', 'typing') "
            "if m in sys.modules]; print(heavy, len([m for m in sys.modules if m.startswith('gpuspec')]))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert shown.split() == ["[]", "2"]  # gpuspec and gpuspec.version


def test_checking_a_cached_spec_needs_no_lark_jinja2_torch_or_triton(tmp_path):
    spec = tmp_path / "a.gpu"
    spec.write_text("device H100-SXM\n" + WORKLOAD, encoding="utf-8")
    code = ("import sys, gpuspec, pathlib; r = gpuspec.check(pathlib.Path(sys.argv[1])); "
            "print(r.ok, [m for m in ('lark', 'jinja2', 'torch', 'triton') if m in sys.modules])")
    subprocess.run([sys.executable, "-c", code, str(spec)], check=True, capture_output=True)  # parsed and cached
    shown = subprocess.run([sys.executable, "-c", code, str(spec)], capture_output=True, text=True, check=True)
    assert shown.stdout.split() == ["True", "[]"]


def test_the_names_are_the_functions_whatever_was_imported_first():
    import gpuspec.verdicts  # noqa: F401  (the module that holds the comparison rules)

    assert callable(gpuspec.check) and callable(gpuspec.explain)
    assert set(gpuspec.__all__) <= set(dir(gpuspec))
    with pytest.raises(AttributeError):
        gpuspec.no_such_name  # noqa: B018


def test_the_package_is_typed():
    assert (ROOT / "gpuspec" / "py.typed").is_file()
    assert gpuspec.check.__annotations__["return"] == "Report"


# --- [tool.gpuspec]: config=True (the nearest pyproject.toml), a path, or False --------------------------------

def _project(folder: Path, table: str) -> Path:
    (folder / "pyproject.toml").write_text("[project]\nname = 'post'\n\n[tool.gpuspec]\n" + table, encoding="utf-8")
    (folder / "specs").mkdir(exist_ok=True)
    (folder / "specs" / "a.gpu").write_text("x * 2 on 4096² bf16 is ≈ 22 µs\n", encoding="utf-8")  # 20.03 µs
    return folder


def test_check_reads_the_nearest_pyproject_as_the_command_line_does(tmp_path, monkeypatch):
    _project(tmp_path, 'paths = ["specs"]\ndevice = "H100-SXM"\ntolerance = "5%"\n')
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # found walking up
    report = gpuspec.check(Path("../specs"))
    (verdict,) = report
    assert verdict.status == "fail" and verdict.tolerance == "± 5%"  # the table's device and tolerance
    assert gpuspec.check(Path("../specs"), tolerance="10%").ok  # an argument wins over the table
    monkeypatch.chdir(tmp_path)
    assert [Path(v.file).name for v in gpuspec.check()] == ["a.gpu"]  # no paths: the table's


def test_config_false_reads_no_pyproject_and_a_path_reads_that_one(tmp_path, monkeypatch):
    _project(tmp_path, 'device = "H100-SXM"\ntolerance = "5%"\n')
    monkeypatch.chdir(tmp_path)
    without = gpuspec.check(Path("specs"), config=False)
    assert [e.code for e in without.errors] == ["no-device"]  # no device named anywhere
    other = tmp_path / "other"
    other.mkdir()
    (other / "pyproject.toml").write_text('[tool.gpuspec]\ndevice = "H100-SXM"\n', encoding="utf-8")
    (verdict,) = gpuspec.check(Path("specs"), config=other / "pyproject.toml")
    assert verdict.status == "pass" and verdict.tolerance == "± 10%"  # that file's table: no tolerance of its own
    (folder_verdict,) = gpuspec.check(Path("specs"), config=str(other))  # a folder: looked up from there
    assert folder_verdict.status == "pass"


def test_config_applies_to_text_and_explain(tmp_path, monkeypatch):
    _project(tmp_path, 'device = "H100-SXM"\n')
    monkeypatch.chdir(tmp_path)
    assert gpuspec.check("x * 2 on 4096² bf16 is ≈ 20 µs\n").ok
    explained = gpuspec.explain("x * 2 on 4096² bf16 is ≈ 20 µs\n")
    assert not explained.errors and "hbm_bandwidth = 3.35 TB/s" in str(explained)
    assert [e.code for e in gpuspec.explain("x * 2 on 4096² bf16 is ≈ 20 µs\n", config=False).errors] == ["no-device"]


def test_a_mistake_in_the_table_comes_back_located_never_raised(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.gpuspec]\ndevise = "H100-SXM"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    report = gpuspec.check("device H100-SXM\n" + WORKLOAD)
    (error,) = report.errors
    assert (error.code, error.file, error.line, error.column) == ("unknown-config-key", "pyproject.toml", 2, 1)
    assert "`device`" in error.help and report.exit_code == 2 and not list(report)
    assert "devise" in str(report)  # the text report shows the line
    (explained,) = gpuspec.explain("device H100-SXM\n" + WORKLOAD).errors
    assert explained.code == "unknown-config-key"
    assert gpuspec.check("device H100-SXM\n" + WORKLOAD, config=False).ok  # or left out


def test_config_names_a_file_that_is_not_there_or_takes_the_wrong_type(tmp_path):
    (error,) = gpuspec.check("device H100-SXM\n" + WORKLOAD, config=tmp_path / "nope.toml").errors
    assert error.code == "no-such-path" and "nope.toml" in error.message
    with pytest.raises(TypeError, match="config must be True, False or a path"):
        gpuspec.check("device H100-SXM\n", config=1)


INTERVALS = """device H100-SXM
x = bf16[4096, 4096]
y = x * 2:
    ≈ 20 µs ± 10%
    ≈ 20 µs ± 1 µs
    62 waves
    33.5 MB read
    < 25 µs
    ≥ 10 µs
    memory-bound
    ≈ 40 µs
device.l2_latency = 200–300 cycles
device.sms = 100+
y.flops = 4096 * 4096 FLOP
"""


def test_interval_is_what_the_claim_allows_and_value_bounds_the_values_own():
    got = {v.claim: (v.status, v.interval, v.value_bounds) for v in gpuspec.check(INTERVALS, config=False)}
    inf = float("inf")
    assert got["≈ 20 µs ± 10%"][1] == pytest.approx((18e-6, 22e-6))
    assert got["≈ 20 µs ± 1 µs"][1] == pytest.approx((19e-6, 21e-6))
    assert got["62 waves"][1] == (61.5, 62.5)  # what rounds to the digits written
    assert got["33.5 MB read"][:2] == ("fail", pytest.approx((33.45e6, 33.55e6)))  # 33.55 MB does not round to it
    assert got["< 25 µs"][1] == (-inf, pytest.approx(25e-6)) and got["≥ 10 µs"][1] == (pytest.approx(10e-6), inf)
    assert got["memory-bound"][1:] == (None, None)
    assert got["≈ 40 µs"][:2] == ("fail", pytest.approx((36e-6, 44e-6)))  # the claim's, not the failing value's
    assert got["device.l2_latency = 200–300 cycles"][1] == (199.5, 300.5)
    low, high = got["device.l2_latency = 200–300 cycles"][2]  # a measured latency: a range of its own
    assert 199.5 <= low < high <= 300.5
    assert got["device.sms = 100+"][1] == (99.5, inf) and got["device.sms = 100+"][2] == (132, 132)
    assert got["y.flops = 4096 * 4096 FLOP"][1] == (16777216, 16777216)  # arithmetic is exact


def test_a_point_value_passes_exactly_when_it_falls_in_the_interval():
    checked = 0
    for verdict in gpuspec.check([ROOT / "specs", ROOT / "README.md"], config=False):
        bounds, interval = verdict.value_bounds, verdict.interval
        if bounds is None or interval is None or bounds[0] != bounds[1] or verdict.status == "skip":
            continue
        low, high = interval
        inside = low - 1e-9 * abs(low) <= bounds[0] <= high + 1e-9 * abs(high)
        assert inside == verdict.passed, (verdict, interval)
        checked += 1
    assert checked > 300


def test_against_names_the_sources_of_specs_that_set_none():
    report = gpuspec.check("device H100-SXM\n" + WORKLOAD, against=("model", "measured"))
    assert [(v.source, v.status) for v in report] == [("model", "pass"), ("measured", "skip")] * 2
    assert [v.source for v in gpuspec.check("device H100-SXM\n" + WORKLOAD, against="measured")] == ["measured"] * 2
    own = gpuspec.check("device H100-SXM\nset sources = model\n" + WORKLOAD, against="measured")
    assert [v.source for v in own] == ["model", "model"]  # the spec's own `set sources` wins
    (error,) = gpuspec.check("device H100-SXM\n" + WORKLOAD, against=["model", "mesured"]).errors
    assert error.message == "against=: `mesured` is not a source" and "did you mean `measured`" in error.help
    with pytest.raises(TypeError, match="against must be"):
        gpuspec.check(WORKLOAD, against=3)  # type: ignore[arg-type]


def test_against_wins_over_sources_in_the_table(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.gpuspec]\nsources = ["measured"]\ndevice = "H100-SXM"\n',
                                             encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert {v.source for v in gpuspec.check(WORKLOAD)} == {"measured"}
    assert {v.source for v in gpuspec.check(WORKLOAD, against="model")} == {"model"}


@pytest.mark.parametrize(("line", "code", "at", "words"), [
    (99999, "no-such-line", 3, "past the end of the file, which has 3 lines"),
    (0, "no-such-line", 1, "lines are numbered from 1"),
    (-4, "no-such-line", 1, "lines are numbered from 1"),
    (1, "nothing-on-line", 1, "no workload on this line; the workloads are on line 2"),
])
def test_explain_a_line_that_names_nothing_is_a_located_error(tmp_path, line, code, at, words):
    path = tmp_path / "s.gpu"
    path.write_text("device H100-SXM\n" + WORKLOAD + "# the end\n", encoding="utf-8")
    for given, name in ((path, str(path)), (path.read_text(encoding="utf-8"), "<text>")):
        explained = gpuspec.explain(given, line=line)
        (error,) = explained.errors
        assert len(explained) == 0 and (error.code, error.file, error.line, error.column) == (code, name, at, 1)
        assert words in error.message and f"{name}:{line}: " in error.message
        assert words in str(explained)
    assert len(gpuspec.explain(path, line=2)) == 1 and not gpuspec.explain(path, line=2).errors


@pytest.mark.parametrize("line", [True, False, 2.0, "2"])
def test_explain_takes_a_line_number_as_an_int(tmp_path, line):
    with pytest.raises(TypeError, match="line must be an int"):
        gpuspec.explain("device H100-SXM\n" + WORKLOAD, line=line)


def test_a_wrong_argument_leaves_the_right_ones_in_force():
    report = gpuspec.check(WORKLOAD, device="H100-SXM", tolerance="abc", config=False)
    assert [e.message.split(":")[0] for e in report.errors] == ["tolerance="]
    assert [(v.metric, v.status) for v in report] == [("time", "pass"), ("waves", "pass")]  # the device applied
    report = gpuspec.check(WORKLOAD, device="H10", tolerance="1%", config=False)
    assert [e.code for e in report.errors][:1] == ["unknown-device"]
    report = gpuspec.check("device H100-SXM\n" + WORKLOAD, device="H10", tolerance="0.1%", against="modle",
                           config=False)
    assert [e.message.split(":")[0] for e in report.errors] == ["device=", "against="]
    assert [(v.metric, v.status) for v in report] == [("time", "fail"), ("waves", "pass")]  # ± 0.1% applied


def test_the_tables_paths_and_profile_that_name_nothing_are_located_at_their_keys(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.gpuspec]\npaths = ["gone"]\nprofile = "p.json"\n',
                                             encoding="utf-8")
    errors = {(e.code, e.file, e.line) for e in gpuspec.check().errors}
    assert errors == {("no-such-path", "pyproject.toml", 2), ("bad-profile", "pyproject.toml", 3)}
