"""The `explain` printer: every metric of a workload with its derivation, and the references behind the facts."""
from __future__ import annotations

from gpuspec.model.values import Value
from gpuspec.record import Record, record
from gpuspec.text import Span, escaped


@record
class Explanation(Record):
    """What `explain` shows for one workload or claim: where it is, what it is, and its values."""

    span: Span
    title: str
    values: tuple[Value, ...]
    errors: tuple[str, ...] = ()


def render(explanations: list[Explanation], references: dict[str, str]) -> str:
    lines: list[str] = []
    for item in explanations:
        lines.append(escaped(f"{item.span.file}:{item.span.line}: {item.title}"))  # a name may not be UTF-8
        cited: dict[str, None] = {}
        for value in item.values:
            lines.append(f"  {value.derivation()}")
            _collect(value, cited)
        for message in item.errors:
            lines.append(f"  cannot compute {message}")
        if cited:
            lines.append("  facts used:")
            for value_text in cited:
                lines.append(f"    {value_text}")
        lines.append("")
    refs = sorted({k for line in lines for k in references if f"[{k}]" in line})
    if refs:
        lines.append("references:")
        lines.extend(f"  {key}: {references[key]}" for key in refs)
    if not explanations:
        lines.append("nothing to explain there: no workload or claim")
    return "\n".join(lines).rstrip() + "\n"


def _collect(value: Value, cited: dict[str, None]) -> None:
    if value.reference:
        cited[value.derivation()] = None
    for child in value.inputs:
        _collect(child, cited)
