"""`gpuspec check --device NAME|auto`: every spec rebound to one catalog device, so that model, calibrated and
measured stand side by side for the GPU at hand; which catalog entry a GPU is, from the name its driver gives it;
and the errors of a --device that names no device (unknown, empty, huge, full of control characters)."""
from __future__ import annotations

import json

import pytest

from gpuspec import devices, harness
from gpuspec.cli import main
from gpuspec.diagnostics import SpecError
from gpuspec.api import compile_text
from gpuspec.text import SpecText

H200 = devices.lookup("H200")
ESCAPES = "\x1b\x07\r\x9b\u202e"


def check(capsys, *argv) -> tuple[int, str, str]:
    code = main(["check", *[str(a) for a in argv]])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, captured.out, captured.err


# --- which catalog entry a GPU is, by its driver's name -----------------------------------------------------------

# Names drivers give these parts (torch.cuda.get_device_name, nvidia-smi), in the spellings seen
IN_THE_CATALOG = {
    "NVIDIA H100 80GB HBM3": "H100-SXM",
    "NVIDIA H100 PCIe": "H100-PCIe",
    "NVIDIA-H100-PCIe": "H100-PCIe",          # as a node label writes it
    "NVIDIA H200": "H200",
    "nvidia h200": "H200",
    "  NVIDIA   H200 ": "H200",
    "NVIDIA A100-SXM4-80GB": "A100-80GB",
    "NVIDIA A100 SXM4 80GB": "A100-80GB",
    "NVIDIA A100-SXM4-40GB": "A100-40GB",
    "NVIDIA B200": "B200",
    "NVIDIA L40S": "L40S",
    "NVIDIA L4": "L4",
    "NVIDIA GeForce RTX 4090": "RTX-4090",
}

# Parts the catalog has no entry for, many of which hold a catalog name inside their own
NOT_IN_THE_CATALOG = [
    "NVIDIA GH200 480GB", "NVIDIA GH200 144G HBM3e", "NVIDIA GH200 120GB",  # Grace Hopper: not an H200
    "NVIDIA H200 NVL",                                 # the PCIe card: other clocks and power than the SXM
    "NVIDIA H100 NVL", "NVIDIA H800", "NVIDIA H800 PCIe", "NVIDIA H20",
    "NVIDIA H100 80GB HBM3 MIG 1g.10gb", "NVIDIA H200 MIG 1g.18gb",  # a slice with a fraction of the SMs
    "NVIDIA A100-PCIE-40GB", "NVIDIA A100 80GB PCIe", "NVIDIA A800-SXM4-80GB", "NVIDIA A10G", "NVIDIA A10",
    "NVIDIA A40", "NVIDIA L40", "NVIDIA L4 Tensor Core",
    "NVIDIA GeForce RTX 4090 D", "NVIDIA GeForce RTX 4090 Laptop GPU", "NVIDIA GeForce RTX 4080",
    "NVIDIA B300 SXM6 AC", "NVIDIA GB200", "NVIDIA B100",
    "Tesla T4", "Tesla V100-SXM2-16GB", "NVIDIA RTX 6000 Ada Generation", "NVIDIA Graphics Device",
    "AMD Instinct MI300X", "NVIDIA", "", "   ", "H", "H100", "H100-SXM", "\x00", "NVIDIA H200\x00",
    "\x1b[31mNVIDIA H200", "NVIDIA H200" + " x" * 200, "NVIDIA H200 " * 50,
]


@pytest.mark.parametrize("gpu, name", IN_THE_CATALOG.items())
def test_a_gpu_the_catalog_holds_is_found_by_its_driver_name(gpu, name):
    assert devices.for_gpu(gpu).name == name


@pytest.mark.parametrize("gpu", NOT_IN_THE_CATALOG)
def test_a_gpu_the_catalog_lacks_is_never_taken_for_one_it_has(gpu):
    assert devices.for_gpu(gpu) is None


def test_every_catalog_driver_name_is_one_part_only():
    owners: dict[str, str] = {}
    for device in devices.catalog().values():
        for cuda in device.cuda_names:
            assert devices.for_gpu(cuda) is device
            assert owners.setdefault(cuda.lower(), device.name) == device.name


# --- the device --device names ---------------------------------------------------------------------------------

@pytest.mark.parametrize("asked", ["H200", "h200", "H200-SXM", "h200-141gb", "NVIDIA H200"])
def test_device_takes_a_catalog_name_an_alias_or_a_driver_name(asked):
    assert devices.rebinding_target(asked) is H200


def _refused(asked: str) -> devices.NoSuchDevice:
    with pytest.raises(devices.NoSuchDevice) as caught:
        devices.rebinding_target(asked)
    return caught.value


def test_an_unknown_device_is_refused_with_the_close_names():
    error = _refused("H20O")
    assert error.message == "--device: unknown device `H20O`" and error.code == "unknown-device"
    assert error.help.startswith("did you mean `H200`?") and "gpuspec devices" in error.help


@pytest.mark.parametrize("asked", ["", " ", "\t\n"])
def test_an_empty_device_is_refused(asked):
    error = _refused(asked)
    assert error.message == "--device needs a device name" and "--device auto" in error.help


def test_a_device_name_with_control_characters_is_shown_escaped():
    error = _refused("\x1b]0;owned\x07H200\r\n::error::x\u202e\x9b")
    assert not any(c in error.message + (error.help or "") for c in ESCAPES)
    assert "\\x1b]0;owned\\x07H200\\r\\n::error::x\\u202e" in error.message


def test_a_huge_device_name_is_cut_in_the_message():
    error = _refused("H" * 1_000_000)
    assert len(error.message) < 200 and "(1,000,000 characters)" in error.message
    assert not error.help.startswith("did you mean")


def test_auto_finds_the_gpu_or_says_why_not():
    assert devices.found_gpu(["NVIDIA H200", "NVIDIA H200"]) is H200
    with pytest.raises(devices.NoSuchDevice) as none:
        devices.found_gpu([])
    assert none.value.code == "no-gpu"
    with pytest.raises(devices.NoSuchDevice) as mixed:
        devices.found_gpu(["NVIDIA H200", "NVIDIA H100 80GB HBM3"])
    assert mixed.value.code == "different-gpus" and "CUDA_VISIBLE_DEVICES" in mixed.value.help
    with pytest.raises(devices.NoSuchDevice) as grace:
        devices.found_gpu(["NVIDIA GH200 480GB"])
    assert grace.value.code == "unknown-gpu"
    assert grace.value.message == "--device auto: the GPU found, `NVIDIA GH200 480GB`, is no catalog device"
    assert "H200 (its driver calls it `NVIDIA H200`)" in grace.value.help and "--device NAME" in grace.value.help
    with pytest.raises(devices.NoSuchDevice) as hostile:
        devices.found_gpu(["\x1b[2J" + "G" * 100_000])
    assert "\x1b" not in hostile.value.message and len(hostile.value.message) < 250


# --- what rebinding does to a spec -----------------------------------------------------------------------------

def program(text: str, device=H200):
    return compile_text(SpecText("r.gpu", text), device=device)


def devices_of(text: str, device=H200) -> list:
    return [workload.device for _, _, workload in program(text, device).workloads]


X = "x = bf16[4096, 4096]\n"


def test_a_catalog_device_statement_becomes_the_device_asked_for():
    (device,) = devices_of("device H100-SXM\n" + X + "y = x * 2\n")
    assert device is H200 and device.hardware == "H200"
    first, second = devices_of("device H100-SXM\n" + X + "y = x * 2\ndevice A100-80GB\nz = x * 3\n")
    assert first is H200 and second is H200


def test_a_catalog_device_with_overrides_keeps_them_on_the_device_asked_for():
    (device,) = devices_of("device H100-SXM with launch_cost = 5 µs\n" + X + "y = x * 2\n")
    assert device.name == "H200" and device.fact("launch_cost").value == pytest.approx(5e-6)
    assert device.fact("hbm_bandwidth").value == pytest.approx(4.8e12) and device.hardware == "H200"


def test_a_derived_device_keeps_its_name_and_overrides_on_the_new_base_and_stands_for_it():
    text = "device mine from A100-80GB with hbm_bandwidth = device.hbm_bandwidth * 0.5, sms = 100\n" + X + \
           "y = x * 2\n"
    (unbound,) = devices_of(text, None)
    assert unbound.hardware == "mine" and unbound.fact("hbm_bandwidth").value == pytest.approx(2.039e12 / 2)
    (device,) = devices_of(text)
    assert device.name == "mine" and device.stands_for == "H200" and device.hardware == "H200"
    assert device.fact("hbm_bandwidth").value == pytest.approx(2.4e12)  # half of the H200's, as written
    assert device.fact("sms").value == 100 and device.fact("memory_size").value == pytest.approx(141e9)


def test_a_device_from_none_is_the_device_asked_for_under_its_own_facts():
    text = "device toy from none with sms = 4, hbm_bandwidth = 1 TB/s\n" + X + "y = x * 2\n"
    (device,) = devices_of(text)
    assert device.name == "toy" and device.hardware == "H200" and device.fact("sms").value == 4
    assert device.fact("hbm_bandwidth").value == pytest.approx(1e12) and device.fact("fp32") is not None


def test_a_rebound_spec_is_still_checked_as_written():
    with pytest.raises(SpecError) as unknown:
        program("device H999\n" + X + "y = x * 2 is ≈ 20 µs\n")
    diagnostic = unknown.value.diagnostics[0]
    assert diagnostic.code == "unknown-device" and diagnostic.span.line == 1
    with pytest.raises(SpecError) as none:
        program(X + "y = x * 2 is ≈ 20 µs\n")
    assert [d.code for d in none.value.diagnostics] == ["no-device"]


def test_a_fact_the_device_asked_for_lacks_is_an_error_at_its_line():
    text = "device H100-SXM\nlink = device.nvlink_bandwidth\n"
    with pytest.raises(SpecError) as missing:
        program(text, devices.lookup("L4"))
    (diagnostic,) = missing.value.diagnostics
    assert diagnostic.code == "missing-fact" and diagnostic.span.line == 2 and "L4" in diagnostic.message


def test_a_rebound_workload_is_keyed_as_on_the_device_asked_for():
    def key(text, device=H200):
        (_, statement, workload), = program(text, device).workloads
        return harness.workload_key(statement, workload)

    assert key("device H100-SXM\n" + X + "y = x * 2\n") == key("device H200\n" + X + "y = x * 2\n", None)
    derived = "device mine from H100-SXM with launch_cost = 5 µs\n" + X + "y = x * 2\n"
    assert key(derived) != key(derived, None)  # mine on the H200 is another workload than mine on the H100
    assert key(derived) != key(derived, devices.lookup("A100-80GB"))


# --- the command line ----------------------------------------------------------------------------------------

SPEC = "device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2 is ≈ 14 µs\n"


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "a.gpu"
    path.write_text(SPEC, encoding="utf-8")
    return path


def test_the_report_says_the_specs_were_rebound_in_every_format(spec, capsys):
    code, out, _ = check(capsys, spec, "--device", "H200")
    assert code == 0
    assert out.splitlines()[-2] == ("every spec rebound to H200 (NVIDIA H200 SXM 141GB) by --device H200: each "
                                    "`device` statement stands for it; a derived device keeps its overrides, "
                                    "applied to H200")
    code, out, _ = check(capsys, spec, "--device", "H200", "--format", "json")
    rebound = json.loads(out)["rebound"]
    assert code == 0 and rebound["device"] == "H200" and rebound["asked"] == "H200" and rebound["gpu"] is None
    assert "rebound to H200" in rebound["line"]
    _, out, _ = check(capsys, spec, "--device", "h200", "--format", "markdown")
    assert "Every spec rebound to H200" in out
    _, out, _ = check(capsys, spec, "--device", "H200", "--format", "github")
    assert "::notice title=gpuspec --device::every spec rebound to H200 (NVIDIA H200 SXM 141GB)" in out
    code, out, _ = check(capsys, spec, "--format", "json")  # not rebound: the H100's 20 µs
    assert code == 1 and json.loads(out)["rebound"] is None
    assert "rebound" not in check(capsys, spec)[1]


def test_a_spec_that_names_no_device_is_checked_for_the_device_asked_for(tmp_path, capsys):
    path = tmp_path / "bare.gpu"
    path.write_text("x = bf16[4096, 4096]\ny = x * 2 is ≈ 14 µs\n", encoding="utf-8")
    assert check(capsys, path)[0] == 2  # no device at all: the located no-device error
    code, out, _ = check(capsys, path, "--device", "H200")  # 67.1 MB / 4.8 TB/s = 14.0 µs
    assert code == 0 and out.splitlines()[-1] == "1 passed, 0 failed"
    assert check(capsys, path, "--device", "H100-SXM")[0] == 1  # 67.1 MB / 3.35 TB/s = 20.0 µs


def test_explain_takes_the_device_as_check_does(spec, tmp_path, capsys):
    assert main(["explain", str(spec), "--device", "H200"]) == 0
    out = capsys.readouterr().out
    assert "[H200," in out and "/ 4.80 TB/s" in out
    bare = tmp_path / "bare.gpu"
    bare.write_text("x = bf16[4096, 4096]\ny = x * 2\n", encoding="utf-8")
    assert main(["explain", str(bare), "--device", "h200"]) == 0
    assert "[H200," in capsys.readouterr().out
    for asked, words in (("auto", "explain measures nothing"), ("H20O", "unknown device `H20O`")):
        assert main(["explain", str(spec), "--device", asked]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and "usage: gpuspec explain" in captured.err and words in captured.err


@pytest.mark.parametrize("asked, code, words", [
    ("H20O", "unknown-device", "--device: unknown device `H20O`"),
    ("", "unknown-device", "--device needs a device name"),
    ("auto", "no-gpu", "--device auto rebinds the specs to the GPU that --measure runs on"),
    ("\x1b[31mH100\x07\u202e", "unknown-device", "--device: unknown device `\\x1b[31mH100\\x07\\u202e`"),
    ("A" * 100_000, "unknown-device", "(100,000 characters)"),
])
def test_a_device_that_names_no_device_is_an_error_and_nothing_is_checked(spec, capsys, asked, code, words):
    status, out, _ = check(capsys, spec, "--device", asked)
    assert status == 2 and f"error[{code}]: " in out and words in out
    assert not any(c in out for c in ESCAPES) and len(out) < 2000
    assert out.splitlines()[-1] == "0 passed, 0 failed"
    status, out, _ = check(capsys, spec, "--device", asked, "--format", "json")
    data = json.loads(out)
    assert status == 2 and data["results"] == [] and [e["code"] for e in data["errors"]] == [code]


def test_update_is_refused_with_device_and_the_spec_is_left_as_it_is(spec, capsys):
    failing = SPEC.replace("≈ 14 µs", "≈ 30 µs")  # fails on the H100 and on the H200
    spec.write_text(failing, encoding="utf-8")
    status, out, err = check(capsys, spec, "--device", "H200", "--update")
    assert status == 2 and out == "" and "--update rewrites claims for the device each spec names" in err
    assert spec.read_text(encoding="utf-8") == failing


def test_auto_without_a_gpu_says_so(spec, capsys):
    status, out, _ = check(capsys, spec, "--device", "auto", "--measure", "--harness-device", "cpu")
    assert status == 2 and "error[no-gpu]: --device auto: no GPU was found" in out and "Triton interpreter" in out
    status, out, _ = check(capsys, spec, "--device", "auto", "--measure", "--harness-device", "cpu", "--fake-timer",
                           "--fake-gpu", "NVIDIA GH200 480GB")
    assert status == 2 and "error[unknown-gpu]: --device auto: the GPU found, `NVIDIA GH200 480GB`" in out


# --- model, calibrated and measured side by side --------------------------------------------------------------

SIDE_BY_SIDE = """\
device H100-SXM
x = bf16[4096, 4096]
y = x * 2 is ≈ 14 µs
device mine from H100-SXM with launch_cost = 5 µs
z = x * 3 is ≈ 14 µs
"""
FAKE_H200 = ("--harness-device", "cpu", "--small", "--fake-timer", "--fake-gpu", "NVIDIA H200")


@pytest.fixture(scope="module")
def measured_on_h200(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rebound")
    spec, profile, saved = folder / "h100.gpu", folder / "profile.json", folder / "results.json"
    spec.write_text(SIDE_BY_SIDE, encoding="utf-8")
    assert main(["calibrate", "--out", str(profile), *FAKE_H200]) == 0
    code = main(["check", str(spec), "--measure", *FAKE_H200, "--device", "auto", "--profile", str(profile),
                 "--save-results", str(saved), "--format", "json", "--output", str(folder / "check.json")])
    return spec, saved, code, (folder / "check.json").read_text(encoding="utf-8")


def _by_source(out: str) -> dict:
    return {(r["line"], r["source"]): r for r in json.loads(out)["results"]}


def test_auto_measures_a_spec_written_for_another_gpu_beside_its_model_and_profile(measured_on_h200):
    _, _, code, out = measured_on_h200
    verdicts = _by_source(out)
    assert json.loads(out)["rebound"] == {
        "device": "H200", "title": "NVIDIA H200 SXM 141GB", "asked": "auto", "gpu": "NVIDIA H200",
        "line": "every spec rebound to H200 (NVIDIA H200 SXM 141GB) by the GPU found (NVIDIA H200): each `device` "
                "statement stands for it; a derived device keeps its overrides, applied to H200"}
    for line in (3, 5):  # the catalog device and the derived one
        model, calibrated, measured = (verdicts[(line, source)] for source in ("model", "calibrated", "measured"))
        assert model["actual"] == pytest.approx(13.98e-6, rel=1e-3)  # the H200's 4.8 TB/s, not the H100's
        assert calibrated["status"] != "skip" and calibrated["actual"] > 0, calibrated["message"]
        assert measured["status"] == "fail" and measured["actual"] == pytest.approx(1e-5), measured["message"]
    assert code == 1


def test_results_of_a_rebound_run_need_the_same_device_to_be_compared(measured_on_h200, capsys):
    spec, saved, _, _ = measured_on_h200
    code, out, _ = check(capsys, spec, "--results", saved, "--device", "H200", "--format", "json")
    assert code == 1 and _by_source(out)[(3, "measured")]["status"] == "fail"
    assert _by_source(out)[(5, "measured")]["status"] == "fail"
    # as written (for the H100) its workloads were not measured; its model claims fail on the H100
    code, out, _ = check(capsys, spec, "--results", saved, "--format", "json")
    verdicts = _by_source(out)
    assert code == 1 and verdicts[(3, "model")]["status"] == "fail"
    for line in (3, 5):
        assert verdicts[(line, "measured")]["message"].startswith("no measurement of this workload")
    # with no model claim failing, measuring nothing is checking nothing: exit 5, and why
    holds = spec.with_name("holds.gpu")
    holds.write_text("device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2 is ≈ 20 µs\n", encoding="utf-8")
    code, out, _ = check(capsys, holds, "--results", saved)
    assert code == 5 and ("nothing measured: every measured claim was skipped (1 claim; the first, "
                          f"{holds}:3: no measurement of this workload") in out
    code, out, _ = check(capsys, holds, "--results", saved, "--device", "H200", "--format", "json")
    assert _by_source(out)[(3, "measured")]["actual"] == pytest.approx(1e-5)  # rebound: the H200's measurement


# --- the H200's catalog entry ------------------------------------------------------------------------------------

def test_the_h200_has_its_pcie_bandwidth_with_its_source_and_its_driver_name(capsys):
    fact = H200.fact("pcie_bandwidth")
    assert fact.value == pytest.approx(128e9)  # Gen5 x16: 64 GB/s each way, both directions as the catalog counts
    assert fact.value == devices.lookup("H100-SXM").fact("pcie_bandwidth").value
    assert "64 GB/s each way" in fact.note
    assert "nvidia.com/en-us/data-center/h200" in devices.references()[fact.reference]
    assert main(["devices", "H200"]) == 0
    out = capsys.readouterr().out
    assert "  its driver calls it: NVIDIA H200\n" in out and "[S-NVH200]" in out
    assert "pcie_bandwidth" not in out.split("not in the catalog:")[-1]
