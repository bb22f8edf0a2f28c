"""The training-step model: the FLOPs of one optimizer step of an LLM, the time they take at the tensor-core peak,
and the memory the weights, gradients, optimizer and activations need.

Rules:
- FLOPs per token: 6 per parameter (2 forward, 4 backward; FMA = 2; a mixture of experts counts the parameters a
  token uses) plus attention, 12 × layers × heads × head size × context (PaLM's accounting, Chowdhery et al. 2022,
  appendix B: QKᵀ and PV, forward and backward, every query against the whole context; a causal kernel that
  skips the masked half does half of it).
- A step is batch × context tokens, split evenly over `gpus` data-parallel GPUs.
- time is the step at the dense tensor-core peak of the weights' dtype: a lower bound. Real runs reach 35–50% of
  it; `observed` figures give a run's MFU.
- Training state is 16 bytes per parameter with mixed-precision Adam: 16-bit weights and gradients, and fp32
  master weights and two moments (Rajbhandari et al. 2020, ZeRO, section 3.1).
- Activations kept for the backward pass: 34 × context × hidden bytes per sequence per layer in 16-bit, with the
  attention scores not stored, as flash attention does (Korthikanti et al. 2022, "Reducing Activation
  Recomputation in Large Transformer Models", section 4).
"""
from __future__ import annotations

from gpuspec import units
from gpuspec.model import llm
from gpuspec.model.estimate import Estimate
from gpuspec.model.values import Value, given, product, quotient, renamed, total

COUNT, BYTES, FLOPS = units.COUNT, units.BYTES, units.FLOPS
_m = llm.model_fact


def batch(e: Estimate) -> Value:
    return given("batch", e.workload.batch, COUNT, note="sequences per step")


def context(e: Estimate) -> Value:
    return given("context", e.workload.context, COUNT, note="tokens per sequence")


def gpus(e: Estimate) -> Value:
    return given("gpus", e.workload.gpus, COUNT, note="data-parallel GPUs")


def tokens(e: Estimate) -> Value:
    return product("tokens", e["batch"], e["context"], note="per step")


def dense_flops_per_token(e: Estimate) -> Value:
    return product("dense_flops_per_token", given("6", 6, FLOPS), e["active_params"],
                   note="2 forward + 4 backward per parameter")


def attention_flops_per_token(e: Estimate) -> Value:
    return product("attention_flops_per_token", given("12", 12, FLOPS), _m(e, "layers"), _m(e, "heads"),
                   _m(e, "head_dim"), e["context"], note="PaLM's accounting, no causal discount")


def flops_per_token(e: Estimate) -> Value:
    return total("flops_per_token", e["dense_flops_per_token"], e["attention_flops_per_token"])


def flops(e: Estimate) -> Value:
    return product("flops", e["flops_per_token"], e["tokens"], note="one step, all GPUs")


def flops_per_gpu(e: Estimate) -> Value:
    return quotient("flops_per_gpu", e["flops"], e["gpus"])


def t_math(e: Estimate) -> Value:
    return quotient("t_math", e["flops_per_gpu"], e["peak_flop_rate"])


def time(e: Estimate) -> Value:
    peak = e["t_math"]
    return Value("time", peak.number, peak.dimension, "{0}", (peak,), note="at the tensor-core peak: a lower bound")


def tokens_per_s(e: Estimate) -> Value:
    return quotient("tokens_per_s", e["tokens"], e["time"], note="all GPUs, at the peak")


def state_bytes(e: Estimate) -> Value:
    return product("state_bytes", given("16 B", 16, BYTES), _m(e, "params"),
                   note="16-bit weights and gradients, fp32 master weights and Adam moments")


def activation_bytes(e: Estimate) -> Value:
    per_gpu = given("sequences per GPU", e.workload.batch / e.workload.gpus, COUNT)
    return product("activation_bytes", given("34 B", 34, BYTES), e["context"], _m(e, "hidden"), _m(e, "layers"),
                   per_gpu, note="per GPU; scores not stored")


def memory_needed(e: Estimate) -> Value:
    """The least training state one GPU can keep: all of it sharded evenly over every GPU (ZeRO stage 3, FSDP), the
    activations left out (they can be recomputed in the backward pass)."""
    return quotient("memory_needed", e["state_bytes"], e["gpus"],
                    note="per GPU, the state sharded over every GPU (ZeRO-3): the least any layout keeps")


RULES = {
    "params": lambda e: renamed("params", _m(e, "params")), "layers": lambda e: renamed("layers", _m(e, "layers")),
    "active_params": llm.active_params, "batch": batch, "context": context, "gpus": gpus, "tokens": tokens,
    "dense_flops_per_token": dense_flops_per_token, "attention_flops_per_token": attention_flops_per_token,
    "flops_per_token": flops_per_token, "flops": flops, "flops_per_gpu": flops_per_gpu,
    "peak_flop_rate": llm.peak_flop_rate, "t_math": t_math, "time": time,
    "step_time": lambda e: renamed("step_time", e["time"]), "tokens_per_s": tokens_per_s,
    "state_bytes": state_bytes, "activation_bytes": activation_bytes, "memory_needed": memory_needed,
}
