"""`train llama3-70b, batch 512, context 8192, gpus 1024`: an LLM and the settings of its optimizer step."""
from __future__ import annotations

from gpuspec import nodes
from gpuspec.diagnostics import did_you_mean
from gpuspec.kinds.training import TrainingStep
from gpuspec.resolve import options
from gpuspec.resolve.scope import Scope, invalid, require_device
from gpuspec.tensors import Tensor

SETTINGS = ("batch", "context", "gpus", "weights")


def resolve(subject: nodes.Subject, scope: Scope, local: dict[str, Tensor], statement: str) -> TrainingStep:
    train, written = subject.expr, subject.options
    device = require_device(scope, subject.span)
    if written.on is not None or written.threads is not None or written.mode or written.graph or written.tile:
        raise invalid("training-options", "a training step takes its settings after commas, and `observed ...`",
                      written.span, f"write `train {train.model}, batch 512, context 8192, gpus 64`")
    model = options.llm(scope, train)
    values: dict[str, object] = {"batch": 1, "gpus": 1, "weights": "bf16"}
    for setting in train.settings:
        if setting.name not in SETTINGS:
            raise invalid("unknown-setting", f"training steps have no setting `{setting.name}`", setting.span,
                          did_you_mean(setting.name, SETTINGS) or f"settings: {', '.join(SETTINGS)}")
    options.once_each(train.settings, "a training step")
    for setting in train.settings:
        if setting.name == "weights":
            values["weights"] = options.dtype_setting(setting)
        else:
            values[setting.name] = options.count_setting(setting, least=1)
    if "context" not in values:
        raise invalid("training-needs-context", "a training step needs the length of its sequences", train.span,
                      f"write `train {train.model}, batch 512, context 8192`")
    return TrainingStep(model, device, int(values["batch"]), int(values["context"]),  # type: ignore[arg-type]
                        int(values["gpus"]), str(values["weights"]), text=statement)  # type: ignore[arg-type]
