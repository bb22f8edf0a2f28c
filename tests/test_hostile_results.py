"""Results files, harness reports and calibration profiles read from disk (another machine's, a pull request's):
every key is checked where it enters. Each hostile file (keys dropped, wrong types, NaN and Infinity, negative,
zero and huge numbers, percentiles out of order, a GPU busy longer than the stream took, deep nesting, keys given
twice, non-UTF-8 bytes, a folder, a FIFO or /dev/zero in its place, a file too large) ends in an error naming the
file and the key with what would be right, or in the verdict the same numbers deserve: never a traceback, never
a pass they do not earn. Saving can never write what loading refuses.
"""
from __future__ import annotations

import copy
import html
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuspec import harness, measure, profiles, results, schema, timing
from gpuspec.api import Sources, compile_text, run_check
from gpuspec.cli import main
from gpuspec.measure import Options
from gpuspec.profiles import ProfileError
from gpuspec.results import Measurement, ResultsError
from gpuspec.text import SpecText

ROOT = Path(__file__).resolve().parent.parent
H100 = "NVIDIA H100 80GB HBM3"
ESCAPE = "\x1b"

KERNEL_SPEC = "device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2 is ≤ 25 µs\n"
STREAM_SPEC = """\
device H100-SXM with launch_cost = 5 µs
x = bf16[4096, 4096]
y = x * 2
big = 1000 launches of y:
    busy_share ≈ 100%
    idle_share < 1%
"""
BUSY, IDLE = 5, 6  # the stream claims' lines
STREAM_TIME = 20e-3  # what the stream of 1000 launches of a 20 µs kernel takes


def summary_of(seconds: float, spread: float = 0.01) -> dict:
    """A timing summary as a harness writes it, of samples around `seconds`."""
    samples = [seconds * (1 + spread * (i - 4) / 4) for i in range(9)]
    return {**timing.summarize(samples).to_dict(), "stopped_by": "noise"}


# --- a valid results file and profile, as gpuspec writes them ------------------------------------------------

@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("hostile")
    (path / "kernel.gpu").write_text(KERNEL_SPEC, encoding="utf-8")
    (path / "stream.gpu").write_text(STREAM_SPEC, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def valid(folder) -> dict:
    """A results file: the kernel spec measured by its harness (fake timer, fake H100), and a run of the stream spec
    with the summaries a harness writes (its 1000 launches are too slow for the interpreter)."""
    saved = folder / "measured.json"
    fake = Options(device="cpu", small=True, fake_timer=True, fake_gpu=H100)
    report = run_check([str(folder / "kernel.gpu")], Sources(measure=fake, save_results=str(saved)))
    assert not report.diagnostics and {v.status for v in report.verdicts} == {"pass"}
    data = json.loads(saved.read_text(encoding="utf-8"))
    program = compile_text(SpecText(str(folder / "stream.gpu"), STREAM_SPEC))
    span, statement, stream = next(w for w in program.workloads if w[2].kind == "stream")
    data["runs"].append({"spec": str(folder / "stream.gpu"), "provenance": dict(data["runs"][0]["provenance"]),
                         "measurements": [{"key": harness.workload_key(statement, stream), "line": span.line,
                                           "statement": statement, "status": "ok", "reason": None,
                                           "metrics": {"time": summary_of(STREAM_TIME),
                                                       "busy_time": summary_of(STREAM_TIME * 0.998)}}]})
    return data


@pytest.fixture(scope="module")
def profile(folder) -> dict:
    """A profile as `gpuspec calibrate` writes it (fake timer, fake H100): facts, provenance, samples, ladder."""
    path = folder / "profile.json"
    assert main(["calibrate", "--out", str(path), "--harness-device", "cpu", "--small", "--fake-timer",
                 "--fake-gpu", H100]) == 0
    return json.loads(path.read_text(encoding="utf-8"))


def fields(m: Measurement) -> tuple:
    return (m.key, m.spec, m.line, m.statement, m.status, m.reason, m.metrics, m.provenance)


def write(path: Path, data) -> Path:
    """`data` as JSON; a float NaN or infinity is written as the bare constant Python's json allows."""
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def changed(data: dict, change) -> dict:
    data = copy.deepcopy(data)
    change(data)
    return data


def kernel(data: dict) -> dict:
    return data["runs"][0]["measurements"][0]


def stream(data: dict) -> dict:
    return data["runs"][1]["measurements"][0]


def specs(folder: Path) -> list[str]:
    return [str(folder / "kernel.gpu"), str(folder / "stream.gpu")]


def check_json(folder: Path, *options: str) -> tuple[int, dict]:
    """`gpuspec check` of both specs in a subprocess: its exit code and JSON report; never a traceback."""
    done = subprocess.run([sys.executable, "-m", "gpuspec", "check", *specs(folder), "--format", "json", *options],
                          capture_output=True, text=True, encoding="utf-8", timeout=120, cwd=ROOT)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr[-3000:]
    return done.returncode, json.loads(done.stdout)


def measured(report: dict) -> dict[int, dict]:
    return {r["line"]: r for r in report["results"] if r["source"] == "measured"}


def refusal(call, error: type[Exception]) -> str:
    """The message of the error `call()` raises: one short line."""
    with pytest.raises(error) as raised:
        call()
    message = str(raised.value)
    assert "\n" not in message and ESCAPE not in message and len(message) < 1_000, message[:2_000]
    return message


def test_the_valid_results_file_gives_measured_verdicts_that_pass(folder, valid):
    """The base of every case below: untouched, the file loads and each measured claim passes on its numbers."""
    path = write(folder / "valid.json", valid)
    assert [m.metrics for m in results.read_results(path)] == [kernel(valid)["metrics"], stream(valid)["metrics"]]
    code, report = check_json(folder, "--results", str(path))
    assert code == 0 and not report["errors"]
    verdicts = measured(report)
    assert {line: v["status"] for line, v in verdicts.items()} == {3: "pass", BUSY: "pass", IDLE: "pass"}
    assert verdicts[BUSY]["actual"] == pytest.approx(0.998) and verdicts[3]["actual"] == pytest.approx(1e-5)


# --- what was reproduced on main, through every command that reads results ------------------------------------

def _median(value):
    return lambda d: kernel(d)["metrics"]["time"].__setitem__("median", value)


def _stream_medians(time, busy):
    """The stream's medians set as given (the rest of each summary as it was)."""
    def change(d):
        stream(d)["metrics"]["time"]["median"] = time
        stream(d)["metrics"]["busy_time"]["median"] = busy
    return change


def _stream_times(time: float, busy: float):
    """The stream timed anew: whole summaries around these medians."""
    def change(d):
        stream(d)["metrics"].update(time=summary_of(time), busy_time=summary_of(busy))
    return change


TIME = "runs[0].measurements[0].metrics.time"
STREAM = "runs[1].measurements[0].metrics"
# (name, change, the key the error names, what it says would be right)
REPRODUCED = [
    ("p10-missing", lambda d: kernel(d)["metrics"]["time"].pop("p10"), f"{TIME}.p10",
     "is missing; it must be a finite number of seconds"),
    ("p10-text", lambda d: kernel(d)["metrics"]["time"].__setitem__("p10", "fast"), f"{TIME}.p10",
     'is "fast"; it must be a finite number of seconds'),
    ("median-zero", _median(0), f"{TIME}.median", "is 0; it must be a finite number of seconds from 1e-12"),
    ("median-nan", _median(float("nan")), f"{TIME}.median", "is NaN; it must be a finite number"),
    ("median-infinity", _median(float("inf")), f"{TIME}.median", "is Infinity; it must be a finite number"),
    ("median-negative", _median(-1e-5), f"{TIME}.median", "is -1e-05; it must be a finite number"),
    ("gpu-not-text", lambda d: d["runs"][0]["provenance"].__setitem__("gpu", 5), "runs[0].provenance.gpu",
     "is 5; it must be a GPU's name of at most 200 characters, or null"),
    ("metrics-a-list", lambda d: kernel(d).__setitem__("metrics", [kernel(d)["metrics"]["time"]]),
     "runs[0].measurements[0].metrics", "is a list; it must be an object of at most 64 metrics"),
    ("stream-nan", _stream_medians(float("nan"), float("nan")), f"{STREAM}.time.median", "is NaN"),
    ("stream-infinity", _stream_medians(float("inf"), float("inf")), f"{STREAM}.time.median", "is Infinity"),
    ("stream-negative", _stream_medians(-STREAM_TIME, -STREAM_TIME), f"{STREAM}.time.median", "is -0.02"),
    ("busy-longer-than-time", _stream_times(STREAM_TIME, 2 * STREAM_TIME), f"{STREAM}.busy_time.median",
     "is more than 5% above `runs[1].measurements[0].metrics.time.median` (0.02 s): the GPU cannot be busy"),
    ("p10-above-median", lambda d: kernel(d)["metrics"]["time"].__setitem__("p10", 2e-5), f"{TIME}.p10",
     f"(2e-05 s) is above `{TIME}.median` (1e-05 s); a timing summary has minimum ≤ p10 ≤ median ≤ p90"),
    ("median-above-p90", lambda d: stream(d)["metrics"]["busy_time"].__setitem__("p90", 1e-3),
     f"{STREAM}.busy_time.median", f"is above `{STREAM}.busy_time.p90` (0.001 s)"),
]
DEEP = 100_000


REPRODUCED.append(("nested-100000-deep", None, None, "nests lists or objects too deeply to be a results file"))
# One of each kind for the commands that draw (slower): a key missing, a wrong type, a NaN, two keys that
# contradict each other, nesting.
DRAWN = ("p10-missing", "metrics-a-list", "stream-nan", "busy-longer-than-time", "nested-100000-deep")


def reproduce(name: str, valid: dict, folder: Path) -> tuple[Path, str, str | None]:
    """A results file with one of the problems reproduced on main; the words its error must hold and the key."""
    _, change, key, right = next(r for r in REPRODUCED if r[0] == name)
    path = folder / f"{name}.json"
    if change is None:
        path.write_text('{"version": 1, "runs": [' + "[" * DEEP + "]" * DEEP + "]}", encoding="utf-8")
    else:
        write(path, changed(valid, change))
    return path, right, key


@pytest.fixture(params=[r[0] for r in REPRODUCED])
def reproduced(request, valid, tmp_path) -> tuple[Path, str, str | None]:
    return reproduce(request.param, valid, tmp_path)


def test_each_reproduced_problem_is_refused_by_load_naming_the_file_and_the_key(reproduced):
    path, right, key = reproduced
    message = refusal(lambda: results.read_results(path), ResultsError)
    assert message.startswith(str(path)) and right in message, message
    if key is not None:
        assert message.startswith(f"{path}: `{key}` "), message


def test_each_reproduced_problem_is_refused_by_check_in_a_subprocess_and_no_measured_claim_passes(folder,
                                                                                                 reproduced):
    path, right, _ = reproduced
    code, report = check_json(folder, "--results", str(path))
    assert code == 2
    (error,) = report["errors"]
    assert error["code"] == "bad-results" and error["file"] == str(path) and right in error["message"]
    assert {v["status"] for v in measured(report).values()} == {"skip"}


@pytest.mark.parametrize("command", ["report", "plot"])
@pytest.mark.parametrize("name", DRAWN)
def test_each_kind_of_reproduced_problem_is_refused_by_report_and_plot(folder, valid, tmp_path, capsys, command,
                                                                     name):
    """The report shows the error among its errors; a picture has nowhere to show it, so none is drawn."""
    path, right, _ = reproduce(name, valid, tmp_path)
    if command == "report":
        argv = ["report", *specs(folder), "--results", str(path), "--out", str(tmp_path / "r.html")]
    else:
        argv = ["plot", "roofline", str(folder / "kernel.gpu"), "--results", str(path), "--out",
                str(tmp_path / "r.svg")]
    assert main(argv) == 2
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    if command == "report":
        assert html.escape(right) in (tmp_path / "r.html").read_text(encoding="utf-8")
    else:
        assert right in out.err and not (tmp_path / "r.svg").exists()


@pytest.mark.parametrize("command", ["report", "plot"])
def test_report_and_plot_in_a_subprocess_refuse_non_finite_medians(folder, valid, tmp_path, command):
    path = write(tmp_path / "nan.json", changed(valid, _stream_medians(float("nan"), float("nan"))))
    argv = ["report", *specs(folder), "--out", str(tmp_path / "r.html")] if command == "report" else \
        ["plot", "roofline", str(folder / "kernel.gpu"), "--out", str(tmp_path / "r.png")]
    done = subprocess.run([sys.executable, "-m", "gpuspec", *argv, "--results", str(path)], capture_output=True,
                          text=True, encoding="utf-8", timeout=120, cwd=ROOT)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    shown = (tmp_path / "r.html").read_text(encoding="utf-8") if command == "report" else done.stderr
    assert f"`{STREAM}.time.median` is NaN" in shown


def test_a_gpu_busy_within_timing_noise_of_the_whole_is_a_full_share_and_a_half_busy_one_fails(folder, valid,
                                                                                              tmp_path):
    """Consistent numbers still get their verdicts: busy 3% above the whole (two clocks) is 100% busy; busy for
    half the time fails the claim of ≈ 100%."""
    noisy = write(tmp_path / "noisy.json", changed(valid, _stream_times(STREAM_TIME, STREAM_TIME * 1.03)))
    code, report = check_json(folder, "--results", str(noisy))
    assert code == 0 and measured(report)[BUSY]["actual"] == 1.0 and measured(report)[IDLE]["actual"] == 0.0
    half = write(tmp_path / "half.json", changed(valid, _stream_times(STREAM_TIME, STREAM_TIME / 2)))
    code, report = check_json(folder, "--results", str(half))
    assert code == 1 and not report["errors"]
    assert (measured(report)[BUSY]["status"], measured(report)[IDLE]["status"]) == ("fail", "fail")
    assert measured(report)[BUSY]["actual"] == pytest.approx(0.5)


# --- every key of the valid file, dropped or replaced -----------------------------------------------------------

def leaves(data, where: str = "") -> list[tuple[str, tuple]]:
    """(JSON path, path as keys) of every key and item of `data`."""
    found = []
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else []
    for key, value in items:
        path = schema.index(where, key) if isinstance(key, int) else schema.member(where, key)
        found.append((path, (key,)))
        found += [(deeper, (key, *keys)) for deeper, keys in leaves(value, path)]
    return found


def replaced(data, keys: tuple, value=None, drop: bool = False):
    data = copy.deepcopy(data)
    parent = data
    for key in keys[:-1]:
        parent = parent[key]
    if drop:
        del parent[keys[-1]]
    else:
        parent[keys[-1]] = value
    return data


NOT_RESULTS = "is not a gpuspec results file of version 1"
# Keys a measurement may leave out (a stream measured without its whole time is the test after next); in a run's
# provenance any key may be left out.
OPTIONAL = {"reason", "mean", "minimum", "maximum", "total", "relative_spread", "stopped_by", "busy_time",
            # what a harness records beside a summary for people to read: how it was taken, what ran
            "warmup_calls", "dropped", "wall_seconds", "method", "clock_source", "kernels", "clock_mhz", "backend"}


def owner(keys: tuple) -> str:
    """The path of the measurement (or else the run) that holds the key at `keys`."""
    if len(keys) >= 4 and keys[2] == "measurements":
        return f"runs[{keys[1]}].measurements[{keys[3]}]"
    return f"runs[{keys[1]}]" if len(keys) >= 2 else ""


def loaded_as_written(found: list[Measurement], path: Path) -> None:
    """What load gave back is what the file says, key for key."""
    data = json.loads(path.read_text(encoding="utf-8"))
    written = [(m["key"], r["spec"], m["line"], m["statement"], m["status"], m.get("reason"),
                m.get("metrics", {}) if m["status"] == "ok" else {}, r["provenance"])
               for r in data["runs"] for m in r["measurements"]]
    assert [fields(m) for m in found] == written


def test_dropping_any_required_key_is_refused_naming_it_and_dropping_an_optional_one_is_read_as_written(
        valid, tmp_path):
    path = tmp_path / "dropped.json"
    for where, keys in leaves(valid):
        write(path, replaced(valid, keys, drop=True))
        name = keys[-1]
        if where in ("version", "runs"):
            assert refusal(lambda: results.read_results(path), ResultsError) == f"{path} {NOT_RESULTS}"
        elif isinstance(name, int) or name in OPTIONAL or ".provenance." in where or where.startswith("runs[1]") \
                and where.endswith(".metrics.time"):
            loaded_as_written(results.read_results(path), path)
        elif where.endswith((".metrics", ".metrics.time")):  # an ok measurement with no timings
            prefix = where.removesuffix(".time")
            assert refusal(lambda: results.read_results(path), ResultsError) == (
                f'{path}: `{prefix}` is missing or empty; a measurement with status "ok" has at least one timed '
                "metric"), where
        else:
            message = refusal(lambda: results.read_results(path), ResultsError)
            assert message.startswith(f"{path}: `{where}` is missing; it must be "), (where, message)


def test_a_stream_measured_without_its_whole_time_skips_its_shares_with_the_reason(folder, valid, tmp_path):
    path = write(tmp_path / "busy-only.json", changed(valid, lambda d: stream(d)["metrics"].pop("time")))
    code, report = check_json(folder, "--results", str(path))
    assert code == 0 and {measured(report)[line]["status"] for line in (BUSY, IDLE)} == {"skip"}
    assert "`busy_share` is not measured (measured: busy_time)" in measured(report)[BUSY]["message"]


NON_FINITE = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1" + "0" * 500]
OTHER = ["-1", "0", "1e300", "true", "null", '"text"', "[]", "{}", "[" * 40 + "]" * 40, "3.5"]
MARK = '"@@hostile@@"'
# What a rule says when a value is right on its own but contradicts another key of its measurement.
RULES = (" is above `", "% above `", "is missing or empty; a measurement")


@pytest.mark.parametrize("raw", NON_FINITE + OTHER)
def test_any_key_replaced_by_a_hostile_value_is_refused_naming_it_or_read_as_written(valid, tmp_path, raw):
    """Every key of the file in turn, replaced by the same written value. A number that is not finite is refused
    wherever it stands, naming that key. Anything else is refused naming the key (or a key inside it), or the
    key of the same measurement it contradicts; or it is read exactly as written."""
    path = tmp_path / "hostile.json"
    for where, keys in leaves(valid):
        path.write_text(json.dumps(replaced(valid, keys, "@@hostile@@")).replace(MARK, raw), encoding="utf-8")
        try:
            found = results.read_results(path)
        except ResultsError as error:
            message = str(error)
            assert len(message) < 1_000 and "\n" not in message, (where, message)
            if message == f"{path} {NOT_RESULTS}":
                assert where in ("version", "runs"), where
                continue
            assert message.startswith(f"{path}: `"), (where, message)
            named = message.split("`")[1]
            if raw in NON_FINITE:
                assert named == where and f"` is {raw[:20]}" in message, (where, message)
            elif not named.startswith(where):
                assert named.startswith(owner(keys)) and any(rule in message for rule in RULES), (where, message)
            else:
                assert "; it must be " in message or any(rule in message for rule in RULES), (where, message)
            continue
        assert raw not in NON_FINITE, f"{where} = {raw} was accepted"
        loaded_as_written(found, path)


def test_a_results_file_with_keys_given_twice_is_refused(folder, valid, tmp_path):
    text = json.dumps(valid).replace('"gpu": "NVIDIA H100 80GB HBM3"',
                                     '"gpu": "NVIDIA A100-SXM4-80GB", "gpu": "NVIDIA H100 80GB HBM3"', 1)
    path = tmp_path / "twice.json"
    path.write_text(text, encoding="utf-8")
    message = refusal(lambda: results.read_results(path), ResultsError)
    assert message == (f'{path}: `runs[0].provenance` gives the key "gpu" more than once; JSON keeps the last, a '
                       "reader sees the first: give each key once")


def test_unknown_keys_are_read_past_but_held_to_finite_numbers_and_a_depth(folder, valid, tmp_path):
    extra = write(tmp_path / "extra.json", changed(valid, lambda d: kernel(d).update(
        clocks_before={"sm": "1980", "temperature": 40}, note=["a", 1, None])))
    assert [m.key for m in results.read_results(extra)] == [kernel(valid)["key"], stream(valid)["key"]]
    nested = json.loads("[" * 18 + "]" * 18)
    deep = write(tmp_path / "deep.json", changed(valid, lambda d: kernel(d).update(note=nested)))
    assert f"`runs[0].measurements[0].note{'[0]' * 16}` nests deeper than 16 levels" \
        in refusal(lambda: results.read_results(deep), ResultsError)
    odd = write(tmp_path / "odd.json", changed(valid, lambda d: kernel(d)["metrics"].update(
        {"\x1b[2Jtime": kernel(d)["metrics"]["time"]})))
    message = refusal(lambda: results.read_results(odd), ResultsError)
    assert '`runs[0].measurements[0].metrics["\\u001b[2Jtime"]` is not a name gpuspec writes' in message


# --- text from the file: shown escaped, never a flood ------------------------------------------------------------

@pytest.mark.parametrize("where", ["gpu", "reason", "key", "statement", "spec"])
def test_text_of_ten_megabytes_is_refused_in_a_short_message(folder, valid, tmp_path, where):
    flood = "\x1b[31m" + "A" * 10_000_000
    if where == "gpu":
        data = changed(valid, lambda d: d["runs"][0]["provenance"].__setitem__("gpu", flood))
    elif where == "spec":
        data = changed(valid, lambda d: d["runs"][0].__setitem__("spec", flood))
    else:
        data = changed(valid, lambda d: kernel(d).__setitem__(where, flood))
    path = write(tmp_path / "flood.json", data)
    code, report = check_json(folder, "--results", str(path))
    (error,) = report["errors"]
    assert code == 2 and len(error["message"]) < 500 and "(10,000,005 characters)" in error["message"]
    assert error["message"].count("A") < 100 and ESCAPE not in error["message"]


def test_a_gpu_name_and_reason_with_control_characters_are_shown_escaped(folder, valid, tmp_path):
    hostile = "\x1b]0;owned\x07\r\n::error file=x::forged\u202e\x9b31m"

    def change(d):
        d["runs"][0]["provenance"]["gpu"] = "NVIDIA H100 " + hostile
        kernel(d).update(status="error", reason="out of memory " + hostile, metrics={})
    path = write(tmp_path / "escapes.json", changed(valid, change))
    done = subprocess.run([sys.executable, "-m", "gpuspec", "check", str(folder / "kernel.gpu"), "--results",
                           str(path), "-v"], capture_output=True, text=True, encoding="utf-8", timeout=120, cwd=ROOT)
    assert done.returncode == 5 and "Traceback" not in done.stderr  # its one measurement failed: nothing measured
    assert "nothing measured: every measured claim was skipped" in done.stdout
    assert "out of memory \\x1b]0;owned\\x07\\r\\n::error file=x::forged" in done.stdout
    assert not any(c in done.stdout for c in "\x1b\x07\r\u202e\x9b")
    assert not any(line.startswith("::error") for line in done.stdout.splitlines())


def test_a_long_harness_reason_is_cut_when_read_and_the_cut_one_saves_and_loads(tmp_path):
    report = {"version": 1, "provenance": {"gpu": H100},
              "workloads": [{"key": "k", "line": 3, "statement": "y = x * 2", "status": "error",
                             "reason": "CompilationError: " + "x" * 100_000}]}
    (found,) = results.from_report(report, "a.gpu")
    assert len(found.reason) == schema.REASON_LONGEST and found.reason.endswith("(cut from 100,018 characters)")
    results.save(tmp_path / "r.json", [found])
    assert [fields(m) for m in results.read_results(tmp_path / "r.json")] == [fields(found)]


# --- the file itself: not UTF-8, empty, not a file, too large ------------------------------------------------

def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _large(path: Path) -> None:
    with open(path, "wb") as out:  # sparse: no disk, and gpuspec stops reading past the limit
        out.truncate(65 << 20)


FILES = [  # (name, how to make it, what the error says)
    ("not-utf8", lambda p: p.write_bytes(b'{"version": 1, "runs": [{"spec": "\xff\xfe"}]}'),
     "is not UTF-8 text (line 1, column 35: byte 0xff)"),
    ("utf16", lambda p: p.write_text('{"version": 1, "runs": []}', encoding="utf-16"),
     "is not UTF-8 text (line 1, column 1: byte 0xff)"),
    ("empty", lambda p: p.write_bytes(b""), "is empty; a results file holds a JSON object"),
    ("blank", lambda p: p.write_bytes(b" \n\t\r\n"), "is empty; a results file holds a JSON object"),
    ("nul-bytes", lambda p: p.write_bytes(b"\0" * 100), "is not JSON (line 1, column 1)"),
    ("folder", lambda p: p.mkdir(), "it is a folder; a results file is a file"),
    ("fifo", _fifo, "it is a FIFO, not a regular file"),
    ("dev-zero", _zero, "it is a character device, not a regular file"),
    ("65-MiB", _large, "is larger than 64 MiB, more than a results file holds; it was not read"),
    ("dangling-link", lambda p: p.symlink_to(p.parent / "nowhere"), "cannot read"),
]


@pytest.mark.parametrize("name, make, words", FILES, ids=[f[0] for f in FILES])
def test_a_results_file_that_is_not_a_readable_json_file_is_refused_without_waiting(folder, tmp_path, name, make,
                                                                                   words):
    path = tmp_path / "results.json"
    make(path)
    message = refusal(lambda: results.read_results(path), ResultsError)
    assert str(path) in message and words in message, message
    code, report = check_json(folder, "--results", str(path))  # the subprocess's timeout catches a blocked read
    assert code == 2 and words in report["errors"][0]["message"]


def test_a_byte_order_mark_is_read_past(folder, valid, tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(valid).encode("utf-8"))
    code, report = check_json(folder, "--results", str(path))
    assert code == 0 and {v["status"] for v in measured(report).values()} == {"pass"}


# --- profiles ------------------------------------------------------------------------------------------------

def test_the_valid_profile_loads_with_its_facts(folder, profile):
    path = write(folder / "valid-profile.json", profile)
    loaded = profiles.read_profile(path)
    assert loaded.facts == profile["facts"] and profile["samples"] and profile["sweeps"]
    assert loaded.unmeasured == profile["unmeasured"] and loaded.derivations == profile["derivations"]


@pytest.mark.parametrize("raw, words", [
    ("Infinity", "is Infinity; it must be a finite number of"), ("NaN", "is NaN; it must be"),
    ("-Infinity", "is -Infinity"), ("1e999", "is 1e999"), ("-1", "is -1"), ("1e300", "is 1e+300"),
    ('"fast"', 'is "fast"'), ("true", "is true"), ("null", "is null"), ("{}", "is an object"),
])
def test_every_fact_a_profile_may_hold_refuses_what_no_device_measures(folder, profile, tmp_path, raw, words):
    """Every fact gpuspec knows, measured by calibrate or not (a collective's, a decode's, a published one's)."""
    path = tmp_path / "profile.json"
    for fact in schema.FACTS:
        hostile = replaced(profile, ("facts", fact), "@@hostile@@")
        hostile["unmeasured"].pop(fact, None)
        path.write_text(json.dumps(hostile).replace(MARK, raw), encoding="utf-8")
        message = refusal(lambda: profiles.read_profile(path), ProfileError)
        assert message.startswith(f"{path}: `facts.{fact}` {words}"), message


@pytest.mark.parametrize("fact, value, words", [
    ("attention_share_flash2", 1e3, "a share of the tiled attention rate from 0.01 to 10"),
    ("attention_tile_overhead_cudnn", 1e5, "key blocks from 0 to 1000"),
    ("l2_usable", 1e12, "bytes from 1 to 1e+10"),
    ("exp_rate", 1e20, "exponentials per second from 1 to 1e+19"),
    ("kernel_gap", 11.0, "seconds from 1e-12 to 10"),
    ("nvls_bandwidth", 0.5, "bytes per second from 1 to 1e+16"),
])
def test_a_fact_far_outside_what_any_device_measures_is_refused_at_its_key(profile, tmp_path, fact, value, words):
    hostile = replaced(profile, ("facts", fact), value)
    hostile["unmeasured"].pop(fact, None)
    path = write(tmp_path / "profile.json", hostile)
    message = refusal(lambda: profiles.read_profile(path), ProfileError)
    assert message.startswith(f"{path}: `facts.{fact}` is ") and words in message, message


@pytest.mark.parametrize("raw, words", [
    ("Infinity", "is Infinity; it must be a finite number of"), ("NaN", "is NaN; it must be"),
    ("-Infinity", "is -Infinity"), ("1e999", "is 1e999"), ("0", "is 0; it must be"), ("-1", "is -1"),
    ("1e300", "is 1e+300"), ('"fast"', 'is "fast"'), ("true", "is true"), ("null", "is null"), ("[]", "is a list"),
    ("1" + "0" * 500, "is 10000000000000000000… (501 characters)"),
])
def test_every_fact_of_a_profile_refuses_what_no_device_measures(folder, profile, tmp_path, raw, words):
    path = tmp_path / "profile.json"
    for fact in profile["facts"]:
        text = json.dumps(replaced(profile, ("facts", fact), "@@hostile@@")).replace(MARK, raw)
        path.write_text(text, encoding="utf-8")
        message = refusal(lambda: profiles.read_profile(path), ProfileError)
        assert message.startswith(f"{path}: `facts.{fact}` {words}"), message


def test_a_profile_with_an_infinite_bandwidth_is_refused_by_check_in_a_subprocess(folder, profile, tmp_path):
    path = tmp_path / "infinite.json"
    path.write_text(json.dumps(profile).replace(str(profile["facts"]["hbm_bandwidth"]), "Infinity", 1),
                    encoding="utf-8")
    code, report = check_json(folder, "--profile", str(path))
    assert code == 2 and report["errors"][0]["code"] == "bad-profile"
    assert report["errors"][0]["message"] == (f"{path}: `facts.hbm_bandwidth` is Infinity; it must be a finite "
                                              "number of bytes per second from 1 to 1e+16")
    assert {r["source"] for r in report["results"]} == {"model"}


@pytest.mark.parametrize("change, words", [
    (lambda p: p["facts"].__setitem__("sms", 132), "`facts.sms` is not a measured ceiling gpuspec knows"),
    (lambda p: p.__setitem__("gpu", ["H100"]), "`gpu` is a list; it must be a GPU's name"),
    (lambda p: p.__setitem__("provenance", "H100"), '`provenance` is "H100"; it must be an object'),
    (lambda p: p.__setitem__("facts", []), "is not a gpuspec profile of version 1"),
    (lambda p: p.__setitem__("version", True), "`version` is true; it must be 1"),
    (lambda p: p["samples"]["copy"].__setitem__("relative_spread", float("inf")),
     "`samples.copy.relative_spread` is Infinity; it must be JSON of finite numbers"),
    (lambda p: p["sweeps"].__setitem__("extra", json.loads("[" * 18 + "]" * 18)), "nests deeper than 16"),
    (lambda p: p["unmeasured"].__setitem__("sms", "why"), "`unmeasured.sms` is not a measured ceiling gpuspec knows"),
    (lambda p: p["unmeasured"].__setitem__("hbm_bandwidth", "why"),
     "`unmeasured.hbm_bandwidth` names a fact the profile also measures"),
    (lambda p: p["unmeasured"].__setitem__("cpp_launch_cost", 5), "`unmeasured.cpp_launch_cost` is 5; it must be a "
                                                                  "reason"),
    (lambda p: p["unmeasured"].__setitem__("cpp_launch_cost", "x" * 1_001), "a reason of at most 1,000 characters"),
    (lambda p: p["sweeps"]["gemm"][0].__setitem__("seconds", float("nan")), "`sweeps.gemm[0].seconds` is NaN"),
    (lambda p: p["sweeps"]["gemm"][0].__setitem__("k", 0), "`sweeps.gemm[0].k` is 0; it must be a whole number"),
    (lambda p: p["sweeps"]["gemm"][0].__setitem__("dtype", "fp8"), '`sweeps.gemm[0].dtype` is "fp8"'),
    (lambda p: p["sweeps"]["attention"][0].__setitem__("causal", "yes"),
     '`sweeps.attention[0].causal` is "yes"; it must be true or false'),
    (lambda p: p["sweeps"]["attention"][0].__setitem__("seconds", -1e-5), "`sweeps.attention[0].seconds` is -1e-05"),
    (lambda p: p["sweeps"]["l2_read"][0].__setitem__("bandwidth", float("inf")),
     "`sweeps.l2_read[0].bandwidth` is Infinity"),
    (lambda p: p["sweeps"].__setitem__("gemm", {"m": 1}), "`sweeps.gemm` is an object; it must be a list"),
    (lambda p: p.__setitem__("observations", {"sustained_clock": {"value": 1e300}}),
     "`observations.sustained_clock.value` is 1e+300; it must be a finite number of hertz"),
    (lambda p: p.__setitem__("unmeasured", ["tensor_fp8"]), "`unmeasured` is a list; it must be an object"),
], ids=["unknown-fact", "gpu-a-list", "provenance-text", "facts-a-list", "version-true", "sample-infinite",
        "sweeps-deep", "unmeasured-unknown", "unmeasured-and-measured", "unmeasured-number", "unmeasured-long",
        "gemm-nan", "gemm-zero", "gemm-dtype", "attention-causal", "attention-negative", "l2-infinite",
        "gemm-object", "clock-huge", "unmeasured-list"])
def test_a_profile_with_a_malformed_part_is_refused_naming_it(profile, tmp_path, change, words):
    path = write(tmp_path / "profile.json", changed(profile, change))
    assert words in refusal(lambda: profiles.read_profile(path), ProfileError)


@pytest.mark.parametrize("name, make, words", [
    *[f for f in FILES if f[0] not in ("65-MiB",)],
    ("2-MiB", lambda p: p.write_bytes(b" " * (2 << 20)), "is larger than 1 MiB, more than a profile holds"),
    ("nested-100000-deep", lambda p: p.write_text("[" * DEEP + "]" * DEEP, encoding="utf-8"),
     "nests lists or objects too deeply to be a profile"),
], ids=lambda v: v if isinstance(v, str) and " " not in v else None)
def test_a_profile_that_is_not_a_readable_json_file_is_refused(tmp_path, name, make, words):
    path = tmp_path / "profile.json"
    make(path)
    message = refusal(lambda: profiles.read_profile(path), ProfileError)
    assert str(path) in message and words.replace("a results file", "a profile") in message, message


# --- a harness or calibration run that went wrong ----------------------------------------------------------------

FAKE_PYTHON = """#!{python}
import os, sys
if sys.argv[1] == "-c":  # the probe for torch and triton
    print(1)
    sys.exit(0)
with open(sys.argv[sys.argv.index("--output") + 1], "w", encoding="utf-8") as out:
    out.write(os.environ["HOSTILE_REPORT"])
"""


@pytest.fixture
def fake_python(tmp_path, monkeypatch):
    """A Python that writes the report in $HOSTILE_REPORT where a harness or the calibration writes its own."""
    path = tmp_path / "python"
    path.write_text(FAKE_PYTHON.format(python=sys.executable), encoding="utf-8")
    path.chmod(0o755)
    monkeypatch.setattr(measure, "_PROBES", {})

    def report(text: str) -> Options:
        monkeypatch.setenv("HOSTILE_REPORT", text)
        return Options(device="cpu", python=str(path), timeout=60)
    return report


def harness_report(folder: Path, median: str) -> str:
    program = compile_text(SpecText(str(folder / "kernel.gpu"), KERNEL_SPEC))
    (plan,), _ = harness.plans(program)
    workload = {"key": plan["raw"]["key"], "line": 3, "statement": plan["raw"]["statement"], "status": "ok",
                "metrics": {"time": {**summary_of(1e-5), "median": "@@median@@"}}}
    text = json.dumps({"version": 1, "provenance": {"gpu": H100, "device": "cuda"}, "workloads": [workload]})
    return text.replace('"@@median@@"', median)


@pytest.mark.parametrize("median", ["NaN", "Infinity", "-Infinity", "1e999", "0", "-1e-05"])
def test_a_harness_report_with_a_broken_median_fails_that_workload_with_the_reason(folder, fake_python, median):
    options = fake_python(harness_report(folder, median))
    report = run_check([str(folder / "kernel.gpu")], Sources(measure=options))
    verdict = next(v for v in report.verdicts if v.source == "measured")
    assert verdict.status == "skip" and verdict.actual is None
    assert verdict.reason.startswith("the harness failed: the harness printed a report gpuspec cannot read: in the "
                                     f"report, `workloads[0].metrics.time.median` is {median}; it must be a "
                                     "finite number of seconds"), verdict.reason


def test_the_same_harness_report_with_a_finite_median_is_measured(folder, fake_python):
    """The fake harness itself works: with a real number the claim is measured (and passes)."""
    report = run_check([str(folder / "kernel.gpu")], Sources(measure=fake_python(harness_report(folder, "1e-05"))))
    verdict = next(v for v in report.verdicts if v.source == "measured")
    assert verdict.status == "pass" and verdict.actual.number == 1e-5


def test_from_report_refuses_python_floats_that_are_not_finite():
    summary = {"median": float("nan"), "p10": 1e-5, "p90": 1e-5, "samples": 3}
    report = {"version": 1, "provenance": {"gpu": H100}, "workloads": [
        {"key": "k", "line": 3, "statement": "s", "status": "ok", "metrics": {"time": summary}}]}
    assert refusal(lambda: results.from_report(report, "a.gpu"), ResultsError) == (
        "in the report, `workloads[0].metrics.time.median` is NaN; it must be a finite number of seconds from "
        "1e-12 to 86400")


@pytest.mark.parametrize("text, words", [
    ('{"version": 1, "provenance": {"gpu": "H100"}, "facts": {"hbm_bandwidth": Infinity}}',
     "`facts.hbm_bandwidth` is Infinity; it must be a finite number of bytes per second"),
    ('{"version": 1, "provenance": {"gpu": "H100"}, "facts": {"launch_cost": 0}}', "`facts.launch_cost` is 0"),
    ('{"version": 1, "provenance": {"gpu": "H100"}, "facts": {}, "samples": {"copy": {"median": NaN}}}',
     "`samples.copy.median` is NaN"),
    ('{"version": 1, "provenance": {"gpu": "H100"}, "facts": {"hbm_bandwidth": 3e12', "is not JSON"),
])
def test_a_calibration_report_gpuspec_cannot_use_is_refused_and_no_profile_is_written(fake_python, tmp_path,
                                                                                      capsys, text, words):
    options = fake_python(text)
    out = tmp_path / "profile.json"
    message = refusal(lambda: measure.calibrate(str(out), options), RuntimeError)
    assert message.startswith("calibration wrote a report gpuspec cannot use: ") and words in message, message
    assert not out.exists()


# --- saving never writes what loading refuses --------------------------------------------------------------------

ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=30)  # control characters and lone surrogates too
NAMES = st.sampled_from(["time", "busy_time", "step_time", "gpu_time", "kernel_2"])
SUMMARIES = st.lists(st.floats(1e-9, 100.0), min_size=1, max_size=12).map(
    lambda times: {**timing.summarize(times).to_dict(), "stopped_by": "noise"})
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False,
                    allow_infinity=False), ANY_TEXT)
PROVENANCES = st.builds(lambda gpu, rest: {**rest, "gpu": gpu},
                        st.one_of(st.none(), st.text(max_size=200)),
                        st.dictionaries(ANY_TEXT.filter(lambda k: k not in ("gpu", "device")), SCALARS, max_size=5))


@st.composite
def measurements(draw, summaries=SUMMARIES, reasons=st.one_of(st.none(), ANY_TEXT), provenances=PROVENANCES):
    status = draw(st.sampled_from(schema.STATUSES))
    metrics = draw(st.dictionaries(NAMES, summaries, min_size=1, max_size=3)) if status == "ok" else {}
    return Measurement(draw(ANY_TEXT.filter(bool)), draw(ANY_TEXT), draw(st.integers(0, 10**9)), draw(ANY_TEXT),
                       status, draw(reasons), metrics, draw(provenances))


def parts_agree(m: Measurement) -> bool:
    return all(not (part in m.metrics and whole in m.metrics)
               or m.metrics[part]["median"] <= m.metrics[whole]["median"] * (1 + schema.PART_SLACK)
               for part, whole, _ in schema.PARTS)


def saved_and_loaded(written: list[Measurement], error: type[Exception], save, load):
    """What load gives back for what save wrote; None if save refused, having written nothing."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "saved.json"
        try:
            save(path, written)
        except error:
            assert not path.exists()
            return None
        return load(path)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(measurements(), max_size=5))
def test_valid_measurements_save_and_load_back_the_same(written):
    loaded = saved_and_loaded(written, ResultsError, results.save, results.read_results)
    if not all(parts_agree(m) for m in written):  # a GPU busy for longer than the whole: refused, never written
        assert loaded is None
        return
    assert loaded is not None
    key = lambda m: (json.dumps(m.provenance, sort_keys=True), m.spec)  # noqa: E731  (runs group them)
    expected = sorted(written, key=lambda m: [key(n) for n in written].index(key(m)))
    assert [fields(m) for m in loaded] == [fields(m) for m in expected]


HOSTILE_NUMBERS = st.sampled_from([float("nan"), float("inf"), -float("inf"), -1.0, 0.0, 1e300, 10**400, True,
                                   "1e-5", None, [], {}])
HOSTILE_SUMMARIES = st.one_of(SUMMARIES, st.builds(lambda s, k, v: {**s, k: v}, SUMMARIES,
                                                   st.sampled_from(["median", "p10", "p90", "samples", "mean"]),
                                                   HOSTILE_NUMBERS))
HOSTILE_PROVENANCES = st.one_of(PROVENANCES, st.dictionaries(st.sampled_from(["gpu", "device", "clock"]),
                                                             st.one_of(HOSTILE_NUMBERS, st.text(max_size=300))))


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(measurements(HOSTILE_SUMMARIES, st.one_of(st.none(), st.text(max_size=3_000)), HOSTILE_PROVENANCES),
                min_size=1, max_size=3))
def test_saving_hostile_measurements_refuses_them_or_writes_what_loads(written):
    loaded = saved_and_loaded(written, ResultsError, results.save, results.read_results)
    if loaded is not None:
        assert sorted(m.key for m in loaded) == sorted(m.key for m in written)
        for m in loaded:
            assert m.reason is None or len(m.reason) <= schema.REASON_LONGEST


FACT_VALUES = st.one_of(st.floats(1e-9, 1.0), st.floats(1.0, 1e15), HOSTILE_NUMBERS)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.dictionaries(st.sampled_from(profiles.FACTS), FACT_VALUES), HOSTILE_PROVENANCES,
       st.one_of(st.just({}), st.dictionaries(ANY_TEXT, st.one_of(SUMMARIES, HOSTILE_NUMBERS), max_size=3)))
def test_a_calibration_report_saves_only_as_a_profile_that_loads_back_alike(facts, provenance, samples):
    report = {"version": 1, "provenance": provenance, "facts": facts, "samples": samples}
    loaded = saved_and_loaded(report, ProfileError, profiles.save, profiles.read_profile)
    if loaded is None:
        return
    assert loaded.facts == {name: float(value) for name, value in facts.items()}
    assert loaded.gpu == (provenance.get("gpu") or "")
    assert all(schema.FACTS[name].low <= value <= schema.FACTS[name].high for name, value in loaded.facts.items())


def test_saving_refuses_a_measurement_load_would_refuse_and_leaves_the_old_file(tmp_path):
    path = tmp_path / "r.json"
    good = Measurement("k", "a.gpu", 3, "y", "ok", None, {"time": summary_of(1e-5)}, {"gpu": H100})
    results.save(path, [good])
    before = path.read_bytes()
    bad = Measurement("k", "a.gpu", 3, "y", "ok", None, {"time": {**summary_of(1e-5), "median": float("nan")}},
                      {"gpu": H100})
    assert refusal(lambda: results.save(path, [bad]), ResultsError) == (
        f"cannot save {path}: `runs[0].measurements[0].metrics.time.median` is NaN; it must be a finite number of "
        "seconds from 1e-12 to 86400")
    assert path.read_bytes() == before
