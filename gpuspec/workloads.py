"""Resolved workloads: tensors with dtypes and shapes, and elementwise expressions over them, on a device."""
from __future__ import annotations

import math
from typing import Union

from attrs import field

from gpuspec.devices import Device
from gpuspec.record import ValueRecord, as_tuple, record

# dtype -> (bytes per element, canonical name). Elementwise math on half types runs in fp32.
DTYPES = {
    "fp64": (8, "fp64"), "float64": (8, "fp64"), "f64": (8, "fp64"), "double": (8, "fp64"),
    "fp32": (4, "fp32"), "float32": (4, "fp32"), "f32": (4, "fp32"), "float": (4, "fp32"),
    "tf32": (4, "tf32"),
    "fp16": (2, "fp16"), "float16": (2, "fp16"), "f16": (2, "fp16"), "half": (2, "fp16"),
    "bf16": (2, "bf16"), "bfloat16": (2, "bf16"),
    "fp8": (1, "fp8"), "e4m3": (1, "fp8"), "e5m2": (1, "fp8"), "float8": (1, "fp8"),
    "int64": (8, "int64"), "int32": (4, "int32"), "int16": (2, "int16"), "int8": (1, "int8"),
    "uint8": (1, "uint8"), "bool": (1, "bool"),
}
# Type promotion between tensors, as PyTorch does it: the wider float wins; bf16 with fp16 gives fp32.
_RANK = {"bool": 0, "uint8": 1, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "fp8": 5, "fp16": 6, "bf16": 6,
         "tf32": 7, "fp32": 7, "fp64": 8}

# FLOPs per element for each operation. Convention: every arithmetic operation and every special
# function evaluation (exp, log, sqrt, tanh, erf) counts as one FLOP; a fused multiply-add counts as two.
UNARY_FLOPS = {
    "neg": 1, "abs": 1, "relu": 1, "exp": 1, "log": 1, "sqrt": 1, "rsqrt": 1, "tanh": 1, "sin": 1, "cos": 1,
    "erf": 1, "square": 1,
    "sigmoid": 3,  # 1 / (1 + exp(-x)): exp, add, divide
    "silu": 4,     # x * sigmoid(x)
    "gelu": 5,     # 0.5 * x * (1 + erf(x / sqrt(2))): divide, erf, add, two multiplies
}
BINARY_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "^": "pow", "max": "maximum", "min": "minimum"}


@record
class Tensor(ValueRecord):
    """A named input tensor: dtype and shape."""

    name: str
    dtype: str
    shape: tuple[int, ...] = field(converter=as_tuple)

    @property
    def elements(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return DTYPES[self.dtype][0]


@record
class Scalar(ValueRecord):
    """A constant in an elementwise expression."""

    value: float


@record
class Apply(ValueRecord):
    """One elementwise operation (one kernel in eager mode) over tensors, scalars or other operations."""

    op: str
    args: tuple["Node", ...] = field(converter=as_tuple)
    text: str = field(eq=False, default="")  # the operation as written, for messages


Node = Union[Tensor, Scalar, Apply]


def is_constant(node: Node) -> bool:
    return isinstance(node, Scalar) or (isinstance(node, Apply) and all(is_constant(a) for a in node.args))


def result_dtype(node: Node) -> str | None:
    """The dtype of a node's result, or None for a constant."""
    if isinstance(node, Tensor):
        return node.dtype
    if isinstance(node, Scalar):
        return None
    dtypes = [d for d in (result_dtype(a) for a in node.args) if d]
    if not dtypes:
        return None
    best = max(dtypes, key=lambda d: _RANK[d])
    if {"fp16", "bf16"} <= set(dtypes) and _RANK[best] == _RANK["bf16"]:
        return "fp32"
    return best


def result_shape(node: Node) -> tuple[int, ...]:
    """The broadcast shape of a node's result (numpy rules); ValueError if shapes do not broadcast."""
    if isinstance(node, Tensor):
        return node.shape
    if isinstance(node, Scalar):
        return ()
    shape: tuple[int, ...] = ()
    for arg in node.args:
        shape = broadcast(shape, result_shape(arg))
    return shape


def broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for x, y in zip(reversed((1,) * (len(b) - len(a)) + a), reversed((1,) * (len(a) - len(b)) + b)):
        if x != y and 1 not in (x, y):
            raise ValueError(f"shapes {list(a)} and {list(b)} do not broadcast")
        out.append(max(x, y))
    return tuple(reversed(out))


@record
class Observation(ValueRecord):
    """A figure someone observed for a workload (`observed 107 tokens/s`), in SI units: a time, a token rate,
    a FLOP rate or a bandwidth. The model derives from it what it implies (time, utilization)."""

    value: float
    dimension: tuple[int, ...] = field(converter=as_tuple)
    text: str = field(eq=False, default="")  # as written, for derivations


def _observed():
    # Keyword-only, so that every workload takes it the same way; part of equality, since two observations of
    # one workload imply different things.
    return field(default=None, kw_only=True)


@record
class Elementwise(ValueRecord):
    """An elementwise workload: an expression over tensors, run eager (one kernel per op) or fused (one kernel)."""

    expr: Node
    mode: str  # "eager" or "fused"
    threads_per_block: int
    device: Device
    registers_per_thread: int | None = None
    shared_memory_per_block: float | None = None  # bytes
    observed: Observation | None = _observed()
    text: str = field(eq=False, default="")

    kind = "elementwise"

    @property
    def setting(self) -> str:
        return f"{self.device.name}, {self.mode}, {self.threads_per_block} threads per block"


@record
class Stream(ValueRecord):
    """A workload launched `count` times in a row: from the host one launch at a time, or as one CUDA graph.
    The workload is elementwise, row-wise, attention or a matmul: one or more kernels per repeat."""

    kernel: Union[Elementwise, "Matmul", "Rowwise", "Attention"]
    count: int
    graph: bool
    device: Device
    sample_window: float  # seconds: the window a sampled utilization counts as busy if any kernel ran in it
    observed: Observation | None = _observed()
    text: str = field(eq=False, default="")

    kind = "stream"

    @property
    def setting(self) -> str:
        return f"{self.device.name}, {self.count:,} launches{', as a CUDA graph' if self.graph else ''}"


@record
class DecodeStep(ValueRecord):
    """One decode step of an LLM: every layer's kernels for `batch` sequences at `context` tokens of history.

    mode is eager (every op its own kernel) or compiled (elementwise work fused into the matmuls);
    graph means the whole step is launched as one CUDA graph.
    """

    model: object  # gpuspec.models.Model
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
    observed: Observation | None = _observed()
    text: str = field(eq=False, default="")

    kind = "decode"

    @property
    def setting(self) -> str:
        graph = ", as a CUDA graph" if self.graph else ""
        return (f"{self.device.name}, {self.model.name}, {self.phase}, batch {self.batch}, context {self.context}, "
                f"{self.mode}, "
                f"{self.kernels_per_layer} kernels per layer, {self.weight_dtype} weights{graph}")


@record
class Matmul(ValueRecord):
    """`a @ b`: a (batched) matrix multiply, a [..., M, K] by b [..., K, N], on the tensor cores, in tiles."""

    a: Tensor
    b: Tensor
    tile: tuple[int, int] = field(converter=as_tuple)  # rows x columns of C that one block computes
    device: Device = None  # type: ignore[assignment]
    observed: Observation | None = _observed()
    text: str = field(eq=False, default="")

    kind = "matmul"

    @property
    def setting(self) -> str:
        return f"{self.device.name}, {self.tile[0]}x{self.tile[1]} tiles"


# Row-wise operations over the last axis: reductions write one value per row, the others a full tensor.
ROWWISE_OPS = ("sum", "mean", "amax", "softmax", "layernorm", "rmsnorm")
REDUCTIONS = ("sum", "mean", "amax")
FLOAT_DTYPES = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8")


@record
class Rowwise(ValueRecord):
    """`op(x)` over the last axis of x: eager (one kernel per pass, row statistics through HBM) or fused (one)."""

    op: str
    x: Tensor
    mode: str  # "eager" or "fused"
    device: Device
    observed: Observation | None = _observed()
    text: str = field(eq=False, default="")

    kind = "rowwise"

    @property
    def out_shape(self) -> tuple[int, ...]:
        return self.x.shape[:-1] if self.op in REDUCTIONS else self.x.shape

    @property
    def setting(self) -> str:
        return f"{self.device.name}, {self.op}, {self.mode}"


@record
class Attention(ValueRecord):
    """`attention(q, k, v)`: q [batch, heads, seq_q, head_dim], k and v [batch, kv_heads, seq_kv, head_dim];
    eager (QKᵀ, softmax and PV as three kernels, scores through HBM) or fused (one flash-style kernel)."""

    q: Tensor
    k: Tensor
    v: Tensor
    mode: str  # "eager" or "fused"
    device: Device
    observed: Observation | None = _observed()
    text: str = field(eq=False, default="")

    kind = "attention"

    @property
    def setting(self) -> str:
        return f"{self.device.name}, {self.mode}"


@record
class TrainingStep(ValueRecord):
    """One optimizer step of LLM training: `batch` sequences of `context` tokens, forward and backward, data-parallel
    over `gpus` GPUs (each holding the whole model)."""

    model: object  # gpuspec.models.Model
    device: Device
    batch: int
    context: int
    gpus: int
    weight_dtype: str
    observed: Observation | None = _observed()
    text: str = field(eq=False, default="")

    kind = "training"

    @property
    def setting(self) -> str:
        return (f"{self.device.name} × {self.gpus:,}, {self.model.name}, batch {self.batch}, context {self.context}, "
                f"{self.weight_dtype}")


COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast_to_all")


@record
class Collective(ValueRecord):
    """A collective over `gpus` GPUs joined by a link (NVLink or PCIe), moving a buffer of `size` bytes, as a ring."""

    op: str
    size: float  # bytes: the whole buffer (all_reduce, broadcast) or the gathered result (all_gather, ...)
    gpus: int
    link: str    # "nvlink" or "pcie"
    device: Device
    observed: Observation | None = _observed()
    text: str = field(eq=False, default="")

    kind = "collective"

    @property
    def setting(self) -> str:
        return f"{self.gpus} × {self.device.name} over {self.link}"
