"""What an observed figure implies: a workload written with `observed 107 tokens/s` (or a time, a FLOP rate, a
bandwidth) gets these metrics beside its kind's own.

Rules:
- The observation becomes a time first: a time is itself; a token rate is tokens per step / rate; a FLOP rate is
  the FLOPs one GPU does / rate (published FLOP rates are per GPU); a bandwidth is bytes moved / rate (for a
  collective, the buffer / rate: NCCL's algorithm bandwidth).
- Everything else divides the model's counts (tokens, FLOPs, bytes) by that time, and the rates by the device's
  peaks: the utilizations a run at that speed would have.
"""
from __future__ import annotations

from gpuspec import kinds, units
from gpuspec.kinds.kind import Kind
from gpuspec.model.estimate import Estimate, ModelError
from gpuspec.model.values import Value, product, quotient, renamed



def figure(e: Estimate) -> Value:
    observed = e.workload.observed
    return Value("observed", observed.value, tuple(observed.dimension), note=f"as written: {observed.text}")


def _observed_time(figures: dict) -> object:
    def observed_time(e: Estimate) -> Value:
        given = figure(e)
        if given.dimension not in figures:  # the resolver allows only the kind's figures
            raise ModelError(f"a figure in {units.si_symbol(given.dimension)} says nothing about "
                             f"{kinds.of(e.workload).article}")
        over = figures[given.dimension]
        if over is None:
            return renamed("observed_time", given)
        if over == "size":
            note = "a collective's bandwidth is buffer / time"
        else:
            note = "a FLOP rate is per GPU" if given.dimension == units.FLOP_RATE else None
        return quotient("observed_time", e[over], given, note=note)
    return observed_time


def _per_time(name: str, over: str, note: str | None = None):
    """`name` = the metric `over` / observed_time."""
    return lambda e: quotient(name, e[over], e["observed_time"], note=note)


def observed_mfu(e: Estimate) -> Value:
    return quotient("observed_mfu", e["observed_flop_rate"], e["peak_flop_rate"], percent=True)


def observed_mbu(e: Estimate) -> Value:
    return quotient("observed_mbu", e["observed_bandwidth"], e.fact("hbm_bandwidth"), percent=True)


def observed_vs_model(e: Estimate) -> Value:
    return quotient("observed_vs_model", e["observed_time"], e["time"], note="how many times the model's time")


def observed_busbw(e: Estimate) -> Value:
    return product("observed_busbw", e["observed_algbw"], e["wire_share"])


def rules_for(kind: Kind, kind_rules: dict) -> dict:
    """A kind's rules with the observed metrics its figures imply (Kind.observed_metrics) added."""
    figures = kind.figures
    made = {"observed_time": _observed_time(figures), "observed_vs_model": observed_vs_model,
            "observed_tokens_per_s": _per_time("observed_tokens_per_s", figures.get(units.TOKEN_RATE)),
            "observed_flop_rate": _per_time("observed_flop_rate", figures.get(units.FLOP_RATE), "per GPU"),
            "observed_mfu": observed_mfu,
            "observed_bandwidth": _per_time("observed_bandwidth", figures.get(units.BANDWIDTH), "per GPU"),
            "observed_mbu": observed_mbu,
            "observed_algbw": _per_time("observed_algbw", figures.get(units.BANDWIDTH)),
            "observed_busbw": observed_busbw}
    return {**kind_rules, **{name: made[name] for name in kind.observed_metrics}}
