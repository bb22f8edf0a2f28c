"""`set ...`: the file's settings (tolerance, sources, mode, threads, per-block resources, sample window), each
checked, in force for the statements after it; `launched_from` says who launches a stream's kernels, `sync` whether
the host waits for the GPU after each launch, `timing` how
a figure about kernels was timed, `attention_implementation` which kernel runs a fused attention."""
from __future__ import annotations

from gpuspec import kinds, nodes, units
from gpuspec.diagnostics import did_you_mean
from gpuspec.kinds.attention import IMPLEMENTATIONS
from gpuspec.kinds.collective import ALGORITHMS, LAUNCHES
from gpuspec.kinds.kind import TIMINGS
from gpuspec.kinds.stream import LAUNCHERS, SYNCS
from gpuspec.program import SOURCES
from gpuspec.resolve.checked import in_range, same_dimension, whole_number
from gpuspec.resolve.quantities import tolerance, unit
from gpuspec.resolve.scope import Scope, invalid

_SETTING_HELP = {"launched_from": "pytorch: eager PyTorch ops (the default); cpp: a C++ loop of cudaLaunchKernel",
                 "sync": "; ".join(f"{word}: {meaning}" for word, meaning in SYNCS.items()),
                 "nccl_algorithm": "auto: whichever NCCL picks (the default); ring; nvls: NVLink SHARP, in the switch",
                 "nccl_launch": "eager: each call launched as it comes (the default); graph: replayed from a CUDA graph",
                 "timing": "; ".join(f"{word}: {meaning}" for word, meaning in TIMINGS.items()),
                 "attention_implementation": "; ".join(f"{name}: {what}" for name, what in IMPLEMENTATIONS.items())}
# The settings that take one word, and the words each takes.
_WORDS = {"launched_from": tuple(LAUNCHERS), "sync": tuple(SYNCS), "nccl_algorithm": ALGORITHMS,
          "nccl_launch": LAUNCHES, "timing": tuple(TIMINGS), "attention_implementation": tuple(IMPLEMENTATIONS)}
SETTINGS = ("tolerance", "threads_per_block", "sources", "mode", "registers_per_thread", "shared_memory_per_block",
            "sample_window", "launched_from", "sync", "nccl_algorithm", "nccl_launch", "timing",
            "attention_implementation")


def setting(written: nodes.Setting, scope: Scope) -> None:
    name, span = written.name, written.span
    if name not in SETTINGS:
        raise invalid("unknown-setting", f"unknown setting `{name}`", span,
                      did_you_mean(name, SETTINGS) or f"settings are: {', '.join(SETTINGS)}")
    if name in _WORDS:
        allowed = _WORDS[name]
        words = written.words or ()
        if len(words) != 1 or words[0] not in allowed:
            shown = f"`{' '.join(words)}`" if words else "a number"
            raise invalid("bad-setting", f"`{name}` takes {', '.join(allowed[:-1])} or {allowed[-1]}, not {shown}",
                          span, (did_you_mean(words[0], allowed) if len(words) == 1 else None) or _SETTING_HELP[name])
        setattr(scope, name, words[0])
        return
    if name in ("sources", "mode"):
        allowed = SOURCES if name == "sources" else kinds.mode_words()
        if not written.words:
            raise invalid("bad-setting", f"`{name}` takes {' or '.join(allowed)}", span)
        for word in written.words:
            if word not in allowed:
                raise invalid("bad-setting", f"`{word}` is not a {name[:-1] if name == 'sources' else name}",
                              span, did_you_mean(word, allowed) or f"use {', '.join(allowed)}")
        if name == "sources":
            scope.sources = tuple(dict.fromkeys(written.words))
            scope.sources_set = True
        else:
            if len(written.words) > 1:
                raise invalid("bad-setting", f"`mode` takes one word: {', '.join(allowed[:-1])} or {allowed[-1]}",
                              span)
            scope.mode = written.words[0]
        return
    if written.amount is None:
        raise invalid("bad-setting", f"`{name}` takes a number", span)
    number, given = written.amount.low, unit(written.amount.phrase)
    if name == "tolerance":  # with a unit, it fits the claims of that dimension alone (resolve/claims.py)
        import attrs

        scope.tolerance = attrs.evolve(tolerance(number, given, span, from_file=True), dimension=given.dimension,
                                       origin="`set tolerance`", place=span)
    elif name == "shared_memory_per_block":
        same_dimension(given.dimension, units.BYTES, name, span)
        scope.shared_memory_per_block = in_range(number, given, span)
    elif name == "sample_window":
        same_dimension(given.dimension, units.TIME, name, span)
        window = in_range(number, given, span)
        if window <= 0:
            raise invalid("bad-setting", "the sample window must be longer than zero", span)
        scope.sample_window = window
    else:
        whole = whole_number(number, given, span, name)
        if name == "threads_per_block":
            scope.threads_per_block = whole
        else:
            scope.registers_per_thread = whole
