"""The decode kind: one step of an LLM, decoding a token per sequence or prefilling a prompt, as weight and KV-cache
traffic, FLOPs and launches. Its stages: resolve.py (the model and settings), rules.py (the layer's kernels and the
launch queue), harness.py (a step's matmuls, cache reads and small kernels)."""
from __future__ import annotations

from attrs import field

from gpuspec import nodes
from gpuspec.devices import Device
from gpuspec.kinds.kind import Kind, Observation, observed_field
from gpuspec.record import ValueRecord, record

# The matmuls of a layer that read its weights.
WEIGHT_MATMULS = ("q", "k", "v", "o", "gate", "up", "down")
# How a step's attention runs: one fused kernel reading the cache once, or PyTorch's math SDPA (`attention math`).
ATTENTION = ("fused", "math")
# Kernels per layer unless a spec sets them: eager runs every op as its own kernel; compiled fuses the elementwise
# work into the weight matmuls and attention (rules.py, layer_kernels, says which kernel does what).
KERNELS_PER_LAYER = {"eager": 15, "compiled": len(WEIGHT_MATMULS) + 1}


@record
class DecodeStep(ValueRecord):
    """One decode step of an LLM: every layer's kernels for `batch` sequences at `context` tokens of history.

    mode is eager (every op its own kernel) or compiled (elementwise work fused into the matmuls);
    graph means the whole step is launched as one CUDA graph.
    """

    model: object  # gpuspec.llm_catalog.Model
    device: Device
    batch: int
    context: int
    mode: str
    graph: bool
    kernels_per_layer: int
    weight_dtype: str
    kv_dtype: str
    sample_window: float
    tp: int = 1  # GPUs the model is split over (tensor parallelism)
    phase: str = "decode"  # or "prefill": the whole prompt (`context` tokens) in one step
    # "gathered": the input embedding table is not read whole, only the batch's rows; "read": every weight is read,
    # the table too (`decode ..., embedding read`): writers count it both ways
    embedding: str = "gathered"
    host_ops: int | None = None  # eager: the ops the model code dispatches per step (views and all), where stated
    attention: str = "fused"  # or "math": PyTorch's math SDPA (fp32 copies of K and V, the scores materialized)
    kv_repeat: int = 1  # the model code copies each K and V head this many times before attention, every step
    # int4 weights: how many share one 16-bit scale and one 16-bit zero point (torchao's int4 weight-only layout;
    # AWQ and GPTQ keep theirs per group too); None for every other dtype
    weight_group: int | None = None
    observed: Observation | None = observed_field()
    text: str = field(eq=False, default="")

    kind = "decode"

    @property
    def setting(self) -> str:
        graph = ", as a CUDA graph" if self.graph else ""
        table = ", embedding table read" if self.embedding == "read" else ""
        ops = f", {self.host_ops:,} host ops a step" if self.host_ops is not None else ""
        ops += f", {self.attention} attention" if self.attention != "fused" else ""
        ops += f", K and V heads copied {self.kv_repeat} times" if self.kv_repeat > 1 else ""
        groups = f" in groups of {self.weight_group}" if self.weight_group else ""
        return (f"{self.device.name}, {self.model.name}, {self.phase}, batch {self.batch}, context {self.context}, "
                f"{self.mode}{table}, "
                f"{self.kernels_per_layer} kernels per layer{ops}, {self.weight_dtype} weights{groups}{graph}")


# The metrics of its rules (rules.py), for what the resolver says before any rule is loaded.
DECODE_METRICS = ("params", "layers", "batch", "context", "kernels_per_layer", "kernels", "launches", "launch_cost",
                  "launch_time", "bytes_per_weight", "weight_bytes", "t_weights", "weights_read",
                  "kv_bytes_per_token", "kv_bytes", "t_kv", "attention_bytes", "bytes_moved", "t_mem",
                  "active_params", "flops", "peak_flop_rate", "t_math", "gpu_time", "step_time", "step_time_serial",
                  "idle_time", "overhead_share", "overhead_share_serial", "busy_share", "utilization", "tokens_per_s",
                  "time", "bound", "compute_time", "memory_time", "overhead_time", "compute_share", "memory_share",
                  "overhead_time_share", "compute_bound_batch", "tokens", "tp", "comm_time", "mfu", "mbu")

# `fused` means compiled: torch.compile is what fuses a decode step's elementwise work into its matmuls.
KIND = Kind("decode", DecodeStep, recognizes=lambda expr: isinstance(expr, nodes.Decode) and expr.phase != "train",
            modes={"eager": "eager", "compiled": "compiled", "fused": "compiled"},
            figures={"time": None, "tokens/s": "tokens", "launches/s": "kernels", "FLOP/s": "flops",
                     "B/s": "bytes_moved", "MFU": "flops", "MBU": "bytes_moved"},
            measured_leaves=("step_time", "gpu_time"), metrics=DECODE_METRICS,
            dtype_help="write `weights {dtype}`")
