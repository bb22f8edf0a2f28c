"""`decode llama3-8b, batch 8, context 4096 compiled as a CUDA graph` (or `prefill ..., prompt 2048`): an LLM from
the spec or the catalog, its settings, and the kernels per layer its mode runs."""
from __future__ import annotations

from gpuspec import nodes
from gpuspec.diagnostics import did_you_mean
from gpuspec.kinds.decode import ATTENTION, KERNELS_PER_LAYER, KIND, DecodeStep
from gpuspec.resolve import options
from gpuspec.resolve.scope import Scope, invalid, require_device
from gpuspec.tensors import Tensor

SETTINGS = ("batch", "context", "kernels_per_layer", "weights", "kv", "tp", "prompt", "embedding", "host_ops",
            "attention", "kv_repeat", "group_size")
# int4 weights (weight-only, four bits each) keep a 16-bit scale and zero point per group; 128 weights a group is
# the default of torchao's int4_weight_only, AWQ and GPTQ
INT4_GROUP = 128
EMBEDDING = ("gathered", "read")  # `embedding read`: the step reads the whole input embedding table


def resolve(subject: nodes.Subject, scope: Scope, local: dict[str, Tensor], statement: str) -> DecodeStep:
    decode, written = subject.expr, subject.options
    device = require_device(scope, subject.span)
    if written.on is not None or written.threads is not None:
        raise invalid("decode-options", "a decode step takes `eager`, `compiled` and `as a CUDA graph`",
                      written.span)
    model = options.llm(scope, decode)
    mode = options.mode(KIND, subject, scope)
    values: dict[str, object] = {"batch": 1, "context": 0, "weights": "bf16"}
    for setting in decode.settings:
        if setting.name not in SETTINGS:
            raise invalid("unknown-setting", f"decode steps have no setting `{setting.name}`", setting.span,
                          did_you_mean(setting.name, SETTINGS) or f"settings: {', '.join(SETTINGS)}")
    options.once_each(decode.settings, f"a {decode.phase} step",
                      {"prompt": "context"} if decode.phase == "prefill" else None)
    for setting in decode.settings:
        if setting.name == "weights" and setting.word == "int4":  # weight-only: no int4 tensors or cache exist
            values["weights"] = "int4"
        elif setting.name in ("weights", "kv"):
            values[setting.name] = options.dtype_setting(setting)
        elif setting.name == "embedding":
            if setting.word not in EMBEDDING:
                raise invalid("unknown-setting", f"`embedding {setting.word or setting.number.text}`: the table is "
                              "`read` whole or its rows `gathered`", setting.span,
                              did_you_mean(setting.word or "", EMBEDDING) or "write `embedding read` or "
                              "`embedding gathered` (the default)")
            values["embedding"] = setting.word
        elif setting.name == "attention":
            if setting.word not in ATTENTION:
                raise invalid("bad-setting", f"attention is {' or '.join(ATTENTION)}, not "
                              f"`{setting.word or setting.number.text}`", setting.span,
                              did_you_mean(setting.word or "", ATTENTION) or "`math` is PyTorch's math SDPA backend")
            values["attention"] = setting.word
        else:
            values[setting.name] = options.count_setting(setting, least=0 if setting.name == "context" else 1)
    if "prompt" in values:  # a prefill's prompt is the context it builds
        if decode.phase != "prefill":
            raise invalid("unknown-setting", "`prompt` is a prefill's setting; a decode step has `context`",
                          decode.span)
        values["context"] = values["prompt"]
    if decode.phase == "prefill" and int(values["context"]) < 1:  # type: ignore[arg-type]
        raise invalid("prefill-needs-prompt", "a prefill needs its prompt's length", decode.span,
                      f"write `prefill {decode.model}, batch 1, prompt 2048`")
    if "host_ops" in values and (mode != "eager" or written.graph):
        raise invalid("host-ops-eager", "`host_ops` counts the ops eager model code dispatches a step; a compiled "
                      "step (or a CUDA graph) launches its kernels without them", decode.span,
                      f"write `decode {decode.model}, batch 1, host_ops 2739 eager`, or leave `host_ops` out")
    repeat = int(values.get("kv_repeat", 1))  # type: ignore[arg-type]
    heads, kv_heads = model.fact("heads"), model.fact("kv_heads")
    if repeat > 1 and heads is not None and kv_heads is not None and repeat * kv_heads.value != heads.value:
        raise invalid("bad-kv-repeat", f"{model.name} has {heads.value:g} heads and {kv_heads.value:g} KV heads: "
                      f"copying each KV head {repeat} times gives {repeat * kv_heads.value:g}", decode.span,
                      f"write `kv_repeat {heads.value / kv_heads.value:g}`" if heads.value % kv_heads.value == 0
                      else "leave `kv_repeat` out")
    per_layer = int(values.get("kernels_per_layer", KERNELS_PER_LAYER[mode]))  # type: ignore[arg-type]
    if int(values.get("tp", 1)) > 1 and device.fact("nvlink_bandwidth") is None:  # type: ignore[arg-type]
        why = device.absent.get("nvlink_bandwidth")
        raise invalid("missing-fact", f"tensor parallelism needs NVLink, and {device.name} has no "
                      "`nvlink_bandwidth`" + (f": {why}" if why else ""), decode.span,
                      options.missing_link_help(device, "nvlink", "leave `tp` out: gpuspec splits a step over "
                                                "NVLink only"))
    weights = str(values["weights"])
    if "group_size" in values and weights != "int4":
        raise invalid("group-size-int4", "`group_size` is the number of int4 weights that share a scale; these "
                      f"weights are {weights}", decode.span, "write `weights int4, group_size 64`, or leave "
                      "`group_size` out")
    group = int(values.get("group_size", INT4_GROUP)) if weights == "int4" else None  # type: ignore[arg-type]
    return DecodeStep(model, device, int(values["batch"]), int(values["context"]), mode,  # type: ignore[arg-type]
                      written.graph, per_layer, weights,
                      str(values.get("kv", "bf16" if weights == "int4" else weights)),  # no int4 cache: 16-bit
                      options.sample_window(scope, device), int(values.get("tp", 1)), decode.phase,
                      str(values.get("embedding", "gathered")),
                      int(values["host_ops"]) if "host_ops" in values else None,  # type: ignore[arg-type]
                      str(values.get("attention", "fused")), repeat, group, text=statement)
