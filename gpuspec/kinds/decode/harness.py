"""The plan for templates/decode.py.jinja: a decode step as its memory traffic and launches, layer by layer, built
from the model's own list of a layer's kernels (rules.layer_kernels)."""
from __future__ import annotations

from gpuspec import codegen
from gpuspec.codegen import Code
from gpuspec.kinds.decode import DecodeStep
from gpuspec.kinds.decode.rules import layer_kernels
from gpuspec.planning import MAX_LAUNCHES, HarnessError
from gpuspec.units import format_count

_FACTS = ("params", "layers", "hidden", "vocab", "kv_heads", "head_dim")


def plan(step: DecodeStep, key: str) -> dict:
    model = step.model
    fact = {name: int(model.fact(name).value) for name in _FACTS if model.fact(name) is not None}
    if len(fact) < len(_FACTS):
        raise HarnessError(f"model {model.name} lacks a fact the decode harness needs")
    per_layer = step.kernels_per_layer
    if fact["layers"] * per_layer > MAX_LAUNCHES:
        raise HarnessError(f"a step of {format_count(fact['layers'])} layers of {format_count(per_layer)} kernels is "
                           f"more than a harness runs (at most {MAX_LAUNCHES:,} kernels: it captures every launch in "
                           "one CUDA graph)")
    layer = layer_kernels(per_layer)
    embedding = 0 if model.tied_embeddings else fact["vocab"] * fact["hidden"]
    weights_per_layer = (fact["params"] - embedding) // fact["layers"]
    rows = max(1, weights_per_layer // layer.weights // fact["hidden"])  # the weights split evenly, as the model does
    kv = 2 * fact["kv_heads"] * fact["head_dim"] * step.context * step.batch
    return {
        "template": "decode.py.jinja", "kind": Code("decode"), "id": codegen.identifier(f"w_{key}"),
        "layers": codegen.literal(fact["layers"]), "hidden": codegen.literal(fact["hidden"]),
        "rows": codegen.literal(rows), "weight_kernels": codegen.literal(layer.weights),
        "attention": bool(layer.attention), "small_kernels": codegen.literal(layer.small),
        "kv_elements": codegen.literal(max(kv, 1)), "batch": codegen.literal(step.batch),
        "dtype": codegen.torch_dtype(step.weight_dtype if step.weight_dtype != "fp8" else "bf16"),
        "graph": bool(step.graph),
    }
