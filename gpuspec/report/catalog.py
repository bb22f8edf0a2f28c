"""The `devices` and `models` printers: a catalog as a table, or every fact of one entry with its reference."""
from __future__ import annotations

from gpuspec import units
from gpuspec.devices import FIELDS, Device


def _show(device: Device, name: str) -> str:
    fact = device.fact(name)
    if fact is None:
        return "—"
    if fact.is_range:
        low, high = units.format_si(fact.low, fact.dimension), units.format_si(fact.high, fact.dimension)
        return f"{low.split()[0]}–{high}"
    return units.format_si(fact.value, fact.dimension)


def listing(catalog: dict[str, Device]) -> str:
    columns = ("sms", "memory_size", "hbm_bandwidth", "fp32", "tensor_bf16")
    header = ["device", "also", "SMs", "memory", "bandwidth", "fp32", "bf16 tensor (dense)"]
    rows = [header]
    for device in catalog.values():
        rows.append([device.name, ", ".join(device.aliases) or "—", *(_show(device, c) for c in columns)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines) + "\n"


def detail(device: Device, references: dict[str, str]) -> str:
    lines = [f"{device.name}: {device.title}"]
    if device.aliases:
        lines.append(f"  also called: {', '.join(device.aliases)}")
    if device.cuda_names:  # what `check --device auto` and a measurement's GPU are matched by
        lines.append(f"  its driver calls it: {', '.join(device.cuda_names)}")
    for key, value in device.text.items():
        if key != "title":
            lines.append(f"  {key}: {value}")
    width = max(len(n) for n in FIELDS)
    cited = []
    for name, (_, meaning) in FIELDS.items():
        fact = device.fact(name)
        if fact is None:
            continue
        source = f"[{fact.reference}]" if fact.reference else ""
        if fact.reference and fact.reference not in cited:
            cited.append(fact.reference)
        lines.append(f"  {name.ljust(width)}  {fact.written.ljust(18)} {source}  {meaning}")
        if fact.note:
            lines.append(f"  {''.ljust(width)}  note: {fact.note}")
    if device.model_only:
        lines.append(f"  model-only: {device.model_only}")
    for figure in device.figures:
        if figure.reference and figure.reference not in cited:
            cited.append(figure.reference)
        lines.append(f"  other figure: {figure.fact} = {figure.written} [{figure.reference}], {figure.what}")
    for name, why in device.absent.items():
        lines.append(f"  has no {name}: {why}")
    missing = [n for n in FIELDS if device.fact(n) is None and n not in device.absent]
    if missing:
        lines.append(f"  not in the catalog: {', '.join(missing)}")
    lines.append("references:")
    lines.extend(f"  {key}: {references.get(key, '?')}" for key in cited)
    return "\n".join(lines) + "\n"


def model_listing(catalog: dict) -> str:
    header = ["model", "also", "params", "layers", "hidden", "heads", "kv heads", "vocab"]
    rows = [header]
    for model in catalog.values():
        cells = [units.format_count(model.fact(f).value) for f in ("params", "layers", "hidden", "heads", "kv_heads",
                                                                    "vocab")]
        rows.append([model.name, ", ".join(model.aliases) or "—", *cells])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows) + "\n"


def model_detail(model, references: dict[str, str]) -> str:
    from gpuspec.llm_catalog import FIELDS as MODEL_FIELDS

    lines = [f"{model.name}: {model.title}"]
    if model.aliases:
        lines.append(f"  also called: {', '.join(model.aliases)}")
    lines.append(f"  tied embeddings: {'yes' if model.tied_embeddings else 'no'}")
    cited = []
    width = max(len(n) for n in MODEL_FIELDS)
    for name, (_, meaning) in MODEL_FIELDS.items():
        fact = model.fact(name)
        if fact is None:
            continue
        if fact.reference and fact.reference not in cited:
            cited.append(fact.reference)
        lines.append(f"  {name.ljust(width)}  {units.format_count(fact.value).ljust(16)} [{fact.reference}]  {meaning}")
        if fact.note:
            lines.append(f"  {''.ljust(width)}  note: {fact.note}")
    lines.append("references:")
    lines.extend(f"  {key}: {references.get(key, '?')}" for key in cited)
    return "\n".join(lines) + "\n"


def side_by_side(devices: list[Device], references: dict[str, str]) -> str:
    """Several devices compared: one row per fact, one column per device, each value's source a numbered
    footnote (a device's notes are in `gpuspec devices NAME`)."""
    notes: dict[str, int] = {}  # reference -> its footnote number, in order of first use

    def cell(device: Device, name: str) -> str:
        fact = device.fact(name)
        if fact is None:
            return "—"
        if not fact.reference:
            return fact.written
        number = notes.setdefault(fact.reference, len(notes) + 1)
        return f"{fact.written} [{number}]"

    rows = [["", *(d.name for d in devices)], ["title", *(d.title for d in devices)]]
    keys = [k for k in dict.fromkeys(k for d in devices for k in d.text) if k != "title"]
    rows.extend([key, *(d.text.get(key, "—") for d in devices)] for key in keys)
    rows.extend([name, *(cell(d, name) for d in devices)] for name in FIELDS
                if any(d.fact(name) is not None for d in devices))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(value.ljust(width) for value, width in zip(row, widths)).rstrip() for row in rows]
    lines.append("sources:")
    lines.extend(f"  [{number}] {key}: {references.get(key, '?')}" for key, number in notes.items())
    return "\n".join(lines) + "\n"
