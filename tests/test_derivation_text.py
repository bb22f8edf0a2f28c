"""Every metric's derivation, for every workload kind and mode, reads as written by hand: no doubled words, no
`1 launches`, no `1.45 k/s`, no code details, no step said twice, and the numbers substituted into a formula are the
formula's (each operand a number, in its place) and give the result shown. Arithmetic claims over metrics, named
values and device facts are rendered too, and so is what a verdict says of each value."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuspec import api
from gpuspec.text import SpecText

ROOT = Path(__file__).resolve().parent.parent

# One workload per kind and mode the bundled specs do not already cover (a stream under a CUDA graph, eager
# elementwise with its own launch cost); the bundled specs cover the rest. Then arithmetic claims of every shape
# over metrics, named values and device facts (the bundled specs' and README's are rendered too).
EXTRA = """\
device H100-SXM
x = fp32[4096, 4096]
y = x * 2 + 1 eager:
    time > 0 s
z = x * 2 + 1 fused:
    time > 0 s
    t_mem / t_math > 1
g = 10000 launches of z as a CUDA graph:
    time > 0 s
one = 1 launches of z:
    time > 0 s
a = 3
b = 2
a / b ≈ 9
y.bytes_read * 2 / device.hbm_bandwidth ≈ 1 s
w = y.time
w ≈ 1 s
w ≈ 1 µs
weights = 8.03e9 * 2 B
weights / device.hbm_bandwidth ≈ 4.8 ms
(y.bytes_read + y.bytes_written) / device.hbm_bandwidth > 0 s
y.bytes_read / (device.hbm_bandwidth * 2) > 0 s
y.bytes_read - (y.bytes_written - y.bytes_read) > 0 B
-(y.time + y.time) < 0 s
(y.time + z.time) * 2 / (a + b) > 0 s
max(y.time, z.time) / min(y.time, z.time) > 1
device.memory_size / device.register_file_per_sm ≈ 300,000×
1 / device.launch_cost ≈ 278,000 launches/s
y.time * 1e9 > 1 s
"""


def _explanations():
    found = []
    for path in sorted((ROOT / "specs").glob("*.gpu")):
        found.extend(api.explain(path))
    found.extend(api.explain_program(api.compile_text(SpecText("kinds.gpu", EXTRA))))
    return found


def _verdicts():
    """Every verdict of the bundled specs, README's claims and EXTRA's: each claim's value as check derives it."""
    bundled = api.run_check([str(path) for path in sorted((ROOT / "specs").glob("*.gpu"))] + [str(ROOT / "README.md")])
    extra = api.check_text(EXTRA, "kinds.gpu")
    assert not bundled.diagnostics and not extra.diagnostics, (bundled.diagnostics, extra.diagnostics)
    return [*bundled.verdicts, *extra.verdicts]


VERDICTS = _verdicts()


def _values() -> list:
    """Every value the explanations and verdicts hold, and every value it was derived from, each once."""
    values: list = []
    seen: set[int] = set()

    def walk(value) -> None:
        if id(value) in seen:
            return
        seen.add(id(value))
        values.append(value)
        for child in value.inputs:
            walk(child)

    for item in _explanations():
        for value in item.values:
            walk(value)
    for verdict in VERDICTS:
        if verdict.actual is not None:
            walk(verdict.actual)
    return values


VALUES = _values()
LINES = [value.derivation() for value in VALUES]
DERIVED = [value.derivation() for value in VALUES if value.rule is not None]  # not a number as written
MESSAGES = [verdict.message for verdict in VERDICTS]


def test_every_kind_is_rendered():
    text = "\n".join(LINES)
    for telling in ("the queue:", "Σ over", "max(", "ring", "score", "tokens_per_s", "graph_node_cost",
                    "wire", "kernels"):
        assert telling in text, telling


def _lines_matching(pattern: str) -> list[str]:
    return [line for line in [*LINES, *MESSAGES] if re.search(pattern, line)]


def test_no_doubled_words():
    doubled = _lines_matching(r"(?<![\w.])([A-Za-z]{2,}) \1\b")
    assert not doubled, "\n".join(doubled)


def test_one_of_a_thing_is_singular():
    slips = _lines_matching(r"(?<![\d.,])1 (?!FLOPs\b)[a-z]+(?<!s)s\b")
    assert not slips, "\n".join(slips)


def test_rates_of_counted_things_read_naturally():
    odd = _lines_matching(r"\d [kMG]/s\b|\d [kMG]s\b")
    assert not odd, "\n".join(odd)


def test_no_code_details_in_user_text():
    leaks = _lines_matching(r"docstring|\.py\b|self\.|\be\[|def |lambda")
    assert not leaks, "\n".join(leaks)


_PREFIX = {"p": 1e-12, "n": 1e-9, "µ": 1e-6, "m": 1e-3, "": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
           "P": 1e15, "E": 1e18}
_QUANTITY = re.compile(r"(\d[\d,]*(?:\.\d+)?(?:e-?\d+)?)(?: ?([pnµmkMGTPE]?)(FLOP/s|FLOP/B|FLOP|B/s|B|s|/s|W|Hz)"
                       r"|(%)| (million|billion) /s| (days|h|min))?(?![\w/])")
_WORDS = {"million": 1e6, "billion": 1e9, "days": 86_400.0, "h": 3_600.0, "min": 60.0}


def arithmetic(text: str) -> tuple[float, int, float] | None:
    """`67.1 MB / 3.35 TB/s` in SI numbers, how many operators it has, and its largest number; None unless it is
    plain arithmetic."""
    operators = len(re.findall(r" [×*/+\-] ", text))
    largest = 0.0
    python = []
    position = 0
    for match in _QUANTITY.finditer(text):
        between = text[position:match.start()]
        if re.search(r"[^ ×/+\-()]", between):
            return None
        python.append(between.replace("×", "*"))
        number = float(match[1].replace(",", ""))
        if match[4]:
            number /= 100
        elif match[5] or match[6]:
            number *= _WORDS[match[5] or match[6]]
        elif match[3] is not None:
            number *= _PREFIX[match[2] or ""]
        python.append(repr(number))
        largest = max(largest, abs(number))
        position = match.end()
    if re.search(r"[^ ×/+\-()]", text[position:]) or not python:
        return None
    python.append(text[position:].replace("×", "*"))
    try:
        return _Arithmetic("".join(python)).value(), operators, largest
    except (ValueError, ZeroDivisionError):
        return None


class _Arithmetic:
    """Numbers, + - * / and parentheses, by precedence: the only text this test reads as a calculation."""

    def __init__(self, text: str):
        self.tokens = re.findall(r"\d+(?:\.\d*)?(?:e[+\-]?\d+)?|[+\-*/()]|\S", text)
        self.at = 0

    def value(self) -> float:
        result = self._sum()
        if self.at != len(self.tokens):
            raise ValueError("left over")
        return result

    def _next(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _sum(self) -> float:
        result = self._product()
        while self._next() in ("+", "-"):
            operator = self.tokens[self.at]
            self.at += 1
            term = self._product()
            result = result + term if operator == "+" else result - term
        return result

    def _product(self) -> float:
        result = self._atom()
        while self._next() in ("*", "/"):
            operator = self.tokens[self.at]
            self.at += 1
            factor = self._atom()
            result = result * factor if operator == "*" else result / factor
        return result

    def _atom(self) -> float:
        token = self._next()
        if token is None:
            raise ValueError("ends early")
        self.at += 1
        if token == "(":
            result = self._sum()
            if self._next() != ")":
                raise ValueError("unclosed")
            self.at += 1
            return result
        if token == "-":
            return -self._atom()
        return float(token)


def test_arithmetic_helper_reads_si_numbers():
    assert arithmetic("67.1 MB / 3.35 TB/s")[0] == pytest.approx(20.03e-6, rel=1e-3)
    assert arithmetic("10,000 × 2.50 µs")[:2] == (pytest.approx(25e-3), 1)
    assert arithmetic("(1 + 2) × 3")[0] == 9 and arithmetic("1 + 2 × 3")[0] == 7
    assert arithmetic("8 - 2 - 1")[0] == 5 and arithmetic("8 / 2 / 2")[0] == 2
    assert arithmetic("52.3%")[0] == pytest.approx(0.523)
    assert arithmetic("1.34 million /s")[0] == pytest.approx(1.34e6)
    assert arithmetic("2 days / 1 h")[0] == pytest.approx(48)
    assert arithmetic("max(1 s, 2 s)") is None
    assert arithmetic("the queue: 1 launch") is None


def _steps(line: str) -> list[str]:
    line = re.sub(r" \([^()]*(?:\([^()]*\)[^()]*)*\)$", "", line)  # the note
    return line.split(" = ")


def test_substituted_numbers_give_the_result_shown():
    checked, wrong = 0, []
    for line in LINES:
        steps = _steps(line)
        if len(steps) < 4:
            continue
        numbers, result = steps[-2], steps[-1]
        computed, result_value = arithmetic(numbers), arithmetic(result)
        if computed is None or result_value is None:
            continue
        checked += 1
        # a difference of rounded numbers is as exact as they are: `20.0 ms - 20.0 ms = 5.00 µs` is right
        slack = 0.006 * computed[2] if " - " in numbers else 1e-30
        if computed[0] != pytest.approx(result_value[0], rel=0.02, abs=slack):
            wrong.append(f"{line}\n    gives {computed[0]:.4g}")
    assert checked > 50
    assert not wrong, "\n".join(wrong)


def _derivation_of(claim_text: str) -> str:
    """The derivation line of EXTRA's claim written `claim_text`."""
    found = [v.actual.derivation() for v in VERDICTS if v.claim.text == claim_text and v.actual is not None]
    assert found, claim_text
    return found[0]


def test_a_formula_with_names_keeps_the_parentheses_it_was_computed_with():
    assert _derivation_of("(y.bytes_read + y.bytes_written) / device.hbm_bandwidth > 0 s") == \
        "(y.bytes_read + y.bytes_written) / device.hbm_bandwidth = (134 MB + 134 MB) / 3.35 TB/s = 80.1 µs"
    assert _derivation_of("y.bytes_read / (device.hbm_bandwidth * 2) > 0 s") == \
        "y.bytes_read / (device.hbm_bandwidth × 2) = 134 MB / (3.35 TB/s × 2) = 20.0 µs"
    assert _derivation_of("y.bytes_read - (y.bytes_written - y.bytes_read) > 0 B") == \
        "y.bytes_read - (y.bytes_written - y.bytes_read) = 134 MB - (134 MB - 134 MB) = 134 MB"
    assert _derivation_of("-(y.time + y.time) < 0 s").startswith("-(y.time + y.time) = -(")


def test_an_arithmetic_claim_says_its_formula_once_with_every_number_it_substitutes():
    assert _derivation_of("a / b ≈ 9") == "a / b = 3 / 2 = 1.500"  # not `a / b = a / b = 3 / 2`
    # the `× 2` is in the numbers as in the formula: not `y.bytes_read * 2 / hbm_bandwidth = 268 MB / 3.35 TB/s`
    assert _derivation_of("y.bytes_read * 2 / device.hbm_bandwidth ≈ 1 s") == \
        "y.bytes_read × 2 / device.hbm_bandwidth = 134 MB × 2 / 3.35 TB/s = 80.1 µs"
    assert _derivation_of("w ≈ 1 s") == "w = y.time = 80.1 µs"  # the metric by the name the spec gave it


def test_a_value_far_from_the_unit_written_is_shown_with_the_prefix_that_suits_it():
    messages = {v.claim.text: v.message for v in VERDICTS}
    assert messages["w ≈ 1 s"] == "w = 80.13 µs, not ≈ 1 s (± 10%: 0.900–1.10 s)"  # not 0.00008013 s
    assert messages["w ≈ 1 µs"].startswith("w = 80.13 µs, not ≈ 1 µs")
    assert messages["y.time * 1e9 > 1 s"] == "y.time * 1e9 = 80,130 s, > 1 s"  # in the unit written where it reads
    # `0.000…` or an exponent a prefix would spare (p to E): not `3.8e25 FLOP`, which is past every prefix
    unreadable = [m for m in MESSAGES
                  if re.search(r"\b0\.000\d*\s?[a-zA-Zµ]|\d\.\d+e(-1[0-2]|-?\d|1[0-7])\s?[a-zA-Zµ]", m)]
    assert not unreadable, "\n".join(unreadable)


def _same(formula: str) -> str:
    return formula.replace("*", "×").replace(" ", "")


def test_no_step_is_said_twice():
    repeated = [line for line in DERIVED if any(_same(a) == _same(b) for a, b in zip(_steps(line), _steps(line)[1:]))]
    assert not repeated, "\n".join(repeated)


_NAME = re.compile(r"[A-Za-z_][\w.]*|\d[\d,]*(?:\.\d+)?(?:e-?\d+)?")


def _shape(formula: str) -> str:
    """A formula with each operand (a name or a number) as `N`: `y.bytes_read × 2 / device.hbm_bandwidth` is
    `N×N/N`."""
    return _same(_NAME.sub("N", formula))


def _numbers_shape(numbers: str) -> str:
    return _same(_QUANTITY.sub(lambda m: "N" if m[0].strip() else m[0], numbers))


def test_formula_and_substituted_numbers_have_the_same_shape():
    checked, wrong = 0, []
    for line in LINES:
        steps = _steps(line)
        if len(steps) < 3 or arithmetic(steps[-2]) is None:
            continue
        formula, numbers = steps[-3], steps[-2]
        if (not re.fullmatch(r"[\w.,()×*/+\- ^]+", formula) or _NAME.fullmatch(formula)
                or re.search(r"[\w)] [\w(]", formula)):
            continue  # a formula in words (`the queue: ...`, `FLOPs per score × scores`), or a renaming
        checked += 1
        if _shape(formula) != _numbers_shape(numbers):
            wrong.append(f"{line}\n    formula {_shape(formula)}, numbers {_numbers_shape(numbers)}")
    assert checked > 100
    assert not wrong, "\n".join(wrong)


def test_the_shape_check_catches_a_number_left_out():
    assert _shape("y.bytes_read * 2 / hbm_bandwidth") != _numbers_shape("67.1 MB / 3.35 TB/s")
    assert _shape("y.bytes_read × 2 / device.hbm_bandwidth") == _numbers_shape("33.6 MB × 2 / 3.35 TB/s")
    assert _shape("kernels × kernel_time + graph_node_cost") != _numbers_shape("10,000 × 2.50 µs")
    assert _shape("(a + b) / c") == _numbers_shape("(1.5 ms + 2 ms) / 1,000")


def test_a_graphed_stream_shows_the_node_cost_in_its_formula():
    graphed = [line for line in LINES if line.startswith("busy_time = kernels × (kernel_time + graph_node_cost) = ")]
    assert graphed, "no graphed stream rendered"
    assert any(line.startswith("time = the queue: launches at graph_launch_cost each, GPU kernel_time + "
                               "graph_node_cost per kernel = the queue: 1 launch at ") for line in LINES)
