"""`gpuspec devices A B ...`: devices side by side, a row per fact and a column per device, every value's source a
numbered footnote; an unknown name is an error that says which name it was and the close ones."""
from __future__ import annotations

import re

from gpuspec import devices
from gpuspec.cli import EXIT_INVALID, EXIT_OK, main


def run(capsys, *names: str) -> tuple[int, str, str]:
    code = main(["devices", *names])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def row(out: str, name: str) -> list[str]:
    (line,) = [line for line in out.splitlines() if line.split(" ", 1)[0] == name]
    return re.split(r"\s{2,}", line.strip())


def test_two_devices_side_by_side_with_sources_as_footnotes(capsys):
    code, out, err = run(capsys, "H100-SXM", "A100-80GB")
    assert (code, err) == (EXIT_OK, "")
    assert out.splitlines()[0].split() == ["H100-SXM", "A100-80GB"]
    h100, a100 = devices.lookup("H100-SXM"), devices.lookup("A100-80GB")
    footnotes = dict(re.findall(r"^  \[(\d+)\] (\S+): ", out, re.MULTILINE))
    for fact in ("sms", "hbm_bandwidth", "tensor_bf16"):
        name, left, right = row(out, fact)
        for shown, device in ((left, h100), (right, a100)):
            value, number = re.fullmatch(r"(.+) \[(\d+)\]", shown).groups()
            assert value == device.fact(fact).written
            assert footnotes[number] == device.fact(fact).reference
    name, left, right = row(out, "tensor_fp8")  # a fact one device lacks
    assert left.startswith(h100.fact("tensor_fp8").written + " [") and right == "—"
    assert out.endswith("\n") and not out.endswith("\n\n")


def test_footnotes_are_numbered_in_order_of_first_use_without_repeats(capsys):
    _, out, _ = run(capsys, "H100-SXM", "A100-80GB", "L4")
    body, sources = out.split("\nsources:\n")
    used = list(dict.fromkeys(int(n) for n in re.findall(r"\[(\d+)\]", body)))
    listed = [int(n) for n in re.findall(r"^  \[(\d+)\]", sources, re.MULTILINE)]
    assert used == listed == list(range(1, len(listed) + 1))


def test_an_alias_and_its_device_make_one_column(capsys):
    _, out, _ = run(capsys, "H100", "H100-SXM", "A100-80GB")
    assert out.splitlines()[0].split() == ["H100-SXM", "A100-80GB"]


def test_unknown_names_are_each_located_with_close_matches_and_nothing_printed(capsys):
    code, out, err = run(capsys, "H100-SXM", "A100-80", "L\x1b[2J4")
    assert code == EXIT_INVALID and out == ""
    assert "unknown device `A100-80` (name 2 of 3)" in err and "`A100-80GB`" in err
    assert "unknown device `L\\x1b[2J4` (name 3 of 3)" in err and "\x1b" not in err


def test_one_name_still_shows_the_detail(capsys):
    code, out, _ = run(capsys, "A100-80GB")
    assert code == EXIT_OK and out.startswith("A100-80GB: ") and "references:" in out
