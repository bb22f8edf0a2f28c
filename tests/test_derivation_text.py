"""Every metric's derivation, for every workload kind and mode, reads as written by hand: no doubled words, no
`1 launches`, no `1.45 k/s`, no code details, and the numbers substituted into a formula give the result shown."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuspec import api
from gpuspec.text import SpecText

ROOT = Path(__file__).resolve().parent.parent

# One workload per kind and mode the bundled specs do not already cover (a stream under a CUDA graph, eager
# elementwise with its own launch cost); the bundled specs cover the rest.
EXTRA = """\
device H100-SXM
x = fp32[4096, 4096]
y = x * 2 + 1 eager:
    time > 0 s
z = x * 2 + 1 fused:
    time > 0 s
g = 10000 launches of z as a CUDA graph:
    time > 0 s
one = 1 launches of z:
    time > 0 s
"""


def _explanations():
    found = []
    for path in sorted((ROOT / "specs").glob("*.gpu")):
        found.extend(api.explain(path))
    found.extend(api.explain_program(api.compile_text(SpecText("kinds.gpu", EXTRA))))
    return found


def _lines() -> list[str]:
    lines: list[str] = []
    seen: set[int] = set()

    def walk(value) -> None:
        if id(value) in seen:
            return
        seen.add(id(value))
        lines.append(value.derivation())
        for child in value.inputs:
            walk(child)

    for item in _explanations():
        for value in item.values:
            walk(value)
    return lines


LINES = _lines()


def test_every_kind_is_rendered():
    text = "\n".join(LINES)
    for telling in ("the queue:", "Σ over", "max(", "ring", "score", "tokens_per_s", "graph_node_cost",
                    "wire", "kernels"):
        assert telling in text, telling


def _lines_matching(pattern: str) -> list[str]:
    return [line for line in LINES if re.search(pattern, line)]


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


def test_a_formula_with_names_keeps_the_parentheses_it_was_computed_with():
    text = "device H100-SXM\nx = fp32[1024]\ny = x * 2\n" \
           "(y.bytes_read + y.bytes_written) / device.hbm_bandwidth > 0 s\n" \
           "y.bytes_read / (device.hbm_bandwidth * 2) > 0 s\ny.bytes_read - (y.bytes_written - y.bytes_read) > 0 B\n"
    program = api.compile_text(SpecText("p.gpu", text))
    lines = [item.values[0].derivation() for item in api.explain_program(program) if item.values]
    shown = "\n".join(lines)
    assert "= (y.bytes_read + y.bytes_written) / hbm_bandwidth = " in shown, shown
    assert "= bytes_read / (device.hbm_bandwidth * 2) = 4.10 kB / " in shown, shown
    assert "= bytes_read - (y.bytes_written - y.bytes_read) = 4.10 kB - " in shown, shown


def test_a_graphed_stream_shows_the_node_cost_in_its_formula():
    graphed = [line for line in LINES if line.startswith("busy_time = kernels × (kernel_time + graph_node_cost) = ")]
    assert graphed, "no graphed stream rendered"
    assert any(line.startswith("time = the queue: launches at graph_launch_cost each, GPU kernel_time + "
                               "graph_node_cost per kernel = the queue: 1 launch at ") for line in LINES)
