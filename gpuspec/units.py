"""Units: parse a unit as written (`TB/s`, `µs`, `MiB`, `waves`) into a scale and a dimension, and format numbers.

Every number inside gpuspec is in SI base units: seconds, bytes, FLOP, cycles, watts, and plain counts.
Decimal and binary prefixes stay distinct: MB is 10⁶ B, MiB is 2²⁰ B.
"""
from __future__ import annotations

import functools
import math

from gpuspec.record import ValueRecord, record

# A dimension is the tuple of exponents of (second, byte, FLOP, cycle, watt).
Dimension = tuple[int, int, int, int, int]
COUNT: Dimension = (0, 0, 0, 0, 0)
TIME: Dimension = (1, 0, 0, 0, 0)
BYTES: Dimension = (0, 1, 0, 0, 0)
FLOPS: Dimension = (0, 0, 1, 0, 0)
CYCLES: Dimension = (0, 0, 0, 1, 0)
POWER: Dimension = (0, 0, 0, 0, 1)
BANDWIDTH: Dimension = (-1, 1, 0, 0, 0)
FLOP_RATE: Dimension = (-1, 0, 1, 0, 0)
PER_SECOND: Dimension = (-1, 0, 0, 0, 0)  # a count per second: 1000/s, tokens/s, launches/s
TOKEN_RATE = PER_SECOND  # the name it had: a token rate is one such count
INTENSITY: Dimension = (0, -1, 1, 0, 0)
FREQUENCY: Dimension = (-1, 0, 0, 1, 0)  # a clock counts cycles per second

_BASE_SYMBOLS = ("s", "B", "FLOP", "cycle", "W")


def multiply(a: Dimension, b: Dimension) -> Dimension:
    return tuple(x + y for x, y in zip(a, b))  # type: ignore[return-value]


def divide(a: Dimension, b: Dimension) -> Dimension:
    return tuple(x - y for x, y in zip(a, b))  # type: ignore[return-value]


def power(a: Dimension, n: int) -> Dimension:
    return tuple(x * n for x in a)  # type: ignore[return-value]


@record
class Unit(ValueRecord):
    """A unit as written, resolved: 1 `symbol` = `scale` SI base units of `dimension`.

    noun is set for counting words (`waves`, `blocks`): they are plain numbers, but name what is counted.
    """

    symbol: str
    scale: float
    dimension: Dimension
    noun: str | None = None


class UnknownUnit(ValueError):
    """A unit that gpuspec does not know."""


_PREFIXES = {
    "": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
    "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50,
    "m": 1e-3, "µ": 1e-6, "μ": 1e-6, "u": 1e-6, "n": 1e-9, "p": 1e-12,
}
_LARGE_PREFIXES = ("k", "K", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi")
_BASES = {
    "s": (1.0, TIME), "sec": (1.0, TIME),
    "B": (1.0, BYTES), "bytes": (1.0, BYTES), "byte": (1.0, BYTES),
    "bit": (0.125, BYTES), "bits": (0.125, BYTES),
    "FLOP": (1.0, FLOPS), "FLOPs": (1.0, FLOPS), "flop": (1.0, FLOPS), "flops": (1.0, FLOPS),
    "OP": (1.0, FLOPS), "OPs": (1.0, FLOPS),
    # FLOPS (capital S) is a rate, as in datasheets: 67 TFLOPS = 67e12 FLOP/s.
    "FLOPS": (1.0, FLOP_RATE), "OPS": (1.0, FLOP_RATE),
    "Hz": (1.0, FREQUENCY),
    "W": (1.0, POWER),
    "cycle": (1.0, CYCLES), "cycles": (1.0, CYCLES), "clk": (1.0, CYCLES),
    # Long spans, for training runs; these take no prefix.
    "min": (60.0, TIME), "h": (3600.0, TIME), "hours": (3600.0, TIME), "hour": (3600.0, TIME),
    "day": (86400.0, TIME), "days": (86400.0, TIME),
}
_NO_PREFIX = {"min", "h", "hour", "hours", "day", "days"}
_SMALL_ONLY = {"s", "sec"}  # ks of time makes no sense here; only milli, micro, nano, pico
# Words that count things: plain numbers that also say which metric a claim is about.
COUNT_NOUNS = frozenset({
    "waves", "wave", "blocks", "block", "elements", "element", "kernels", "kernel", "launches", "launch",
    "threads", "thread", "warps", "warp", "SMs", "SM", "tokens", "token", "layers", "layer", "ops",
    "params", "parameters", "nodes", "node", "registers", "round", "trips", "numbers", "values", "steps",
    "tiles", "tile", "requests", "request", "sequences", "sequence",
})
_RATIO = {"×": 1.0, "x": 1.0, "X": 1.0, "%": 0.01}


@functools.lru_cache(maxsize=1024)
def parse_unit(text: str) -> Unit:
    """Resolve a unit as written. Raises UnknownUnit for anything else."""
    if text in _RATIO:
        return Unit(text, _RATIO[text], COUNT)
    if text in COUNT_NOUNS:
        return Unit(text, 1.0, COUNT, noun=text)
    if " " in text:  # `k launches/s`: an SI count prefix before a counted noun's rate
        prefix, _, rest = text.partition(" ")
        counted = parse_unit(rest) if prefix in _LARGE_PREFIXES and " " not in rest else None
        if counted is None or counted.noun is None:
            raise UnknownUnit(text)
        return Unit(text, _PREFIXES[prefix] * counted.scale, counted.dimension, counted.noun)
    if "/" in text:
        top, _, bottom = text.partition("/")
        a, b = (parse_unit(top) if top else Unit("", 1.0, COUNT)), parse_unit(bottom)  # `/s`: a count per second
        return Unit(text, a.scale / b.scale, divide(a.dimension, b.dimension), a.noun)
    for prefix in sorted(_PREFIXES, key=len, reverse=True):
        if text.startswith(prefix) and text[len(prefix):] in _BASES:
            base = text[len(prefix):]
            if base in _SMALL_ONLY and prefix in _LARGE_PREFIXES or base in _NO_PREFIX and prefix:
                continue
            scale, dimension = _BASES[base]
            return Unit(text, _PREFIXES[prefix] * scale, dimension)
    if text in _LARGE_PREFIXES:  # a bare SI suffix: 16.8M
        return Unit(text, _PREFIXES[text], COUNT)
    raise UnknownUnit(text)


def suffixed_unit(suffix: str, word: str) -> str | None:
    """The unit a count suffix written before a unit means, where it is one (`M` before `FLOP`: `MFLOP`), for the
    error that shows it: `67.1M FLOP` is a count of 67.1 M, then a unit; None where `word` is no unit it prefixes."""
    if suffix not in _LARGE_PREFIXES:
        return None
    try:
        found = parse_unit(suffix + word)
    except UnknownUnit:
        return None
    return found.symbol if found.dimension != COUNT else None


def known_units() -> list[str]:
    """Common spellings, for 'did you mean' help."""
    common = ["ns", "µs", "us", "ms", "s", "B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB",
              "GB/s", "TB/s", "FLOP", "MFLOP", "GFLOP", "TFLOP", "TFLOP/s", "TFLOPS", "FLOP/B",
              "MHz", "GHz", "cycles", "W", "%", "×", "/s", "tokens/s", "launches/s", "kernels/s"]
    return common + sorted(COUNT_NOUNS)


# Shortenings that are not units here, and what to write: `tok/s` is `tokens/s`.
SHORTENED = {"tok": "tokens", "toks": "tokens", "tkn": "tokens", "tkns": "tokens", "req": "requests",
             "seq": "sequences", "seqs": "sequences", "it": "steps", "iter": "steps", "iters": "steps"}


def spelled_out(text: str) -> str | None:
    """The unit a shortening stands for (`tok/s` -> `tokens/s`), if it is one gpuspec knows."""
    top, slash, bottom = text.partition("/")
    if top in SHORTENED:
        candidate = SHORTENED[top] + slash + bottom
        try:
            parse_unit(candidate)
        except UnknownUnit:
            return None
        return candidate
    return None


# --- formatting -----------------------------------------------------------------------------------

# The unit each dimension is shown in, and whether it takes binary or decimal prefixes (always decimal).
_DISPLAY = {
    TIME: "s", BYTES: "B", FLOPS: "FLOP", CYCLES: "cycles", POWER: "W", BANDWIDTH: "B/s",
    FLOP_RATE: "FLOP/s", INTENSITY: "FLOP/B", FREQUENCY: "Hz", COUNT: "", (-1, 0, 0, 0, 0): "/s",
}
_UP = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
_DOWN = [(1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p")]


def si_symbol(dimension: Dimension) -> str:
    """The SI unit of a dimension, as text: `s`, `B/s`, `FLOP/B`, or '' for a plain number."""
    if dimension in _DISPLAY:
        return _DISPLAY[dimension]
    top = [f"{s}^{e}" if e != 1 else s for s, e in zip(_BASE_SYMBOLS, dimension) if e > 0]
    bottom = [f"{s}^{-e}" if e != -1 else s for s, e in zip(_BASE_SYMBOLS, dimension) if e < 0]
    text = "·".join(top) or "1"
    return text + ("/" + "·".join(bottom) if bottom else "")


def significant(number: float, digits: int = 3) -> str:
    """`number` with `digits` significant digits, keeping trailing zeros (20.0, 0.250, 3.35)."""
    if number == 0 or not math.isfinite(number):
        return "0" if number == 0 else str(number)
    if not 1e-9 <= abs(number) < 1e9:  # past a billion or under a billionth, digits stop being readable: 3.799e25
        mantissa, _, exponent = f"{number:.{digits - 1}e}".partition("e")
        return f"{mantissa}e{int(exponent)}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(number))))
    text = f"{number:.{decimals}f}"
    if decimals == 0 and abs(number) >= 1e3:  # thousands separated, as a whole count is: 2,312, not 2312
        text = f"{number:,.0f}"
    return text


def format_count(number: float, digits: int = 4) -> str:
    """A plain number: whole numbers exactly with thousands separators, others to `digits` digits."""
    if math.isfinite(number) and number == int(number) and abs(number) < 1e15:
        return f"{int(number):,}"
    return significant(number, digits)


def format_si(number: float, dimension: Dimension, digits: int = 3) -> str:
    """A value in its SI unit with the prefix that suits its size: `67.1 MB`, `20.0 µs`, `3.35 TB/s`."""
    symbol = si_symbol(dimension)
    if dimension == COUNT:
        return format_count(number)
    if dimension == CYCLES:
        return f"{format_count(number)} cycle{'s' * (number != 1)}"
    magnitude = abs(number)
    prefix, scale = "", 1.0
    if magnitude >= 1e30 or magnitude < 1e-24 or not math.isfinite(magnitude):  # far past any prefix: 1.00e305 s
        pass
    elif magnitude >= 1e3 and dimension != TIME:  # a long time stays in seconds (3.60e24 s, not 3.60e9 Ps)
        scale, prefix = next(((s, p) for s, p in _UP if magnitude >= s * 0.9995), (1.0, ""))
    elif 0 < magnitude < 1 and dimension == TIME:
        scale, prefix = next(((s, p) for s, p in _DOWN if magnitude >= s * 0.9995), (1e-12, "p"))
    return f"{significant(number / scale, digits)} {prefix}{symbol}"


def format_in(number: float, unit: Unit, digits: int = 4, at_least_decimals: int = 0) -> str:
    """A value in the unit a claim was written in: `20.03 µs`, `62.06 waves`, `33.55 MB`."""
    scaled = number / unit.scale
    if unit.dimension == COUNT and unit.symbol not in _RATIO and math.isfinite(scaled) and scaled == int(scaled):
        text = format_count(scaled)
    else:
        text = significant(scaled, digits)
        decimals = len(text.partition(".")[2])
        if decimals < at_least_decimals:
            text = f"{scaled:,.{at_least_decimals}f}"
    if unit.noun and "/" not in unit.symbol:  # counted things read best as plain numbers: `waves = 62.06`
        return text
    joiner = "" if unit.symbol in ("%", "×") or unit.symbol in _LARGE_PREFIXES or unit.symbol[:1] == "/" else " "
    return f"{text}{joiner}{unit.symbol}"
