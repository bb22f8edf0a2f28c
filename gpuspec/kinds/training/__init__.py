"""The training kind: one optimizer step of an LLM, data-parallel over many GPUs, as FLOPs at the tensor-core peak
and the memory it needs. Its stages: resolve.py and rules.py; no harness (see KIND)."""
from __future__ import annotations

from attrs import field

from gpuspec import nodes
from gpuspec.devices import Device
from gpuspec.kinds.kind import Kind, Observation, observed_field
from gpuspec.record import ValueRecord, record


@record
class TrainingStep(ValueRecord):
    """One optimizer step of LLM training: `batch` sequences of `context` tokens, forward and backward, data-parallel
    over `gpus` GPUs (each holding the whole model)."""

    model: object  # gpuspec.llm_catalog.Model
    device: Device
    batch: int
    context: int
    gpus: int
    weight_dtype: str
    observed: Observation | None = observed_field()
    text: str = field(eq=False, default="")

    kind = "training"

    @property
    def setting(self) -> str:
        return (f"{self.device.name} × {self.gpus:,}, {self.model.name}, batch {self.batch}, context {self.context}, "
                f"{self.weight_dtype}")


# The metrics of its rules (rules.py), for what the resolver says before any rule is loaded.
TRAINING_METRICS = ("params", "layers", "active_params", "batch", "context", "gpus", "tokens",
                    "dense_flops_per_token", "attention_flops_per_token", "flops_per_token", "flops", "flops_per_gpu",
                    "peak_flop_rate", "t_math", "time", "step_time", "tokens_per_s", "state_bytes",
                    "activation_bytes")

KIND = Kind("training", TrainingStep, recognizes=lambda expr: isinstance(expr, nodes.Decode) and expr.phase == "train",
            figures={"time": None, "tokens/s": "tokens", "FLOP/s": "flops_per_gpu", "MFU": "flops_per_gpu"},
            unmeasured="a training step runs for hours on many GPUs: give what a run observed (`observed ...`)",
            metrics=TRAINING_METRICS,
            dtype_help="write `weights {dtype}`")
