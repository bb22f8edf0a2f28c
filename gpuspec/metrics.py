"""The metric vocabulary: every metric's name, dimension and meaning, and the phrases that name it."""
from __future__ import annotations

from gpuspec import units
from gpuspec.record import Record, record
from gpuspec.units import BANDWIDTH, BYTES, COUNT, FLOP_RATE, FLOPS, INTENSITY, TIME

WORD = None  # the dimension of a metric whose value is a word (bound)
# The words a word metric can take.
WORDS = {
    "bound": ("memory", "compute", "overhead"),
    "residency_limit": ("threads", "warps", "blocks", "registers", "shared memory"),
}


@record
class Metric(Record):
    name: str
    dimension: units.Dimension | None
    meaning: str


_ALL = [
    Metric("elements", COUNT, "elements of the output"),
    Metric("bytes_read", BYTES, "bytes read from HBM, all kernels"),
    Metric("bytes_written", BYTES, "bytes written to HBM, all kernels"),
    Metric("bytes_moved", BYTES, "bytes read plus bytes written"),
    Metric("flops", FLOPS, "floating-point operations (FMA = 2)"),
    Metric("intensity", INTENSITY, "arithmetic intensity: FLOPs per byte moved"),
    Metric("ridge_point", INTENSITY, "the intensity where the math peak and the bandwidth meet"),
    Metric("peak_flop_rate", FLOP_RATE, "the math ceiling this workload runs against"),
    Metric("t_mem", TIME, "time to move the bytes at full bandwidth"),
    Metric("t_math", TIME, "time to do the FLOPs at the peak rate"),
    Metric("instructions", COUNT, "math instructions issued: one per FLOP, an FMA one for two"),
    Metric("issue_rate", units.TOKEN_RATE, "instructions per second: one per lane per clock, half the FMA peak"),
    Metric("t_issue", TIME, "time to issue the math instructions: a lone add or multiply at half the peak"),
    Metric("t_floor", TIME, "the shortest time any kernel takes, per kernel"),
    Metric("time", TIME, "GPU time of the workload"),
    Metric("bound", WORD, "what limits the time: memory, compute or overhead"),
    Metric("achieved_bandwidth", BANDWIDTH, "bytes moved / time"),
    Metric("bandwidth_utilization", COUNT, "achieved bandwidth / peak bandwidth"),
    Metric("achieved_flop_rate", FLOP_RATE, "FLOPs / time"),
    Metric("flop_utilization", COUNT, "achieved FLOP rate / peak FLOP rate"),
    Metric("threads_per_block", COUNT, "threads in one block"),
    Metric("warps_per_block", COUNT, "warps in one block"),
    Metric("threads", COUNT, "threads in the grid (blocks × threads per block)"),
    Metric("blocks", COUNT, "blocks in the grid, per kernel"),
    Metric("resident_blocks_per_sm", COUNT, "blocks one SM holds at once"),
    Metric("residency_limit", WORD, "what limits resident blocks per SM"),
    Metric("blocks_per_wave", COUNT, "blocks the whole chip holds at once"),
    Metric("waves", COUNT, "blocks / blocks per wave (a fraction)"),
    Metric("waves_started", COUNT, "waves started: the fraction rounded up"),
    Metric("sms_used", COUNT, "SMs the kernel's grid occupies: its blocks (or tiles) up to the SM count"),
    Metric("last_wave_occupancy", COUNT, "how full the last wave is"),
    Metric("kernels", COUNT, "kernels launched"),
    Metric("launches", COUNT, "kernel launches"),
    Metric("round_trips", COUNT, "intermediate tensors that go to HBM and back"),
    # launch streams and decode steps
    Metric("repeats", COUNT, "times the workload is launched"),
    Metric("kernel_time", TIME, "GPU time of one kernel"),
    Metric("launch_cost", TIME, "host time of one launch"),
    Metric("host_time", TIME, "host time spent launching"),
    Metric("launch_time", TIME, "host time spent launching"),
    Metric("busy_time", TIME, "time the GPU runs kernels"),
    Metric("gpu_time", TIME, "time the GPU runs kernels"),
    Metric("idle_time", TIME, "time the GPU waits for work"),
    Metric("busy_share", COUNT, "share of the time the GPU runs kernels"),
    Metric("idle_share", COUNT, "share of the time the GPU waits"),
    Metric("sample_window", TIME, "the window a sampled utilization looks at"),
    Metric("utilization", COUNT, "share of sample windows in which any kernel ran (what nvidia-smi shows)"),
    Metric("m", COUNT, "matmul: rows of A and C"),
    Metric("n", COUNT, "matmul: columns of B and C"),
    Metric("k", COUNT, "matmul: the shared dimension"),
    Metric("tile_m", COUNT, "matmul: rows of a tile"),
    Metric("tile_n", COUNT, "matmul: columns of a tile"),
    Metric("tiles", COUNT, "matmul: tiles of C (blocks)"),
    Metric("tile_efficiency", COUNT, "matmul: useful share of the tiles' area"),
    Metric("wave_efficiency", COUNT, "waves / waves started: how full the waves are on average"),
    Metric("t_math_tiles", TIME, "matmul: math time with whole waves of whole tiles"),
    Metric("gpus", COUNT, "collective: GPUs taking part"),
    Metric("size", BYTES, "collective: the buffer"),
    Metric("wire_share", COUNT, "collective: the share of the buffer each GPU sends"),
    Metric("wire_bytes", BYTES, "collective: bytes each GPU sends (and receives)"),
    Metric("link_bandwidth", BANDWIDTH, "collective: the link's bandwidth in one direction"),
    Metric("transfer_time", TIME, "collective: the bytes' time on the link, without the fixed latency"),
    Metric("tokens", COUNT, "decode: tokens one step processes (batch; × prompt for a prefill)"),
    Metric("tp", COUNT, "decode: GPUs the model is split over (tensor parallelism)"),
    Metric("comm_time", TIME, "decode: time of the all-reduces tensor parallelism needs per step"),
    Metric("mfu", COUNT, "model FLOP utilization: FLOPs / (time × peak)"),
    Metric("mbu", COUNT, "model bandwidth utilization: bytes / (time × peak bandwidth)"),
    Metric("algbw", BANDWIDTH, "collective: buffer / time"),
    Metric("busbw", BANDWIDTH, "collective: what each link carries per second"),
    Metric("params", COUNT, "the model's parameters"),
    Metric("layers", COUNT, "the model's layers"),
    Metric("batch", COUNT, "sequences decoded together"),
    Metric("context", COUNT, "tokens of history per sequence"),
    Metric("kernels_per_layer", COUNT, "kernels each layer launches"),
    Metric("bytes_per_weight", BYTES, "bytes per weight"),
    Metric("weight_bytes", BYTES, "bytes of all the weights"),
    Metric("t_weights", TIME, "time to read all the weights at full bandwidth"),
    Metric("weights_read", BYTES, "weight bytes a step reads"),
    Metric("kv_bytes_per_token", BYTES, "KV-cache bytes per token of context, per sequence"),
    Metric("kv_bytes", BYTES, "KV-cache bytes a step reads"),
    Metric("t_kv", TIME, "time to read the KV cache at full bandwidth"),
    Metric("attention_bytes", BYTES, "bytes a step's attention moves: the cache, copies of it, fp32 copies"),
    Metric("active_params", COUNT, "parameters each token uses"),
    Metric("step_time", TIME, "time of one decode step, host and GPU overlapping"),
    Metric("step_time_serial", TIME, "time of one decode step if nothing overlapped"),
    Metric("overhead_share", COUNT, "share of the step the GPU waits on the host"),
    Metric("overhead_share_serial", COUNT, "launch time / the step time if nothing overlapped"),
    Metric("tokens_per_s", units.divide(COUNT, TIME), "tokens generated per second"),
    Metric("compute_time", TIME, "the compute bucket: t_math"),
    Metric("memory_time", TIME, "the memory bucket: t_mem"),
    Metric("overhead_time", TIME, "the overhead bucket: launch time"),
    Metric("compute_share", COUNT, "compute / (compute + memory + overhead)"),
    Metric("memory_share", COUNT, "memory / (compute + memory + overhead)"),
    Metric("overhead_time_share", COUNT, "overhead / (compute + memory + overhead)"),
    Metric("rows", COUNT, "row-wise: rows (every leading dimension)"),
    Metric("row_length", COUNT, "row-wise: elements per row (the last axis)"),
    Metric("passes", COUNT, "row-wise: times the input is read from HBM"),
    Metric("heads", COUNT, "attention: query heads"),
    Metric("kv_heads", COUNT, "attention: key and value heads"),
    Metric("seq_q", COUNT, "attention: query length"),
    Metric("seq_kv", COUNT, "attention: key and value length"),
    Metric("head_dim", COUNT, "attention: elements per head"),
    Metric("scores", COUNT, "attention: query-key pairs scored (causal: each query's keys up to its position)"),
    Metric("score_bytes", BYTES, "attention: bytes of the [batch, heads, seq_q, seq_kv] score matrix"),
    Metric("compute_bound_batch", COUNT, "the smallest batch at which the step is compute-bound"),
    # training steps
    Metric("dense_flops_per_token", FLOPS, "training: 6 FLOPs per parameter per token (forward and backward)"),
    Metric("attention_flops_per_token", FLOPS, "training: attention's FLOPs per token, forward and backward"),
    Metric("flops_per_token", FLOPS, "training: FLOPs per token of a step"),
    Metric("flops_per_gpu", FLOPS, "training: a step's FLOPs on one GPU"),
    Metric("state_bytes", BYTES, "training: weights, gradients and optimizer state (mixed-precision Adam)"),
    Metric("activation_bytes", BYTES, "training: activations kept for the backward pass, per GPU"),
    # what an observed figure implies (`observed 107 tokens/s`)
    Metric("observed_time", TIME, "the workload's time that the observed figure implies"),
    Metric("observed_tokens_per_s", units.divide(COUNT, TIME), "tokens per second at the observed time"),
    Metric("observed_flop_rate", FLOP_RATE, "FLOPs / observed time, per GPU"),
    Metric("observed_bandwidth", BANDWIDTH, "bytes moved / observed time, per GPU"),
    Metric("observed_mfu", COUNT, "model FLOP utilization at the observed time"),
    Metric("observed_mbu", COUNT, "model bandwidth utilization at the observed time"),
    Metric("observed_vs_model", COUNT, "observed time / the model's time"),
    Metric("observed_algbw", BANDWIDTH, "collective: buffer / observed time"),
    Metric("observed_busbw", BANDWIDTH, "collective: observed algorithm bandwidth × the ring's wire share"),
    Metric("observed_launches_per_s", units.divide(COUNT, TIME), "kernels launched per second at the observed time"),
    Metric("observed_launch_use", COUNT, "observed kernels per second / twice the rate a real GPU runs them back to "
                                         "back (1 / kernel_gap, a published profile's)"),
    Metric("observed_bandwidth_use", COUNT, "observed bandwidth / that of the memory its data sits in (L2 or HBM)"),
    Metric("observed_link_use", COUNT, "collective: observed bus bandwidth / the link's line rate"),
    # what a workload keeps in device memory, and whether it fits (checked with an observed figure)
    Metric("memory_needed", BYTES, "what the workload keeps in device memory at the least, per GPU"),
    Metric("memory_filled", COUNT, "memory_needed / the device's memory_size"),
    Metric("bytes_per_repeat", BYTES, "stream: the bytes one repeat of its workload moves"),
]
METRICS: dict[str, Metric] = {m.name: m for m in _ALL}

ALIASES = {
    "bytes": "bytes_moved",
    "traffic": "bytes_moved",
    "flop": "flops",
    "arithmetic_intensity": "intensity",
    "ridge": "ridge_point",
    "blocks_per_sm": "resident_blocks_per_sm",
    "t": "time",
    "duration": "time",
    "grid": "blocks",
    "hbm_round_trips": "round_trips",
    "gpu_busy": "busy_time",
    "busy": "busy_share",
    "idle": "idle_share",
    "tokens_per_second": "tokens_per_s",
    "throughput": "tokens_per_s",
    "time_per_token": "step_time",
    "kv_cache_bytes": "kv_bytes",
    "weights": "weight_bytes",
    "overhead": "overhead_share",
    "critical_batch": "compute_bound_batch",  # the batch where decoding turns compute-bound, as papers name it
    "critical_batch_size": "compute_bound_batch",
}

# Count words (and what follows them) that name a metric: `62 waves`, `8 blocks per SM`.
NOUN_PHRASES = {
    "elements": "elements", "numbers": "elements",
    "waves": "waves", "waves started": "waves_started",
    "blocks": "blocks", "blocks per sm": "resident_blocks_per_sm", "blocks per wave": "blocks_per_wave",
    "threads": "threads", "threads per block": "threads_per_block", "warps per block": "warps_per_block",
    "kernels": "kernels", "launches": "launches", "kernels per layer": "kernels_per_layer",
    "tokens/s": "tokens_per_s", "layers": "layers", "params": "params", "parameters": "params",
    "round trips": "round_trips", "round trip": "round_trips", "trips": "round_trips", "tiles": "tiles",
}
# A dimensioned amount with the words after its unit: `67.1 MB moved`, `33.5 MB read`, `≈ 20 µs`.
UNIT_PHRASES = {
    (BYTES, ""): "bytes_moved", (BYTES, "moved"): "bytes_moved", (BYTES, "of traffic"): "bytes_moved",
    (BYTES, "read"): "bytes_read", (BYTES, "written"): "bytes_written",
    (FLOPS, ""): "flops", (INTENSITY, ""): "intensity",
    (TIME, ""): "time", (BANDWIDTH, ""): "achieved_bandwidth", (FLOP_RATE, ""): "achieved_flop_rate",
}


def canonical(name: str) -> str | None:
    """The metric `name` means (its own name or an alias), or None."""
    if name in METRICS:
        return name
    return ALIASES.get(name)


def singular(word: str) -> str:
    return {"tile": "tiles", "wave": "waves", "block": "blocks", "element": "elements", "kernel": "kernels",
            "launch": "launches", "thread": "threads", "warp": "warps"}.get(word, word)
