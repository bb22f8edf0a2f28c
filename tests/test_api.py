"""gpuspec.api, called directly: load specs, check them with evidence (a profile, saved results), explain, format
and update; every way in reads spec text through api.read."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuspec import api, harness, timing
from gpuspec.diagnostics import SpecError
from gpuspec.fmt import FormatError

H100 = "NVIDIA H100 80GB HBM3"
# x * 2 on 4096² bf16 moves 67.1 MB: 20.03 µs at the catalog's HBM bandwidth, 67.11 µs at 1 TB/s.
SPEC = "device H100-SXM\nx * 2 on 4096² bf16 is ≈ 67 µs\n"
SLOW_PROFILE = {"version": 1, "gpu": H100, "provenance": {"gpu": H100, "device": "cuda"},
                "facts": {"hbm_bandwidth": 1.0e12}}


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def profile_file(folder: Path, data: dict = SLOW_PROFILE) -> Path:
    return write(folder, "profile.json", json.dumps(data))


def results_file(folder: Path, spec: Path, seconds: float) -> Path:
    """A results file as gpuspec writes one: the spec's workload measured at `seconds` on an H100."""
    loaded = api.load_spec(spec)
    span, statement, workload = loaded.program.workloads[0]
    samples = [seconds * (1 + 0.01 * (i - 4) / 4) for i in range(9)]
    measurement = {"key": harness.workload_key(statement, workload), "line": span.line, "statement": statement,
                   "status": "ok", "reason": None,
                   "metrics": {"time": {**timing.summarize(samples).to_dict(), "stopped_by": "noise"}}}
    data = {"version": 1, "runs": [{"spec": str(spec), "provenance": {"gpu": H100, "device": "cuda"},
                                    "measurements": [measurement]}]}
    return write(folder, "results.json", json.dumps(data))


def statuses(report) -> dict[str, str]:
    return {v.source: v.status for v in report.verdicts}


# --- loading --------------------------------------------------------------------------------------------------

def test_load_spec_reads_parses_and_resolves_one_file(tmp_path):
    spec = api.load_spec(write(tmp_path, "a.gpu", SPEC))
    assert spec.path == str(tmp_path / "a.gpu")
    assert [(claim.text, claim.span.line) for claim in spec.program.claims] == [("≈ 67 µs", 2)]
    assert spec.document == SPEC and spec.warnings == ()


def test_load_spec_of_an_invalid_file_raises_with_the_place(tmp_path):
    path = write(tmp_path, "bad.gpu", "device H100-SXM\nx*2 on 4096² bf16 is ≈ 67 parsecs\n")
    with pytest.raises(SpecError) as raised:
        api.load_spec(path)
    (diagnostic,) = raised.value.diagnostics
    assert (diagnostic.span.file, diagnostic.span.line) == (str(path), 2)


def test_load_specs_keeps_the_files_that_load_and_the_errors_of_the_others(tmp_path):
    write(tmp_path, "a.gpu", SPEC)
    write(tmp_path, "b.gpu", "device H10\n")
    found = api.load_specs([str(tmp_path), str(tmp_path / "missing.gpu")])
    assert [Path(s.path).name for s in found.specs] == ["a.gpu"]
    assert [Path(f).name for f in found.files] == ["a.gpu", "b.gpu"]
    assert sorted(d.code for d in found.diagnostics) == ["no-such-path", "unknown-device"]
    assert found.texts[str(tmp_path / "b.gpu")] == "device H10\n"  # for showing the error's line
    assert [path for path, _ in found.programs] == [str(tmp_path / "a.gpu")]


def test_every_reader_sees_the_same_text_of_a_file_with_a_byte_order_mark_and_crlf(tmp_path):
    path = tmp_path / "crlf.gpu"
    path.write_bytes("\ufeffdevice H100-SXM\r\nx*2  on 4096² bf16 is ≈ 67 µs\r\n".encode())
    spec = api.load_spec(path)
    assert spec.source.text == "device H100-SXM\nx*2  on 4096² bf16 is ≈ 67 µs\n"
    assert spec.program.claims[0].span.line == 2
    formatted = api.format_file(path)
    assert formatted.read.text == spec.source.text
    assert formatted.text == "device H100-SXM\r\nx * 2 on 4096² bf16 is ≈ 67 µs\r\n"  # its own line breaks kept
    formatted.write()
    assert path.read_bytes().startswith("\ufeff".encode()) and b"\r\n" in path.read_bytes()  # and its mark


def test_a_line_separator_is_refused_by_check_and_by_fmt_alike(tmp_path):
    path = write(tmp_path, "sep.gpu", "device H100-SXM # note\u2028x*2 on 4096² bf16 is ≈ 20 µs\n")
    report = api.run_check([str(path)])
    assert [(d.code, d.span.line, d.span.column) for d in report.diagnostics] == [("line-separator", 1, 23)]
    with pytest.raises(FormatError, match=r"sep.gpu:1:23: `\\u2028` is not a line break"):
        api.format_file(path)


# --- checking with evidence -------------------------------------------------------------------------------------

def test_check_specs_against_the_model_alone(tmp_path):
    report = api.check_specs(api.load_specs([str(write(tmp_path, "a.gpu", SPEC))]))
    assert statuses(report) == {"model": "fail"} and report.exit_code == 1


def test_check_specs_with_a_profile_adds_the_calibrated_source(tmp_path):
    specs = api.load_specs([str(write(tmp_path, "a.gpu", SPEC))])
    report = api.check_specs(specs, api.Sources(profile=str(profile_file(tmp_path))))
    assert statuses(report) == {"model": "fail", "calibrated": "pass"}
    calibrated = next(v for v in report.verdicts if v.source == "calibrated")
    # the profile's 1 TB/s, and the lone kernel's latency it lacks (4.28 µs) from H100-SXM's published profile
    assert calibrated.actual.format() == "71.4 µs"


def test_check_specs_with_results_adds_the_measured_source(tmp_path):
    spec = write(tmp_path, "a.gpu", SPEC)
    results = results_file(tmp_path, spec, 66e-6)
    report = api.check_specs(api.load_specs([str(spec)]), api.Sources(results=(str(results),)))
    assert statuses(report) == {"model": "fail", "measured": "pass"}
    far = results_file(tmp_path, spec, 90e-6)
    assert statuses(api.run_check([str(spec)], api.Sources(results=(str(far),)))) == \
        {"model": "fail", "measured": "fail"}


@pytest.mark.parametrize("content, words", [
    ("{", "results.json"),
    ('{"version": 1, "runs": [{"spec": 5}]}', "runs[0].spec"),
    ('{"version": 1, "runs": [], "extra": 1}', None),
])
def test_a_bad_results_file_is_an_error_naming_the_file(tmp_path, content, words):
    spec = write(tmp_path, "a.gpu", SPEC)
    bad = write(tmp_path, "results.json", content)
    report = api.run_check([str(spec)], api.Sources(results=(str(bad),)))
    if words is None:  # an unknown key at the top is let be: the file is valid and measures nothing here
        assert statuses(report) == {"model": "fail", "measured": "skip"}
        return
    (problem,) = report.diagnostics
    assert problem.code == "bad-results" and problem.span.file == str(bad) and words in problem.message
    assert report.exit_code == 2


@pytest.mark.parametrize("data, words", [
    ({**SLOW_PROFILE, "facts": {"hbm_bandwidth": -1}}, "facts.hbm_bandwidth"),
    ({**SLOW_PROFILE, "facts": {"sms": 132}}, "facts.sms"),
    ({**SLOW_PROFILE, "version": 7}, "not a gpuspec profile"),
])
def test_a_bad_profile_is_an_error_naming_the_file_and_key(tmp_path, data, words):
    spec = write(tmp_path, "a.gpu", SPEC)
    profile = profile_file(tmp_path, data)
    report = api.run_check([str(spec)], api.Sources(profile=str(profile)))
    (problem,) = report.diagnostics
    assert problem.code == "bad-profile" and problem.span.file == str(profile) and words in problem.message
    assert statuses(report) == {"model": "fail"} and report.exit_code == 2


def test_a_missing_profile_is_an_error_not_a_traceback(tmp_path):
    report = api.run_check([str(write(tmp_path, "a.gpu", SPEC))], api.Sources(profile=str(tmp_path / "no.json")))
    assert [d.code for d in report.diagnostics] == ["bad-profile"]
    assert "no.json" in report.diagnostics[0].message


def test_a_folder_given_as_a_profile_and_a_results_file_with_nan_are_refused_in_words(tmp_path):
    spec = write(tmp_path, "a.gpu", SPEC)
    nan = write(tmp_path, "nan.json", '{"version": 1, "runs": [{"spec": "a.gpu", "provenance": {}, "measurements": '
                                      '[{"key": "k", "line": 2, "statement": "s", "status": "ok", '
                                      '"metrics": {"time": {"median": NaN}}}]}]}')
    report = api.run_check([str(spec)], api.Sources(profile=str(tmp_path), results=(str(nan),)))
    assert [(d.code, d.span.file) for d in report.diagnostics] == [("bad-profile", str(tmp_path)),
                                                                    ("bad-results", str(nan))]
    assert "it is a folder" in report.diagnostics[0].message
    assert "metrics.time.median` is NaN" in report.diagnostics[1].message


def test_check_text_checks_as_run_check_does(tmp_path):
    profile = api.Sources(profile=str(profile_file(tmp_path)))
    from_text = api.check_text(SPEC, "a.gpu", profile)
    from_file = api.run_check([str(write(tmp_path, "a.gpu", SPEC))], profile)
    assert [(v.source, v.status, v.message) for v in from_text.verdicts] == \
        [(v.source, v.status, v.message) for v in from_file.verdicts]
    invalid = api.check_text("device H10\n", "x.gpu")
    assert [d.code for d in invalid.diagnostics] == ["unknown-device"] and invalid.texts == {"x.gpu": "device H10\n"}


def test_gather_evidence_is_what_check_specs_uses(tmp_path):
    specs = api.load_specs([str(write(tmp_path, "a.gpu", SPEC))])
    evidence, problems = api.gather_evidence(specs.programs, api.Sources(profile=str(profile_file(tmp_path))))
    assert problems == [] and evidence.calibrated is not None and evidence.measured is None


# --- explain, format, update ------------------------------------------------------------------------------------

def test_explain_gives_each_metric_of_the_workload(tmp_path):
    (explanation,) = api.explain(str(write(tmp_path, "a.gpu", SPEC)))
    assert "time" in {value.name for value in explanation.values} and explanation.span.line == 2


def test_format_file_refuses_what_it_cannot_format_in_words(tmp_path):
    with pytest.raises(FormatError, match="standard input"):
        api.format_file("-")
    with pytest.raises(FormatError, match="cannot read .*missing.gpu"):
        api.format_file(tmp_path / "missing.gpu")
    binary = tmp_path / "binary.gpu"
    binary.write_bytes(b"device H100-SXM\n\xff\n")
    with pytest.raises(FormatError, match=r"binary.gpu:2:1: byte 0xff is not UTF-8 text; it was left as it is"):
        api.format_file(binary)
    assert binary.read_bytes() == b"device H100-SXM\n\xff\n"
    unformatted = write(tmp_path, "fine.gpu", "device  H100-SXM\n")
    assert api.format_file(unformatted).changed and not api.format_file(write(tmp_path, "ok.gpu", SPEC)).changed


def test_update_failing_rewrites_the_failing_number_and_counts(tmp_path):
    path = write(tmp_path, "a.gpu", SPEC)
    updated = api.update_failing(api.run_check([str(path)]))
    assert (updated.changed, updated.files, updated.refused, updated.left) == (1, 1, (), 0)
    assert path.read_text(encoding="utf-8") == "device H100-SXM\nx * 2 on 4096² bf16 is ≈ 20 µs\n"
    assert api.run_check([str(path)]).exit_code == 0


def test_update_failing_refuses_a_file_that_changed_since_it_was_checked(tmp_path):
    path = write(tmp_path, "a.gpu", SPEC)
    report = api.run_check([str(path)])
    path.write_text(SPEC + "# edited meanwhile\n", encoding="utf-8")
    updated = api.update_failing(report)
    assert updated.changed == 0 and updated.refused_claims == 1 and "changed since it was checked" in \
        updated.refused[0]
    assert path.read_text(encoding="utf-8").endswith("# edited meanwhile\n")


def test_the_public_names_are_there():
    for name in api.__all__:
        assert getattr(api, name).__doc__ or name.isupper(), name
