"""The decode-step model: one token of an LLM (or a prefill: a whole prompt), as weight and KV-cache traffic, FLOPs
and kernel launches.

Rules:
- Every step reads every weight once, except the input embedding table, of which it gathers only the
  rows of the batch's tokens (unless the table is tied to the output layer, which reads all of it, or the spec
  says `embedding read`: writers count the table both ways, so the spec says which).
- The KV cache is read once per step: 2 (K and V) × layers × KV heads × head size × context × batch (a prefill
  writes as much for its prompt).
- Attention reads the cache once, unless the step says its model code copies each K and V head (`kv_repeat 4`:
  those copies written and read, every step) or runs PyTorch's math SDPA (`attention math`: fp32 copies of K and V,
  K scaled, both read again by two batched matmuls): attention_bytes.
- A prefill runs batch × prompt tokens through every matmul at once, and causal attention over S(S + 1)/2
  query-key pairs per head.
- FLOPs: 2 per parameter per sequence (FMA = 2), plus attention: 4 × layers × heads × head size × context
  per sequence (QKᵀ and the weighted sum of V). Matmuls run at the dense tensor-core rate of the weights' dtype.
- Kernels per layer: eager runs 15 (a setting); compiled fuses the elementwise work into the 7 matmuls
  (q, k, v, o, gate, up, down) and attention: 8. Of a layer's kernels, up to 7 read the weights (split evenly),
  one reads the KV cache, and the rest are small, taking the kernel floor (layer_kernels, which the harness
  builds from too).
- On a device whose profile measured decode_kernel_cost (no datasheet has it), each kernel of a decode step that
  streams from HBM (the weight matmuls, the attention) reads at the achievable HBM bandwidth and takes that cost
  beyond its bytes: a GEMV reading tens of MB ramps up, drains and reduces over its split K, and waits for the
  next kernel (measured over whole compiled steps: ~7 µs a kernel on an A100, ~11 µs on an H100). Weights
  quantized to int8 or fp8 take their dequantizing kernels' own cost (decode_kernel_cost_int8, _fp8) where measured.
  (An older profile's decode_bandwidth, the weights' bytes over whole steps, is read at instead where it has no
  kernel cost.)
- A prefill's weight kernels are GEMMs over the prompt's tokens: on a device whose profile measured GEMMs over sizes
  (gemm_fixed_cost), each of q, k, v, o, gate, up and down is timed as the matmul kind times a lone GEMM of its
  shape (its tiles and waves at the achievable rate, plus that fixed cost: prologue, pipeline fill, epilogue), the
  output layer's spread over the layers; and under 8-bit weights attention's matmuls run at the 16-bit tensor rate
  (FP8 attention is an engine's opt-in). A decode step's weight kernels take decode_kernel_cost instead, which was
  measured over whole decode steps.
- An eager step on a device whose profile gives model_op_cost pays that much host time for each op its model code
  dispatches (`host_ops` a step, views and all: about 9 to 11 µs an op for Llama code, torchao's and
  transformers'; 4,067 and 2,739 ops a step for their 32-layer models), spread over the step's kernels; that
  dwarfs a bare launch. Without `host_ops` each kernel counts as one op.
- Tensor parallelism all-reduces the activations (16-bit under 8-bit weights) twice a layer over NVLink: a compiled
  decode step's small all-reduces at an engine's one-shot kernel's cost where a profile measured it
  (tp_allreduce_latency: ~7-10 µs on H100s) plus their bytes; otherwise NCCL's, as the collective kind times one on
  a device whose profile has its protocol facts (its latency for an eager call or one in a CUDA graph), else its
  collective_latency plus the bytes.
- The host launches them one by one at launch_cost each (or once, as a CUDA graph, when each kernel costs
  graph_node_cost more on the GPU); the queue decides the step time. `step_time_serial` adds launches and
  GPU time as if nothing overlapped.
"""
from __future__ import annotations

import math

from gpuspec import units
from gpuspec.kinds.decode import WEIGHT_MATMULS
from gpuspec.model import launches, llm
from gpuspec.model.estimate import Estimate, NoValue
from gpuspec.model.values import NotFinite, Value, choice, given, product, quotient, renamed, total
from gpuspec.record import Record, record
from gpuspec.tensors import DTYPES

COUNT, TIME, BYTES, FLOPS = units.COUNT, units.TIME, units.BYTES, units.FLOPS
_m = llm.model_fact
active_params, peak_flop_rate = llm.active_params, llm.peak_flop_rate


def batch(e: Estimate) -> Value:
    return given("batch", e.workload.batch, COUNT)


def context(e: Estimate) -> Value:
    return given("context", e.workload.context, COUNT, note="tokens of history in the KV cache")


def kernels_per_layer(e: Estimate) -> Value:
    return given("kernels_per_layer", e.workload.kernels_per_layer, COUNT, note=e.workload.mode)


def kernels(e: Estimate) -> Value:
    return product("kernels", _m(e, "layers"), e["kernels_per_layer"])


def launches_(e: Estimate) -> Value:
    if e.workload.graph:
        return given("launches", 1, COUNT, note="the step is one CUDA graph")
    return renamed("launches", e["kernels"])


def launch_cost(e: Estimate) -> Value:
    if e.workload.graph:
        return e.fact("graph_launch_cost")
    if e.workload.mode == "eager" and e.device.fact("model_op_cost") is not None:
        # a profile's: the host cost per op of real model code run eagerly, over the ops the step dispatches
        if e.workload.host_ops is None:
            op = e.fact("model_op_cost")
            return Value("launch_cost", op.number, TIME, "{0}", (op,),
                         note="host_ops not stated: one op per kernel (real Llama code dispatches 5 to 8 per kernel "
                              "gpuspec counts; state `host_ops`)")
        ops = given("host_ops", e.workload.host_ops, COUNT, note="the ops the model code dispatches a step")
        return Value("launch_cost", e.fact("model_op_cost").number * e.workload.host_ops / e["kernels"].number, TIME,
                     "{0} × {1} / {2}", (e.fact("model_op_cost"), ops, e["kernels"]),
                     note="the host's time per step, spread over the step's kernels")
    return e.fact("launch_cost")


def launch_time(e: Estimate) -> Value:
    return product("launch_time", e["launches"], e["launch_cost"])


INT4_BYTES = 0.5  # two 4-bit weights to a byte
GROUP_BYTES = 4  # a 16-bit scale and a 16-bit zero point per group of int4 weights


def bytes_per_weight(e: Estimate) -> Value:
    group = e.workload.weight_group
    if e.workload.weight_dtype == "int4" and group:
        packed = given("int4", INT4_BYTES, units.BYTES, note="two 4-bit weights to a byte")
        scales = quotient("per weight of its group's scale and zero point", given("2 x 16 bits", GROUP_BYTES,
                          units.BYTES), given("group_size", group, COUNT))
        return total("bytes_per_weight", packed, scales, note="int4 weight-only, as torchao, AWQ and GPTQ keep it")
    return given("bytes_per_weight", DTYPES[e.workload.weight_dtype][0], units.BYTES, note=e.workload.weight_dtype)


def weight_bytes(e: Estimate) -> Value:
    return product("weight_bytes", _m(e, "params"), e["bytes_per_weight"])


# weight dtypes whose decode kernels dequantize as they read, with costs of their own
QUANTIZED = ("int8", "fp8", "int4")


def _kernel_cost_fact(e: Estimate) -> str | None:
    """The profile fact that is a decode step's cost per streaming kernel: that of the weights' dtype where the
    profile has one (decode_kernel_cost_int8, _fp8), else decode_kernel_cost; None where it has neither."""
    dtype = e.workload.weight_dtype
    for name in ((f"decode_kernel_cost_{dtype}",) if dtype in QUANTIZED else ()) + ("decode_kernel_cost",):
        if e.device.fact(name) is not None:
            return name
    return None


def _decode_kernel_cost(e: Estimate) -> float:
    """What each kernel that streams from HBM (a weight matmul, the attention) takes beyond its bytes in a decode
    step: the profile's decode_kernel_cost (0 in the ideal model, and in a prefill, whose GEMMs take
    gemm_fixed_cost instead)."""
    name = _kernel_cost_fact(e)
    return e.device.fact(name).value if name is not None and e.workload.phase == "decode" else 0.0


def _weight_bandwidth(e: Estimate) -> Value:
    """What the weight-streaming kernels read at: the HBM bandwidth (on a calibrated device the achievable one, with
    decode_kernel_cost on top of each kernel), or where an older profile holds it, the bandwidth a batch-1 decode's
    weight reads reached as a whole (decode_bandwidth, decode_bandwidth_int8, _fp8)."""
    if _kernel_cost_fact(e) is None:
        quantized = f"decode_bandwidth_{e.workload.weight_dtype}"
        for name in (quantized, "decode_bandwidth"):
            if name in ("decode_bandwidth_int8", "decode_bandwidth_fp8", "decode_bandwidth") and e.device.fact(name):
                return e.fact(name)
    return e.fact("hbm_bandwidth")


def t_weights(e: Estimate) -> Value:
    return quotient("t_weights", e["weight_bytes"], _weight_bandwidth(e))


def tokens(e: Estimate) -> Value:
    """Tokens the step processes: one per sequence when decoding, the whole prompt of each when prefilling."""
    if e.workload.phase == "prefill":
        return product("tokens", e["batch"], e["context"], note="prefill: every prompt token at once")
    return renamed("tokens", e["batch"])


def tp(e: Estimate) -> Value:
    return given("tp", e.workload.tp, COUNT, note="GPUs the model is split over")


def _per_gpu(name: str, whole: Value, e: Estimate) -> Value:
    """`whole` split evenly over the tensor-parallel GPUs (the value itself when there is one)."""
    if e.workload.tp == 1:
        return whole if whole.name == name else renamed(name, whole)
    return quotient(name, whole, e["tp"], note="per GPU: tensor parallelism splits it evenly")


def weights_read(e: Estimate) -> Value:
    if e.workload.model.tied_embeddings:
        return _per_gpu("weights_read", e["weight_bytes"], e)
    if e.workload.embedding == "read":  # the spec says the step reads the table whole
        whole = renamed("weights_read" if e.workload.tp == 1 else "weights_read, all GPUs", e["weight_bytes"])
        return _per_gpu("weights_read", whole, e)
    table = product("embedding_table", _m(e, "vocab"), _m(e, "hidden"), e["bytes_per_weight"])
    whole = Value("weights_read" if e.workload.tp == 1 else "weights_read, all GPUs", e["weight_bytes"].number
                  - table.number, BYTES, "{0} - {1}", (e["weight_bytes"], table),
                  note="a step gathers only its tokens' rows of the embedding table")
    return _per_gpu("weights_read", whole, e)


def kv_bytes_per_token(e: Estimate) -> Value:
    two = given("2 (K and V)", 2, COUNT)
    size = given("bytes_per_kv", DTYPES[e.workload.kv_dtype][0], BYTES, note=e.workload.kv_dtype)
    return product("kv_bytes_per_token", two, _m(e, "layers"), _m(e, "kv_heads"), _m(e, "head_dim"), size)


def kv_bytes(e: Estimate) -> Value:
    name = "kv_bytes" if e.workload.tp == 1 else "kv_bytes, all GPUs"
    return _per_gpu("kv_bytes", product(name, e["kv_bytes_per_token"], e["context"], e["batch"]), e)


def memory_needed(e: Estimate) -> Value:
    """What one GPU keeps in memory at the least: its share of the weights and its KV cache."""
    weights = e["weight_bytes"] if e.workload.tp == 1 else _per_gpu("weights per GPU", e["weight_bytes"], e)
    return total("memory_needed", weights, e["kv_bytes"], note="per GPU: the weights and the KV cache")


def t_kv(e: Estimate) -> Value:
    return quotient("t_kv", e["kv_bytes"], e.fact("hbm_bandwidth"))


def attention_bytes(e: Estimate) -> Value:
    """What a step's attention moves (per GPU): the cache read once, unless the model code copies each K and V head
    `kv_repeat` times first (those copies written, then read) or attention runs as PyTorch's math SDPA, which casts K
    and V to fp32 copies (PyTorch 2.5 and later, for 16-bit inputs), scales the K copy and reads both again in two
    batched matmuls; the scores (a few bytes per token and head) are not counted."""
    w = e.workload
    if w.attention == "fused" and w.kv_repeat == 1:
        return renamed("attention_bytes", e["kv_bytes"])
    d, b = _m(e, "head_dim").number, DTYPES[w.kv_dtype][0]
    g = _m(e, "kv_heads").number / w.tp
    per_token = 0.0
    parts = []
    if w.kv_repeat > 1:  # read the cache, write its copies
        per_token += 2 * g * d * b * (1 + w.kv_repeat)
        parts.append(f"the copies: 2 × {g:g} heads × {d:g} × {b:g} B read, × {w.kv_repeat} written")
    heads = g * w.kv_repeat  # the heads attention reads
    if w.attention == "math":
        cast = 2 * heads * d * (b + 4) if b < 4 else 0.0  # K and V read, their fp32 copies written
        per_token += cast + 2 * heads * d * 4 + 2 * heads * d * 4  # K scaled (read, written); K and V read once more
        parts.append(f"math SDPA over {heads:g} heads: " + ("fp32 copies of K and V, " if cast else "")
                     + "K scaled, K and V read by the two matmuls")
    else:
        per_token += 2 * heads * d * b
        parts.append(f"attention reads {heads:g} heads")
    tokens = _m(e, "layers").number * w.context * w.batch
    return Value("attention_bytes", per_token * tokens, BYTES, "{0} × {1} × {2} × " + f"{per_token:,.0f} B",
                 (_m(e, "layers"), e["context"], e["batch"]), note="per layer and token: " + "; ".join(parts))


def bytes_moved(e: Estimate) -> Value:
    return total("bytes_moved", e["weights_read"], e["kv_bytes"])


def t_mem(e: Estimate) -> Value:
    return quotient("t_mem", e["bytes_moved"], e.fact("hbm_bandwidth"))


def flops(e: Estimate) -> Value:
    two, four = given("2", 2, FLOPS), given("4", 4, FLOPS)
    matmuls = product("matmul_flops", two, e["active_params"], e["tokens"])
    if e.workload.phase == "prefill":  # causal: token i attends to the i tokens up to it
        prompt = e.workload.context
        pairs = given("query-key pairs per head", prompt * (prompt + 1) / 2, COUNT, note="causal: S(S + 1)/2")
        attention = product("attention_flops", four, _m(e, "layers"), _m(e, "heads"), _m(e, "head_dim"), pairs,
                            e["batch"])
    else:
        attention = product("attention_flops", four, _m(e, "layers"), _m(e, "heads"), _m(e, "head_dim"),
                            e["context"], e["batch"])
    return _per_gpu("flops", total("flops" if e.workload.tp == 1 else "flops, all GPUs", matmuls, attention), e)


def t_math(e: Estimate) -> Value:
    return quotient("t_math", e["flops"], e["peak_flop_rate"])


@record
class LayerKernels(Record):
    """The kernels of one layer, in the order they run: `weights` kernels that read the layer's weights (split
    evenly among them; with no attention kernel they read the KV cache too), `attention` (0 or 1) kernels that read
    the KV cache, and `small` kernels (norms, activations, residual adds) that take the kernel floor."""

    weights: int
    attention: int
    small: int


def layer_kernels(per_layer: int) -> LayerKernels:
    """What each of a layer's `per_layer` kernels does: up to one per weight matmul (WEIGHT_MATMULS) reads the
    weights, one more reads the KV cache, and the rest are small. The model and the harness both build from this."""
    weights = max(1, min(len(WEIGHT_MATMULS), per_layer - 1))
    attention = 1 if per_layer > weights else 0
    return LayerKernels(weights, attention, per_layer - weights - attention)


def _kernel_pattern(e: Estimate) -> list[launches.Run]:
    """The GPU time of the kernels of one layer, in order, as runs of equal kernels: (seconds, how many)."""
    layer = layer_kernels(e.workload.kernels_per_layer)
    weight_kernels, attention, small = layer.weights, layer.attention, layer.small
    layers = _m(e, "layers").number
    bandwidth, peak = e.fact("hbm_bandwidth").number, e["peak_flop_rate"].number
    floor = e.fact("kernel_floor").number
    weight_bytes = e["weights_read"].number / layers / weight_kernels
    matmul_flops = e["flops"].number - _attention_flops(e)
    weight_flops = matmul_flops / layers / weight_kernels
    kv = e["attention_bytes"].number / layers
    streaming = _decode_kernel_cost(e)  # 0 unless a profile measured it
    weight_time = max(weight_bytes / _weight_bandwidth(e).number, weight_flops / peak, floor) + _gemm_fixed_cost(e) \
        + streaming
    attention_time = max(kv / bandwidth, _attention_flops(e) / layers / peak, floor) + streaming
    if _shaped_gemms(e):  # a calibrated prefill: each weight GEMM as the matmul kind times one of its shape
        # and attention's matmuls on the 16-bit tensor cores when the weights are 8-bit: quantized weights set the
        # linear layers' rate, and FP8 attention is an engine's opt-in (TensorRT-LLM's use_fp8_context_fmha,
        # FlashAttention-3's FP8 path)
        rate = e.fact("tensor_bf16").number if e.workload.weight_dtype in QUANTIZED else peak
        attention_time = max(kv / bandwidth, _attention_flops(e) / layers / rate, floor)
        return [(seconds, 1) for seconds in _gemm_times(e)] + [(attention_time, 1)] + [(floor, small)] * (small > 0)
    if attention:
        runs = [(weight_time, weight_kernels), (attention_time, 1)]
    else:  # the one kernel also reads the KV cache
        runs = [(weight_time + kv / bandwidth / weight_kernels, weight_kernels)]
    return runs + [(floor, small)] * (small > 0)


def _shaped_gemms(e: Estimate) -> bool:
    """Whether a prefill's weight GEMMs are timed by their shapes: on a device whose profile measured GEMMs over
    sizes (gemm_fixed_cost), with the layer's seven matmuls each a kernel of its own."""
    layer = layer_kernels(e.workload.kernels_per_layer)
    return bool(_gemm_fixed_cost(e)) and layer.weights == len(WEIGHT_MATMULS) and layer.attention == 1


def gemm_shapes(e: Estimate) -> list[tuple[int, int]]:
    """(K, N) of each weight matmul of a layer, per GPU, in WEIGHT_MATMULS' order: tensor parallelism splits the
    columns of q, k, v, gate and up and the rows of o and down (at least one head's or one column's worth)."""
    hidden, inter = int(_m(e, "hidden").number), int(_m(e, "intermediate").number)
    q = int(_m(e, "heads").number * _m(e, "head_dim").number)
    kv = int(_m(e, "kv_heads").number * _m(e, "head_dim").number)
    split = e.workload.tp
    part = lambda n: max(1, math.ceil(n / split))  # noqa: E731
    return [(hidden, part(q)), (hidden, part(kv)), (hidden, part(kv)), (part(q), hidden), (hidden, part(inter)),
            (hidden, part(inter)), (part(inter), hidden)]


def _gemm_times(e: Estimate) -> list[float]:
    """The time of each weight GEMM of a layer over the prompt's tokens, as the matmul kind times a lone GEMM of its
    shape on this device (its default tiles and waves at the achievable rate, plus gemm_fixed_cost); the output
    layer's GEMM (the weights outside the layers) is spread over the layers, added to the last."""
    from gpuspec.kinds.matmul import Matmul, default_tile
    from gpuspec.kinds.matmul import rules as matmul_rules
    from gpuspec.tensors import Tensor

    dtype, tokens = e.workload.weight_dtype, int(e["tokens"].number)
    dtype = "bf16" if dtype == "int4" else dtype  # weight-only int4: dequantized to bf16 for the tensor cores

    def gemm(k: int, n: int) -> float:
        work = Matmul(Tensor("a", dtype, (tokens, k)), Tensor("b", dtype, (k, n)), default_tile(tokens, n), e.device,
                      tile_written=False)
        return Estimate(work, e.device, matmul_rules.RULES)["time"].number

    times = [gemm(k, n) for k, n in gemm_shapes(e)]
    layers = _m(e, "layers").number
    in_layers = sum(k * n for k, n in gemm_shapes(e)) * e.workload.tp * layers
    outside = _m(e, "params").number - in_layers - (0 if e.workload.model.tied_embeddings else
                                                     _m(e, "vocab").number * _m(e, "hidden").number)
    if outside > 0:  # the output layer (norm weights aside), per GPU
        vocab = int(_m(e, "vocab").number)
        times[-1] += gemm(int(_m(e, "hidden").number), max(1, math.ceil(vocab / e.workload.tp))) / layers
    return times


def _gemm_fixed_cost(e: Estimate) -> float:
    """What each weight GEMM of a prefill takes beyond its roofline time: the profile's gemm_fixed_cost (0 in the ideal
    model, and for a decode step, whose kernels take decode_kernel_cost instead)."""
    fixed = e.device.fact("gemm_fixed_cost")
    return fixed.value if fixed is not None and e.workload.phase == "prefill" else 0.0


def _attention_flops(e: Estimate) -> float:
    """Attention's share of the step's FLOPs, per GPU."""
    whole = e["flops"] if e.workload.tp == 1 else e["flops"].inputs[0]
    return whole.inputs[1].number / e.workload.tp if len(whole.inputs) > 1 else 0.0


def _timeline(e: Estimate) -> launches.Timeline:
    cached = getattr(e, "_timeline", None)
    if cached is None:
        layers = int(_m(e, "layers").number)
        w = e.workload
        pattern = _kernel_pattern(e)
        try:
            if w.graph:
                cached = launches.run(pattern, layers, 0.0, w.sample_window, e.fact("graph_launch_cost").number,
                                      e.fact("graph_node_cost").number)
            else:
                cached = launches.run(pattern, layers, e["launch_cost"].number, w.sample_window)
        except OverflowError:  # its end lies beyond the largest float: say so, with the inputs that put it there
            cost = e["launch_cost"]
            raise NotFinite(f"the launch queue overflows: {e['launches'].format()} launches at {cost.format()} each, "
                            f"{units.format_si(sum(t * n for t, n in pattern) * layers, TIME)} of GPU work",
                            (e["launches"], cost, e.fact("hbm_bandwidth"), e.fact("kernel_floor"))) from None
        e._timeline = cached  # type: ignore[attr-defined]
    return cached


def _allreduce_latency(e: Estimate) -> Value:
    """The fixed cost of one of a step's all-reduces: an LLM engine's one-shot kernel (tp_allreduce_latency, where a
    profile measured it) for a compiled decode step, whose all-reduces are a few tokens' activations; NCCL's
    collective_latency otherwise (an eager step calls torch.distributed; a prefill's all-reduces are large)."""
    w = e.workload
    if w.mode == "compiled" and w.phase == "decode" and e.device.fact("tp_allreduce_latency") is not None:
        return e.fact("tp_allreduce_latency")
    return e.fact("collective_latency")


def _activation_bytes(e: Estimate) -> Value:
    """Bytes per activation value: the weights' dtype's, but 16-bit under 8-bit weights (weight-only and FP8 matmuls
    hand 16-bit activations on, and those are what the all-reduces move)."""
    if e.workload.weight_dtype in QUANTIZED:
        return given("bytes per activation", 2, BYTES, note=f"16-bit activations beside {e.workload.weight_dtype} "
                     "weights")
    return e["bytes_per_weight"]


def _nccl_allreduce(e: Estimate, size: float) -> Value:
    """One NCCL all-reduce of `size` bytes across the step's GPUs over NVLink, as the collective kind times it on a
    real device (its measured latency for the caller, eager or in a CUDA graph; NCCL's protocols)."""
    from gpuspec.kinds.collective import Collective
    from gpuspec.kinds.collective import rules as collective_rules

    w = e.workload
    call = Collective("all_reduce", size, w.tp, "nvlink", e.device, launch="graph" if w.graph else "eager")
    timed = Estimate(call, e.device, collective_rules.RULES)["time"]
    return Value("one all-reduce", timed.number, TIME, "{0}", (timed,),
                 note=f"NCCL's all-reduce of the activations across {w.tp} GPUs, as the collective kind times one")


def comm_time(e: Estimate) -> Value:
    """Tensor parallelism all-reduces the activations twice per layer (after attention and after the MLP)."""
    n = e.workload.tp
    if n == 1:
        return given("comm_time", 0.0, TIME, note="one GPU: nothing to all-reduce")
    activations = product("activations", e["tokens"], _m(e, "hidden"), _activation_bytes(e))
    engine = _allreduce_latency(e).name == "tp_allreduce_latency"
    if not engine and e.device.fact("collective_simple_cost") is not None:  # a profile's NCCL protocol facts
        one, how = _nccl_allreduce(e, activations.number), "NCCL's all-reduces"
    else:
        link = quotient("nvlink one way", e.fact("nvlink_bandwidth"), given("2 directions", 2, COUNT))
        share = Value("wire_share", 2 * (n - 1) / n, COUNT, "2 × ({0} - 1) / {0}", (e["tp"],),
                      note="each GPU sends and receives this share of the buffer in a ring all-reduce")
        one = total("one all-reduce", _allreduce_latency(e),
                    quotient("its transfer", product("wire bytes", share, activations), link))
        how = "an engine's one-shot all-reduces" if engine else "ring all-reduces"
    return product("comm_time", given("2 per layer", 2, COUNT), _m(e, "layers"), one,
                   note=f"{how} over NVLink, after the kernels of each half-layer")


def _kernel_time(e: Estimate, name: str) -> Value:
    cost = _kernel_cost_fact(e)
    if cost is not None and e.workload.phase == "decode":
        return Value(name, _timeline(e).busy, TIME, "Σ over {0} kernels of max(bytes / {1}, FLOPs / {2}, {3}), "
                     "+ {4} for each weight matmul and attention kernel",
                     (e["kernels"], _weight_bandwidth(e), e["peak_flop_rate"], e.fact("kernel_floor"), e.fact(cost)),
                     note="weights split evenly over each layer's weight kernels; each kernel that streams from HBM "
                          "takes a measured cost beyond its bytes; the rest take the kernel floor")
    if _shaped_gemms(e):
        return Value(name, _timeline(e).busy, TIME, "Σ over {0} kernels: each weight GEMM timed by its shape "
                     "(tiles and waves at {1}, + {2}); attention max(bytes / {3}, FLOPs / {1}, {4}); the rest {4}",
                     (e["kernels"], e["peak_flop_rate"], e.fact("gemm_fixed_cost"), e.fact("hbm_bandwidth"),
                      e.fact("kernel_floor")),
                     note="a GEMM of [tokens, K] by [K, N] for each of q, k, v, o, gate, up and down, as a lone matmul "
                          "of that shape takes on this device; the output layer's spread over the layers")
    if _gemm_fixed_cost(e):
        return Value(name, _timeline(e).busy, TIME, "Σ over {0} kernels of max(bytes / {1}, FLOPs / {2}, {3}), "
                     "+ {4} for each weight GEMM",
                     (e["kernels"], _weight_bandwidth(e), e["peak_flop_rate"], e.fact("kernel_floor"),
                      e.fact("gemm_fixed_cost")),
                     note="weights split evenly over each layer's weight kernels, each a GEMM over the prompt with "
                          "its fixed cost; the rest take the kernel floor")
    return Value(name, _timeline(e).busy, TIME, "Σ over {0} kernels of max(bytes / {1}, FLOPs / {2}, {3})",
                 (e["kernels"], _weight_bandwidth(e), e["peak_flop_rate"], e.fact("kernel_floor")),
                 note="weights split evenly over each layer's weight kernels; the rest take the kernel floor")


def gpu_time(e: Estimate) -> Value:
    if e.workload.tp == 1:
        return _kernel_time(e, "gpu_time")
    return total("gpu_time", _kernel_time(e, "kernel time"), e["comm_time"])


def step_time(e: Estimate) -> Value:
    one_gpu = e.workload.tp == 1
    work = e["gpu_time"] if one_gpu else _kernel_time(e, "kernel time")
    name = "step_time" if one_gpu else "the queue"
    if e.workload.graph:  # one launch, then the GPU runs every node back to back
        queue = Value(name, _timeline(e).total, TIME, "{0} + {1}", (e["launch_cost"], work),
                      note="one graph launch, then every kernel back to back")
    else:
        queue = Value(name, _timeline(e).total, TIME, "the queue: {0} launches at {1} each, {2} of GPU work",
                      (e["launches"], e["launch_cost"], work),
                      note="the host runs ahead of the GPU; a kernel waits for its launch and the previous kernel")
    return queue if one_gpu else total("step_time", queue, e["comm_time"])


def mfu(e: Estimate) -> Value:
    achieved = quotient("achieved FLOP rate", e["flops"], e["step_time"])
    return quotient("mfu", achieved, e["peak_flop_rate"], percent=True, note="per GPU")


def mbu(e: Estimate) -> Value:
    achieved = quotient("achieved bandwidth", e["bytes_moved"], e["step_time"])
    return quotient("mbu", achieved, e.fact("hbm_bandwidth"), percent=True, note="per GPU")


def step_time_serial(e: Estimate) -> Value:
    return total("step_time_serial", e["launch_time"], e["gpu_time"], note="as if nothing overlapped")


def idle_time(e: Estimate) -> Value:
    return Value("idle_time", e["step_time"].number - e["gpu_time"].number, TIME, "{0} - {1}",
                 (e["step_time"], e["gpu_time"]))


def overhead_share(e: Estimate) -> Value:
    return quotient("overhead_share", e["idle_time"], e["step_time"], percent=True,
                    note="the share of the step the GPU waits on the host")


def overhead_share_serial(e: Estimate) -> Value:
    return quotient("overhead_share_serial", e["launch_time"], e["step_time_serial"], percent=True)


def busy_share(e: Estimate) -> Value:
    return quotient("busy_share", e["gpu_time"], e["step_time"], percent=True)


def utilization(e: Estimate) -> Value:
    window = given("sample_window", e.workload.sample_window, TIME)
    return Value("utilization", _timeline(e).utilization, COUNT, "windows of {0} with a kernel running / all windows",
                 (window,), percent=True, note="what nvidia-smi's GPU utilization would show")


def tokens_per_s(e: Estimate) -> Value:
    return quotient("tokens_per_s", e["tokens"], e["step_time"])


def time(e: Estimate) -> Value:
    return renamed("time", e["step_time"])


def bound(e: Estimate) -> Value:
    """Overhead where the host takes longer to launch than the GPU to run; else memory or compute, whichever of
    t_mem and t_math is larger: said as it was decided."""
    host, gpu, memory, math_ = e["launch_time"], e["gpu_time"], e["t_mem"], e["t_math"]
    if host.number > gpu.number:
        return choice("bound", "overhead", "overhead, as {0} > {1}", (host, gpu))
    if memory.number >= math_.number:
        return choice("bound", "memory", "memory, as {0} ≤ {1} and {2} ≥ {3}", (host, gpu, memory, math_))
    return choice("bound", "compute", "compute, as {0} ≤ {1} and {2} < {3}", (host, gpu, memory, math_))


def compute_time(e: Estimate) -> Value:
    return renamed("compute_time", e["t_math"])


def memory_time(e: Estimate) -> Value:
    return renamed("memory_time", e["t_mem"])


def overhead_time(e: Estimate) -> Value:
    return renamed("overhead_time", e["launch_time"])


def _share(name: str, part: str):
    def rule(e: Estimate) -> Value:
        names = ("compute_time", "memory_time", "overhead_time")
        buckets = tuple(e[bucket] for bucket in names)
        whole = sum(bucket.number for bucket in buckets)
        if not whole:
            raise NotFinite(f"`{name}` divides by zero: the three buckets take no time", buckets)
        # the part over the sum written out, so that every number of the formula is shown
        return Value(name, e[part].number / whole, COUNT, f"{{{names.index(part)}}} / ({{0}} + {{1}} + {{2}})",
                     buckets, percent=True)
    return rule


def compute_bound_batch(e: Estimate) -> Value:
    """The smallest batch at which the step's FLOPs take as long as its bytes: where the step stops being
    memory-bound. None exists when each sequence adds more time reading (or, in a prefill, writing) its KV cache
    than doing its math: t_mem then stays ahead at every batch, and the metric has no value (NoValue says why)."""
    bandwidth, peak = e.fact("hbm_bandwidth").number, e["peak_flop_rate"].number
    split = e.workload.tp  # each GPU does its share of every sequence's FLOPs and holds its share of the cache
    context = e.workload.context
    if e.workload.phase == "prefill":  # every prompt token through the matmuls; causal attention
        tokens, pairs = context, context * (context + 1) / 2
    else:
        tokens, pairs = 1, context
    per_sequence_flops = (2 * e["active_params"].number * tokens + 4 * _m(e, "layers").number
                          * _m(e, "heads").number * _m(e, "head_dim").number * pairs) / split
    math_seconds = per_sequence_flops / peak
    kv_seconds = e["kv_bytes_per_token"].number * context / split / bandwidth
    per_sequence_seconds = math_seconds - kv_seconds
    if per_sequence_seconds <= 0:  # t_mem grows at least as fast with the batch as t_math: it stays ahead
        raise NoValue(f"no batch makes this step compute-bound at context {context:,}: each sequence adds "
                      f"{units.format_si(kv_seconds, TIME)} of KV-cache traffic but only "
                      f"{units.format_si(math_seconds, TIME)} of math, so t_mem stays above t_math at every batch",
                      "compute_bound_batch exists for shorter contexts (or fewer KV heads); claim `bound` at a given "
                      "batch instead")
    exact = e["weights_read"].number / bandwidth / per_sequence_seconds
    if not exact < 2.0**53:  # each sequence adds almost nothing to t_math beyond its KV traffic
        raise NoValue(f"no batch that can be written makes this step compute-bound: it would take "
                      f"{units.significant(exact)} sequences")
    batch_needed = math.ceil(exact - 1e-9)
    return Value("compute_bound_batch", batch_needed, COUNT, "⌈({0} / {1}) / ({2} / {3} - {4} / {1})⌉",
                 (e["weights_read"], e.fact("hbm_bandwidth"), _sequence_flops(e, tokens, pairs, per_sequence_flops),
                  e["peak_flop_rate"], _sequence_kv(e, kv_seconds * bandwidth)))


def _sequence_flops(e: Estimate, tokens: int, pairs: float, number: float) -> Value:
    """One sequence's FLOPs in a step, with its numbers: 2 per active parameter per token, and attention's 4 per
    layer, head, head size and pair (a GPU's share, split over tp)."""
    parts = [e["active_params"]]
    if e.workload.phase == "prefill":
        parts.append(given("prompt tokens", tokens, COUNT))
    parts += [_m(e, "layers"), _m(e, "heads"), _m(e, "head_dim"),
              given("causal pairs", pairs, COUNT) if e.workload.phase == "prefill" else e["context"]]
    at = len(parts) - 4
    rule = "2 × " + " × ".join(f"{{{i}}}" for i in range(at)) + " + 4 × " + \
        " × ".join(f"{{{i}}}" for i in range(at, len(parts)))
    if e.workload.tp > 1:
        rule, parts = f"({rule}) / {{{len(parts)}}}", [*parts, e["tp"]]
    return Value("FLOPs per sequence", number, units.FLOPS, rule, tuple(parts))


def _sequence_kv(e: Estimate, number: float) -> Value:
    """One sequence's KV cache (a GPU's share, split over tp)."""
    if e.workload.tp > 1:
        return Value("KV bytes per sequence", number, BYTES, "{0} × {1} / {2}",
                     (e["kv_bytes_per_token"], e["context"], e["tp"]))
    return Value("KV bytes per sequence", number, BYTES, "{0} × {1}", (e["kv_bytes_per_token"], e["context"]))


RULES = {
    "params": lambda e: renamed("params", _m(e, "params")), "layers": lambda e: renamed("layers", _m(e, "layers")),
    "batch": batch, "context": context, "kernels_per_layer": kernels_per_layer, "kernels": kernels,
    "launches": launches_, "launch_cost": launch_cost, "launch_time": launch_time,
    "bytes_per_weight": bytes_per_weight, "weight_bytes": weight_bytes, "t_weights": t_weights,
    "weights_read": weights_read, "kv_bytes_per_token": kv_bytes_per_token, "kv_bytes": kv_bytes, "t_kv": t_kv,
    "attention_bytes": attention_bytes,
    "bytes_moved": bytes_moved, "t_mem": t_mem, "active_params": active_params, "flops": flops,
    "peak_flop_rate": peak_flop_rate, "t_math": t_math, "gpu_time": gpu_time, "step_time": step_time,
    "step_time_serial": step_time_serial, "idle_time": idle_time, "overhead_share": overhead_share,
    "overhead_share_serial": overhead_share_serial, "busy_share": busy_share, "utilization": utilization,
    "tokens_per_s": tokens_per_s, "time": time, "bound": bound,
    "compute_time": compute_time, "memory_time": memory_time, "overhead_time": overhead_time,
    "compute_share": _share("compute_share", "compute_time"), "memory_share": _share("memory_share", "memory_time"),
    "overhead_time_share": _share("overhead_time_share", "overhead_time"),
    "compute_bound_batch": compute_bound_batch, "tokens": tokens, "tp": tp, "comm_time": comm_time, "mfu": mfu,
    "mbu": mbu, "memory_needed": memory_needed,
}
