"""What the fuzz tests and `benchmarks/fuzz.py` share: strategies that grow specs and mutate real ones, and the
property every input must have.

The property: `gpuspec check` ends every input in a result (exit 0 or 1, no error; 5, saying so, when no claim
was checked) or in its own error with a location (exit 2); never another exception, never a hang, and the same
output when run twice.

`valid_specs` grows specs from the language's pieces (devices, tensors, workloads of every kind, claims with
units, blocks, quotes, settings), so that most of them are valid and the check path (resolve, model, claims)
runs, not only the parser. `mutated_specs` starts from the bundled specs and truncates them, swaps, drops and
repeats their tokens, puts odd Unicode in them (both micro signs, NFKC look-alikes such as `4096²` against
`４０９６`, right-to-left marks, NUL) and random bytes.
"""
from __future__ import annotations

import functools
import json
import math
import os
import re
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
SPECS = {path.name: path.read_text(encoding="utf-8") for path in sorted((ROOT / "specs").glob("*.gpu"))}

# --- settings: a few thousand examples in CI, many more when asked --------------------------------------------

PROFILE = os.environ.get("GPUSPEC_FUZZ_PROFILE", "ci")
_COMMON = dict(deadline=None, database=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
# CI: derandomized, so every run tries the same inputs (a failure reproduces).
settings.register_profile("ci", max_examples=500, derandomize=True, **_COMMON)
# GPUSPEC_FUZZ_PROFILE=large: ten times as many, and new ones on every run.
settings.register_profile("large", max_examples=5_000, phases=[Phase.generate, Phase.target, Phase.shrink],
                          **_COMMON)


def fuzz_settings(share: float = 1.0) -> settings:
    """The profile chosen by GPUSPEC_FUZZ_PROFILE, with `share` of its examples."""
    profile = settings.get_profile(PROFILE)
    return settings(profile, max_examples=max(1, int(profile.max_examples * share)))


def rarely(draw, one_in: int) -> bool:
    """True about once in `one_in` draws. The simplest choice, which Hypothesis tries first (a derandomized run's
    first examples are simple) and shrinks towards, is False: what is rare stays rare there too."""
    return draw(integers(0, one_in - 1)) == one_in - 1


@functools.lru_cache(maxsize=None)
def _choices(options: tuple):
    return st.sampled_from(options)


def pick(draw, options):
    """One of `options` (a strategy made once per list of options: making one is slower than drawing from it)."""
    return draw(_choices(tuple(options)))


integers = functools.lru_cache(maxsize=None)(st.integers)


def choose(draw, items: list):
    """One of `items`, which need not be hashable (pick's options are)."""
    return items[draw(integers(0, len(items) - 1))]


# --- growing valid specs from the language's pieces ------------------------------------------------------------

DEVICES = ("H100-SXM", "H100-PCIe", "H200", "A100-80GB", "A100-40GB", "B200", "L40S", "L4", "RTX-4090")
MODELS = ("llama3-8b", "llama3-70b", "llama2-7b", "mistral-7b", "llama3.1-8b", "mixtral-8x7b", "qwen2-7b")
DTYPES = ("bf16", "fp16", "fp32")
SIZES = (1, 3, 64, 100, 128, 1000, 1024, 4096, 8192)
FUNCTIONS = ("exp", "log", "sqrt", "rsqrt", "relu", "gelu", "silu", "sigmoid", "tanh", "erf", "abs")
# Casts of an expression whose dtype the strategy does not track: through fp64, which no grown tensor has, so that
# none is a cast to the dtype it has already; now and then one refused where it is (an integer, tf32, a no-op)
CASTS = ("fp32(fp64({0}))", "bf16(fp64({0}))", "fp16(fp64({0}))", "half(fp64({0}))", "float(fp64({0}))",
         "bfloat16(fp64({0}))")
BAD_CASTS = ("int8({0})", "tf32({0})", "fp32(fp32(fp64({0})))", "fp32(2)")
# Launch counts and graph sizes: mostly valid, up to huge ones; now and then zero or past a float (refused)
COUNTS = ("1", "2", "20", "1,000", "100,000", "3", "50", "10", "200", "1e6")
HUGE_COUNTS = ("1e15", "1e300", "10000000000000000000000")  # computed, or an overflow named where it happens
BAD_COUNTS = ("0", "1e400", "0.5")
COMPARATORS = ("≈", "~", "=", "==", "<", "<=", "≤", ">", ">=", "≥")
TIME_UNITS = ("µs", "us", "μs", "ms", "ns", "s")
BYTE_UNITS = ("B", "KB", "MB", "GB", "KiB", "MiB", "GiB")
# A device fact, and a unit its value can be written in.
DEVICE_FACTS = (("sms", ""), ("warp_size", ""), ("hbm_bandwidth", "TB/s"), ("hbm_bandwidth", "GB/s"),
                ("l2_size", "MB"), ("memory_size", "GB"), ("register_file_per_sm", "KiB"), ("launch_cost", "µs"),
                ("boost_clock", "GHz"), ("tensor_bf16", "TFLOP/s"), ("fp32", "TFLOPS"), ("l2_latency", "cycles"),
                ("max_threads_per_sm", ""), ("kernel_floor", "µs"), ("tdp", "W"))
LINKS = {"H100-SXM": ("nvlink", "pcie"), "H100-PCIe": ("nvlink", "pcie"), "B200": ("nvlink", "pcie"),
         "H200": ("nvlink",), "A100-80GB": ("nvlink",), "A100-40GB": ("nvlink",), "L40S": ("pcie",), "L4": (),
         "RTX-4090": ()}
DEVICE_CHANGES = (("launch_cost", "µs"), ("hbm_bandwidth", "TB/s"), ("sms", ""), ("kernel_floor", "us"))

# What a claim may say about each kind of workload: (metric or None for an implicit claim, units to pick from).
_ROOFLINE = [("time", TIME_UNITS), ("t_mem", TIME_UNITS), ("t_math", TIME_UNITS), ("bytes_moved", BYTE_UNITS),
             ("bytes_read", BYTE_UNITS), ("bytes_written", BYTE_UNITS), ("flops", ("FLOP", "MFLOP", "GFLOP")),
             ("intensity", ("FLOP/B",)), ("achieved_bandwidth", ("TB/s", "GB/s")),
             ("bandwidth_utilization", ("%",)), ("kernels", ("",)), ("launches", ("",))]
METRICS = {
    "elementwise": _ROOFLINE + [("elements", ("",)), ("blocks", ("",)), ("waves", ("",)), ("threads", ("",)),
                                ("resident_blocks_per_sm", ("",)), ("blocks_per_wave", ("",)),
                                ("last_wave_occupancy", ("%",)), ("round_trips", ("",))],
    "matmul": _ROOFLINE + [("m", ("",)), ("n", ("",)), ("k", ("",)), ("tiles", ("",)), ("waves", ("",)),
                           ("wave_efficiency", ("%",)), ("t_math_tiles", TIME_UNITS)],
    "rowwise": _ROOFLINE + [("rows", ("",)), ("row_length", ("",)), ("passes", ("",)), ("round_trips", ("",))],
    "attention": _ROOFLINE + [("score_bytes", BYTE_UNITS), ("heads", ("",)), ("seq_q", ("",))],
    "stream": [("time", TIME_UNITS), ("busy_share", ("%",)), ("idle_time", TIME_UNITS), ("launches", ("",)),
               ("kernels", ("",)), ("utilization", ("%",)), ("host_time", TIME_UNITS)],
    "decode": [("step_time", TIME_UNITS), ("weight_bytes", BYTE_UNITS), ("t_weights", TIME_UNITS),
               ("launches", ("",)), ("tokens_per_s", ("tokens/s",)), ("mfu", ("%",)), ("kv_bytes", BYTE_UNITS),
               ("overhead_share", ("%",)), ("flops", ("TFLOP", "GFLOP"))],
    "collective": [("wire_bytes", BYTE_UNITS), ("transfer_time", TIME_UNITS), ("busbw", ("GB/s",)),
                   ("algbw", ("GB/s",)), ("time", TIME_UNITS)],
    "training": [("tokens", ("",)), ("flops", ("TFLOP", "PFLOP")), ("flops_per_token", ("GFLOP",)),
                 ("time", TIME_UNITS), ("state_bytes", BYTE_UNITS), ("activation_bytes", BYTE_UNITS)],
}
# An observed figure after a workload (`observed 107 tokens/s`, `observed 60% MFU`): mostly one its kind takes,
# sometimes one it does not (an error) or one that is impossible or hostile (a zero, a utilization past 100%, a
# percentage without its word or with another kind's, a count per second of nothing the kind counts, a huge or tiny
# number). The unfit ones are drawn apart and rarely, so that a grown spec stays mostly valid however Hypothesis
# weights its draws (it mixes in constants from whatever modules are local: an editable install and a wheel differ).
OBSERVED = {
    "elementwise": ("25 µs", "2.5 TB/s", "30 TFLOP/s", "60% MBU", "2% MFU"),
    "matmul": ("1 ms", "600 TFLOP/s", "2 TB/s", "70% MFU"), "rowwise": ("60 µs", "2 TB/s", "80% MBU"),
    "attention": ("3 ms", "740 TFLOP/s", "75% MFU"),
    "stream": ("5 ms", "250,000 launches/s", "20,000 kernels/s", "9 TB/s", "60% MBU", "1% MFU"),
    "decode": ("107 tokens/s", "9.35 ms", "1.4 TB/s", "5 TFLOP/s", "69% MBU", "1% MFU", "12,000 launches/s"),
    "training": ("400 TFLOP/s", "6.75 s", "40% MFU"),
    "collective": ("275 GB/s", "4 ms", "82% of line rate", "120% of line rate"),
}
UNFIT_FIGURES = ("0%", "150% MFU", "60%", "60% mfu", "1e300 TB/s", "1e-300 µs", "5 numbers/s", "9 tokens/s fast",
                 "60% of line rate", "3", "1e400 ms", "9 tokens/s", "40% MBU", "3 TB/s", "1 TFLOP/s", "60% MBU")
# Implicit claims: a unit, then the words that name the metric.
IMPLICIT = {
    "elementwise": ["µs", "ms", "MB moved", "MB read", "GB written", "elements", "blocks", "waves",
                    "waves started", "blocks per SM", "blocks per wave", "kernels", "launches", "round trips"],
    "matmul": ["µs", "ms", "GB moved", "MB read", "GFLOP", "TFLOP", "waves", "waves started", "tiles", "kernels"],
    "rowwise": ["µs", "MB moved", "MB read", "kB written", "kernels", "launches", "round trips"],
    "attention": ["µs", "ms", "GB moved", "kernels", "round trips"],
    "stream": ["ms", "µs", "launches", "kernels"],
    "decode": ["ms", "µs", "launches", "kernels", "GB moved"],
    "collective": ["ms", "µs", "GB moved"],
    "training": ["s", "ms", "TFLOP"],
}
# MARKER stands for spec text that must never become code: the harness property looks for it outside the
# generated program's string literals. The text around it is what would end a literal or a comment early.
MARKER = "Zq9fz"
COMMENTS = ("# a comment", "# ≈ 20 µs, 4096², “quoted”", "#", "# --- a section ---",
            f"# {MARKER} \"\"\" ''' {{{{ x }}}} \\ \\n %s ::error::x ##[error]",
            f"# {MARKER}\x1b]0;title\x07 \x1b[2J \u202e")
QUOTES = ('"A sentence the claims below check."', '"x is 4096 × 4096 = 16,777,216 numbers."',
          "“curly quotes, with ≈ and µ”", '"a sentence\nover two lines"',
          f"“{MARKER} \"\"\"); import os; os.system('x') # ''' {{{{ x }}}}”", f'"{MARKER} \\ \x1b[31m ::error::x"')


@st.composite
def numbers(draw) -> str:
    """A positive number as people write it: 62, 0.5, 16,777,216, 3.35, 1.5e9, 33.6."""
    form = pick(draw, ("int", "commas", "decimal", "exponent", "small"))
    if form == "int":
        return str(draw(integers(0, 5000)))
    if form == "commas":
        return f"{draw(integers(1000, 10**10)):,}"
    if form == "decimal":
        return f"{draw(st.floats(0.01, 10000, allow_nan=False, allow_infinity=False)):.{draw(integers(1, 4))}g}"
    if form == "exponent":
        return f"{draw(integers(1, 99)) / 10:g}e{draw(integers(-9, 15))}"
    return f"{draw(integers(1, 999)) / 1000:g}"


def _with_unit(number: str, unit: str, draw) -> str:
    if not unit:
        return number
    return number + pick(draw, (" ", "")) + unit if unit not in ("%",) else number + unit


@st.composite
def tolerances(draw) -> str:
    if draw(integers(0, 3)):
        return ""
    sign = pick(draw, ("±", "+-", "+/-"))
    return f" {sign} {draw(integers(1, 50))}%"


@st.composite
def claims(draw, kind: str) -> str:
    """One claim about a workload of `kind`: bound, implicit, explicit, range, lower bound, or arithmetic."""
    form = pick(draw, ("bound", "implicit", "implicit", "explicit", "explicit", "range", "at_least",
                                 "ratio", "arithmetic"))
    if form == "bound" and kind in ("collective", "training"):  # they have no bound
        form = "explicit"
    if form == "bound":
        return pick(draw, ("memory-bound", "compute-bound", "overhead-bound", "bound = memory"))
    if form in ("implicit", "at_least"):
        phrase = pick(draw, IMPLICIT[kind])
        number = draw(numbers())
        if form == "at_least":
            return f"{number}+ {phrase}"
        comparator = pick(draw, ("", "≈ ", "~", "< ", "≥ "))
        return f"{comparator}{number} {phrase}" + (draw(tolerances()) if comparator.startswith(("≈", "~")) else "")
    metric, units = pick(draw, METRICS[kind])
    unit = pick(draw, units)
    if form == "range":
        low, high = sorted([draw(integers(1, 5000)), draw(integers(1, 5000))])
        sep = pick(draw, ("–", ".."))
        return f"{metric} = {low}{sep}{high}" + (f" {unit}" if unit else "")
    if form == "ratio":  # of two metrics in the same unit
        other, _ = pick(draw, [m for m in METRICS[kind] if m[1] == units])
        return f"{metric} / {other} {pick(draw, ('≈', '<', '>'))} {draw(numbers())}×"
    comparator = pick(draw, COMPARATORS)
    if form == "arithmetic":  # the value as the arithmetic that gives it: 2 × 8192² B, (4096 + 128) * 2 B
        power = pick(draw, ("²", "³", f"^{draw(integers(1, 4))}", ""))
        product = f"{draw(integers(1, 64))} {pick(draw, ('*', '×', '/'))} {draw(integers(1, 8192))}{power}"
        if draw(st.booleans()):
            product = f"({draw(integers(0, 4096))} {pick(draw, ('+', '-'))} {draw(integers(1, 4096))}) * {product}"
        return f"{metric} {comparator} {product}" + (f" {unit}" if unit else "") \
            + (draw(tolerances()) if comparator in ("≈", "~") else "")
    text = f"{metric} {comparator} {_with_unit(draw(numbers()), unit, draw)}"
    return text + (draw(tolerances()) if comparator in ("≈", "~") else "")


class _Names:
    def __init__(self):
        self.count = 0

    def new(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"


@st.composite
def elementwise_expressions(draw, tensor: str, depth: int = 0) -> str:
    """An expression over `tensor` (which it names at least once) and constants."""
    if depth >= 3 or not draw(integers(0, 2)):
        return tensor
    form = pick(draw, ("binary", "binary", "function", "power", "constant", "minmax", "paren", "binary", "function",
                       "cast", "move"))
    if form == "move" and depth:  # inside an expression: a bare copy does no arithmetic, so it has no intensity.
        # A copy takes a named tensor (of an expression: refused); a transpose needs a matrix, which the grown tensors
        # often are not: the documents' cases try transposes (tests/documents/workloads.md)
        return f"copy({tensor + ' * 2' if rarely(draw, 60) else tensor})"
    if form == "cast" and rarely(draw, 30):  # casts nested deep, each level checked
        levels = pick(draw, (8, 60, 400))
        text = tensor
        for level in range(levels):
            text = f"{('fp64', 'fp32')[level % 2]}({text} * 2)"  # an even count of levels: it ends in fp32
        return text
    inner = draw(elementwise_expressions(tensor, depth + 1))
    if form == "cast":
        return pick(draw, BAD_CASTS if rarely(draw, 60) else CASTS).format(inner)
    if form == "binary":
        op = pick(draw, ("+", "-", "*", "/"))
        other = pick(draw, (tensor, str(draw(integers(1, 9))), "0.5"))
        return f"{inner} {op} {other}" if draw(st.booleans()) else f"{other}{op}{inner}"
    if form == "function":
        return f"{pick(draw, FUNCTIONS)}({inner})"
    if form == "power":
        return f"({inner})" + pick(draw, ("²", "^2", "^3", "³"))
    if form == "minmax":
        return f"{pick(draw, ('max', 'min'))}({inner}, {draw(integers(0, 3))})"
    if form == "paren":
        return f"({inner})"
    return f"{inner} * {draw(numbers())}"


def _launch_count(draw) -> str:
    """A count of launches: mostly an ordinary one, now and then huge (computed, or an overflow named where it
    happens), rarely one refused (zero, past a float, a fraction)."""
    return pick(draw, BAD_COUNTS if rarely(draw, 60) else HUGE_COUNTS if rarely(draw, 15) else COUNTS)


def _claim_lines(draw, kind: str, name: str | None) -> list[str] | str:
    """The claims of a workload: the one-line form (`is a, b`) or an indented block (returned as lines)."""
    count = draw(integers(1, 4))
    found = [draw(claims(kind)) for _ in range(count)]
    if name is None or draw(st.booleans()):
        return " is " + ", ".join(found)
    indent = pick(draw, ("    ", "  ", "\t", "        "))
    lines = []
    for claim in found:
        if not draw(integers(0, 5)):
            lines.append(indent + pick(draw, QUOTES).replace("\n", "\n" + indent))
        if not draw(integers(0, 6)):
            lines.append(indent + pick(draw, COMMENTS))
        lines.append(indent + claim)
    return lines


@st.composite
def valid_specs(draw, required: tuple[str, ...] = ()) -> str:
    """A spec grown from the language's pieces: mostly valid, so that the model and the claims are checked.
    `required` are kinds of statement it has first (`stream`, for a timeline to draw)."""
    names = _Names()
    current = [pick(draw, DEVICES)]  # the device in force, whose links a collective may use
    lines = [f"device {current[0]}"]
    tensors: list[tuple[str, str, tuple[int, ...]]] = []
    elementwise: list[str] = []

    def tensor(dims=None, dtype=None) -> str:
        name = names.new(pick(draw, ("x", "t", "act", "x_")))
        dtype = dtype or pick(draw, DTYPES)
        dims = dims or tuple(draw(st.lists(st.sampled_from(SIZES), min_size=1, max_size=3)))
        lines.append(f"{name} = {dtype}[{', '.join(str(d) for d in dims)}]")
        tensors.append((name, dtype, dims))
        return name

    def workload(kind: str, head: str, named: bool) -> None:
        if kind in OBSERVED and rarely(draw, 10):
            head += f" observed {pick(draw, UNFIT_FIGURES if rarely(draw, 6) else OBSERVED[kind])}"
        name = names.new(pick(draw, ("y", "w", "step", "z"))) if named else None
        body = _claim_lines(draw, kind, name)
        start = f"{name} = {head}" if name else head
        comment = ":  " + pick(draw, COMMENTS) if isinstance(body, list) and not draw(integers(0, 5)) else ":"
        if isinstance(body, str):
            lines.append(start + body)
        else:  # a block, sometimes with a comment after the workload's own text
            lines.append(start + comment)
            lines.extend(body)
        if named and kind == "elementwise":
            elementwise.append(name)

    count = draw(integers(1, 8))
    for index in range(len(required) + count):
        # a workload with claims first: the simplest choice (Hypothesis's first, and where it shrinks to) checks one
        kind = required[index] if index < len(required) else pick(draw, (
            "elementwise", "tensor", "elementwise", "on", "matmul", "rowwise", "attention", "stream", "decode",
            "training", "collective", "device_fact", "value", "set", "quote", "comment", "blank", "device"))
        named = draw(st.booleans())
        if kind == "tensor":
            tensor()
        elif kind == "elementwise":
            base = pick(draw, [t[0] for t in tensors]) if tensors and draw(st.booleans()) else tensor()
            mode = pick(draw, ("", " eager", " fused", " fused with 128 threads per block",
                                         " with 512 threads per block"))
            workload("elementwise", draw(elementwise_expressions(base)) + mode, named)
        elif kind == "on":
            shape = pick(draw, ("4096²", "4096^2", "4096 x 4096", "4096×4096", "1024x1024",
                                          "8192 × 1024", "100³", "bf16[4096, 4096]"))
            dtype = "" if "[" in shape else " " + pick(draw, DTYPES)
            workload("elementwise", f"{draw(elementwise_expressions('x'))} on {shape}{dtype}", False)
        elif kind == "matmul":
            dtype = pick(draw, DTYPES)
            m, k, n = (pick(draw, (128, 1000, 1024, 4096, 8192)) for _ in range(3))
            batch = pick(draw, ((), (2,), (4,)))
            a, b = tensor((*batch, m, k), dtype), tensor((*batch, k, n), dtype)
            tiles = pick(draw, ("", " with 128x256 tiles", " with 64x64 tiles", " with 128×128 tiles"))
            workload("matmul", f"{a} @ {b}{tiles}", True)
        elif kind == "rowwise":
            base = tensor(dtype=pick(draw, ("bf16", "fp16")))
            op = pick(draw, ("softmax", "sum", "mean", "amax", "layernorm", "rmsnorm"))
            workload("rowwise", f"{op}({base}){pick(draw, ('', ' eager', ' fused'))}", True)
        elif kind == "attention":
            dtype = pick(draw, ("bf16", "fp16"))
            batch, heads, seq, dim = (pick(draw, v) for v in ((1, 2), (8, 32), (128, 1024, 4096),
                                                                         (64, 128)))
            kv_heads = pick(draw, [h for h in (1, 8, heads) if heads % h == 0])
            q = tensor((batch, heads, seq, dim), dtype)
            k = tensor((batch, kv_heads, seq, dim), dtype)
            v = tensor((batch, kv_heads, seq, dim), dtype)
            workload("attention", f"attention({q}, {k}, {v}){pick(draw, (' eager', ' fused', ''))}",
                     True)
        elif kind == "stream":
            if not elementwise:
                base = tensor((pick(draw, (1024, 4096)),))
                workload("elementwise", f"{base} * 2", True)
            graph = pick(draw, ("", " as a CUDA graph", " as a graph"))
            if not draw(integers(0, 3)):  # replays of a graph of K launches, N times, a sync per launch or not
                graph_name = names.new("g")
                inner, outer = _launch_count(draw), _launch_count(draw)
                lines.append(f"{graph_name} = {inner} launches of {pick(draw, elementwise)} as a CUDA graph")
                lines.append(pick(draw, ("set sync = per_launch", "set sync = none", "", "set sync = per_launch",
                                         "set sync = sometimes" if rarely(draw, 10) else "")))
                workload("stream", f"{outer} launches of {graph_name}"
                                   f"{' as a CUDA graph' if rarely(draw, 60) else ''}", named)
                continue
            workload("stream", f"{draw(integers(1, 10000))} launches of {pick(draw, elementwise)}"
                               f"{graph}", named)
        elif kind == "decode":
            settings_ = [f"batch {pick(draw, (1, 8, 64, 512))}"]
            if draw(st.booleans()):
                settings_.append(f"context {pick(draw, (0, 128, 4096))}")
            if not draw(integers(0, 3)):
                settings_.append(f"{draw(integers(4, 20))} kernels per layer")
            if not draw(integers(0, 3)):  # what model code does: some of these are located errors (host_ops compiled)
                settings_.append(pick(draw, ("host_ops 2739", "attention math", "attention fused", "kv_repeat 4",
                                             "kv_repeat 3")))
            step = pick(draw, ("decode", "decode", "prefill"))
            if step == "prefill":
                settings_ = [settings_[0], f"prompt {pick(draw, (128, 2048))}"]
            mode = pick(draw, ("", " eager", " compiled", " as a CUDA graph", " compiled as a CUDA graph"))
            workload("decode", f"{step} {pick(draw, MODELS)}, {', '.join(settings_)}{mode}", named)
        elif kind == "training":
            settings_ = [f"batch {pick(draw, (1, 8, 2048))}", f"context {pick(draw, (128, 4096, 8192))}"]
            if draw(st.booleans()):
                settings_.append(f"gpus {pick(draw, (1, 8, 16384))}")
            workload("training", f"train {pick(draw, MODELS)}, {', '.join(settings_)}", named)
        elif kind == "collective":
            op = pick(draw, ("all_reduce", "all_gather", "reduce_scatter", "broadcast_to_all"))
            size = pick(draw, ("1 GB", "64 MB", "16 KiB", "tensor", "tensor", "1 GB", "64 MB", "16 KiB", "tensor",
                               "expression" if not draw(integers(0, 9)) else "tensor"))
            if size in ("tensor", "expression"):  # a named tensor (its bytes), or an expression over one (refused)
                moved = pick(draw, [t[0] for t in tensors]) if tensors else tensor()
                size = moved if size == "tensor" else f"{moved} * 2"
            gpus = pick(draw, (2, 4, 8))
            links = LINKS[current[0]]
            if not links:
                continue
            link = pick(draw, links)
            workload("collective", f"{op}({size}) across {gpus} GPUs over {link}", True)
        elif kind == "device_fact":
            fact, unit = pick(draw, DEVICE_FACTS)
            comparator = pick(draw, COMPARATORS)
            lines.append(f"device.{fact} {comparator} {_with_unit(draw(numbers()), unit, draw)}"
                         + (draw(tolerances()) if comparator in ("≈", "~") else ""))
        elif kind == "value":
            name = names.new("v")
            unit = pick(draw, ("B", "GB", "µs", "ms", "FLOP", "tokens/s", ""))
            lines.append(f"{name} = {_with_unit(draw(numbers()), unit, draw)}")
            suffix = f" {unit}" if unit else ""
            claim = pick(draw, (f"{name} * 2 ≈ {draw(numbers())}{suffix}", f"{name} > 0{suffix}",
                                          f"({name} + {name}) / {name} = 2", f"{name} / {draw(numbers())} < 1e30"
                                          f"{suffix}"))
            lines.append(claim)
        elif kind == "set":
            lines.append(pick(draw, (
                f"set tolerance = {draw(integers(1, 50))}%", f"set tolerance = ± {draw(integers(1, 20))}%",
                f"set threads_per_block = {draw(st.sampled_from((64, 128, 256, 512, 1024)))}",
                "set mode = eager", "set mode = fused", "set sources = model", "set sample_window = 1 ms",
                "set sync = per_launch", "set sync = none")))
        elif kind == "quote":
            lines.append(pick(draw, QUOTES))
        elif kind == "comment":
            lines.append(pick(draw, COMMENTS))
        elif kind == "blank":
            lines.append("")
        elif kind == "device":
            device = current[0] = pick(draw, DEVICES)
            if draw(st.booleans()):
                lines.append(f"device {device}")
            else:
                fact, unit = pick(draw, DEVICE_CHANGES)
                number = str(draw(integers(1, 200))) if draw(integers(0, 5)) else pick(draw, EXTREMES)
                value = _with_unit(number, unit, draw)
                base = f"device {names.new('my-gpu-')} from {device}" if draw(st.booleans()) else f"device {device}"
                lines.append(f"{base} with {fact} = {value}")
    newline = pick(draw, ("\n", "\n", "\n", "\r\n"))
    return newline.join(lines) + pick(draw, ("\n", "", "\n\n"))


# --- mutating the real specs -----------------------------------------------------------------------------------

TOKEN = re.compile(r"\s+|[A-Za-z_][A-Za-z0-9_]*|[0-9][0-9,.]*|.", re.S)
# Odd Unicode: both micro signs, NFKC look-alikes of digits, x and letters, direction marks, invisible and
# line-breaking characters, NUL, a lone surrogate's escape, and text from other scripts.
ODD = ("µ", "μ", "²", "³", "4096²", "４０９６", "٤٠٩٦", "𝟒𝟎𝟗𝟔", "ｘ", "×", "✕", "∗", "−", "–", "—", "≈", "≅",
       "\u200f", "\u200e", "\u202e", "\u202d", "\u2066", "\u2069", "\u200b", "\u200d", "\ufeff", "\u00a0", "\u3000",
       "\x00", "\x1b[31m", "\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\t", "ﬁ", "K", "Ω", "Å", "ℌ", "①",
       "e\u0301", "\u0301", "🙂", "𝑥", "ß", "İ", "ı", "\"", "“", "”", "#", "\\", "'''", "\U0010ffff", "\ufffd")
# Each character and what NFKC (or a careless keyboard) would turn it into.
LOOKALIKES = {"µ": "μ", "μ": "µ", "2": "²", "3": "³", "x": "×", "×": "x", "*": "∗", "-": "−", "~": "∼",
              " ": "\u00a0", '"': "“", "0": "０", "4": "４", "1": "¹", "=": "＝", "e": "е", "a": "а", "≈": "≅"}
# Numbers at the edges of what a float holds, and past them.
EXTREMES = ("0", "0.0", "1e300", "1e-300", "1e305", "1e308", "1.7976931348623157e308", "2e308", "0e400", "1e-400",
            "4.9e-324", "5e-324", "1e-320", "99999999999999999999", "1" + "0" * 39, "0.000000001", "1e15", "1e-15",
            # arithmetic where a number was: past a float's range, dividing by zero, not real, deep
            "10^999", "10^-999", "1/0", "0^-1", "(0 - 2)^0.5", "2 * 8192²", "(1e308 + 1e308)", "10k",
            "2" + " * 2" * 2000, "(" * 200 + "1" + ")" * 200)
KEYWORDS = ("device", "set", "is", "on", "with", "from", "fused", "eager", "launches", "of", "decode", "as",
            "a", "CUDA", "graph", "threads", "per", "block", "tiles", "across", "over", "model", "prefill",
            "train", "observed", "fp32(", "bf16(", "transpose(", "copy(", "sync", "per_launch",
            "µs", "MB", "GB/s", "%", "×", "²", "≈", "±", "–", "..", "=", "<", "≥", ":", ",", "(", ")", "[", "]",
            "@", "^", "+", "-", "*", "/", ".", "\n", "\n    ", "memory-bound", "400+", "1e400", "9" * 60, "0",
            "/s", "tokens/s", "tok/s", "GHz", "k", "mistral-7b.kv_bytes_per_token", "llama3-8b.hidden", "³")


@st.composite
def bases(draw) -> str:
    """A real spec: whole, or its first lines (device and settings) with a window of the lines after them."""
    text = SPECS[pick(draw, sorted(SPECS))]
    if not draw(integers(0, 5)):
        return text
    lines = text.split("\n")
    head = next((i for i, line in enumerate(lines) if line.startswith("device")), 0) + 1
    start = draw(integers(head, max(head, len(lines) - 1)))
    end = draw(integers(start, min(len(lines), start + 40)))
    return "\n".join(lines[:head] + lines[start:end]) + "\n"


@st.composite
def mutations(draw, text: str) -> str:
    """`text` with one mutation of the text: a cut, a swap, a dropped, repeated or replaced token, odd Unicode, a
    number made extreme."""
    tokens = TOKEN.findall(text) or [""]
    kind = pick(draw, ("truncate", "swap", "drop", "repeat", "replace", "odd", "lookalike",
                                 "indent", "newlines", "extreme"))
    at = draw(integers(0, len(tokens) - 1))
    if kind == "extreme":
        numbers = [i for i, token in enumerate(tokens) if token[:1].isdigit()]
        if numbers:
            tokens[pick(draw, numbers)] = pick(draw, EXTREMES)
    elif kind == "truncate":
        return text[:draw(integers(0, len(text)))]
    if kind == "swap":
        other = draw(integers(max(0, at - 8), min(len(tokens) - 1, at + 8)))
        tokens[at], tokens[other] = tokens[other], tokens[at]
    elif kind == "drop":
        del tokens[at]
    elif kind == "repeat":
        tokens.insert(at, tokens[at])
    elif kind == "replace":
        tokens[at] = pick(draw, KEYWORDS) if draw(st.booleans()) else pick(draw, tokens)
    elif kind == "odd":
        where = draw(integers(0, len(tokens[at])))
        tokens[at] = tokens[at][:where] + pick(draw, ODD) + tokens[at][where:]
    elif kind == "lookalike":
        chars = [i for i, c in enumerate(text) if c in LOOKALIKES]
        if chars:
            i = pick(draw, chars)
            return text[:i] + LOOKALIKES[text[i]] + text[i + 1:]
    elif kind == "indent":
        lines = text.split("\n")
        i = draw(integers(0, len(lines) - 1))
        lines[i] = pick(draw, (" ", "  ", "\t", "     ", "\t ")) + lines[i]
        return "\n".join(lines)
    elif kind == "newlines":
        return text.replace("\n", pick(draw, ("\r\n", "\r", "\n\n", "\u2028")))
    return "".join(tokens)


@st.composite
def mutated_specs(draw) -> bytes:
    """A real spec (or a grown one) after one to four mutations, and sometimes random bytes, as a file's bytes."""
    text = draw(bases()) if draw(integers(0, 3)) else draw(valid_specs())
    for _ in range(draw(integers(1, 4))):
        text = draw(mutations(text))
    data = text.encode("utf-8", "surrogatepass")
    if not draw(integers(0, 4)):
        at = draw(integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
    if not draw(integers(0, 15)):
        data = b"\xef\xbb\xbf" + data  # a byte order mark
    return data


@st.composite
def odd_unicode_specs(draw) -> bytes:
    """A grown spec with odd Unicode put between two of its tokens or inside one."""
    text = draw(valid_specs())
    tokens = TOKEN.findall(text)
    at = draw(integers(0, len(tokens)))
    odd = pick(draw, ODD) if draw(integers(0, 3)) else draw(st.text(min_size=1, max_size=3))
    tokens.insert(at, odd)
    return "".join(tokens).encode("utf-8", "surrogatepass")


# --- file names ------------------------------------------------------------------------------------------------

# Names a spec may have: most plain; some that a printer must escape (a workflow command, a terminal escape, a
# byte that is not UTF-8 as os.fsdecode gives it, a right-to-left override, a line break, HTML, a mention).
NAMES = ("spec", "spec", "spec", "spec", "spec", "spec", "::error title=FORGED::x", "a\x1b[31mred\x1b[0m",
         "bad\udcff", "r\u202eevil", "with space, comma:colon", "%0Aper%25cent", "ümlaut", "-dash", "##[error]x",
         "new\nline", "cr\rhere", "@someone #1", "<b>tag</b>&amp;", "tab\tname", "bell\x07\x9b",
         f"{MARKER} \"\"\" ''' \\ {{{{ x }}}}")


@st.composite
def file_names(draw, suffix: str) -> str:
    """A file's name (no folder) ending in `suffix`."""
    return pick(draw, NAMES) + suffix


# --- Markdown documents ----------------------------------------------------------------------------------------

PROSE = ("Some prose about the kernel: it moves 64 MB in ≈ 20 µs.", "Two spaces end this line.  ",
         "Inline `code`, *emphasis*, @someone and #12.", "<div>an HTML block</div>", "::error title=FORGED::prose",
         "\x1b[31mred\x1b[0m text", "right\u202eto left", "a\u2028separator and a\u0085next line",
         "# A heading", "## Sub ≈ µs", "| a | b |\n|---|---|\n| 1 | 2 |", "```python\nprint('not gpu')\n```",
         "    indented code\n    block", "~~~\nplain fence\n~~~", "Text with ```gpu inline``` in it.",
         "<!-- a comment -->", "1. item\n2. item", "> a quote", "- a list\n- of items", "Text <!-- gpu y -->.",
         "***", "Setext heading\n==============", "A line\\\nwith a hard break", "&lt;escaped&gt; &amp; <b>raw</b>")
# How a fenced block opens: most read as gpu blocks, some are near misses (a warning, nothing checked).
OPENERS = ("```gpu", "```gpu", "```gpu", "~~~gpu", "````gpu", "``` gpu", "```gpu title=a", "```GPU", "```gpu,",
           "```{.gpu}", "```Gpu", "```gpus", "``` python")
CONTAINERS = ("", "", "", "- ", "1. ", "> ", "  - ", "> - ")


def _contained(lines: list[str], container: str) -> list[str]:
    """`lines` inside a list item or block quote: the marker on the first line, its width (or `>`) on the rest."""
    if not container:
        return lines
    rest = "> " if container.startswith(">") else " " * len(container)
    if container.startswith("> ") and len(container) > 2:  # a list inside a quote
        rest = "> " + " " * (len(container) - 2)
    return [container + lines[0]] + [(rest + line) if line else rest.rstrip() for line in lines[1:]]


@st.composite
def gpu_blocks(draw, spec: str) -> str:
    """`spec` in a fence (of any opener, sometimes unclosed, in a container) or in a hidden comment."""
    lines = spec.rstrip("\n").split("\n")
    form = pick(draw, ("fence", "fence", "fence", "fence", "hidden", "hidden-one-line", "hidden-near", "buried"))
    if form == "fence":
        opener = pick(draw, OPENERS)
        closer = opener[: len(opener) - len(opener.lstrip("`~"))]
        body = [opener] + lines + ([closer] if draw(integers(0, 7)) else [])
        return "\n".join(_contained(body, pick(draw, CONTAINERS)))
    if form == "hidden":
        return "\n".join(["<!-- gpu"] + lines + ["-->"])
    if form == "hidden-one-line":
        return f"<!-- gpu {lines[0]} -->"
    if form == "hidden-near":
        return "\n".join([pick(draw, ("<!-- GPU", "<!--gpu", "<!-- Gpu"))] + lines + ["-->"])
    return "\n".join(["<div>", pick(draw, ("<!-- gpu", "```gpu"))] + lines + ["-->", "</div>"])


@st.composite
def markdown_documents(draw, required: tuple[str, ...] = ()) -> bytes:
    """A Markdown document: prose, headings, lists and quotes, with a grown spec (sometimes split in two) in gpu
    blocks, near misses among them; each line break `\\n`, `\\r\\n` or `\\r` (or one kind throughout)."""
    spec = draw(valid_specs(required)) if draw(integers(0, 3)) else draw(mutations(draw(valid_specs(required))))
    spec = normalized_breaks(spec)
    parts = [pick(draw, PROSE) for _ in range(draw(integers(0, 3)))]
    lines = spec.split("\n")
    split = draw(integers(1, max(1, len(lines) - 1))) if draw(integers(0, 2)) == 0 else len(lines)
    first, second = "\n".join(lines[:split]), "\n".join(lines[split:])
    for piece in (first, second):
        if piece.strip():
            parts.insert(draw(integers(0, len(parts))), draw(gpu_blocks(piece)))
    for _ in range(draw(integers(0, 2))):
        parts.insert(draw(integers(0, len(parts))), pick(draw, PROSE))
    text = "".join(part + pick(draw, ("\n\n", "\n\n", "\n")) for part in parts)
    style = pick(draw, ("\n", "\n", "\r\n", "\r", "mixed"))
    pieces = text.split("\n")
    text = pieces[0] + "".join((pick(draw, ("\n", "\r\n", "\r")) if style == "mixed" else style) + piece
                               for piece in pieces[1:])
    data = text.encode("utf-8", "surrogatepass")
    return (b"\xef\xbb\xbf" + data) if not draw(integers(0, 9)) else data


def normalized_breaks(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


# --- numbers in prose: `about 5.0 ms<!-- gpu: ≈ tiny.time -->` ---------------------------------------------------

# 1000 launches of a 2 µs kernel launched every 5 µs: 5.00 ms in all, the GPU busy 40% of it.
PROSE_BLOCK = "```gpu\ndevice H100-SXM with launch_cost = 5 µs\nv = bf16[4096]\nsmall = v * 2\n" \
              "tiny = 1000 launches of small\n```"
# Each metric with the numbers and unit that hold for it (or nearly: ≈ claims both pass and fail), and hostile ones.
PROSE_METRICS = (("tiny.time", ("5.0", "5", "4.3", "5.002", "6"), "ms"), ("small.time", ("2.00", "2", "3"), "µs"),
                 ("tiny.launches", ("1,000", "1000", "999"), ""), ("tiny.busy_share", ("40", "39.98", "50"), "%"),
                 ("tiny.time / small.time", ("2,500", "2501"), "×"), ("tiny.time * 1000", ("5", "5.0"), "s"),
                 ("nothing.time", ("5",), "ms"), ("tiny.nope", ("5",), "ms"), ("tiny.time", ("5",), "GB"))
PROSE_COMPARISONS = ("≈", "≈", "≈", "=", "<", "≤", ">", "≥", "~", "<=", ">=", "", "≈ ≈", "==")
PROSE_UNITS = ("ms", "µs", "us", "s", "%", "×", "x", "GB", "millis", "ms/s", "TB/s", "")
PROSE_GAPS = ("", " ", " ", "\u00a0", "\u202f", "\u2009", "  ", "\t")
# What stands before the number, and between its unit and the comment: most are prose, some make it unreadable.
PROSE_BEFORE = ("about ", "about ", "takes ", "", "(", "**", "_", "`", "-", "−", "H", "1 ", "1,", "≈", "~", "| ",
                "3–", "3-", ".")
# (Emphasis closes only as it opened: after `**40%*` a comment changes how CommonMark pairs the stars, by its
# rule of three, as any punctuation there would; nobody means that, so the strategy does not write it.)
PROSE_AFTER = ("", "", "", "`", ".", " ")
PROSE_TOLERANCES = ("", "", "", " ± 5%", " ± 1%", " +/- 1 ms", " ± ", " ± 1e999%", " ± 5 GB", " ± 50%")
PROSE_OPENINGS = ("<!-- gpu:", "<!-- gpu:", "<!-- gpu:", "<!--gpu:", "<!--  gpu: ", "<!-- GPU:", "<!-- gpu ",
                  "<!-- gpu")
PROSE_CLOSINGS = (" -->", " -->", "-->", "", " --", "\n-->", " --> -->")
PROSE_TAILS = (" in all.", "", ".", " and more", " of the time", "\u2028", "\x1b[31m::error::x", "\u202e", " `x`")
PROSE_PLACES = ("", "", "", "# ", "- ", "1. ", "> ", "| a | ", "    ", "<div>", "`")


@st.composite
def prose_checks(draw) -> str:
    """One sentence with a number checked in it: mostly as the syntax wants, sometimes with one thing wrong (the
    number unreadable, the unit unknown or of the wrong kind, the comment open or malformed, hostile text)."""
    metric, values, unit = pick(draw, PROSE_METRICS)
    number = pick(draw, values) if draw(integers(0, 4)) else draw(numbers())
    unit = unit if draw(integers(0, 5)) else pick(draw, PROSE_UNITS)
    written = number + (pick(draw, PROSE_GAPS) + unit if unit else "")
    comparison = pick(draw, PROSE_COMPARISONS)
    comment = (pick(draw, PROSE_OPENINGS) + f" {comparison} {metric}{pick(draw, PROSE_TOLERANCES)}"
               + pick(draw, PROSE_CLOSINGS))
    before, after = pick(draw, PROSE_BEFORE), pick(draw, PROSE_AFTER)
    if before in ("**", "_", "`") and draw(integers(0, 3)):
        after = before  # emphasis or a code span around the number
    return pick(draw, PROSE_PLACES) + "It " + before + written + after + comment + pick(draw, PROSE_TAILS)


@st.composite
def prose_documents(draw) -> bytes:
    """A Markdown document whose sentences check numbers against the block that defines `tiny` and `small` (before
    or after them), some in fences or code spans that are never read; line breaks of one kind or mixed, sometimes
    a byte-order mark."""
    parts = [draw(prose_checks()) for _ in range(draw(integers(1, 4)))]
    if draw(integers(0, 3)):
        parts.insert(draw(integers(0, len(parts))), PROSE_BLOCK)
    if not draw(integers(0, 4)):  # the syntax shown in a fence: never read
        parts.insert(draw(integers(0, len(parts))), "```markdown\n" + draw(prose_checks()) + "\n```")
    if not draw(integers(0, 3)):
        parts.insert(draw(integers(0, len(parts))), pick(draw, PROSE))
    text = "".join(part + pick(draw, ("\n\n", "\n\n", "\n")) for part in parts)
    style = pick(draw, ("\n", "\n", "\r\n", "\r", "mixed"))
    pieces = text.split("\n")
    text = pieces[0] + "".join((pick(draw, ("\n", "\r\n", "\r")) if style == "mixed" else style) + piece
                               for piece in pieces[1:])
    data = text.encode("utf-8", "surrogatepass")
    return (b"\xef\xbb\xbf" + data) if not draw(integers(0, 9)) else data


# --- the spec files every command is given ---------------------------------------------------------------------

SPEC_STRATEGIES = ("grown", "mutated", "unicode", "bytes", "markdown")


@st.composite
def spec_files(draw, strategies: tuple[str, ...] = SPEC_STRATEGIES, required: tuple[str, ...] = ()) \
        -> tuple[str, str, bytes]:
    """(the strategy that made it, the file's name, its bytes): a grown spec (with the `required` statements),
    a mutated real one, one with odd Unicode, random bytes, or a Markdown document; a .gpu file, or a .md one for
    Markdown."""
    strategy = pick(draw, strategies)
    if strategy == "grown":
        data = draw(valid_specs(required)).encode("utf-8", "surrogatepass")
    elif strategy == "mutated":
        data = draw(mutated_specs())
    elif strategy == "unicode":
        data = draw(odd_unicode_specs())
    elif strategy == "bytes":
        data = draw(st.binary(max_size=400))
    elif strategy == "prose":  # not in SPEC_STRATEGIES: the tests of numbers in prose ask for it
        data = draw(prose_documents())
    else:
        data = draw(markdown_documents(required))
    markdown = strategy in ("markdown", "prose") or (strategy == "bytes" and not draw(integers(0, 3)))
    suffix = pick(draw, (".md", ".md", ".markdown")) if markdown else ".gpu"
    return strategy, draw(file_names(suffix)), data


# --- results files and profiles --------------------------------------------------------------------------------

# What each kind of workload's harness times (gpuspec.sources reads these).
TIMED = {"stream": ("time", "busy_time"), "decode": ("step_time", "gpu_time")}
HOSTILE_VALUES = (float("nan"), float("inf"), float("-inf"), -1, -1e-9, 0, 0.0, -0.0, 1e308, 1.7976931348623157e308,
                  5e-324, 1e-320, 10**400, 2**63, 2**1024, -(10**30), "", "0.001", "x" * 100_000,
                  "\x1b[31m::error title=FORGED::x", "\u202e", "\ud800", None, True, False, [], {}, [[[[[]]]]],
                  {"median": 1}, 1e-12, 86_400.0, 86_400.1, 10.0, 1e16, 1e19, 0.5)


def seconds(draw, low: float = 1e-9, high: float = 10.0) -> float:
    """A time in seconds, log-uniform in [low, high], sometimes exactly at an end."""
    if not draw(integers(0, 9)):
        return pick(draw, (low, high))
    return 10 ** draw(st.floats(math.log10(low), math.log10(high)))


def timing_summary(draw, median: float, spread: float | None = None) -> dict:
    """A timing summary as gpuspec.timing.Summary.to_dict writes it, of samples spread around `median`."""
    from gpuspec import timing

    spread = pick(draw, (0.0, 0.001, 0.01, 0.2)) if spread is None else spread
    count = draw(integers(1, 12))
    samples = [median * (1 + spread * (i - count // 2) / max(1, count)) for i in range(count)]
    return {**timing.summarize(samples).to_dict(), "stopped_by": pick(draw, ("noise", "budget", "count"))}


def workloads_of(name: str, data: bytes) -> list[tuple[int, str, object]]:
    """The (line, statement, workload) of each workload of a spec file's bytes; none when it does not check."""
    from gpuspec import markdown
    from gpuspec.api import compile_text
    from gpuspec.diagnostics import SpecError
    from gpuspec.text import UnreadableText, decode

    try:
        source = decode(data, name).spec()
        if name.endswith((".md", ".markdown")):
            source = markdown.extract(name, source.text)
        program = compile_text(source)
    except (SpecError, UnreadableText):
        return []
    return [(span.line, text, workload) for span, text, workload in program.workloads]


def gpu_name(draw, workloads) -> str | None:
    """The GPU a results file or profile says it ran on: usually the spec's own device as CUDA would name it."""
    devices = sorted({w.device.name.split(" ")[0] for _, _, w in workloads})
    return pick(draw, (*(f"NVIDIA {d}" for d in devices), *(f"NVIDIA {d}" for d in devices),
                       "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "AMD Instinct MI300X", "", None))


@st.composite
def valid_results(draw, name: str, data: bytes) -> dict:
    """A results file as gpuspec.results.save writes it, measuring some workloads of the spec `data` (and
    keys of no workload): statuses ok, wrong and error, timings of every size a GPU or the interpreter gives."""
    from gpuspec import harness

    workloads = workloads_of(name, data)
    gpu = gpu_name(draw, workloads)
    provenance = {"gpu": gpu, "device": pick(draw, ("cuda", "cpu")), "torch": "2.13.0", "date": "2026-05-09"}
    measurements = []
    chosen = [w for w in workloads if draw(integers(0, 4))] or workloads[:1]
    for line, statement, workload in chosen:
        status = pick(draw, ("ok", "ok", "ok", "ok", "wrong", "error"))
        metrics = {}
        if status == "ok":
            names = TIMED.get(workload.kind, ("time",))
            metrics[names[0]] = timing_summary(draw, seconds(draw))
            if len(names) > 1 and draw(integers(0, 3)):  # a part (busy, GPU time): at most timing noise above it
                part = metrics[names[0]]["median"] * pick(draw, (1.0, 0.999, 0.5, 0.01, 1.04))
                metrics[names[1]] = timing_summary(draw, part, spread=0.0)
        measurements.append({"key": harness.workload_key(statement, workload), "line": line, "statement": statement,
                             "status": status, "reason": None if status == "ok" else "the result was off by 3%",
                             "metrics": metrics})
    if not draw(integers(0, 5)):
        measurements.append({"key": "0123456789abcdef", "line": 1, "statement": "y = x * 2", "status": "ok",
                             "reason": None, "metrics": {"time": timing_summary(draw, seconds(draw))}})
    return {"version": 1, "runs": [{"spec": name, "provenance": provenance, "measurements": measurements}]}


@st.composite
def valid_profiles(draw, name: str, data: bytes) -> dict:
    """A profile as gpuspec.profiles.save writes it, for the spec's GPU (usually), each fact measured anywhere in
    the range a profile may hold (its ends included)."""
    from gpuspec import schema

    gpu = gpu_name(draw, workloads_of(name, data))
    facts = {}
    for fact, field in schema.FACTS.items():
        if draw(integers(0, 3)):
            low, high = max(field.low, 1e-300), field.high
            facts[fact] = pick(draw, (low, high)) if not draw(integers(0, 5)) else \
                10 ** draw(st.floats(math.log10(low), math.log10(high)))
    return {"version": 1, "gpu": gpu, "provenance": {"gpu": gpu, "device": "cuda", "torch": "2.13.0"},
            "facts": facts, "samples": {"copy": [1.0, 2.0]}, "ladder": {}}


def _places(value, path=()):
    """Every (path, value) in a JSON value, the value itself first."""
    waiting = [(path, value)]
    while waiting:
        path, item = waiting.pop()
        yield path, item
        if isinstance(item, dict):
            waiting.extend((path + (key,), child) for key, child in item.items())
        elif isinstance(item, list):
            waiting.extend((path + (i,), child) for i, child in enumerate(item))


def _at(value, path):
    for step in path:
        value = value[step]
    return value


@st.composite
def json_mutations(draw, value):
    """`value` (a JSON object, copied) with one key dropped, a value replaced by a hostile one or by another key's,
    a key added, a number scaled, or two values swapped."""
    import copy

    value = copy.deepcopy(value)
    places = list(_places(value))
    path, item = choose(draw, places) if len(places) > 1 else ((), value)
    kind = pick(draw, ("drop", "replace", "replace", "add", "scale", "swap", "retype"))
    if not path:
        kind = "add" if isinstance(value, dict) else kind
    parent = _at(value, path[:-1]) if path else None
    if kind == "drop" and path:
        del parent[path[-1]]
    elif kind == "replace" and path:
        other = choose(draw, HOSTILE_VALUES) if draw(integers(0, 3)) else choose(draw, places)[1]
        parent[path[-1]] = copy.deepcopy(other)  # a copy: a value put inside itself would never end
    elif kind == "add" and isinstance(item, dict):
        item[pick(draw, ("extra", "median", "p10", "gpu", "runs", "x" * 300, "a.b", "\x1b", ""))] = \
            copy.deepcopy(choose(draw, HOSTILE_VALUES))
    elif kind == "scale" and path and isinstance(item, (int, float)) and not isinstance(item, bool):
        parent[path[-1]] = item * pick(draw, (0, -1, 1e300, 1e-300, 10, 0.1, 1.5, 1e6))
    elif kind == "swap" and path and len(places) > 2:
        other, _ = choose(draw, places)
        if other and other[:len(path)] != path and path[:len(other)] != other:
            parent[path[-1]], _at(value, other[:-1])[other[-1]] = _at(value, other), item
    elif kind == "retype" and path:
        parent[path[-1]] = [item] if not isinstance(item, list) else {"item": item}
    return value


def _deep(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


@st.composite
def json_files(draw, valid: dict) -> tuple[str, bytes]:
    """(how it was made, the bytes of a JSON file) from a valid object: as it is, mutated, or hostile as text
    (truncated, bytes that are not UTF-8, a key given twice, nesting 100,000 deep, a number of 5,000 digits)."""
    form = pick(draw, ("valid", "valid", "mutated", "mutated", "mutated", "mutated", "text", "grown"))
    value = valid
    if form == "mutated":
        for _ in range(draw(integers(1, 3))):
            value = draw(json_mutations(value))
    if form == "grown":
        value = draw(st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=20),
                                  lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                                      st.sampled_from(("version", "runs", "facts", "gpu", "median", "x")), inner,
                                      max_size=4), max_leaves=20))
        if isinstance(value, dict) and draw(st.booleans()):
            value = {"version": 1, **value}
    try:
        # a valid file holds a name of undecodable bytes as gpuspec writes it (files.json_bytes: a JSON escape);
        # the others may hold the raw surrogate's bytes, which is not UTF-8
        errors = "backslashreplace" if form == "valid" else "surrogatepass"
        data = json.dumps(value, ensure_ascii=pick(draw, (True, False))).encode("utf-8", errors)
    except (ValueError, OverflowError):
        data = b"{}"
    if form == "text":
        kind = pick(draw, ("truncate", "bytes", "twice", "deep", "digits", "bom", "empty", "not-json", "deep-value"))
        if kind == "truncate":
            data = data[:draw(integers(0, len(data)))]
        elif kind == "bytes":
            at = draw(integers(0, len(data)))
            data = data[:at] + draw(st.binary(min_size=1, max_size=6)) + data[at:]
        elif kind == "twice":
            key = pick(draw, (b'"median": ', b'"version": ', b'"facts": ', b'"key": ', b'"gpu": '))
            data = data.replace(key, key + b'1e-3, ' + key, 1)
        elif kind == "deep":
            data = _deep(draw(integers(1_000, 100_000)))
        elif kind == "deep-value":
            data = data.replace(b'"gpu": ', b'"gpu": ' + _deep(50_000) + b', "x": ', 1)
        elif kind == "digits":
            data = data.replace(b'"median": ', b'"median": 1' + b"0" * 5_000 + b', "y": ', 1)
        elif kind == "bom":
            data = b"\xef\xbb\xbf" + data
        elif kind == "empty":
            data = b""
        else:
            data = pick(draw, (b"NaN", b"[]", b"null", b"1", b'"text"', b"{,}", b"\x00" * 10, b"{'version': 1}"))
        return f"hostile-{kind}", data
    return form, data


@st.composite
def results_cases(draw):
    """(strategy, name, spec bytes, how the results file was made, its bytes)."""
    strategy, name, data = draw(spec_files(("grown", "grown", "grown", "markdown", "mutated")))
    made, side = draw(json_files(draw(valid_results(name, data))))
    return strategy, name, data, made, side


@st.composite
def profile_cases(draw):
    """(strategy, name, spec bytes, how the profile was made, its bytes)."""
    strategy, name, data = draw(spec_files(("grown", "grown", "grown", "markdown", "mutated")))
    made, side = draw(json_files(draw(valid_profiles(name, data))))
    return strategy, name, data, made, side
