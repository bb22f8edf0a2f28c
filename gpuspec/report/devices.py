"""The `devices` printer: the catalog as a table, or every fact of one device with its reference."""
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
    missing = [n for n in FIELDS if device.fact(n) is None]
    if missing:
        lines.append(f"  not in the catalog: {', '.join(missing)}")
    lines.append("references:")
    lines.extend(f"  {key}: {references.get(key, '?')}" for key in cited)
    return "\n".join(lines) + "\n"
