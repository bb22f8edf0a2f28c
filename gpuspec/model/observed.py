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

from gpuspec import units
from gpuspec.model.estimate import Estimate, ModelError
from gpuspec.model.values import Value, product, quotient, renamed

TOKEN_RATE = units.divide(units.COUNT, units.TIME)


def figure(e: Estimate) -> Value:
    observed = e.workload.observed
    return Value("observed", observed.value, tuple(observed.dimension), note=f"as written: {observed.text}")


def _flops_per_gpu(e: Estimate) -> Value:
    return e["flops_per_gpu"] if "flops_per_gpu" in e else e["flops"]


def observed_time(e: Estimate) -> Value:
    given = figure(e)
    dimension = given.dimension
    if dimension == units.TIME:
        return renamed("observed_time", given)
    if dimension == TOKEN_RATE:
        return quotient("observed_time", e["tokens"], given)
    if dimension == units.FLOP_RATE:
        return quotient("observed_time", _flops_per_gpu(e), given, note="a FLOP rate is per GPU")
    if dimension == units.BANDWIDTH:
        if e.workload.kind == "collective":
            return quotient("observed_time", e["size"], given, note="a collective's bandwidth is buffer / time")
        return quotient("observed_time", e["bytes_moved"], given)
    raise ModelError(f"a figure in {units.si_symbol(dimension)} says nothing about this {e.workload.kind} workload")


def observed_tokens_per_s(e: Estimate) -> Value:
    return quotient("observed_tokens_per_s", e["tokens"], e["observed_time"])


def observed_flop_rate(e: Estimate) -> Value:
    return quotient("observed_flop_rate", _flops_per_gpu(e), e["observed_time"], note="per GPU")


def observed_bandwidth(e: Estimate) -> Value:
    return quotient("observed_bandwidth", e["bytes_moved"], e["observed_time"], note="per GPU")


def observed_mfu(e: Estimate) -> Value:
    return quotient("observed_mfu", e["observed_flop_rate"], e["peak_flop_rate"], percent=True)


def observed_mbu(e: Estimate) -> Value:
    return quotient("observed_mbu", e["observed_bandwidth"], e.fact("hbm_bandwidth"), percent=True)


def observed_vs_model(e: Estimate) -> Value:
    return quotient("observed_vs_model", e["observed_time"], e["time"], note="how many times the model's time")


def observed_algbw(e: Estimate) -> Value:
    return quotient("observed_algbw", e["size"], e["observed_time"])


def observed_busbw(e: Estimate) -> Value:
    return product("observed_busbw", e["observed_algbw"], e["wire_share"])


_ALWAYS = {"observed_time": observed_time, "observed_vs_model": observed_vs_model}
_NEEDS = (  # (a metric the kind must have, the observed metrics that then make sense)
    ("tokens", {"observed_tokens_per_s": observed_tokens_per_s}),
    ("peak_flop_rate", {"observed_flop_rate": observed_flop_rate, "observed_mfu": observed_mfu}),
    ("t_mem", {"observed_bandwidth": observed_bandwidth, "observed_mbu": observed_mbu}),
    ("wire_share", {"observed_algbw": observed_algbw, "observed_busbw": observed_busbw}),
)


def rules_for(kind_rules: dict) -> dict:
    """A kind's rules with the observed metrics that make sense for it added."""
    rules = {**kind_rules, **_ALWAYS}
    for needed, added in _NEEDS:
        if needed in kind_rules:
            rules.update(added)
    return rules
