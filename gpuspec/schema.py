"""What the files gpuspec reads back hold, key by key: results files, harness reports and calibration profiles.

They may come from another machine or a pull request, so each is checked where it enters: every key's type and
range, numbers finite, counts whole, text of a sensible length, and related numbers in agreement (p10 ≤ median ≤
p90; a stream's GPU not busy for longer than the stream took). A problem is an `Invalid` that names the key as a JSON
path (`runs[0].measurements[3].metrics.time.p10`) and says what would be right. Checking never recurses on the
data's own depth, so no file can exhaust the stack.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Callable

from gpuspec.files import JSON_LIMIT, BadNumber, RepeatedKeys, read_json

VERSION = 1
STATUSES = ("ok", "wrong", "error")
DAY = 86_400.0
# Longer harness reasons (a compiler's error text) and statements (a spec's line, kept for people to read) are cut
# to these, with a note of how long they were, when a report is read or results are saved.
REASON_LONGEST = 2_000
STATEMENT_LONGEST = 100_000
# Free-form parts (unknown keys, a profile's raw samples) may nest this deep below where they start, no more.
FREE_DEPTH = 16
# A part of a measurement is timed apart from its whole (GPU events against a host clock), so it may come out a
# little longer by noise; beyond this it is not noise but numbers that contradict each other.
PART_SLACK = 0.05
# Rounding in interpolated percentiles may put two equal ones an ulp apart.
_ORDER_SLACK = 1e-9


class Invalid(ValueError):
    """Data that does not fit the schema: `where` is the key's JSON path, the message says what would be right."""

    def __init__(self, where: str, problem: str):
        super().__init__(f"{f'`{where}`' if where else 'the top level'} {problem}")
        self.where, self.problem = where, problem


def member(where: str, name: str) -> str:
    """The path of key `name` inside the object at `where`."""
    if _NAME.match(name):
        return f"{where}.{name}" if where else name
    return f"{where}[{_quoted(name)}]"


def index(where: str, position: int) -> str:
    return f"{where}[{position}]"


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")


def describe(value) -> str:
    """A value as an error message shows it: short, in JSON's words, with nothing a terminal would act on."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, BadNumber):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    if isinstance(value, int):
        if value.bit_length() > 1_000:  # str() of one past 4,300 digits raises
            return "a whole number of over 300 digits"
        text = str(value)
        return text if len(text) <= 40 else f"{text[:20]}… ({len(text)} digits)"
    if isinstance(value, str):
        return _quoted(value) if len(value) <= 40 else f"{_quoted(value, 40)} ({len(value):,} characters)"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def shortened(text: str, longest: int) -> str:
    """`text` if it has at most `longest` characters, else its start and how long it was, in `longest` in all."""
    if len(text) <= longest:
        return text
    tail = f" … (cut from {len(text):,} characters)"
    return text[: longest - len(tail)] + tail


def _quoted(text: str, longest: int = 40) -> str:
    """`text` in JSON's quotes, control characters as escapes, cut to `longest` characters with a … after."""
    quoted = json.dumps(text[:longest], ensure_ascii=False)
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in quoted) + \
        ("…" if len(text) > longest else "")


# --- the kinds of value ----------------------------------------------------------------------------------------

class Field:
    """One kind of value: `words` says what a right one is; check returns the value or raises Invalid."""

    words = "a value"

    def check(self, value, where: str):
        raise NotImplementedError

    def wrong(self, value, where: str) -> Invalid:
        return Invalid(where, f"is {describe(value)}; it must be {self.words}")


class Exactly(Field):
    def __init__(self, value: int):
        self.value, self.words = value, json.dumps(value)

    def check(self, value, where):
        if type(value) is not type(self.value) or value != self.value:
            raise self.wrong(value, where)
        return value


class OneOf(Field):
    def __init__(self, *choices: str):
        self.choices = choices
        self.words = "one of " + ", ".join(json.dumps(c) for c in choices)

    def check(self, value, where):
        if not isinstance(value, str) or value not in self.choices:
            raise self.wrong(value, where)
        return value


class Text(Field):
    def __init__(self, longest: int, *, shortest: int = 0, nullable: bool = False, what: str = "text"):
        self.longest, self.shortest, self.nullable = longest, shortest, nullable
        size = f"of {shortest:,} to {longest:,} characters" if shortest else f"of at most {longest:,} characters"
        self.words = f"{what} {size}" + (", or null" if nullable else "")

    def check(self, value, where):
        if value is None and self.nullable:
            return value
        if not isinstance(value, str) or not self.shortest <= len(value) <= self.longest:
            raise self.wrong(value, where)
        return value


class Whole(Field):
    def __init__(self, low: int, high: int, what: str):
        self.low, self.high = low, high
        self.words = f"a whole number of {what} from {low:,} to {high:,}"

    def check(self, value, where):
        if type(value) is not int or not self.low <= value <= self.high:
            raise self.wrong(value, where)
        return value


class Real(Field):
    """A finite number (an int or a float, never true or false) in a closed range of a unit."""

    def __init__(self, low: float, high: float, unit: str):
        self.low, self.high = low, high
        self.words = f"a finite number of {unit} from {low:g} to {high:g}"

    def check(self, value, where):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.wrong(value, where)
        try:
            number = float(value)
        except OverflowError:  # an int past the largest float
            raise self.wrong(value, where) from None
        if not (math.isfinite(number) and self.low <= number <= self.high):
            raise self.wrong(value, where)
        return value


class Scalar(Field):
    """Text of bounded length, a finite number, true, false or null: a provenance entry."""

    def __init__(self, longest: int):
        self.longest = longest
        self.words = f"text of at most {longest:,} characters, a finite number, true, false or null"

    def check(self, value, where):
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str) and len(value) <= self.longest:
            return value
        if isinstance(value, (int, float)) and _finite(value):
            return value
        raise self.wrong(value, where)


class Free(Field):
    """Any JSON a reader may ignore (a raw sample, a key a later version adds), still held to finite numbers,
    bounded text and depth, and keys given once. Walked with a list, not recursion."""

    def __init__(self, depth: int = FREE_DEPTH, longest: int = 10_000):
        self.depth, self.longest = depth, longest
        self.words = (f"JSON of finite numbers and text of at most {longest:,} characters, nested at most "
                      f"{depth} deep")

    def check(self, value, where):
        waiting = [(value, where, 0)]
        while waiting:
            item, path, depth = waiting.pop()
            if isinstance(item, dict):
                if depth >= self.depth:
                    raise Invalid(path, f"nests deeper than {self.depth} levels; it must be {self.words}")
                _once(item, path)
                waiting.extend((v, member(path, k), depth + 1) for k, v in item.items())
            elif isinstance(item, list):
                if depth >= self.depth:
                    raise Invalid(path, f"nests deeper than {self.depth} levels; it must be {self.words}")
                waiting.extend((v, index(path, i), depth + 1) for i, v in enumerate(item))
            elif isinstance(item, str):
                if len(item) > self.longest:
                    raise Invalid(path, f"is {describe(item)}; text here has at most {self.longest:,} characters")
            elif not (item is None or isinstance(item, bool) or isinstance(item, (int, float)) and _finite(item)):
                raise self.wrong(item, path)
        return value


class Refused(Field):
    """A key that has no place here: the message says which keys do."""

    def __init__(self, words: str):
        self.words = words

    def check(self, value, where):
        raise Invalid(where, f"is not {self.words}")


class Items(Field):
    def __init__(self, item: Field, what: str):
        self.item, self.words = item, f"a list of {what}"

    def check(self, value, where):
        if not isinstance(value, list):
            raise self.wrong(value, where)
        for position, item in enumerate(value):
            self.item.check(item, index(where, position))
        return value


class Mapping(Field):
    """An object whose keys are names of one pattern and whose values are of one kind."""

    def __init__(self, names: str, names_words: str, value: Field, most: int, what: str):
        self.names, self.names_words, self.value, self.most = re.compile(names), names_words, value, most
        self.words = f"an object of at most {most} {what}"

    def check(self, value, where):
        if not isinstance(value, dict) or len(value) > self.most:
            raise self.wrong(value, where)
        _once(value, where)
        for name, item in value.items():
            if not self.names.fullmatch(name):
                raise Invalid(member(where, name), f"is not a name gpuspec writes; names are {self.names_words}")
            self.value.check(item, member(where, name))
        return value


Rule = Callable[[dict, str], None]


class Record(Field):
    """An object with named keys, each of its own kind; `optional` ones may be left out, keys not named are held
    to `others`, and `rules` check how the values agree once each is right on its own."""

    def __init__(self, fields: dict[str, Field], what: str, optional: tuple[str, ...] = (), others: Field = Free(),
                 rules: tuple[Rule, ...] = (), most: int = 1_000):
        self.fields, self.optional, self.others, self.rules, self.most = fields, set(optional), others, rules, most
        self.words = what

    def check(self, value, where):
        if not isinstance(value, dict):
            raise self.wrong(value, where)
        if len(value) > self.most:
            raise Invalid(where, f"has {len(value):,} keys; {self.words} has at most {self.most:,}")
        _once(value, where)
        for name, field in self.fields.items():
            if name in value:
                field.check(value[name], member(where, name))
            elif name not in self.optional:
                raise Invalid(member(where, name), f"is missing; it must be {field.words}")
        for name, item in value.items():
            if name not in self.fields:
                self.others.check(item, member(where, name))
        for rule in self.rules:
            rule(value, where)
        return value


def _once(value: dict, where: str) -> None:
    """Every key of an object is text and given once."""
    if not all(isinstance(name, str) for name in value):
        raise Invalid(where, "has a key that is not text; JSON's keys are text")
    if isinstance(value, RepeatedKeys):
        names = ", ".join(_quoted(k) for k in value.repeated[:3])
        raise Invalid(where, f"gives the key{'s' * (len(value.repeated) > 1)} {names} more than once; JSON keeps "
                             "the last, a reader sees the first: give each key once")


def _finite(number) -> bool:
    try:
        return math.isfinite(float(number))
    except OverflowError:
        return False


# --- consistency rules -----------------------------------------------------------------------------------------

# A summary's statistics in the order they must come: the smallest sample up to the largest.
_ORDER = ("minimum", "p10", "median", "p90", "maximum")


def _ordered(summary: dict, where: str) -> None:
    present = [name for name in _ORDER if name in summary]
    pairs = list(zip(present, present[1:]))
    if "mean" in summary:
        pairs += [(name, "mean") for name in ("minimum",) if name in summary]
        pairs += [("mean", name) for name in ("maximum",) if name in summary]
    for low, high in pairs:
        if float(summary[low]) > float(summary[high]) * (1 + _ORDER_SLACK):
            raise Invalid(member(where, low), f"({summary[low]!r} s) is above `{member(where, high)}` "
                                              f"({summary[high]!r} s); a timing summary has minimum ≤ p10 ≤ median "
                                              "≤ p90 ≤ maximum, and its mean between minimum and maximum")


# A metric timed as part of another: the part cannot take longer than the whole.
PARTS = (("busy_time", "time", "the GPU cannot be busy for longer than the stream took"),
         ("gpu_time", "step_time", "the GPU's share of a step cannot take longer than the step"))


def _parts_within_whole(measurement: dict, where: str) -> None:
    metrics = measurement.get("metrics") or {}
    for part, whole, reason in PARTS:
        if part in metrics and whole in metrics:
            inner, outer = float(metrics[part]["median"]), float(metrics[whole]["median"])
            if inner > outer * (1 + PART_SLACK):
                path = member(member(where, "metrics"), part)
                raise Invalid(member(path, "median"),
                              f"({inner!r} s) is more than {PART_SLACK:.0%} above "
                              f"`{member(member(member(where, 'metrics'), whole), 'median')}` ({outer!r} s): {reason}")


def _ok_has_metrics(measurement: dict, where: str) -> None:
    if measurement.get("status") == "ok" and not measurement.get("metrics"):
        raise Invalid(member(where, "metrics"), "is missing or empty; a measurement with status \"ok\" has at least "
                                                "one timed metric")


# --- the schema ----------------------------------------------------------------------------------------------

SECONDS = Real(0.0, DAY, "seconds")
# One metric's timings, as gpuspec.timing.Summary.to_dict writes them. Only median, p10, p90 and samples are read.
SUMMARY = Record({
    "median": Real(1e-12, DAY, "seconds"),  # above zero: rates divide by it
    "p10": SECONDS,
    "p90": SECONDS,
    "samples": Whole(1, 10**9, "samples"),
    "mean": SECONDS,
    "minimum": SECONDS,
    "maximum": SECONDS,
    "total": Real(0.0, 1e12, "seconds"),
    "relative_spread": Real(0.0, 1e12, "times the median"),
    "stopped_by": Text(64),
}, "a timing summary (an object with median, p10, p90 in seconds and samples)",
    optional=("mean", "minimum", "maximum", "total", "relative_spread", "stopped_by"), rules=(_ordered,), most=64)

# Where and with what a run measured: the GPU's name as CUDA gives it, versions, clocks, the date.
PROVENANCE = Record({"gpu": Text(200, nullable=True, what="a GPU's name"), "device": Text(64)},
                    "an object of the run's provenance (gpu, device, versions, clocks, date)",
                    optional=("gpu", "device"), others=Scalar(1_000), most=200)

# One workload's measurement: how it went, and its timings by metric (only when it went well).
MEASUREMENT = Record({
    "key": Text(128, shortest=1, what="a workload key"),
    "line": Whole(0, 10**9, "a spec line"),
    "statement": Text(STATEMENT_LONGEST),
    "status": OneOf(*STATUSES),
    "reason": Text(REASON_LONGEST, nullable=True),
    "metrics": Mapping(r"[a-z][a-z0-9_]{0,63}", "lower-case words joined by _ (time, busy_time)", SUMMARY, 64,
                       "metrics, each a timing summary"),
}, "a measurement (an object with key, line, statement, status, reason and metrics)",
    optional=("reason", "metrics"), rules=(_ok_has_metrics, _parts_within_whole))

RUN = Record({"spec": Text(4_096, what="a spec's path"), "provenance": PROVENANCE,
              "measurements": Items(MEASUREMENT, "measurements")},
             "a run (an object with spec, provenance and measurements)")

# A results file, as gpuspec.results.save writes it.
RESULTS = Record({"version": Exactly(VERSION), "runs": Items(RUN, "runs")},
                 f"a gpuspec results file (an object with version {VERSION} and runs)")

# A harness program's report (templates/program.py.jinja): its workloads are measurements with more keys.
REFUSAL = Record({"key": Text(128, shortest=1, what="a workload key"), "reason": Text(REASON_LONGEST)},
                 "a workload no harness measures (an object with key and reason)")
REPORT = Record({"version": Exactly(VERSION), "spec": Text(4_096, what="a spec's path"), "provenance": PROVENANCE,
                 "workloads": Items(MEASUREMENT, "measurements"), "refused": Items(REFUSAL, "refused workloads")},
                f"a gpuspec harness report (an object with version {VERSION}, provenance and workloads)",
                optional=("spec", "workloads", "refused"))

# What a profile measures, the device fact each replaces, and the range a measurement of it can have: wide enough
# for any GPU or a CPU running the Triton interpreter, narrow enough that the model's products stay finite.
_TIME = Real(1e-12, 10.0, "seconds")
FACTS = {
    "hbm_bandwidth": Real(1.0, 1e16, "bytes per second"),
    "launch_cost": _TIME,
    "graph_launch_cost": _TIME,
    "graph_node_cost": _TIME,
    "kernel_floor": _TIME,
    "tensor_bf16": Real(1.0, 1e19, "FLOP per second"),
    "l2_latency": Real(1.0, 1e7, "cycles"),
    "hbm_latency": Real(1.0, 1e7, "cycles"),
    # published profiles (gpuspec.published) also give these
    "tensor_fp16": Real(1.0, 1e19, "FLOP per second"),
    "tensor_fp8": Real(1.0, 1e19, "FLOP per second"),
    "tensor_tf32": Real(1.0, 1e19, "FLOP per second"),
    "tensor_int8": Real(1.0, 1e19, "FLOP per second"),
    "gemm_fixed_cost": _TIME,
    "nvlink_bandwidth": Real(1.0, 1e16, "bytes per second"),
    "pcie_bandwidth": Real(1.0, 1e16, "bytes per second"),
    "nvlink_bandwidth_ring": Real(1.0, 1e16, "bytes per second"),
    "nvls_bandwidth": Real(1.0, 1e16, "bytes per second"),
    "collective_latency": _TIME,
    "collective_graph_latency": _TIME,
    "collective_simple_cost": _TIME,
    "tp_allreduce_latency": _TIME,
    "decode_bandwidth": Real(1.0, 1e16, "bytes per second"),
    "decode_bandwidth_int8": Real(1.0, 1e16, "bytes per second"),
    "decode_bandwidth_fp8": Real(1.0, 1e16, "bytes per second"),
    "decode_kernel_cost": _TIME,
    "decode_kernel_cost_int8": _TIME,
    "decode_kernel_cost_fp8": _TIME,
    "decode_kernel_cost_int4": _TIME,
    "cpp_launch_cost": _TIME,
    "kernel_gap": _TIME,
    "lone_kernel_latency": _TIME,
    "stream_launch_gap": _TIME,
    "l2_bandwidth": Real(1.0, 1e16, "bytes per second"),
    "l2_usable": Real(1.0, 1e10, "bytes"),  # the largest L2 of any GPU is a few hundred MB
    "model_op_cost": _TIME,
    "exp_rate": Real(1.0, 1e19, "exponentials per second"),
    # a share is near 1 (published fits: 0.6 to 1.3); an overhead a few key blocks (0.3 to 3)
    **{f"attention_share_{name}": Real(1e-2, 10.0, "a share of the tiled attention rate")
       for name in ("flash2", "flash3", "cudnn", "triton")},
    **{f"attention_tile_overhead_{name}": Real(0.0, 1e3, "key blocks")
       for name in ("flash2", "flash3", "cudnn", "triton")},
}
_KNOWN_FACT = Refused(f"a measured ceiling gpuspec knows (those are {', '.join(FACTS)})")
PROFILE_FACTS = Record(FACTS, "an object of measured ceilings", optional=tuple(FACTS), others=_KNOWN_FACT)
# The facts a calibration did not measure, each with why (they come from the device's published profile).
UNMEASURED = Record({name: Text(1_000, what="a reason") for name in FACTS},
                    "an object of the facts not measured, each with the reason", optional=tuple(FACTS),
                    others=_KNOWN_FACT)


class Flag(Field):
    words = "true or false"

    def check(self, value, where):
        if not isinstance(value, bool):
            raise self.wrong(value, where)
        return value


_SIZE = Whole(1, 1 << 24, "elements")
_POINT_SECONDS = Real(1e-12, DAY, "seconds")
# The sweeps gpuspec fits facts to (gpuspec.calibration): a bf16 GEMM's time by shape, PyTorch's flash attention's
# by shape, the L2 read ladder's bandwidth by working set.
GEMM_POINT = Record({"m": _SIZE, "n": _SIZE, "k": _SIZE, "batch": _SIZE, "dtype": OneOf("bf16"),
                     "seconds": _POINT_SECONDS}, "a GEMM sweep point (m, n, k, batch, dtype, seconds)")
ATTENTION_POINT = Record({"implementation": OneOf("flash2"), "batch": _SIZE, "heads": _SIZE, "seq_q": _SIZE,
                          "seq_kv": _SIZE, "head_dim": Whole(1, 1_024, "elements"), "causal": Flag(),
                          "dtype": OneOf("bf16"), "seconds": _POINT_SECONDS},
                         "an attention sweep point (implementation, batch, heads, seq_q, seq_kv, head_dim, causal, "
                         "dtype, seconds)")
L2_POINT = Record({"working_set": Whole(1, 10**13, "bytes"), "passes": Whole(1, 10**9, "passes"),
                   "bandwidth": FACTS["l2_bandwidth"]}, "an L2 ladder point (working_set, passes, bandwidth)")
SWEEPS = Record({"gemm": Items(GEMM_POINT, "GEMM sweep points"), "attention": Items(ATTENTION_POINT, "attention "
                 "sweep points"), "l2_read": Items(L2_POINT, "L2 ladder points")},
                "an object of sweeps (gemm, attention, l2_read)", optional=("gemm", "attention", "l2_read"))
# Figures a calibration measured that no rule takes yet, kept with how: the SM clock under GEMM load.
OBSERVATIONS = Record({"sustained_clock": Record({"value": Real(1e6, 1e10, "hertz"), "shown": Text(100),
                                                  "how": Text(2_000)},
                                                 "an observation (value, shown, how)", optional=("shown", "how"))},
                      "an object of observations", optional=("sustained_clock",))


def _measured_or_not(profile: dict, where: str) -> None:
    """A fact is measured or not measured, never both."""
    both = sorted(set(profile.get("facts") or {}) & set(profile.get("unmeasured") or {}))
    if both:
        raise Invalid(member(member(where, "unmeasured"), both[0]), "names a fact the profile also measures; a fact "
                                                                   "is in facts or in unmeasured, not both")


# A calibration profile, as gpuspec.profiles.save writes it. samples (and ladder, which older calibrations wrote)
# are kept for people to read; derivations are text only, never run.
PROFILE = Record({"version": Exactly(VERSION), "gpu": Text(200, nullable=True, what="a GPU's name"),
                  "provenance": PROVENANCE, "facts": PROFILE_FACTS, "samples": Free(), "ladder": Free(),
                  "derivations": Free(), "unmeasured": UNMEASURED, "observations": OBSERVATIONS, "sweeps": SWEEPS},
                 f"a gpuspec profile (an object with version {VERSION}, gpu, provenance and facts)",
                 optional=("gpu", "provenance", "samples", "ladder", "derivations", "unmeasured", "observations",
                           "sweeps"), rules=(_measured_or_not,))


def read_checked(path, error: type[Exception], shape: Record, holds: tuple[str, type], what: str, named: str,
                 limit: int = JSON_LIMIT) -> dict:
    """The JSON file at `path`, checked against `shape`: `error` naming the file if it is not an object of this
    VERSION whose key holds[0] is a holds[1] (then it is not `named` at all), or naming the key and the reason."""
    data = read_json(path, error, limit=limit, what=what)
    key, kind = holds
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get(key), kind):
        raise error(f"{path} is not {named} of version {VERSION}")
    try:
        shape.check(data, "")
    except Invalid as problem:
        raise error(f"{path}: {problem}") from None
    return data
