"""The LLM catalog: Model, loaded from catalog/models.toml (every number with its source), with aliases."""
from __future__ import annotations

import functools

from attrs import evolve, field

from gpuspec.devices import CatalogError, Fact, facts_of
from gpuspec.record import ValueRecord, record
from gpuspec.resources import catalog_data
from gpuspec import units
from gpuspec.units import COUNT

# Every field a model may have: all are plain counts.
FIELDS: dict[str, tuple[tuple, str]] = {
    "params": (COUNT, "parameters"),
    "layers": (COUNT, "transformer layers"),
    "hidden": (COUNT, "hidden size"),
    "intermediate": (COUNT, "MLP intermediate size (per expert)"),
    "heads": (COUNT, "attention heads"),
    "kv_heads": (COUNT, "key/value heads (fewer than heads with grouped-query attention)"),
    "head_dim": (COUNT, "size of one head"),
    "vocab": (COUNT, "vocabulary size"),
    "max_context": (COUNT, "longest context it was trained for"),
    "experts": (COUNT, "experts per MLP (mixture of experts)"),
    "experts_per_token": (COUNT, "experts each token is routed to"),
}
REQUIRED = ("params", "layers", "hidden", "intermediate", "heads", "kv_heads", "head_dim", "vocab")
# What counting the parameters from the shape needs (the MLP's experts and the biases are read where given).
SHAPE = ("layers", "hidden", "intermediate", "heads", "kv_heads", "head_dim", "vocab")


@record
class Model(ValueRecord):
    """An LLM architecture: its catalog name and the facts a decode step needs."""

    name: str
    title: str
    facts: dict[str, Fact] = field(hash=False, eq=False, repr=False)
    tied_embeddings: bool = False
    aliases: tuple[str, ...] = ()
    overridden: tuple[str, ...] = ()
    qkv_bias: bool = False  # q, k and v projections with biases (Qwen2); no other linear layer has one
    defined_from: str | None = None  # a spec's model: the base it was defined from (`none` for a blank one)

    def fact(self, name: str) -> Fact | None:
        return self.facts.get(name)

    def with_facts(self, name: str, facts: dict[str, Fact]) -> "Model":
        merged = dict(self.facts)
        merged.update(facts)
        return evolve(self, name=name, facts=merged, overridden=tuple(sorted({*self.overridden, *facts})))


@functools.lru_cache(maxsize=1)
def catalog() -> dict[str, Model]:
    """Every model of the catalog, by its canonical name."""
    data = catalog_data("models")
    references = data.get("references", {})
    models = {}
    for key, entry in data.get("models", {}).items():
        facts = facts_of(entry, references, key, FIELDS)
        missing = [f for f in REQUIRED if f not in facts]
        if missing:
            raise CatalogError(f"models.{key}: missing {', '.join(missing)}")
        models[key] = Model(key, entry.get("title", key), facts, bool(entry.get("tied_embeddings", False)),
                            tuple(entry.get("aliases", ())), qkv_bias=bool(entry.get("qkv_bias", False)))
    return models


def shape_params(model: Model) -> tuple[int, str] | None:
    """The parameters a decoder-only model has by its shape, and the arithmetic, in words; None when a fact of the
    shape is missing. Llama-style: the embedding table (vocab x hidden) and, unless tied, the output layer (the same);
    per layer q and o (hidden x heads x head_dim each), k and v (hidden x kv_heads x head_dim each), the MLP's gate,
    up and down (3 x hidden x intermediate, times `experts` with a router of hidden x experts), two norm vectors
    (2 x hidden) and, with qkv_bias, the q, k and v biases; a final norm (hidden)."""
    if any(model.fact(name) is None for name in SHAPE):
        return None
    v = {name: int(model.fact(name).value) for name in SHAPE}
    experts = int(model.fact("experts").value) if model.fact("experts") is not None else 1
    h, heads, kv, d = v["hidden"], v["heads"], v["kv_heads"], v["head_dim"]
    embeddings = v["vocab"] * h * (1 if model.tied_embeddings else 2)
    attention = 2 * h * heads * d + 2 * h * kv * d
    biases = (heads * d + 2 * kv * d) if model.qkv_bias else 0
    mlp = 3 * h * v["intermediate"] * experts + (h * experts if experts > 1 else 0)
    layer = attention + biases + mlp + 2 * h
    total = embeddings + v["layers"] * layer + h
    n = units.format_count  # thousands separated; past 10^15 with an exponent, as a derivation shows a count
    words = (f"counted from the shape: embeddings {n(v['vocab'])} x {n(h)}"
             + ("" if model.tied_embeddings else " twice (the output layer is not tied)")
             + f" + {n(v['layers'])} layers x ({n(attention)} attention"
             + (f" + {n(biases)} q/k/v biases" if biases else "")
             + f" + {n(mlp)} MLP{' with its experts and router' if experts > 1 else ''} + {n(2 * h)} norms)"
             + f" + {n(h)} final norm")
    return total, words


def with_shape_params(model: Model) -> Model:
    """The model with `params` counted from its shape when it has none of its own (a spec's model)."""
    if model.fact("params") is not None:
        return model
    counted = shape_params(model)
    if counted is None:
        return model
    total, words = counted
    params = Fact("params", float(total), float(total), COUNT, f"{total:,}", note=words)
    return evolve(model, facts={**model.facts, "params": params})


def references() -> dict[str, str]:
    return dict(catalog_data("models").get("references", {}))


@functools.lru_cache(maxsize=1)
def _names() -> dict[str, str]:
    return {alias.lower(): key for key, model in catalog().items() for alias in (key, *model.aliases)}


def lookup(name: str) -> Model | None:
    """The catalog model called `name` or one of its aliases, ignoring case; None if there is none."""
    key = _names().get(name.lower())
    return catalog()[key] if key else None


def known_names() -> list[str]:
    return sorted({*catalog(), *(a for m in catalog().values() for a in m.aliases)})


def blank(name: str) -> Model:
    """A model with no facts, for a spec that defines its own from scratch."""
    return Model(name, name, {}, defined_from="none")
