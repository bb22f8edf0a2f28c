"""The LLM catalog: Model, loaded from catalog/models.toml (every number with its source), with aliases."""
from __future__ import annotations

import functools

from attrs import evolve, field

from gpuspec.devices import CatalogError, Fact, facts_of
from gpuspec.record import ValueRecord, record
from gpuspec.resources import catalog_data
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


@record
class Model(ValueRecord):
    """An LLM architecture: its catalog name and the facts a decode step needs."""

    name: str
    title: str
    facts: dict[str, Fact] = field(hash=False, eq=False, repr=False)
    tied_embeddings: bool = False
    aliases: tuple[str, ...] = ()
    overridden: tuple[str, ...] = ()

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
                            tuple(entry.get("aliases", ())))
    return models


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
    return Model(name, name, {})
