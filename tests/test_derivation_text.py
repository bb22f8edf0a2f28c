"""Every metric's derivation, for every workload kind and mode, reads as written by hand: no doubled words, no
`1 launches`, no `1.45 k/s`, no code details, no step said twice, and the numbers substituted into a formula are the
formula's (each operand a number, in its place) and give the result shown. Arithmetic claims over metrics, named
values and device facts are rendered too, and so is what a verdict says of each value."""
from __future__ import annotations

import math
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
small = fp32[4096]
tiny = small * 2
gt = 10000 launches of tiny as a CUDA graph
replayed = 100 launches of gt
synced = 100 launches of z
set sync = per_launch
synced_each = 100 launches of y
set sync = none
set launched_from = cpp
from_cpp = 1000 launches of tiny
set launched_from = pytorch
graph_of_eager = 1000 launches of y as a CUDA graph
rows = fp16[8192, 4096]
sm = softmax(rows) eager
norm = layernorm(rows) fused
streamed_rows = 100 launches of sm
q = bf16[1, 32, 4096, 128]
kv = bf16[1, 8, 4096, 128]
att = attention(q, kv, kv) eager
flash = attention(q, kv, kv, causal) fused
qd = bf16[1, 32, 1, 128]
att_step = attention(qd, kv, kv) fused
m1 = bf16[4096, 4096]
mm = m1 @ m1
mms = 100 launches of mm
d1 = decode llama3-8b, batch 1, context 4096, 15 kernels per layer eager
d2 = decode llama3-70b, batch 8, tp 8 compiled as a CUDA graph
pf = prefill llama2-7b, batch 1, prompt 2048 compiled as a CUDA graph
tr = train llama3-8b, batch 512, context 4096, gpus 64
ar = all_reduce(1 GB) across 8 GPUs over nvlink
ag = all_gather(1 GB) across 8 GPUs over pcie
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


PROGRAMS = [api.load_spec(path).program for path in [*sorted((ROOT / "specs").glob("*.gpu")), ROOT / "README.md"]]
PROGRAMS.append(api.compile_text(SpecText("kinds.gpu", EXTRA)))


def _estimates() -> list:
    """Every workload's estimate, by the model and by its device's published profile (the real-hardware rules), with
    every metric its kind has computed (what cannot be is left out): each a (estimate, {metric: value})."""
    from gpuspec import model
    from gpuspec.sources import NotAvailable, Published

    found = []
    for program in PROGRAMS:
        for _, _, workload in program.workloads:
            estimates = [model.estimate(workload)]
            try:
                estimates.append(Published().estimate(workload))
            except NotAvailable:
                pass
            for estimate in estimates:
                metrics = {}
                for name in estimate.names():
                    try:
                        metrics[name] = estimate[name]
                    except model.ModelError:
                        pass
                found.append((estimate, metrics))
    return found


ESTIMATES = _estimates()


def _verdicts():
    """Every verdict of the bundled specs, README's claims and EXTRA's: each claim's value as check derives it."""
    bundled = api.run_check([str(path) for path in sorted((ROOT / "specs").glob("*.gpu"))] + [str(ROOT / "README.md")])
    extra = api.check_text(EXTRA, "kinds.gpu")
    assert not bundled.diagnostics and not extra.diagnostics, (bundled.diagnostics, extra.diagnostics)
    return [*bundled.verdicts, *extra.verdicts]


VERDICTS = _verdicts()


def _values() -> list:
    """Every metric of every estimate and every value a verdict holds, and every value they were derived from, each
    once."""
    values: list = []
    seen: set[int] = set()

    def walk(value) -> None:
        if id(value) in seen:
            return
        seen.add(id(value))
        values.append(value)
        for child in value.inputs:
            walk(child)

    for _, metrics in ESTIMATES:
        for value in metrics.values():
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
    slips = _lines_matching(r"(?<![\d.,])1 (?!(?:FLOPs|[pnµm]s)\b)[a-z]+(?<!s)s\b")
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
        if re.search(r"[^ ×/+\-(),⌈⌉⌊⌋]", re.sub(r"\b(max|min)\(", "(", between)):
            return None
        python.append(_operators(between))
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
    if re.search(r"[^ ×/+\-(),⌈⌉⌊⌋]", text[position:]) or not python:
        return None
    python.append(_operators(text[position:]))
    try:
        return _Arithmetic("".join(python)).value(), operators, largest
    except (ValueError, ZeroDivisionError):
        return None


def _operators(text: str) -> str:
    return (text.replace("×", "*").replace("max(", "M(").replace("min(", "m(").replace("⌈", "C(").replace("⌉", ")")
            .replace("⌊", "F(").replace("⌋", ")"))


class _Arithmetic:
    """Numbers, + - * / and parentheses by precedence, max, min, ⌈⌉ and ⌊⌋: the only text this test reads as a
    calculation."""

    def __init__(self, text: str):
        self.tokens = re.findall(r"\d+(?:\.\d*)?(?:e[+\-]?\d+)?|[MmCF]\(|[+\-*/(),]|\S", text)
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
        if token in ("M(", "m(", "C(", "F("):
            arguments = [self._sum()]
            while self._next() == ",":
                self.at += 1
                arguments.append(self._sum())
            if self._next() != ")":
                raise ValueError("unclosed")
            self.at += 1
            apply = {"M(": max, "m(": min, "C(": lambda x: math.ceil(x - 1e-9 * abs(x)),
                     "F(": lambda x: math.floor(x + 1e-9 * abs(x))}[token]
            return apply(*arguments)
        return float(token)


def test_arithmetic_helper_reads_si_numbers():
    assert arithmetic("67.1 MB / 3.35 TB/s")[0] == pytest.approx(20.03e-6, rel=1e-3)
    assert arithmetic("10,000 × 2.50 µs")[:2] == (pytest.approx(25e-3), 1)
    assert arithmetic("(1 + 2) × 3")[0] == 9 and arithmetic("1 + 2 × 3")[0] == 7
    assert arithmetic("8 - 2 - 1")[0] == 5 and arithmetic("8 / 2 / 2")[0] == 2
    assert arithmetic("52.3%")[0] == pytest.approx(0.523)
    assert arithmetic("1.34 million /s")[0] == pytest.approx(1.34e6)
    assert arithmetic("2 days / 1 h")[0] == pytest.approx(48)
    assert arithmetic("max(1 s, 2 s)")[0] == 2 and arithmetic("min(1 s, 2 s) + 1 s")[0] == 2
    assert arithmetic("⌈16,777,216 / 256⌉")[0] == 65_536 and arithmetic("⌈2.5 / 2⌉")[0] == 2
    assert arithmetic("the queue: 1 launch") is None
    assert place("20.0 µs") == pytest.approx(1e-7) and place("16,777,216") == 1 and place("52.3%") == pytest.approx(0.001)
    assert place("4.36e23 B") == pytest.approx(1e21) and place("1.34 million /s") == pytest.approx(1e4)


def _steps(line: str) -> list[str]:
    line = re.sub(r" \([^()]*(?:\([^()]*\)[^()]*)*\)$", "", line)  # the note
    return line.split(" = ")


def place(text: str) -> float:
    """The place value of the last digit a number shows, in SI units: 1e-7 for `20.0 µs`, 1 for `16,777,216`."""
    match = _QUANTITY.search(text)
    number = float(match[1].replace(",", ""))
    mantissa, _, exponent = match[1].replace(",", "").partition("e")
    value = 10.0 ** (int(exponent or 0) - len(mantissa.partition(".")[2]))
    return value * abs(arithmetic(text)[0]) / number if number else value


def gives(numbers: str, result: str) -> bool | None:
    """Whether the numbers shown, worked out, come to the result shown, to its last digit; None unless both are
    plain arithmetic."""
    computed, shown = arithmetic(numbers), arithmetic(result)
    if computed is None or shown is None or computed[1] + numbers.count("(") == 0:
        return None
    return abs(computed[0] - shown[0]) <= place(result) / 2 * 1.000001 + 1e-12 * abs(shown[0])


def test_the_check_refuses_numbers_that_do_not_give_the_result():
    assert gives("25.0 ms - 25.0 ms", "2.50 µs") is False and gives("25.0025 ms - 25.0000 ms", "2.50 µs")
    assert gives("20.0 µs + 20.0 µs", "40.1 µs") is False and gives("20.03 µs + 20.03 µs", "40.1 µs")
    assert gives("6.21 ms / 6.21 ms", "99.9%") is False and gives("67.1 MB / 3.35 TB/s", "20.0 µs")
    assert gives("max(40.1 µs, 501 ns, 2.00 µs)", "40.1 µs") and gives("⌈16,777,216 / 256⌉", "65,536")


def test_substituted_numbers_give_the_result_shown():
    """Every formula's numbers, worked out by hand, give its result to the digit shown: a difference or a sum of
    rounded numbers shows the digits it takes (`25.0025 ms - 25.0000 ms = 2.50 µs`, never `25.0 ms - 25.0 ms`)."""
    checked, wrong = 0, []
    for line in LINES:
        steps = _steps(line)
        if len(steps) < 3:
            continue
        verdict = gives(steps[-2], steps[-1])
        if verdict is None:
            continue
        checked += 1
        if not verdict:
            wrong.append(f"{line}\n    gives {arithmetic(steps[-2])[0]:.6g}")
    assert checked > 1000
    assert not wrong, "\n".join(wrong[:40]) + f"\n({len(wrong)} in all)"


def _derivation_of(claim_text: str) -> str:
    """The derivation line of EXTRA's claim written `claim_text`."""
    found = [v.actual.derivation() for v in VERDICTS if v.claim.text == claim_text and v.actual is not None]
    assert found, claim_text
    return found[0]


def test_a_formula_with_names_keeps_the_parentheses_it_was_computed_with():
    assert _derivation_of("(y.bytes_read + y.bytes_written) / device.hbm_bandwidth > 0 s") == \
        "(y.bytes_read + y.bytes_written) / device.hbm_bandwidth = (134.2 MB + 134.2 MB) / 3.35 TB/s = 80.1 µs"
    assert _derivation_of("y.bytes_read / (device.hbm_bandwidth * 2) > 0 s") == \
        "y.bytes_read / (device.hbm_bandwidth × 2) = 134 MB / (3.35 TB/s × 2) = 20.0 µs"
    assert _derivation_of("y.bytes_read - (y.bytes_written - y.bytes_read) > 0 B") == \
        "y.bytes_read - (y.bytes_written - y.bytes_read) = 134 MB - (134 MB - 134 MB) = 134 MB"
    assert _derivation_of("-(y.time + y.time) < 0 s").startswith("-(y.time + y.time) = -(")


def test_an_arithmetic_claim_says_its_formula_once_with_every_number_it_substitutes():
    assert _derivation_of("a / b ≈ 9") == "a / b = 3 / 2 = 1.500"  # not `a / b = a / b = 3 / 2`
    # the `× 2` is in the numbers as in the formula: not `y.bytes_read * 2 / hbm_bandwidth = 268 MB / 3.35 TB/s`;
    # 134 MB × 2 / 3.35 TB/s would be 80.0 µs: the bytes take the digit that gives 80.1
    assert _derivation_of("y.bytes_read * 2 / device.hbm_bandwidth ≈ 1 s") == \
        "y.bytes_read × 2 / device.hbm_bandwidth = 134.2 MB × 2 / 3.35 TB/s = 80.1 µs"
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


_NAME = re.compile(r"(?<![\w.])(?!(?:max|min)\()[A-Za-z_][\w.]*|\d[\d,]*(?:\.\d+)?(?:e-?\d+)?")


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


def test_a_graphed_stream_shows_the_node_cost_and_every_kernel_in_its_formula():
    graphed = [line for line in LINES if line.startswith("busy_time = kernels × (kernel_time + graph_node_cost) = ")]
    assert graphed, "no graphed stream rendered"
    # one launch, then the kernels: the 10,000 of them are in the formula (the queue's words left them out)
    assert "time = graph_launch_cost + kernels × (kernel_time + graph_node_cost) = 2.50 µs + 10,000 × (2.00 µs + " \
           "500 ns) = 25.0 ms (one graph launch, then every node back to back)" in LINES
    assert "idle_time = time - busy_time = 25.0025 ms - 25.0000 ms = 2.50 µs" in LINES
    # a decode step as one graph: its launch, then its GPU work (whose line counts the kernels)
    assert any(line.startswith("step_time = graph_launch_cost + gpu_time = 2.50 µs + ") for line in LINES)
    assert not [line for line in LINES if "= the queue: 1 launch at 2.50 µs each" in line]  # the graph's one launch
    # a replay: the queue of its launches, each the graph's GPU time
    assert "time = the queue: launches at graph_launch_cost each, busy time of a replay on the GPU each = the queue: " \
           "100 launches at 2.50 µs each, 25.0 ms on the GPU each = 2.50 s (host and GPU overlap; each replay starts " \
           "once launched and once the previous one ends)" in LINES


def _whole(value) -> list[str]:
    from gpuspec.report.text import WHOLE, derivation

    return derivation(value, depth=WHOLE)


def _shown_value(value):
    """The value whose formula a derivation line shows: a renaming to its own name is its input's line."""
    while value.rule == "{0}" and value.inputs and value.inputs[0].name == value.name:
        value = value.inputs[0]
    return value


def test_no_formula_names_itself():
    """`bytes_moved = repeats × bytes_moved` says nothing: the inner value is named for what it is (one repeat's)."""
    selfish = [value.derivation() for value in VALUES
               if value.rule not in (None, "{0}") and any(i.name == value.name for i in value.inputs)]
    assert not selfish, "\n".join(dict.fromkeys(selfish))


def test_a_formula_names_each_metric_of_its_workload_for_what_it_is():
    """A name in a metric's formula that is another metric of the same workload is that metric: not the repeated
    workload's (`kernel_time = time = 2.00 µs` in a stream whose time is 25.0 ms; `memory_needed = bytes_moved` where
    the stream's bytes_moved is 10,000 times more)."""
    wrong = []
    for estimate, metrics in ESTIMATES:
        for name, value in metrics.items():
            shown = _shown_value(value)
            for child in shown.inputs:
                other = metrics.get(child.name)
                if other is not None and child.name != name and other.number != child.number:
                    wrong.append(f"{shown.derivation()}\n    but {other.derivation()}")
    assert not wrong, "\n".join(dict.fromkeys(wrong))


def _children(lines: list[str]):
    """Each line of a whole derivation with the line it is indented under."""
    for i, line in enumerate(lines):
        depth = len(line) - len(line.lstrip())
        parent = next((p for p in reversed(lines[:i]) if len(p) - len(p.lstrip()) == depth - 2), None)
        if parent is not None:
            yield parent.strip(), line.strip()


def test_each_line_of_a_whole_derivation_is_named_as_its_parent_formula_names_it():
    """`-v` shows an input under the name its parent's formula gives it: `kernel_time = max(…)` under `busy_time =
    kernels × kernel_time`, never the repeated workload's `time = max(…)`; `launches = …` under `host_time =
    launches × launch_cost`, not `kernels = …`; and so do a failure's deciding lines."""
    from gpuspec.report.text import deciding

    wrong = []
    for _, metrics in ESTIMATES:
        for value in metrics.values():
            for parent, child in [*_children(_whole(value)), *_children(deciding(value))]:
                name = child.split(" = ")[0]
                formula = " = ".join(parent.split(" = ")[1:])
                if not re.search(r"(?<![\w.])" + re.escape(name) + r"(?![\w])", formula):
                    wrong.append(f"{parent}\n    {child}")
    assert not wrong, "\n".join(list(dict.fromkeys(wrong))[:30])


_COMPARISON = re.compile(r"(\d[\d,.]*(?:e-?\d+)? ?[a-zA-Zµ/%]*) (>|≤|<|≥) (\d[\d,.]*(?:e-?\d+)? ?[a-zA-Zµ/%]*)")


def test_every_comparison_a_derivation_states_holds():
    """`bound = overhead if 2.50 µs > 25.0 ms, else …` reads as a wrong result: a rule says what was decided."""
    checked, wrong = 0, []
    for line in DERIVED:
        for left, sign, right in _COMPARISON.findall(line):
            a, b = arithmetic(left.strip()), arithmetic(right.strip())
            if a is None or b is None:
                continue
            checked += 1
            holds = {">": a[0] > b[0], "<": a[0] < b[0], "≤": a[0] <= b[0], "≥": a[0] >= b[0]}[sign]
            if not holds:
                wrong.append(line)
    assert checked > 10
    assert not wrong, "\n".join(dict.fromkeys(wrong))


def test_a_streams_bound_says_the_rule_as_it_was_decided():
    assert "bound = the repeated workload's bound, as host_time ≤ busy_time = the repeated workload's bound, as " \
           "2.50 µs ≤ 25.0 ms = overhead" in LINES
    assert any(line.startswith("bound = the GPU waits on the host, as host_time > busy_time = the GPU waits on the "
                               "host, as ") and line.endswith(" = overhead") for line in LINES)


def test_every_metric_of_every_kind_is_rendered():
    """The checks above read every metric of every kind, by the model and on a real device's profile."""
    from gpuspec import kinds
    from gpuspec.kinds.kind import MEMORY_METRICS

    for kind in kinds.KINDS:
        for real in (False, True):
            rendered = set()
            for estimate, metrics in ESTIMATES:
                profiled = estimate.device.fact("kernel_gap") is not None
                if estimate.workload.kind == kind.name and profiled == real:
                    rendered.update(metrics)
            assert rendered, (kind.name, real)
            missing = set(kind.metrics) | set(MEMORY_METRICS)
            assert not missing - rendered, (kind.name, real, sorted(missing - rendered))


def test_compute_bound_batch_shows_the_numbers_of_its_formula():
    """`⌈(13.2 GB / 3.35 TB/s) / (FLOPs per sequence / 989 TFLOP/s - …)⌉` left words where numbers belong."""
    lines = [line for line in LINES if line.startswith("compute_bound_batch = ")]
    assert lines
    for line in lines:
        steps = _steps(line)
        assert "per sequence" not in steps[-2] and gives(steps[-2], steps[-1]), line
    assert "compute_bound_batch = ⌈(weights_read / hbm_bandwidth) / (FLOPs per sequence / peak_flop_rate - KV bytes " \
           "per sequence / hbm_bandwidth)⌉ = ⌈(15.01 GB / 3.35 TB/s) / (16.06 GFLOP / 989.4 TFLOP/s - 0 B / 3.35 " \
           "TB/s)⌉ = 277" in LINES
    assert "FLOPs per sequence = 2 × active_params + 4 × layers × heads × head_dim × context = 2 × 8,030,261,248 + " \
           "4 × 32 × 32 × 128 × 208 = 16.2 GFLOP" in LINES


def test_a_round_trip_count_of_zero_says_why_it_is_zero():
    notes = {line for line in LINES if line.startswith("round_trips = 0 ")}
    assert "round_trips = 0 (one operation: no intermediate to write to HBM)" in notes  # y5 = x * 2
    assert "round_trips = 0 (fused: every intermediate stays on chip)" in notes  # z_fused = x * 2 + 1 fused
    assert not [line for line in notes if "is written to HBM and read back" in line]


def test_catalog_notes_read_where_they_are_printed():
    """A note pointed at the catalog's `figures` entries ("a figure below"): it names the figure and its source."""
    from gpuspec.report.explain import render

    explained = "".join(render(api.explain(path), {}) for path in sorted((ROOT / "specs").glob("*.gpu")))
    assert "figure below" not in explained and not _lines_matching("figure below")
    assert "hbm_bandwidth = 3.35 TB/s [S-HPCT] (the early whitepaper and the launch blog said 3 TB/s (S-AUTHOREA))" \
        in explained


def test_a_value_is_formatted_one_way():
    from gpuspec import units
    from gpuspec.model.values import Value

    assert Value("x", 2312.4, units.COUNT).format() == "2,312"  # as a whole count is: not 2312
    assert "intensity = 1,365 FLOP/B, ≈ 1,365 FLOP/B (± 2%: 1,338–1,392 FLOP/B)" in MESSAGES  # not 1365 beside 1,365
    assert Value("x", 4.096e18, units.BYTES).format() == "4.10e18 B"  # past peta-: not 4096 PB
    assert Value("x", 4.362e23, units.BYTES).format() == "4.36e23 B"  # not 436,224,000 PB
    assert Value("x", 1e15, units.COUNT).format() == "1.000e15" and Value("x", 1e14, units.COUNT).format() == \
        "100,000,000,000,000"
    assert Value("x", 4.0065e-5, units.TIME).format() == "40.1 µs"
    report = api.check_text("device H100-SXM\nmodel deep from llama3-8b with layers = 1e15\n"
                            "deep.params > 0\nx = fp32[4096, 4096]\nz = x * 2 + 1 fused\nz.time = 40064.9 ns\n",
                            "a.gpu")
    params, time = report.verdicts
    assert "+ 1.000e15 layers x (41,943,040 attention" in params.actual.inputs[0].note  # not 1000000000000000
    assert time.message.startswith("z.time = 40,064.99 ns, which does not round to")  # as 60,065 ns is written
