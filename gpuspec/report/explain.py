"""The `explain` printer: every metric of a workload with its derivation, and the references behind the facts."""
from __future__ import annotations

from gpuspec.model.values import Value
from gpuspec.record import Record, record
from gpuspec.report.safe import shown_line
from gpuspec.text import Span


@record
class Explanation(Record):
    """What `explain` shows for one workload or claim: where it is, what it is, and its values."""

    span: Span
    title: str
    values: tuple[Value, ...]
    errors: tuple[str, ...] = ()
    realistic: str | None = None  # the time on a real device, by the calibrated source, and which profile says so
    verdicts: tuple[str, ...] = ()  # each claim it covers against the model: `4:5 fail: ridge_point = 562.5 ...`


def render(explanations: list[Explanation], references: dict[str, str]) -> str:
    lines: list[str] = []
    for item in explanations:
        lines.append(f"{item.span.file}:{item.span.line}: {item.title}")
        cited: dict[str, None] = {}
        for value in item.values:
            lines.append(f"  {value.derivation()}")
            _collect(value, cited)
        for message in item.errors:
            lines.append(f"  cannot compute {message}")
        if item.realistic:
            lines.append(f"  {item.realistic}")
        if item.verdicts:
            lines.append("  claims:")
            lines.extend(f"    {verdict}" for verdict in item.verdicts)
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
    # a file's name, its statements and the values it sets are the user's: shown, never acted on (report.safe)
    return "\n".join(shown_line(line) for line in lines).rstrip() + "\n"


def _collect(value: Value, cited: dict[str, None]) -> None:
    if value.reference:
        cited[value.derivation()] = None
    for child in value.inputs:
        _collect(child, cited)
