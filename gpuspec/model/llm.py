"""Rules the LLM steps share (decode and prefill steps, training steps): the model's facts as Values, the parameters
a token uses, and the tensor-core peak of the weights' dtype."""
from __future__ import annotations

from gpuspec import units
from gpuspec.model.estimate import Estimate, ModelError
from gpuspec.model.values import Value, fact, renamed

# The weights' dtype -> the device fact that is its dense tensor-core rate (fp32 weights run as TF32).
TENSOR_RATE = {"bf16": "tensor_bf16", "fp16": "tensor_fp16", "fp8": "tensor_fp8", "int8": "tensor_int8",
               "fp32": "tensor_tf32", "tf32": "tensor_tf32", "fp64": "tensor_fp64"}


def model_fact(e: Estimate, name: str) -> Value:
    """A fact of the model, as a Value with its reference."""
    model = e.workload.model
    found = model.fact(name)
    if found is None:
        raise ModelError(f"model {model.name} has no `{name}`", missing_help(model, name))
    return fact(found)


def missing_help(model, name: str) -> str:
    """What to write when a model lacks a fact: add it where the spec defines the model, or define one from the
    catalog's (a bare `model X with ...` is no definition: a model needs a base)."""
    if model.defined_from is None:
        fix = f"define a model with it: `model mine from {model.name} with {name} = ...`, and use `mine`"
    else:
        fix = f"add `{name} = ...` to the `with` list of `model {model.name} from {model.defined_from}`"
    if name == "vocab":  # only the embedding table's size needs it
        fix += ("; or, if the step reads the whole embedding table, say so and no vocab is needed: "
                "`decode ..., embedding read`")
    if name == "params":
        fix += "; or give the shape (layers, hidden, intermediate, heads, kv_heads, head_dim, vocab) to count them from"
    return fix


def active_params(e: Estimate) -> Value:
    """The parameters a token uses: all of them, less the experts a mixture of experts does not route it to."""
    _m = model_fact
    experts = e.workload.model.fact("experts")
    if experts is None:
        return renamed("active_params", _m(e, "params"))
    idle = (experts.value - _m(e, "experts_per_token").number) * 3 * _m(e, "hidden").number \
        * _m(e, "intermediate").number * _m(e, "layers").number
    active = _m(e, "params").number - idle
    if active <= 0:  # negative FLOPs and times would pass any `<` claim
        raise ModelError(f"model {e.workload.model.name} has {units.format_count(_m(e, 'params').number)} params, "
                         f"fewer than its unrouted experts alone ({units.format_count(idle)}: 3 × hidden × "
                         "intermediate per idle expert per layer)",
                         f"check params, experts and experts_per_token of model {e.workload.model.name}")
    return Value("active_params", active, units.COUNT, "{0} - unrouted experts",
                 (_m(e, "params"),), note="3 × hidden × intermediate per idle expert per layer")


def peak_flop_rate(e: Estimate) -> Value:
    return renamed("peak_flop_rate", e.fact(TENSOR_RATE.get(e.workload.weight_dtype, "tensor_bf16")))
