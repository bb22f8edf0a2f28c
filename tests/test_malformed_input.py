"""No input makes `gpuspec check` print a traceback: every malformed spec gets a clean, located error and exit 2.

Every case below is invalid BY CONSTRUCTION: each family says why its members cannot be valid specs, and no
case is chosen by asking gpuspec (a test that filtered its inputs by the tool's own verdict could never fail).
Mutations start from specs/gpu-execution.gpu and from PRELUDE, both checked to be valid first, so the mutation
alone is what makes a case invalid. Random choices use fixed seeds: the cases are the same on every run.
"""
from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

from gpuspec.cli import main

ROOT = Path(__file__).resolve().parent.parent
REAL_PATH = ROOT / "specs" / "gpu-execution.gpu"
REAL = REAL_PATH.read_text(encoding="utf-8")
REAL_LINES = REAL.split("\n")

# A small valid spec (checked in test_the_bases_of_the_mutations_are_valid); the semantic families add one
# wrong line to it, so that line is the only thing that can be wrong.
PRELUDE = "device H100-SXM\nx = bf16[4096, 4096]\ny = x * 2:\n    62 waves\n"

ERROR_LINE = re.compile(r"^(\S+):(\d+):(\d+): error\[([a-z-]+)\]: (.+)$", re.M)
CARET_LINE = re.compile(r"^    \s*\^+$")
BREAKS_A_LINE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]")
# Characters that no terminal of the grammar accepts (outside quoted sentences and comments).
JUNK = "$@;?!`{"
SEED = 20240611


# --- where a character of the real spec is code (not inside a quoted sentence or a comment) -------------------


def _code_positions(text: str) -> list[bool]:
    """outside[i] is True when inserting a character before text[i] puts it in code, not a string or comment."""
    outside, state = [], "code"
    for char in text:
        outside.append(state == "code")
        if state == "code":
            if char == '"':
                state = '"'
            elif char == "“":
                state = "”"
            elif char == "#":
                state = "comment"
        elif state == "comment":
            if char == "\n":
                state = "code"
        elif char == state:
            state = "code"
    outside.append(state == "code")
    return outside


REAL_CODE = _code_positions(REAL)
_LINE_STARTS = [0]
for _line in REAL_LINES[:-1]:
    _LINE_STARTS.append(_LINE_STARTS[-1] + len(_line) + 1)


def _statement_lines() -> list[int]:
    """Indexes of the real spec's lines that hold a statement or claim (no quotes, comments or blank lines)."""
    found = []
    for index, line in enumerate(REAL_LINES):
        stripped = line.strip()
        if not stripped or stripped[0] in '"#' or '"' in line or "#" in line:
            continue
        if not REAL_CODE[_LINE_STARTS[index]]:  # the line continues a quoted sentence
            continue
        found.append(index)
    return found


STATEMENT_LINES = _statement_lines()


def _open_brackets(text: str) -> int:
    return text.count("(") + text.count("[") - text.count(")") - text.count("]")


# --- the families ---------------------------------------------------------------------------------------------

# A line cut right after one of these can never be complete: each needs something after it on the same
# statement (a claim after `is` or `,`; a value after a comparator, operator, `on`, `±` or `–`; a dimension after
# `[` or `^`; a dtype after a shape; a metric after `.`; a device name after `device`; `= value` after `set NAME`).
_CUTS = re.compile(r"\bis\b|,|<=|>=|≈|≤|≥|~|=|[*/+^(\[]|\bon\b|²(?= bf16)|(?<=[A-Za-z_])\.(?=[A-Za-z_])"
                   r"|^device\b|^set\b|^set \w+")


def truncations() -> list[tuple[str, str]]:
    """Real statement lines cut where they are incomplete; `eof`: the file ends there, `line`: the rest follows."""
    eof, inline = [], []
    for index in STATEMENT_LINES:
        line = REAL_LINES[index]
        body = line.lstrip()
        indent = line[: len(line) - len(body)]
        for match in _CUTS.finditer(body):
            cut = indent + body[: match.end()]
            before = "\n".join(REAL_LINES[:index])
            eof.append(before + ("\n" if before else "") + cut)
            if _open_brackets(cut) == 0:  # an open bracket swallows the line breaks after it
                inline.append("\n".join(REAL_LINES[:index] + [cut] + REAL_LINES[index + 1:]))
    return [("truncate-eof", t) for t in eof] + [("truncate-line", t) for t in inline]


def incomplete_lines() -> list[tuple[str, str]]:
    """Incomplete forms the real spec does not use: after `±`, mid-range `20–`, after `with`, `from`, `:`."""
    lines = [
        "y.time ≈ 20 µs ±", "y.time ≈ 20 µs +/-", "y.time ≈ 20 µs ± 5%, ", "y is ≈ 20 µs ±",
        "y.time ≈ 20–", "y.time ≈ 20..", "y is 20– µs", "y is ≈ 20–",
        "device H100-SXM with", "device H100-SXM with sms =", "device H100-SXM with sms = 132,",
        "device foo from", "device foo from H100-SXM with hbm_bandwidth",
        "x2 = bf16[4096,", "x2 = bf16[", "x2 = bf16[4096, 4096", "x2 = bf16", "x2 =",
        "set tolerance =", "set tolerance = ±", "set sources = model,", "set",
        "z = x * 2 with", "z = x * 2 with 128", "z = x * 2 with 128 threads per", "z = x * 2 on 4096",
        "z = x * 2 on 4096 x", "z = x * 2 on 4096^", "z = x * 2 on 4096² bf16 is",
        "z = x * 2:", "z = x * (2 + 1", "max(y.time,", "y.time ≈ 400+ µs ±",
    ]
    return [("incomplete", PRELUDE + line) for line in lines] + [("incomplete", PRELUDE + line + "\n")
                                                                  for line in lines[::3]]


def corruptions(count: int = 60) -> list[tuple[str, str]]:
    """A character no rule accepts, inserted at a random place in code (never in a quote or a comment)."""
    rng = random.Random(SEED)
    places = [i for i, ok in enumerate(REAL_CODE) if ok]
    found = []
    for _ in range(count):
        place, char = rng.choice(places), rng.choice(JUNK)
        found.append(("corrupt", REAL[:place] + char + REAL[place:]))
    return found


_DOUBLED = re.compile(r"≈|≤|~|=|\bis\b|\bon\b|[*/+]")


def doublings(count: int = 30) -> list[tuple[str, str]]:
    """A comparator, operator, `is` or `on` written twice (`≈ ≈`, `* *`, `is is`): no rule takes two in a row."""
    rng = random.Random(SEED + 1)
    spots = []
    for index in STATEMENT_LINES:
        for match in _DOUBLED.finditer(REAL_LINES[index]):
            spots.append((index, match))
    found = []
    for index, match in rng.sample(spots, min(count, len(spots))):
        line = REAL_LINES[index]
        doubled = line[: match.end()] + " " + match.group() + line[match.end():]
        found.append(("doubled", "\n".join(REAL_LINES[:index] + [doubled] + REAL_LINES[index + 1:])))
    return found


def deletions() -> list[tuple[str, str]]:
    """A token the statement cannot do without, deleted: a block header's `:`, a bracket, the comparator of an
    explicit comparison (`A ≈ B` -> `A B`), `is`, `on`, or a comma between two claims."""
    found = []
    for index in STATEMENT_LINES:
        line = REAL_LINES[index]
        edits = []
        if line.rstrip().endswith(":"):
            edits.append(line.rstrip()[:-1])
        for match in re.finditer(r"[\[\]()]", line):
            edits.append(line[: match.start()] + line[match.end():])
        for match in re.finditer(r"≈|≤|=", line):
            if re.search(r"[A-Za-z0-9_)]\s*$", line[: match.start()]):  # explicit: something on its left
                edits.append(line[: match.start()] + line[match.end():])
        for match in re.finditer(r"\bis\b|\bon\b|, ", line):
            edits.append(line[: match.start()] + " " + line[match.end():])
        for edit in edits:
            found.append(("deleted", "\n".join(REAL_LINES[:index] + [edit] + REAL_LINES[index + 1:])))
    return found


def reindentations() -> list[tuple[str, str]]:
    """One block line indented by 2 (matches no open block) or 8 (a block inside a block, which has no rule)."""
    found = []
    for index in STATEMENT_LINES:
        line = REAL_LINES[index]
        if line.startswith("    ") and not line.startswith("     "):
            for indent in ("  ", "        "):
                edited = indent + line.lstrip()
                found.append(("reindent", "\n".join(REAL_LINES[:index] + [edited] + REAL_LINES[index + 1:])))
    return found


def indentation() -> list[tuple[str, str]]:
    head = "device H100-SXM\nx = bf16[4096, 4096]\n"
    texts = [
        "device H100-SXM\n    device.sms = 132\n",                              # indented claim, no block above
        PRELUDE + "device.sms = 132\n    device.warp_size = 32\n",
        "device H100-SXM\n   \n\t\n    device.sms = 132\n",                   # blank lines, then an indent
        'device H100-SXM\n    "a quoted sentence"\n',
        head + "y = x * 2:\n        62 waves\n    waves = 62.06\n",            # dedent to a level never opened
        head + "y = x * 2:\n\t62 waves\n    waves = 62.06\n",                   # a tab (8) then 4 spaces
        head + "y = x * 2:\n    62 waves\nz = x * 3:\n      62 waves\n   waves = 62.06\n",
        head + "y = x * 2:\n    62 waves\n        waves = 62.06\n",            # a block inside a block
        head + "y = x * 2:\n",                                                   # a header with no block
        head + "y = x * 2:\n\n\n",
        head + "y = x * 2:\nwaves = 62.06\n",
        head + "y = x * 2:\n# only a comment\n",
        head + "y = x * 2 eager\n    62 waves\n",                               # a block without a header
    ]
    return [("indent", t) for t in texts]


def semantic() -> list[tuple[str, str]]:
    """Syntactically fine, meaningless: unknown names, devices, dtypes, units, metrics, settings; mismatched
    dimensions; `±` on `=`; a name defined twice. These must not be reported as syntax errors."""
    alone = [
        "device H10-SXM\n", "device A1000\n", "device B2OO\n", "device H100-SXM with hbm_bandwith = 3 TB/s\n",
        "x = bf16[4096]\nx * 2 is memory-bound\n",                                # a workload with no device
        "device foo from none\ndevice.sms = 1\n",                                 # a blank device has no facts
    ]
    lines = [
        "device foo from H10-SXM\n", "device foo from H100-SXM with sms = 132 / 0\n",
        "device foo from H100-SXM with hbm_bandwidth = 3 TFLOPS\n", "device.smz = 1\n",
        "x2 = bf61[4]\n", "x2 = float33[4096]\n", "w * 2 on 4096² bf61 is memory-bound\n",
        "x2 = bf16[0, 4]\n", "x2 = bf16[4^9]\n", "x2 = bf16[1000000, 1000000, 1000000, 1000000]\n",
        "y.time ≈ 20 qs\n", "y.bytes_read ≈ 67 MQ\n", "y.time ≈ 20 µs ± 2 qs\n", "set tolerance = 5 zz\n",
        "y is 62 bananas\n",
        "y.wavez = 3\n", "y.tmem ≈ 20 µs\n",
        "q.time ≈ 20 µs\n", "w * 2 is memory-bound\n", "nope + 1 µs ≈ 2 µs\n",
        "y.t_mem ≈ 67 MB\n", "y.bytes_read = 3 µs\n", "device.hbm_bandwidth = 3 TFLOPS\n",
        "y.t_mem + y.bytes_read ≈ 1 s\n", "y.time ≈ 20 µs ± 1 B\n", "min(y.time, y.bytes_read) ≈ 1 µs\n",
        "y.waves = 62 ± 5%\n", "y.time < 30 µs ± 1 µs\n", "y.time ≈ 20 µs ± 5\n",
        "x = bf16[4, 4]\n", "y = x * 3 is memory-bound\n",
        "set tolerence = 5%\n", "set threads_per_block = 0\n", "set threads_per_block = 1.5\n",
        "set mode = lazy\n", "set sources = bogus\n", "set mode = eager, fused\n", "set tolerance = fast\n",
        "set sources = 5%\n",
        "3 * 4\n", "y.time ≈ 30–20 µs\n", "y.bound = fast\n", "y.time = memory\n", "y.bound ≈ 3 µs\n",
        "foo(y.time) ≈ 1 µs\n", "sqrt(y.time, y.time) ≈ 1 µs\n", "sqrt(y.time) ≈ 1 µs\n", "y.time ^ 0.5 ≈ 1\n",
        "x2 = bf16[3, 5]\nx + x2 is memory-bound\n", "x * 2 µs is memory-bound\n", "y is 62\n",
        "1 µs is memory-bound\n", "y + 1 µs ≈ 2 µs\n", "x + 1 µs ≈ 2 µs\n", "q = 1 µs\nq.time ≈ 1 µs\n",
        "q = 1 µs on 4096² bf16\n", "q = y.time\nz2 = x * q is memory-bound\n", "z2 = foo(x) is memory-bound\n",
        "z2 = max(x) is memory-bound\n", "z2 = x * device.sms is memory-bound\n",
    ]
    return [("semantic", t) for t in alone] + [("semantic", PRELUDE + t) for t in lines]


def arithmetic() -> list[tuple[str, str]]:
    """Values that do not exist: division by zero, the square root of a negative number, a power too large."""
    lines = ["q = 1 / 0\nq ≈ 1\n", "y.time / 0 µs ≈ 1\n", "q = 10 ^ 400\nq ≈ 1\n", "sqrt(0 - 1) ≈ 1\n",
             "sqrt(-4) ≈ 2\n", "ceil(1e300 * 1e300) ≈ 1\n", "q = 0 - 9\nsqrt(q) ≈ 3\n"]
    return [("arithmetic", PRELUDE + t) for t in lines]


def overflow() -> list[tuple[str, str]]:
    """Numbers written beyond the range of a double (over 1.8e308): they cannot be checked, only become inf."""
    digits = "9" * 5000
    lines = [
        "y.time ≈ 1e999 µs\n", "y.waves = 1e400\n", "set tolerance = 1e999%\n",
        "device foo from H100-SXM with sms = 1e400\n", "q = 1e400 s\nq ≈ 1 s\n",
        f"x2 = bf16[{digits}]\n", f"y.waves = {digits}\n", f"y.waves = 1e{digits}\n", f"x2 = bf16[4^{digits}]\n",
        f"y is {digits} waves\n", "y.waves ≈ 62 ± 1e999%\n", "z2 = x * 1e999 is memory-bound\n",
        "z2 = x * 2 with 1e999 threads per block is memory-bound\n",
        f"z2 = x * 2 with {digits} threads per block is memory-bound\n",
    ]
    return [("overflow", PRELUDE + t) for t in lines]


def binary() -> list[bytes]:
    """Bytes that are not UTF-8 (0xC0, 0xC1, 0xF5-0xFF never occur in UTF-8; a lead byte needs its continuation
    bytes) or that hold a NUL byte: not a text file."""
    rng = random.Random(SEED + 2)
    raw = REAL.encode("utf-8")
    found = []
    for size in (1, 2, 16, 100, 1000, 4096, 65536):
        junk = bytearray(rng.randbytes(size))
        junk[rng.randrange(size)] = 0xFF
        found.append(bytes(junk))
    found += [b"\0", b"\0" * 1000, b"device H100-SXM\0\n", REAL.replace("\n", "\n\0", 1).encode(),
              raw[:len(raw) // 2] + b"\0" + raw[len(raw) // 2:],
              raw.replace(b"# --- 2.", b"# --- \0 2."),                             # a NUL inside a comment
              raw.replace(b'"Warp: 32', b'"Warp: \x0032'),                          # a NUL inside a quote
              REAL.encode("utf-16"), REAL.encode("utf-16-be"), REAL.encode("utf-32"),
              REAL.encode("latin-1", errors="replace"), REAL.encode("cp1252", errors="replace"),
              b"device H100-SXM\n\xc0\xaf\n", b"device H100-SXM\n\xed\xa0\x80\n",     # overlong, a surrogate
              b"\x89PNG\r\n\x1a\n" + rng.randbytes(64), b"\x1f\x8b\x08\x00" + rng.randbytes(64),
              b"\x7fELF\x02\x01\x01\x00" + rng.randbytes(64)]
    for _ in range(8):                                                                 # one byte replaced
        place = rng.randrange(len(raw))
        found.append(raw[:place] + bytes([rng.choice((0xC0, 0xC1, 0xF8, 0xFE, 0xFF))]) + raw[place + 1:])
    leads = [i for i, b in enumerate(raw) if b >= 0xC0]
    for place in rng.sample(leads, 6):                                                 # cut inside a character
        found.append(raw[:place + 1])
    for case in found:  # the construction, checked with Python's codec (not with gpuspec)
        try:
            assert "\0" in case.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return found


def byte_order_marks() -> list[tuple[str, str]]:
    """A byte-order mark is dropped only at the very start; after it, junk or an incomplete line."""
    texts = ["\ufeff$$", "\ufeffdevice", "\ufeffset tolerance =\n", "\ufeffdevice H100-SXM\nx = bf16[4096,",
             "\ufeff\ufeffdevice H100-SXM\n", "device H100-SXM\n\ufeffx = bf16[4]\n",
             "\ufeffdevice H100-SXM\n    62 waves\n", "\ufeff\n\n   $\n", "\ufeff# a comment\n\ufeff",
             "\ufeff" + REAL.replace("y.t_mem ≈ 20 µs", "y.t_mem ≈")]
    return [("bom", t) for t in texts]


def long_lines() -> list[tuple[str, str]]:
    rng = random.Random(SEED + 3)
    junk = "".join(rng.choice(JUNK + "}|&'\\") for _ in range(10_000))
    return [("long", t) for t in [
        junk, junk + "\n" + REAL, REAL + "\n" + junk + "\n", PRELUDE + "    " + junk + "\n",
        PRELUDE + "y2 = x*2" + "+1" * 5000 + "+\n",                                  # 10,000 characters, unfinished
        PRELUDE + "y2 = x*2" + "+1" * 5000 + "+bogus is memory-bound\n",             # finished, one unknown name
        PRELUDE + "1 µs" + " + 1 µs" * 2000 + " + bogus ≈ 1 µs\n",
        PRELUDE + "(" * 5000 + "\n",                                                 # never closed
        PRELUDE + "(" * 5000 + "bogus" + ")" * 5000 + " ≈ 1 µs\n",
        PRELUDE + "- " * 5000 + "bogus ≈ 1 µs\n",
        PRELUDE + "x2 = bf16" + "[" * 5000 + "\n",
        PRELUDE + '"' + "a" * 10_000 + "\n",                                         # a quote never closed
        PRELUDE + "q" * 10_000 + ".time ≈ 1 µs\n", PRELUDE + "y.time ≈ 20 " + "q" * 10_000 + "\n",
        "device " + "H" * 10_000 + "\n", PRELUDE + "y is " + "62 waves, " * 1000 + "\n",
        PRELUDE + "y.time ≈ 20 µs" + " " * 10_000 + "$\n",
        REAL * 50,                                                                   # every name defined 50 times
    ]]


def odd_unicode() -> list[tuple[str, str]]:
    """Characters no terminal accepts, where a keyword, number, operator or separator should be."""
    texts = [
        "dev\u200fice H100-SXM\n",                        # a right-to-left mark inside a keyword
        PRELUDE + "y.waves = \u0301\n",                    # a lone combining accent for a number
        PRELUDE + "y.waves = 6\u03012\n",
        "device\u00a0H100-SXM\n",                          # a no-break space between tokens
        "device H100-SXM\u2028x = bf16[4]\n", "device H100-SXM\u2029\n",   # line and paragraph separators
        PRELUDE + "\u0443.time ≈ 20 µs\n",                 # a Cyrillic у for y
        PRELUDE + "ｙ.time ≈ 20 µs\n",                     # a fullwidth y
        PRELUDE + "y.time ≈ 20 µs\u037e\n",                # a Greek question mark
        PRELUDE + "“an unclosed quote\n",
        PRELUDE + "z2 = x \u2212 1 is memory-bound\n",     # a minus sign, not a hyphen
        PRELUDE + "z2 = x * 2 on 4096\u2074 bf16 is memory-bound\n",  # superscript four
        PRELUDE + "y.time ≈ 20 µs \U0001f680\n",
        "\x1b[31mdevice H100-SXM\x1b[0m\n",                # terminal colour codes
        PRELUDE + "y.time\u200b≈ 20 µs\n",                 # a zero-width space
        "device H100-SXM\rx = bf16[4]\r@\r",                # old Mac line ends are line breaks: `@` is at 3:1
        PRELUDE + "y.waves = 6\u00b72\n", PRELUDE + "y.time ≈ 20 µs\u00ad\n",
        PRELUDE + "y.time ≈ 20 \U0001d6cds\n", PRELUDE + "\ufffd\n",
    ]
    return [("unicode", t) for t in texts]


def _build() -> list[tuple[str, bytes]]:
    named: list[tuple[str, bytes]] = []
    text_cases = (truncations() + incomplete_lines() + corruptions() + doublings() + deletions() + reindentations()
                  + indentation() + semantic() + arithmetic() + overflow() + byte_order_marks() + long_lines()
                  + odd_unicode())
    seen: set[bytes] = set()
    counts: dict[str, int] = {}
    for family, content in [(f, t.encode("utf-8")) for f, t in text_cases] + [("binary", b) for b in binary()]:
        if content in seen:
            continue
        seen.add(content)
        counts[family] = counts.get(family, 0) + 1
        named.append((f"{family}-{counts[family]:03d}", content))
    return named


CASES = _build()
CASE_IDS = [name for name, _ in CASES]
BY_ID = dict(CASES)


# --- running gpuspec ------------------------------------------------------------------------------------------


def _check(path: Path, capsys, *extra: str) -> tuple[int, str, str]:
    try:
        code = main(["check", str(path), *extra])
    except SystemExit as stop:  # argparse or a stray sys.exit
        code = stop.code
    except BaseException:  # a traceback would have reached the user
        captured = capsys.readouterr()
        pytest.fail("gpuspec raised instead of reporting an error:\n" + traceback.format_exc()[-3000:]
                    + "\n--- stdout ---\n" + captured.out[-2000:], pytrace=False)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _assert_clean(code, out: str, err: str, path: Path) -> list[re.Match]:
    assert "Traceback" not in out + err, (out + err)[-3000:]
    assert code == 2, f"exit code {code}, not 2; output:\n{out[-2000:]}"
    errors = list(ERROR_LINE.finditer(out))
    assert errors, f"no `path:LINE:COL: error[CODE]: message` line in:\n{out[-2000:]}"
    for match in errors:
        assert match.group(1) == str(path)
        assert int(match.group(2)) >= 1 and int(match.group(3)) >= 1
        # One error, one line: a raw CR, line separator or escape code from the input would break it on a terminal.
        assert not BREAKS_A_LINE.search(match.group(0)), f"the error line holds a raw control character: " \
                                                            f"{match.group(0)!a}"
    # The first error shows its line and a caret under the place.
    lines = out.split("\n")
    at = lines.index(errors[0].group(0))
    assert len(lines) > at + 2 and lines[at + 1].startswith("    ") and CARET_LINE.match(lines[at + 2]), \
        "the error is not followed by its line and a caret:\n" + "\n".join(lines[at:at + 4])[:2000]
    return errors


@pytest.mark.parametrize("name", CASE_IDS)
def test_malformed_input_gives_a_clean_error_and_exit_2(name, tmp_path, capsys):
    path = tmp_path / "case.gpu"
    path.write_bytes(BY_ID[name])
    code, out, err = _check(path, capsys)
    errors = _assert_clean(code, out, err, path)
    if name.startswith("semantic-"):
        assert all(e.group(4) != "syntax" for e in errors), out[-2000:]
    if CASE_IDS.index(name) % 4 == 0:  # a sample also through the JSON report
        code, out, err = _check(path, capsys, "--format", "json")
        assert code == 2 and "Traceback" not in out + err
        report = json.loads(out)
        assert report["errors"] and report["summary"]["errors"] == len(report["errors"])
        for error in report["errors"]:
            assert error["file"] == str(path)
            assert isinstance(error["line"], int) and error["line"] >= 1
            assert isinstance(error["column"], int) and error["column"] >= 1
            assert re.fullmatch(r"[a-z-]+", error["code"]) and error["message"]


SUBPROCESS_CASES = ["binary-001", "bom-001", "long-008", "truncate-eof-001", "overflow-001"]


@pytest.mark.parametrize("name", SUBPROCESS_CASES)
def test_a_real_process_prints_no_traceback(name, tmp_path):
    path = tmp_path / "case.gpu"
    path.write_bytes(BY_ID[name])
    done = subprocess.run([sys.executable, "-m", "gpuspec", "check", str(path)], cwd=ROOT, capture_output=True,
                          text=True, encoding="utf-8", errors="replace", timeout=120)
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, done.stderr[-3000:]
    assert done.returncode == 2, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert ERROR_LINE.search(done.stdout), done.stdout[-2000:]


def test_there_are_at_least_200_distinct_cases_from_every_family():
    assert len(CASES) >= 200
    assert len(set(CASE_IDS)) == len(CASES) and len({c for _, c in CASES}) == len(CASES)
    families = {name.rsplit("-", 1)[0] for name in CASE_IDS}
    assert {"truncate-eof", "truncate-line", "corrupt", "semantic", "binary", "bom", "long", "unicode",
            "indent"} <= families
    assert set(SUBPROCESS_CASES) <= set(CASE_IDS)


def test_the_bases_of_the_mutations_are_valid(tmp_path, capsys):
    for text in (REAL, PRELUDE):
        path = tmp_path / "base.gpu"
        path.write_text(text, encoding="utf-8")
        code, out, err = _check(path, capsys)
        assert code == 0 and "error[" not in out, out[-2000:]


@pytest.mark.parametrize("content", [b"", b"\xef\xbb\xbf", b"\n\n", b"# only a comment\n", b"\xef\xbb\xbf\n"],
                         ids=["empty", "bom-only", "blank-lines", "comment-only", "bom-newline"])
def test_a_spec_without_claims_is_valid(content, tmp_path, capsys):
    path = tmp_path / "empty.gpu"
    path.write_bytes(content)
    code, out, err = _check(path, capsys)  # valid, but it checks nothing: exit 5, not 0 and not an error
    assert code == 5 and "Traceback" not in out + err and "error[" not in out
    assert f"nothing checked: no claims in {path}" in out and out.splitlines()[-1] == "0 passed, 0 failed"
    code, out, err = _check(path, capsys, "--format", "json")
    report = json.loads(out)
    assert code == 5 and report["errors"] == [] and report["results"] == []
