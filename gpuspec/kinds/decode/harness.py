"""The plan for templates/decode.py.jinja: a decode or prefill step as its memory traffic, FLOPs and launches, layer
by layer, built from the model's own list of a layer's kernels (rules.layer_kernels): the weight matmuls over the
step's tokens (one a sequence when decoding, the whole prompt when prefilling), the attention kernel (a read of the
KV cache when decoding; causal attention over the prompt when prefilling) and the small kernels, which the model
has take the kernel floor."""
from __future__ import annotations

from gpuspec import codegen
from gpuspec.codegen import Code
from gpuspec.kinds.decode import DecodeStep
from gpuspec.kinds.decode.rules import layer_kernels
from gpuspec.planning import MAX_LAUNCHES, HarnessError, sized
from gpuspec.units import format_count

_FACTS = ("params", "layers", "hidden", "vocab", "heads", "kv_heads", "head_dim")


# The weights' dtypes torch.matmul multiplies as the model reads them
_WEIGHT_DTYPES = ("bf16", "fp16", "fp32")


def plan(step: DecodeStep, name: Code, name_of=None) -> dict:
    _measurable(step)
    model = step.model
    fact = {name: int(model.fact(name).value) for name in _FACTS if model.fact(name) is not None}
    if "vocab" not in fact and (model.tied_embeddings or step.embedding == "read"):
        fact["vocab"] = 0  # the whole table is read with the other weights: its size does not matter
    if len(fact) < len(_FACTS):
        raise HarnessError(f"model {model.name} lacks a fact the decode harness needs")
    per_layer = step.kernels_per_layer
    if fact["layers"] * per_layer > MAX_LAUNCHES:
        raise HarnessError(f"a step of {format_count(fact['layers'])} layers of {format_count(per_layer)} kernels is "
                           f"more than a harness runs (at most {MAX_LAUNCHES:,} kernels: it captures every launch in "
                           "one CUDA graph)")
    layer = layer_kernels(per_layer)
    if not layer.attention:
        raise HarnessError("with one kernel per layer the model has that kernel read the KV cache as well as the "
                           "weights; the harness reads the cache in a kernel of its own, so it needs at least 2 "
                           "kernels per layer")
    embedding = 0 if model.tied_embeddings or step.embedding == "read" else fact["vocab"] * fact["hidden"]
    weights_per_layer = (fact["params"] - embedding) // fact["layers"]
    rows = max(1, weights_per_layer // layer.weights // fact["hidden"])  # the weights split evenly, as the model does
    kv = 2 * fact["kv_heads"] * fact["head_dim"] * step.context * step.batch
    prefill = step.phase == "prefill"
    if prefill and step.kv_dtype != step.weight_dtype:
        raise HarnessError(f"a prefill's attention takes q, k and v in one dtype; {step.kv_dtype} k and v with "
                           f"{step.weight_dtype} weights is not what the harness runs")
    if prefill and fact["heads"] % fact["kv_heads"]:
        raise HarnessError(f"{fact['kv_heads']} KV heads do not divide {fact['heads']} heads")
    small_kv_heads = min(fact["kv_heads"], 2)
    small_heads = small_kv_heads * (fact["heads"] // fact["kv_heads"])
    return {
        "template": "decode.py.jinja", "kind": Code("decode"), "id": name,
        "layers": sized(codegen.literal(fact["layers"]), codegen.literal(2)),
        "hidden": sized(codegen.literal(fact["hidden"]), codegen.literal(64)),
        "rows": sized(codegen.literal(rows), codegen.literal(32)),
        "weight_kernels": codegen.literal(layer.weights),
        "small_kernels": codegen.literal(layer.small), "has_small": layer.small > 0,
        "kv_elements": sized(codegen.literal(max(kv, 1)), codegen.literal(256)), "batch": codegen.literal(step.batch),
        "dtype": codegen.torch_dtype(step.weight_dtype),
        # torch reduces no fp8 tensor: an fp8 cache is read as the bytes it is, one per element
        "kv_dtype": codegen.torch_dtype("uint8" if step.kv_dtype == "fp8" else step.kv_dtype),
        "helpers": frozenset({"FUSED_ATTENTION"} if prefill else ()),
        "graph": bool(step.graph), "fp32": step.weight_dtype == "fp32", "prefill": prefill,
        "tokens": sized(codegen.literal(step.batch * step.context if prefill else step.batch),
                        codegen.literal(step.batch * 16 if prefill else step.batch)),
        "prompt": sized(codegen.literal(step.context), codegen.literal(16)),
        "heads": sized(codegen.literal(fact["heads"]), codegen.literal(small_heads)),
        "kv_heads": sized(codegen.literal(fact["kv_heads"]), codegen.literal(small_kv_heads)),
        "head_dim": sized(codegen.literal(fact["head_dim"]), codegen.literal(16)),
        "gqa": fact["heads"] != fact["kv_heads"],
    }


def _measurable(step: DecodeStep) -> None:
    """HarnessError unless the harness runs the step the model models: on one GPU, with weights torch.matmul
    multiplies in their own dtype."""
    if step.tp > 1:
        raise HarnessError(f"a step split over {step.tp} GPUs (tp {step.tp}) runs on all of them, with an all-reduce "
                           "after each layer's attention and MLP; the harness runs on one GPU, and one GPU's share "
                           "without the all-reduces is not the step the model times: give what a run observed "
                           "(`observed ...`)")
    if step.weight_dtype not in _WEIGHT_DTYPES:
        raise HarnessError(f"the decode harness multiplies bf16, fp16 or fp32 weights with torch.matmul; "
                           f"{step.weight_dtype} weights need a scaled matmul it does not run, and timing them as "
                           "bf16 would read a different number of bytes: give what a run observed (`observed ...`)")
    if step.host_ops is not None or step.attention != "fused" or step.kv_repeat > 1:
        raise HarnessError("the decode harness launches the step's kernels, not a model's code: the ops that code "
                           "dispatches (host_ops), its copies of the K and V heads (kv_repeat) and PyTorch's math "
                           "attention are not what it runs; give what a run of that code observed (`observed ...`)")


def defines(step: DecodeStep, name: str) -> list[str]:
    return [f"measure_{name}"]
