"""What several kinds take when they resolve: the mode (one rule for every kind that has modes), the sample
window, tensor arguments, an LLM and its settings."""
from __future__ import annotations

import re

from gpuspec import llm_catalog, nodes, units
from gpuspec.devices import Device
from gpuspec.diagnostics import did_you_mean
from gpuspec.kinds.kind import Kind
from gpuspec.resolve.checked import in_range
from gpuspec.resolve.scope import Scope, after_failed, invalid
from gpuspec.resolve.tensor_expressions import tensor_expression
from gpuspec.tensors import DTYPES, Tensor


def mode(kind: Kind, subject: nodes.Subject, scope: Scope) -> str:
    """What the mode written (or the file's `set mode`) means for this kind: the workload stores the meaning
    (`compiled` is fused for a kernel; a decode step's `fused` is compiled)."""
    written = subject.options.mode or scope.mode
    if written not in kind.modes:
        raise invalid(f"{kind.name}-options", f"{kind.article} runs {_either(kind.modes)}, not `{written}`",
                      subject.options.span)
    return kind.modes[written]


def call_mode(kind: Kind, subject: nodes.Subject, scope: Scope) -> str:
    """The mode of a workload written as a call (row-wise, attention): its only option."""
    written = subject.options
    if written.threads is not None or written.graph or written.tile is not None:
        raise invalid(f"{kind.name}-options", f"{kind.article} takes only a mode: {_either(kind.modes)}",
                      written.span)
    return mode(kind, subject, scope)


def _either(words) -> str:
    """`eager`, `fused` or `compiled`."""
    quoted = [f"`{word}`" for word in words]
    return f"{', '.join(quoted[:-1])} or {quoted[-1]}" if len(quoted) > 1 else quoted[0]


def sample_window(scope: Scope, device: Device) -> float:
    """The window a sampled utilization counts in: the file's setting, else the device's, else 1/6 s."""
    if scope.sample_window is not None:
        return scope.sample_window
    window = device.fact("utilization_window")
    return window.value if window is not None else 1 / 6


def missing_link_help(device: Device, link: str, instead: str | None) -> str:
    """What to write where a workload needs `{link}_bandwidth` and the device has none, in agreement with the
    catalog's reason: a link the model does not describe (AMD's Infinity Fabric) is set to stand for it, as the
    reason says, `instead` (what else the workload could say) the other way out; a part that has no such link (an
    L40S has no NVLink) is told `instead`."""
    field = f"{link}_bandwidth"
    why = device.absent.get(field)
    if why is None or re.search(rf"\bset\b[^.;]*\b{field}\b", why):
        return (f"set it{' to stand for the link' if why else ''}: `device {device.name} with {field} = ...`"
                + (f"; or {instead}" if instead else ""))
    return instead or f"set it for a device of your own: `device mine from {device.name} with {field} = ...`"


def tensor_args(scope: Scope, call: nodes.Call, local: dict[str, Tensor], count: int, what: str) -> list[Tensor]:
    """The `count` named tensors a call takes (`softmax(x)`, `attention(q, k, v)`)."""
    if len(call.args) != count:
        raise invalid("wrong-arguments", f"`{call.function}` takes {count} tensor argument"
                      f"{'s' * (count > 1)}, not {len(call.args)}", call.span,
                      f"write `{call.function}({', '.join(('x',) if count == 1 else ('q', 'k', 'v'))})`")
    found = []
    for arg in call.args:
        tensor = tensor_expression(scope, arg, local)
        if not isinstance(tensor, Tensor):
            raise invalid(f"{what}-operand", f"each argument of `{call.function}` is a named tensor",
                          arg.span, "name it first: `x = bf16[8192, 4096]`")
        found.append(tensor)
    return found


def llm(scope: Scope, step: nodes.Decode):
    """The model a decode, prefill or training step names: one the spec defined, or the catalog's."""
    model = scope.models.get(step.model) or llm_catalog.lookup(step.model)
    if model is None:
        failed = after_failed(scope, step.model, step.span)
        if failed is not None:
            raise failed
        raise invalid("unknown-model", f"unknown model `{step.model}`", step.span,
                      did_you_mean(step.model, [*scope.models, *llm_catalog.known_names()])
                      or "`gpuspec models` lists the catalog")
    return model


def once_each(settings, what: str, same: dict[str, str] | None = None) -> None:
    """Each setting of a step at most once (`batch 1, batch 64` would keep the last): the error is at the second,
    naming the first. `same` maps a setting to the one it also sets (a prefill's `prompt` is its `context`)."""
    seen: dict[str, nodes.DecodeSetting] = {}
    for setting in settings:
        key = (same or {}).get(setting.name, setting.name)
        first = seen.setdefault(key, setting)
        if first is setting:
            continue
        written, before = setting_text(setting), setting_text(first)
        where = f"{first.span.line}:{first.span.column}" if first.span is not None else "before"
        also = "" if key == setting.name == first.name else f" ({what}'s `{setting.name}` is its `{key}`)" \
            if key != setting.name else f" ({what}'s `{first.name}` is its `{key}`)"
        raise invalid("duplicate-setting", f"`{written}` sets `{key}` again: `{before}` at {where} set it "
                      f"already{also}", setting.span,
                      f"keep one: `{before}` or `{written}`" if written != before else "write it once")


def setting_text(setting: nodes.DecodeSetting) -> str:
    """A step's setting as written: `batch 8`, `weights int4`, `15 kernels per layer`."""
    if setting.name == "kernels_per_layer" and setting.number is not None:
        return f"{setting.number.text} kernels per layer"
    return f"{setting.name} {setting.number.text if setting.number is not None else setting.word}"


# The dtypes a step's setting is usually written with, for a help that lists them: a KV cache's (vLLM's and
# TensorRT-LLM's cache dtypes) and weights'.
USUAL_DTYPES = ("bf16", "fp16", "fp8", "fp32", "int8")


def dtype_setting(setting: nodes.DecodeSetting) -> str:
    if setting.word not in DTYPES:
        written = setting.word or setting.number.text
        if setting.word == "int4":  # a weight format (weight-only quantization), no dtype anything else holds
            if setting.name == "kv":
                raise invalid("unknown-dtype", "`int4` is not a dtype but a weight format (four bits a weight, with "
                              "a scale per group), for `weights int4`; the KV cache holds a dtype", setting.span,
                              "write `weights int4` for int4 weights (the cache is then bf16), and `kv` as one of "
                              f"{', '.join(USUAL_DTYPES)}")
            raise invalid("unknown-dtype", "`int4` is not a dtype but a weight format, for the weights of a decode "
                          "or prefill step (weight-only quantization for inference)", setting.span,
                          f"write `{setting.name}` as one of {', '.join(USUAL_DTYPES[:-1])}")
        raise invalid("unknown-dtype", f"`{written}` is not a dtype", setting.span,
                      did_you_mean(setting.word or "", DTYPES) or f"dtypes: {', '.join(USUAL_DTYPES)}, ...")
    return DTYPES[setting.word][1]


def count_setting(setting: nodes.DecodeSetting, least: int) -> int:
    if setting.number is None:
        raise invalid("expected-number", f"`{setting.name}` takes a whole number", setting.span)
    value = in_range(setting.number, units.Unit("", 1.0, units.COUNT), setting.span)
    if value != int(value) or value < least:
        raise invalid("expected-whole-number", f"{setting.name} must be a whole number of at least "
                      f"{least}, not `{setting.number.text}`", setting.span)
    return int(value)
