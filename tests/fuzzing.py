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

import contextlib
import functools
import io
import json
import os
import re
import signal
import traceback
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from gpuspec import cli

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


@functools.lru_cache(maxsize=None)
def _choices(options: tuple):
    return st.sampled_from(options)


def pick(draw, options):
    """One of `options` (a strategy made once per list of options: making one is slower than drawing from it)."""
    return draw(_choices(tuple(options)))


integers = functools.lru_cache(maxsize=None)(st.integers)


# --- the property ----------------------------------------------------------------------------------------------

HANG_SECONDS = 20.0
ERROR_LINE = re.compile(r"^(.+?):(\d+):(\d+): error\[([a-z-]+)\]: (.+)$", re.M)
SUMMARY = re.compile(r"^\d+ passed, \d+ failed(, \d+ skipped)?$")
FORMATS = ("text", "json", "junit", "markdown", "github")


class Hang(BaseException):
    """Raised by the alarm when one check runs longer than HANG_SECONDS (a BaseException: nothing swallows it)."""


def _alarm(signum, frame):
    raise Hang


# Building the argument parser is most of the time a small spec takes to check; the fuzz builds it once.
_PARSER = functools.lru_cache(maxsize=1)(cli._parser)


@contextlib.contextmanager
def _one_parser():
    built, cli._parser = cli._parser, _PARSER
    try:
        yield
    finally:
        cli._parser = built


def run_check(path: Path, format: str = "text") -> tuple[object, str, str]:
    """(exit code, stdout, stderr) of `gpuspec check --format FORMAT PATH`, run by `gpuspec.cli.main` here.

    The exit code is a string naming the problem when the command did not return one: an exception that
    escaped, a SystemExit, or a hang.
    """
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _one_parser():
            code = cli.main(["check", "--format", format, str(path)])
    except Hang:
        code = f"hang: no result after {HANG_SECONDS:g} s"
    except SystemExit as stop:
        code = f"SystemExit({stop.code!r})"
    except BaseException:  # noqa: B036 -- anything else is what the property forbids
        code = "exception:\n" + traceback.format_exc()[-4000:]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue()


def problem(data: bytes, folder: Path, format: str = "text", outcomes: dict | None = None) -> str | None:
    """None when `data`, as a spec file, has the property; else what is wrong (for the failure message).

    `outcomes`, when given, counts the exit codes seen.
    """
    path = folder / "fuzz.gpu"
    path.write_bytes(data)
    first = run_check(path, format)
    code, out, err = first
    if isinstance(code, str):
        return code
    if outcomes is not None:
        outcomes[code] = outcomes.get(code, 0) + 1
    if "Traceback" in out + err:
        return "a traceback was printed:\n" + (out + err)[-3000:]
    if code == 3:  # main caught an exception: GPUSPEC_DEBUG=1 shows its traceback
        return "an internal error (exit 3):\n" + err[-3000:]
    wrong = _shape_problem(code, out, str(path), format)
    if wrong:
        return wrong
    second = run_check(path, format)  # the second run reads the parse from the cache the first one filled
    if second != first:
        return f"a second run differs: exit {first[0]} then {second[0]}\n--- first ---\n{first[1][-1500:]}" \
               f"\n--- second ---\n{second[1][-1500:]}"
    return None


def _shape_problem(code: int, out: str, path: str, format: str) -> str | None:
    if code not in (0, 1, 2, 5):
        return f"exit code {code}"
    if code == 5 and "nothing checked: " not in out.lower() and format in ("text", "markdown", "github"):
        return f"exit 5 without saying that nothing was checked:\n{out[-2000:]}"
    if format == "text":
        errors = list(ERROR_LINE.finditer(out))
        if code == 2:
            if not errors:
                return f"exit 2 without a located error:\n{out[-2000:]}"
            for match in errors:
                if match.group(1) != path or int(match.group(2)) < 1 or int(match.group(3)) < 1:
                    return f"an error without a location in the file: {match.group(0)!a}"
        elif errors:
            return f"exit {code} with an error:\n{out[-2000:]}"
        if not SUMMARY.match(out.rstrip("\n").rsplit("\n", 1)[-1]):
            return f"no summary line at the end:\n{out[-1000:]}"
    elif format == "json":
        try:
            report = json.loads(out)
        except json.JSONDecodeError as error:
            return f"the JSON report does not parse: {error}"
        if (code == 2) != bool(report["errors"]):
            return f"exit {code} with {len(report['errors'])} errors in the JSON report"
        for error in report["errors"]:
            if error["file"] != path or not (isinstance(error["line"], int) and error["line"] >= 1) \
                    or not (isinstance(error["column"], int) and error["column"] >= 1):
                return f"a JSON error without a location: {error!a}"
    elif format == "junit":
        try:
            ElementTree.fromstring(out)
        except ElementTree.ParseError as error:
            return f"the JUnit report is not XML: {error}"
    elif format == "github":
        if code == 2 and f"::error file={path.replace(':', '%3A').replace(',', '%2C')},line=" not in out:
            return f"exit 2 without a located ::error command:\n{out[-2000:]}"
    return None


# --- growing valid specs from the language's pieces ------------------------------------------------------------

DEVICES = ("H100-SXM", "H100-PCIe", "H200", "A100-80GB", "A100-40GB", "B200", "L40S", "L4", "RTX-4090")
MODELS = ("llama3-8b", "llama3-70b", "llama2-7b", "mistral-7b", "llama3.1-8b", "mixtral-8x7b", "qwen2-7b")
DTYPES = ("bf16", "fp16", "fp32")
SIZES = (1, 3, 64, 100, 128, 1000, 1024, 4096, 8192)
FUNCTIONS = ("exp", "log", "sqrt", "rsqrt", "relu", "gelu", "silu", "sigmoid", "tanh", "erf", "abs")
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
# An observed figure after a workload (`observed 107 tokens/s`): some fit the kind, some do not (an error).
OBSERVED = {
    "elementwise": ("25 µs", "2.5 TB/s", "30 TFLOP/s", "9 tokens/s"), "matmul": ("1 ms", "600 TFLOP/s", "2 TB/s"),
    "rowwise": ("60 µs", "2 TB/s"), "attention": ("3 ms", "740 TFLOP/s"),
    "decode": ("107 tokens/s", "9.35 ms", "1.4 TB/s", "5 TFLOP/s"), "training": ("400 TFLOP/s", "6.75 s", "3 TB/s"),
    "collective": ("275 GB/s", "4 ms", "1 TFLOP/s"),
}
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
COMMENTS = ("# a comment", "# ≈ 20 µs, 4096², “quoted”", "#", "# --- a section ---")
QUOTES = ('"A sentence the claims below check."', '"x is 4096 × 4096 = 16,777,216 numbers."',
          "“curly quotes, with ≈ and µ”", '"a sentence\nover two lines"')


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
                                 "ratio"))
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
    form = pick(draw, ("binary", "binary", "function", "power", "constant", "minmax", "paren"))
    inner = draw(elementwise_expressions(tensor, depth + 1))
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
def valid_specs(draw) -> str:
    """A spec grown from the language's pieces: mostly valid, so that the model and the claims are checked."""
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
        if kind in OBSERVED and not draw(integers(0, 3)):
            head += f" observed {pick(draw, OBSERVED[kind])}"
        name = names.new(pick(draw, ("y", "w", "step", "z"))) if named else None
        body = _claim_lines(draw, kind, name)
        start = f"{name} = {head}" if name else head
        if isinstance(body, str):
            lines.append(start + body)
        else:
            lines.append(start + ":")
            lines.extend(body)
        if named and kind == "elementwise":
            elementwise.append(name)

    for _ in range(draw(integers(1, 8))):
        kind = pick(draw, ("tensor", "elementwise", "elementwise", "on", "matmul", "rowwise",
                                     "attention", "stream", "decode", "training", "collective", "device_fact",
                                     "value",
                                     "set", "quote", "comment", "blank", "device"))
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
            workload("stream", f"{draw(integers(1, 10000))} launches of {pick(draw, elementwise)}"
                               f"{graph}", named)
        elif kind == "decode":
            settings_ = [f"batch {pick(draw, (1, 8, 64, 512))}"]
            if draw(st.booleans()):
                settings_.append(f"context {pick(draw, (0, 128, 4096))}")
            if not draw(integers(0, 3)):
                settings_.append(f"{draw(integers(4, 20))} kernels per layer")
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
            size = pick(draw, ("1 GB", "64 MB", "16 KiB"))
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
                "set mode = eager", "set mode = fused", "set sources = model", "set sample_window = 1 ms")))
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
                value = _with_unit(str(draw(integers(1, 200))), unit, draw)
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
KEYWORDS = ("device", "set", "is", "on", "with", "from", "fused", "eager", "launches", "of", "decode", "as",
            "a", "CUDA", "graph", "threads", "per", "block", "tiles", "across", "over", "model", "prefill",
            "train", "observed",
            "µs", "MB", "GB/s", "%", "×", "²", "≈", "±", "–", "..", "=", "<", "≥", ":", ",", "(", ")", "[", "]",
            "@", "^", "+", "-", "*", "/", ".", "\n", "\n    ", "memory-bound", "400+", "1e400", "9" * 60, "0")


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
    """`text` with one mutation of the text: a cut, a swap, a dropped, repeated or replaced token, odd Unicode."""
    tokens = TOKEN.findall(text) or [""]
    kind = pick(draw, ("truncate", "swap", "drop", "repeat", "replace", "odd", "lookalike",
                                 "indent", "newlines"))
    at = draw(integers(0, len(tokens) - 1))
    if kind == "truncate":
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
