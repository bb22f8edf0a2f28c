"""Published profiles: a calibration profile per catalog device, built from the public measurements in
catalog/published.toml, every number with the entries it came from, their conditions and the arithmetic.

Rules (one per fact; "own" entries are about the device itself, "sibling" entries name it in `stands_for`):
- hbm_bandwidth: the median of the own streaming kernels that read and write (copy, scale, add, triad, row-wise);
  read-only and store-only kernels are left out (RRZE's read kernel is occupancy-limited on Hopper, init only
  writes), and so is a kernel whose data stays in L2. Without own entries, a sibling's median as the same share of
  its datasheet bandwidth.
- tensor_<dtype>: the median of the own large-GEMM rates of that dtype (MAMF, cuBLAS 8192³ and up; fp16 and bf16
  GEMMs count for each other, one tensor-core path at one datasheet rate); a measured rate already runs at the
  clock the card holds. Else a sibling's (those standing for it, then the nearest's) share of its peak per clock,
  times this device's sustained clock as a share of its boost: rate = peak × median(share / clock share of the
  part measured) × clock share. Else the device's bf16 share applied to the dtype's peak.
- the sustained clock under a full tensor load (power-limited parts do not hold their boost clock under GEMM load:
  NVIDIA's forum answer on a 70 W T4): the device's own clock measured under a GEMM, or under another load at its
  power limit (`power_bound`); else the power-bound clocks of the parts standing for it (one SM design: no clock
  carries from Hopper to Ada), each scaled by power per SM (board power limit / SMs) and held at most to its boost
  clock. A clock measured well under the power limit says nothing about a GEMM, and a device with no power-bound
  clock keeps its boost.
- gemm_fixed_cost: the time a GEMM kernel timed alone takes beyond its math at the achievable rate (launch latency,
  prologue, pipeline fill, epilogue): the median over the size sweeps (`gemm_efficiency_at`) of
  observed time − FLOPs / achievable rate, over the sweep points whose math takes under 50 µs (above that the
  difference is noise in the rate).
- decode_kernel_cost: what each kernel of a batch-1 decode step that streams from HBM (7 weight matmuls and the
  attention per layer) takes beyond its bytes at the achievable bandwidth. Per published step (`decode_step_time`):
  (its time − the calibrated model's time of the same step without the cost) / those kernels, the model's time
  computed with the measured device's profile so far; the median over the device's own steps, else those standing
  for it, else the nearest's; where no device of that chain measured a step, the median over every device measured
  (a per-kernel time, taken as it is, and said so). decode_kernel_cost_int8, _fp8: the same over weight-only
  quantized steps (their kernels dequantize as they read); where none was measured, the bf16 cost.
- kernel_gap: the GPU-side cost of a small kernel run back to back with others (in a CUDA graph, so that no host
  launch paces it); kernel_floor takes the same figure, for the rules that take a floor (a GEMM, a decode step).
  graph_node_cost: what a graph node adds beyond that: 0, since the back-to-back gap was measured inside a graph.
- lone_kernel_latency: the time of a tiny kernel timed alone after an L2 flush, between CUDA events, the host's
  launch kept out (nvbench's cold time, do_bench's, gpuspec's harness's): a call timed alone pays it once, in place
  of its first kernel's gap.
- stream_launch_gap: the GPU time a kernel launched from a stream takes beyond the same kernel as a graph node
  (where the GPU, not the host, sets the pace).
- l2_bandwidth, l2_usable: a read kernel's bandwidth on the plateau of data sets that fit in L2 (4 MiB and up), and
  the largest data set within 10% of it: a stream's repeats whose bytes fit move at that bandwidth.
- model_op_cost: the host time per kernel of an LLM's model code run eagerly (host-bound eager decode runs).
- launch_cost: the host cost of one eager PyTorch op; cpp_launch_cost: of one launch from a C++ loop (the
  device's own measurements first, then those standing for it).
- nvlink_bandwidth (and nvlink_bandwidth_ring, the same): the NVLink line rate times the median bus efficiency
  (busbw / line rate) of the large ring collectives measured over it, so that the model's ring time is NCCL's.
- nvls_bandwidth: the median algorithm bandwidth (busbw / (2(n−1)/n)) of the device's own NVLink SHARP all-reduces
  (no sibling's: a part without an NVSwitch has none).
- collective_latency: the time of the smallest all-reduce across 8 GPUs called eagerly (nccl-tests, torch.distributed),
  which its bytes barely move; collective_graph_latency: the same replayed from a CUDA graph, else NCCL's tuning
  model's estimate for the LL ring (6.6 µs + 14 steps × 0.6 µs).
- collective_simple_cost: what a large collective takes beyond the small-message latency and its bytes at the bus
  bandwidth (the fixed cost of NCCL's Simple protocol), measured from size sweeps.
- exp_rate: no measurement exists; the programming guide's 16 exponentials per clock per SM at the boost clock.
- attention_share_<implementation>, attention_tile_overhead_<implementation> (flash2, flash3, cudnn, triton): the
  tiled-kernel rule of gpuspec/kinds/attention/rules.py fitted to the implementation's published forward times
  (`attention_time`) on the device or its nearest measured sibling: per figure, time / (⌈tiles / SMs⌉ × SMs ×
  t_block) = (key blocks per tile + overhead) / share, a straight line in key blocks per tile, fitted by least
  squares on relative error (share = 1 / slope, overhead = intercept / slope, at least 0), with the profile's own
  tensor rate and exp_rate. Without a figure on or near the device, the overhead is the median of the other
  devices' fits (it belongs to the kernel's code more than to the chip) and the share is left out (the rule then
  runs at the profile's tensor rate).
- tp_allreduce_latency: an LLM engine's one-shot all-reduce of a decode step's activations (vLLM's, TensorRT-LLM's),
  in a CUDA graph, from the engines' own microbenchmarks: the device's own median, else its nearest's, else every
  device's, taken as it is (measured across 2 GPUs; the same latency is taken for more).
Where neither the device nor a sibling has an entry, the nearest sibling in `NEAREST` stands in, as a share of its
datasheet figure, and the derivation says so; where that has nothing either, the fact is left to the catalog.

`build(device, exclude=origins)` leaves whole sources out: the accuracy benchmark's leave-one-origin-out profiles.
"""
from __future__ import annotations

import math
import statistics
from functools import cache
from pathlib import Path

from gpuspec import devices, schema, units
from gpuspec.profiles import VERSION, Profile, ProfileError
from gpuspec.resources import catalog_data

# Catalog devices with no measurement of a fact borrow it from the nearest one measured, and say why.
NEAREST = {
    "H100-SXM": ("H200", "the same GH100 chip, SM count and NVLink 4; H200 has HBM3e"),
    "H200": ("H100-SXM", "the same GH100 chip, SM count and NVLink 4; H100-SXM has HBM3"),
    "H100-PCIe": ("H100-SXM", "the same GH100 SM design, fewer SMs, a 350 W card"),
    "A100-40GB": ("A100-80GB", "the same GA100 chip and SM count; HBM2 instead of HBM2e"),
    "A100-80GB": ("A100-40GB", "the same GA100 chip and SM count"),
    "B200": ("H200", "the newest measured generation before Blackwell with HBM3e and NVLink switches"),
    "L40S": ("H100-PCIe", "no Ada part has a measured FP8 or TF32 GEMM (the L20's are fp16); the PCIe Hopper card "
             "is the nearest measured PCIe part"),
    "L4": ("L40S", "the same Ada AD10x design, a 72 W card"),
    "RTX-4090": ("L40S", "the same AD102 chip"),
    "V100": ("A100-40GB", "the nearest measured generation (Ampere after Volta), HBM2 like the V100"),
}
# A model-only device (an AMD GPU, a TPU) has no published profile: no measurement in published.toml is of one, and
# a share of an NVIDIA part's datasheet says nothing about another vendor's memory system or matrix units.

# The datasheet peak of each measured device that is not in the catalog: the figure its entries' own `how` lines
# divide by (so a share transfers to the devices it stands for).
OTHER_PEAKS = {
    ("GH200", "hbm_bandwidth"): 4.0e12,  # 96 GB HBM3 part: "3783 / 4000 = 94.6%"
    ("L40", "hbm_bandwidth"): 864e9,  # "831 / 864 = 96.2%"
    ("GH200", "tensor_bf16"): 989.4e12,  # 828.6 TFLOP/s "printed as 83.8%"
    ("GH200", "tensor_fp8"): 1978.9e12,  # 1535.0 TFLOP/s "printed as 77.6%"
    ("A100-PCIe", "tensor_bf16"): 312e12,  # 252.9 TFLOP/s "printed as 81.1%"
    ("B300", "tensor_bf16"): 2250e12,  # 1769 TFLOP/s "printed as 78.6%"
    ("L20", "tensor_fp16"): 119.5e12,  # LeetCUDA's README: "理论Tensor Cores FP16算力为 119.5 TFLOPS"
}
# sm_90 (XLA's table) is every Hopper SXM part: its peaks are H100-SXM's.
ALSO = {"sm_90": "H100-SXM"}

# NCCL's tuning model (NVIDIA/nccl src/graph/tuning.cc at v2.18.5-1, 559b70f8): a ring all-reduce with the LL protocol
# over NVLink costs baseLat 6.6 µs + hwLat 0.6 µs per step, 2(n − 1) = 14 steps across 8 GPUs.
NCCL_RING_LL_LATENCY = 6.6e-6 + 14 * 0.6e-6
EXP_PER_CLOCK_PER_SM = 16  # CUDA C++ Programming Guide, throughput of exp2f (MUFU) per SM and clock
DECODE_COSTS = {"bf16": "decode_kernel_cost", "int8": "decode_kernel_cost_int8", "fp8": "decode_kernel_cost_fp8",
                "int4": "decode_kernel_cost_int4"}
QUANTIZED = ("int8", "fp8", "int4")
ATTENTION_KERNELS = ("flash2", "flash3", "cudnn", "triton")  # implementations with published forward times
STREAM_KERNELS = ("copy", "scale", "add", "triad", "rowwise")
TENSOR_DTYPES = ("bf16", "fp16", "fp8", "tf32", "int8")
# fp16 and bf16 GEMMs run on one tensor-core path at one datasheet rate on every catalog part: a GEMM of either
# stands for the other.
SAME_RATE = {"tensor_bf16": "tensor_fp16", "tensor_fp16": "tensor_bf16"}
SAME_RATE_WHY = "fp16 and bf16 share the tensor-core path and its datasheet rate"
LOADS = {"gemm": "a GEMM", "fp32-fma": "RRZE's fp32 roofline kernel", "l2": "an L2 bandwidth test"}
# L2 bandwidths measured on data sets of at least this many MiB are the plateau; smaller sets are served partly by
# the L2 partition nearest each SM (RRZE's H200: 13.5 TB/s at 1.5 MiB, 9.7 TB/s from 19.5 to 39.5 MiB).
L2_PLATEAU_MIB = 4.0
LARGE_GEMM_MATH = 50e-6  # sweep points whose math takes longer say little about the fixed cost
RESOLUTION = 1e-9  # the smallest time a published profile writes (a profile's times are positive)
UNITS = {"GB/s": 1e9, "TB/s": 1e12, "TFLOP/s": 1e12, "µs": 1e-6, "ms": 1e-3, "MiB": 2**20, "MHz": 1e6}


class Measurement:
    """One [[measurement]] of published.toml, its value in SI units."""

    def __init__(self, entry: dict):
        self.entry = entry
        self.id, self.device, self.fact, self.origin = entry["id"], entry["device"], entry["fact"], entry["origin"]
        self.value = float(entry["value"]) * UNITS[entry["unit"]]
        self.stands_for = tuple(entry.get("stands_for", ()))

    def get(self, key, default=None):
        return self.entry.get(key, default)

    def peak(self, fact: str) -> float | None:
        """The datasheet figure this measurement is a share of."""
        if (self.device, fact) in OTHER_PEAKS:
            return OTHER_PEAKS[(self.device, fact)]
        name = ALSO.get(self.device, self.device)
        device = devices.catalog().get(name)
        found = device.fact(fact) if device is not None else None
        return found.value if found is not None else None

    def cited(self) -> dict:
        return {"id": self.id, "device": self.entry.get("device_as_published", self.device),
                "value": f"{self.entry['value']} {self.entry['unit']}", "source": self.entry["source"],
                "conditions": self.entry["conditions"], "how": self.entry["how"]}


@cache
def measurements() -> tuple[Measurement, ...]:
    """Every published measurement; ProfileError naming the entry if one lacks a key or has an unknown unit."""
    found = []
    for number, entry in enumerate(catalog_data("published").get("measurement", []), 1):
        missing = [k for k in ("id", "device", "fact", "value", "unit", "origin", "source", "conditions", "how")
                   if k not in entry]
        if missing or entry.get("unit") not in UNITS:
            wrong = f"missing {', '.join(missing)}" if missing else f"unknown unit {entry['unit']!r}"
            raise ProfileError(f"catalog/published.toml: measurement {number} ({entry.get('id', 'no id')}): {wrong}")
        if entry.get("fact") == "decode_step_time":
            _check_decode_step(number, entry)
        found.append(Measurement(entry))
    return tuple(found)


def _check_decode_step(number: int, entry: dict) -> None:
    """A decode step's workload: a catalog model, a context, dtypes gpuspec knows; ProfileError naming the entry."""
    from gpuspec import llm_catalog
    from gpuspec.tensors import DTYPES

    where = f"catalog/published.toml: measurement {number} ({entry.get('id', 'no id')})"
    model, context = entry.get("model"), entry.get("context")
    if not isinstance(model, str) or llm_catalog.lookup(model) is None:
        known = ", ".join(llm_catalog.known_names())
        raise ProfileError(f"{where}: `model` must name a catalog model (one of {known})")
    if isinstance(context, bool) or not isinstance(context, int) or not 0 <= context <= 10**7:
        raise ProfileError(f"{where}: `context` must be a whole number of tokens from 0 to 10,000,000")
    for key in ("weights", "kv"):
        if key in entry and entry[key] not in DTYPES and not (key == "weights" and entry[key] == "int4"):
            raise ProfileError(f"{where}: `{key}` must be a dtype (one of {', '.join(DTYPES)}; int4 for weights)")
    group = entry.get("group_size")
    if group is not None and (entry.get("weights") != "int4" or isinstance(group, bool) or not isinstance(group, int)
                              or not 1 <= group <= 10**6):
        raise ProfileError(f"{where}: `group_size` is a whole number from 1 to 1,000,000 for int4 weights")
    per_layer = entry.get("kernels_per_layer", 8)
    if isinstance(per_layer, bool) or not isinstance(per_layer, int) or not 1 <= per_layer <= 1000:
        raise ProfileError(f"{where}: `kernels_per_layer` must be a whole number from 1 to 1,000")
    if not isinstance(entry.get("graph", True), bool):
        raise ProfileError(f"{where}: `graph` must be true or false")


def origins() -> list[str]:
    return sorted({m.origin for m in measurements()})


class _Builder:
    def __init__(self, device: str, exclude: frozenset[str]):
        self.name, self.exclude = device, exclude
        self.device = devices.catalog()[device]
        self.pool = [m for m in measurements() if m.origin not in exclude]

    def chain(self):
        """(device, why) to look in: this device, then its nearest, that one's nearest, ... (no device twice). Each
        NEAREST reason is about one step, so a device two steps away is reached through the parts between, each
        step named with its reason."""
        yield self.name, None
        seen, name, steps = {self.name}, self.name, []
        while name in NEAREST and NEAREST[name][0] not in seen:
            lender, why = NEAREST[name]
            steps.append(f"{lender} for {name} ({why})")
            name = lender
            seen.add(name)
            yield name, why if len(steps) == 1 else "through the nearest of each part: " + "; ".join(steps)

    def own(self, fact: str, keep=lambda m: True) -> list[Measurement]:
        return [m for m in self.pool if m.fact == fact and keep(m) and m.device == self.name]

    def siblings(self, fact: str, keep=lambda m: True, name: str | None = None) -> list[Measurement]:
        name = name or self.name
        return [m for m in self.pool if m.fact == fact and keep(m) and m.device != name and name in m.stands_for]

    def peak(self, fact: str) -> float | None:
        found = self.device.fact(fact)
        return found.value if found is not None else None

    def share(self, fact: str, keep=lambda m: True, peak_fact: str | None = None):
        """(value, derivation) of a fact measured as a share of a datasheet peak, or None."""
        peak_fact = peak_fact or fact
        mine = self.own(fact, keep)
        if mine:
            value = statistics.median(m.value for m in mine)
            return value, self._derived(fact, value, mine, f"the median of {len(mine)} measurement(s) on "
                                                            f"{self.name}")
        for who, why in self.chain():
            chosen = self.siblings(fact, keep, who) if who == self.name else (
                [m for m in self.pool if m.fact == fact and keep(m) and (m.device == who or who in m.stands_for)])
            chosen = [m for m in chosen if m.peak(peak_fact)]
            if chosen and self.peak(peak_fact):
                shares = statistics.median(m.value / m.peak(peak_fact) for m in chosen)
                value = shares * self.peak(peak_fact)
                reason = (f"no measurement on {self.name}; entries that stand for it" if why is None else
                          f"no measurement on {self.name} or a device standing for it; {who} is nearest: {why}")
                return value, self._derived(fact, value, chosen, f"{reason}: their median share of the datasheet, "
                                            f"{shares:.1%}, times {self.name}'s {_show(self.peak(peak_fact), fact)}")
        return None

    def _derived(self, fact, value, used, how):
        return {"value": _show(value, fact), "how": how, "measurements": [m.cited() for m in used],
                "origins": sorted({m.origin for m in used})}

    def facts(self) -> dict[str, tuple[float, dict]]:
        base = self.base_facts()
        out = dict(base)
        for dtype in DECODE_COSTS:  # bf16 first: a quantized dtype with no step of its own takes its cost
            found = self.decode_kernel_cost(dtype, base, out.get(DECODE_COSTS["bf16"]))
            if found:
                out[DECODE_COSTS[dtype]] = found
        return out

    def base_facts(self) -> dict[str, tuple[float, dict]]:
        """Every fact but the decode kernel costs, which are derived against these."""
        out = {}
        bw = self.share("hbm_bandwidth", lambda m: m.get("kernel") in STREAM_KERNELS)
        if bw:
            out["hbm_bandwidth"] = bw
        for dtype in TENSOR_DTYPES:
            found = self.tensor(dtype, out)
            if found:
                out[f"tensor_{dtype}"] = found
        exp = self.exp_rate()
        if exp:
            out["exp_rate"] = exp
        for name in ATTENTION_KERNELS:
            out.update(self.attention(name, out))
        fixed = self.gemm_fixed_cost(out)
        if fixed:
            out["gemm_fixed_cost"] = fixed
        gap = self.nearest_value("kernel_gap", anywhere=True)  # a front-end cost, as the launch latencies below
        if gap:
            out["kernel_gap"] = gap
            value, how = gap
            out["kernel_floor"] = value, {**how, "how": how["how"] + "; the same figure as kernel_gap, for the rules "
                                          "that take a floor instead of adding a gap (a GEMM, a decode step)"}
            out["graph_node_cost"] = RESOLUTION, {"value": "1 ns", "how": "the back-to-back cost (kernel_floor) "
                                                  "was measured as the time per node of a CUDA graph: a node adds "
                                                  "nothing the benchmark resolves (written as 1 ns: a profile's "
                                                  "times are positive)",
                                           "measurements": [], "origins": gap[1]["origins"]}
        # A launch's latencies are the driver's and the front end's more than the chip's: where no part of the chain
        # measured one, every device's median stands in (said so), so that a figure timed alone (the default) is
        # never silently counted as back to back.
        for fact in ("lone_kernel_latency", "stream_launch_gap"):
            found = self.nearest_value(fact, anywhere=True)
            if found:
                out[fact] = found
        usable = self.nearest_value("l2_usable")
        if usable:
            out["l2_usable"] = usable
        plateau = self.nearest_value("l2_bandwidth", lambda m: float(m.get("working_set", 0)) >= L2_PLATEAU_MIB)
        if plateau and "l2_usable" in out:
            out["l2_bandwidth"] = plateau
        op = self.nearest_value("model_op_cost")
        if op:
            out["model_op_cost"] = op
        cpp = self.nearest_value("cpp_launch_cost")
        if cpp:
            out["cpp_launch_cost"] = cpp
        eager = self.nearest_value("launch_cost")
        if eager:
            out["launch_cost"] = eager
        out.update(self.collectives())
        return out

    def collectives(self) -> dict:
        out = {}
        eager = self.nearest_value("collective_latency", lambda m: m.get("launch", "eager") == "eager")
        if eager:
            out["collective_latency"] = eager
        graph = self.nearest_value("collective_latency", lambda m: m.get("launch") == "graph")
        if graph:
            out["collective_graph_latency"] = graph
        elif eager:
            out["collective_graph_latency"] = NCCL_RING_LL_LATENCY, {
                "value": _show(NCCL_RING_LL_LATENCY, "collective_latency"), "measurements": [], "origins": [],
                "how": "no collective timed inside a CUDA graph on this device or its nearest: NCCL's own tuning "
                       "model's latency for an all-reduce across 8 GPUs with the LL ring over NVLink "
                       "(src/graph/tuning.cc at v2.18.5-1: baseLat 6.6 µs + 14 steps × hwLat 0.6 µs = 15.0 µs)"}
        engines = self.nearest_value("tp_allreduce_latency", anywhere=True)
        if engines:
            out["tp_allreduce_latency"] = engines
        cost = self.nearest_value("collective_simple_cost")
        if cost:
            out["collective_simple_cost"] = cost
        found = self.link("nvlink", "ring")
        if found:
            out["nvlink_bandwidth"] = found[0], {**found[1], "how": found[1]["how"].replace(" of ring runs", "")}
            out["nvlink_bandwidth_ring"] = found
        sharp = self.nvls_bandwidth()
        if sharp:
            out["nvls_bandwidth"] = sharp
        return out

    def nvls_bandwidth(self):
        """The median algorithm bandwidth of the device's own NVLink SHARP all-reduces (busbw / (2(n−1)/n))."""
        chosen = [m for m in self.pool if m.fact == "collective_bus_efficiency" and m.get("algorithm") == "nvls"
                  and (m.device == self.name or self.name in m.stands_for) and int(m.get("gpus", 0)) > 4]
        if not chosen:
            return None
        rates = [m.value / (2 * (m.get("gpus") - 1) / m.get("gpus")) for m in chosen]
        value = statistics.median(rates)
        return value, self._derived("nvls_bandwidth", value, chosen, "the median algorithm bandwidth of the NVLink "
                                    "SHARP all-reduces measured on it (busbw / (2(n − 1)/n)): "
                                    + ", ".join(f"{r / 1e9:.1f}" for r in sorted(rates)) + " GB/s")

    def decode_kernel_cost(self, dtype: str, base: dict, bf16=None):
        """The cost per streaming kernel of a decode step with `dtype` weights (bf16 standing for every unquantized
        dtype): the median over the published steps of the device (or standing for it, or its nearest) of
        (observed − the calibrated model's step without it) / the step's streaming kernels; else over every device's
        steps; for quantized weights with no step of their own anywhere, the bf16 cost."""
        def keep(m):
            weights = m.get("weights", "bf16")
            return weights == dtype if dtype in QUANTIZED else weights not in QUANTIZED
        steps = [m for m in self.pool if m.fact == "decode_step_time" and keep(m)]
        for who, why in self.chain():
            chosen = [m for m in steps if m.device == who] or [m for m in steps if who in m.stands_for]
            if chosen:
                where = (f"the median over {len(chosen)} published step(s) on {self.name} or standing for it"
                         if why is None else f"no decode step measured on {self.name}; {who}'s ({why}), taken as it is")
                return self._decode_cost(dtype, chosen, where, base)
        if steps:
            measured = sorted({_measured_on(m) for m in steps})
            return self._decode_cost(dtype, steps, f"no decode step measured on {self.name} or its nearest devices; "
                                     f"the median over every device measured ({', '.join(measured)}): a per-kernel "
                                     "time, taken as it is", base)
        if dtype in QUANTIZED and bf16:
            value, how = bf16
            return value, {**how, "how": f"no {dtype} weight-only decode step measured: the bf16 kernels' cost "
                                         f"({how['how']})"}
        return None

    def _decode_cost(self, dtype: str, chosen: list[Measurement], where: str, base: dict):
        extras, lines = [], []
        for m in chosen:
            device = _measured_on(m)
            facts = base if device == self.name else _base_facts(device, self.exclude)
            predicted, streaming = _decode_step(m, device, facts)
            extras.append((m.value - predicted) / streaming)
            lines.append(f"{m.id}: ({_show(m.value, 'kernel_floor')} − {_show(predicted, 'kernel_floor')}) / "
                         f"{streaming:g} kernels = {_show(extras[-1], 'kernel_floor')}")
        value = max(RESOLUTION, statistics.median(extras))
        name = DECODE_COSTS[dtype]
        return value, self._derived(name, value, chosen, f"{where}: per step, (its time − the calibrated model's "
                                    "time of the same step without this cost, weights and cache at the achievable "
                                    "HBM bandwidth) / its kernels that stream from HBM (7 weight matmuls and one "
                                    "attention per layer): " + "; ".join(lines))

    def exp_rate(self):
        """No published measurement: the programming guide's 16 exponentials per clock per SM (compute capability
        8.0 to 10.0) at the catalog's boost clock, for every SM."""
        sms, clock = self.device.fact("sms"), self.device.fact("boost_clock")
        if sms is None or clock is None:
            return None
        value = EXP_PER_CLOCK_PER_SM * sms.value * clock.value
        return value, {"value": f"{value / 1e12:.3g} T exp/s", "origins": [], "measurements": [],
                       "how": f"no published measurement of exponential throughput: {EXP_PER_CLOCK_PER_SM} per clock "
                              f"per SM (the CUDA C++ Programming Guide's arithmetic-instruction throughput table, "
                              f"exp2 for compute capability 8.0 to 10.0) × {sms.value:g} SMs × the "
                              f"{clock.value / 1e6:g} MHz boost clock"}

    def attention_points(self, name: str, who: str) -> list[Measurement]:
        return [m for m in self.pool if m.fact == "attention_time" and m.get("implementation") == name
                and (m.device == who or who in m.stands_for)]

    def attention(self, name: str, out: dict) -> dict:
        """attention_share_<name> and attention_tile_overhead_<name> (see the module's docstring)."""
        for who, why in self.chain():
            points = self.attention_points(name, who)
            if not points:
                continue
            builder = self if who == self.name else _Builder(who, self.exclude)
            fitted = builder.attention_fit(points, out if who == self.name else None)
            if fitted is None:
                continue
            share, overhead = fitted
            where = (f"the {len(points)} published forward time(s) of {name} on {self.name}" if why is None else
                     f"no {name} time on {self.name}; {who}'s {len(points)} ({why})")
            how = (f"{where}, fitted to the tiled-kernel rule: time / (⌈tiles / SMs⌉ × SMs × t_block) = (key blocks "
                   f"per tile + overhead) / share, by least squares on relative error, with {who}'s profile tensor "
                   f"rate and exp_rate: share {share:.3f}, overhead {overhead:.2f} key blocks")
            cited = [m.cited() for m in points]
            origins = sorted({m.origin for m in points})
            return {f"attention_share_{name}": (share, {"value": f"{share:.3f}", "how": how, "measurements": cited,
                                                        "origins": origins}),
                    f"attention_tile_overhead_{name}": (overhead, {"value": f"{overhead:.2f} key blocks", "how": how,
                                                                   "measurements": cited, "origins": origins})}
        fits = []
        for other in sorted({m.device if m.device in devices.catalog() else m.stands_for[0] for m in self.pool
                             if m.fact == "attention_time" and m.get("implementation") == name
                             and (m.device in devices.catalog() or m.stands_for)}):
            points = self.attention_points(name, other)
            fitted = _Builder(other, self.exclude).attention_fit(points) if points else None
            if fitted is not None:
                fits.append((other, fitted[1], points))
        if not fits:
            return {}
        overhead = statistics.median(f[1] for f in fits)
        how = (f"no {name} time on {self.name} or its nearest siblings: the median of the tile overheads fitted on "
               f"{', '.join(f'{d} ({o:.2f})' for d, o, _ in fits)} (an overhead belongs to the kernel's code more "
               f"than to the chip); no share is measured here, so the rule runs at the profile's tensor rate")
        used = [m for _, _, points in fits for m in points]
        return {f"attention_tile_overhead_{name}": (overhead, {"value": f"{overhead:.2f} key blocks", "how": how,
                                                               "measurements": [m.cited() for m in used],
                                                               "origins": sorted({m.origin for m in used})})}

    def attention_fit(self, points: list[Measurement], out: dict | None = None) -> tuple[float, float] | None:
        """(share, overhead) of the tiled-kernel rule fitted to these forward times on this device."""
        from gpuspec.kinds.attention import rules

        exp = self.exp_rate()
        sms = self.device.fact("sms")
        if exp is None or sms is None:
            return None
        rows = []
        for m in points:
            rate = self.tensor_rate(str(m.get("dtype")), out)
            if not rate:
                continue
            batch, heads, seq_q, seq_kv, head_dim = (int(m.get(k)) for k in ("batch", "heads", "seq_q", "seq_kv",
                                                                             "head_dim"))
            causal = bool(m.get("causal"))
            per_head = -(-seq_q // rules.TILE_ROWS)
            tiles = batch * heads * per_head
            scores = rules.TILE_ROWS * rules.KEY_BLOCK
            t_block = scores * (rules.MATMUL_FLOPS_PER_HEAD_DIM * head_dim + rules.SOFTMAX_FLOPS_PER_SCORE) / rate \
                + scores / exp[0]
            unit = -(-tiles // int(sms.value)) * sms.value * t_block
            rows.append((rules.key_blocks(seq_q, seq_kv, causal) / per_head, _attention_seconds(m) / unit))
        return _line_fit(rows) if len(rows) >= 2 else None

    def tensor_rate(self, dtype: str, out: dict | None = None) -> float | None:
        """The profile's tensor rate of a dtype, as facts() derives it (else the datasheet's)."""
        found = (out or {}).get(f"tensor_{dtype}") or self.tensor(dtype, out)
        return found[0] if found else self.peak(f"tensor_{dtype}")

    def tensor(self, dtype: str, out: dict | None = None):
        """(value, derivation) of tensor_<dtype>: the device's own large GEMMs; else a sibling's share of its peak per
        clock times this device's share of its boost clock under load; else the device's bf16 share."""
        fact, out = f"tensor_{dtype}", out or {}
        peak = self.peak(fact)
        if peak is None:
            return None
        kinds = (fact, SAME_RATE[fact]) if fact in SAME_RATE else (fact,)
        mine = self.own(kinds[0]) or self.own(kinds[-1])
        if mine:
            value = statistics.median(m.value for m in mine)
            other = "" if mine[0].fact == fact else (f" ({mine[0].get('dtype')} GEMMs: {SAME_RATE_WHY})")
            return value, self._derived(fact, value, mine, f"the median of {len(mine)} GEMM(s) measured on "
                                        f"{self.name}{other}; a measured rate already runs at the clock the card "
                                        "holds under it")
        for who, why in self.chain():
            chosen = [m for m in self.pool if m.fact in kinds and m.device != self.name
                      and (who in m.stands_for if who == self.name else (m.device == who or who in m.stands_for))]
            chosen = [m for m in chosen if m.peak(m.fact)]
            if not chosen:
                continue
            per_clock, said, used, clocks = [], [], list(chosen), {}
            for m in chosen:
                share = m.value / m.peak(m.fact)
                clock = self.entry_clock(m)
                per_clock.append(share / (clock[0] if clock else 1.0))
                said.append(f"{m.id} {share:.1%} of its peak" + (f" at {clock[3]}" if clock else ""))
                if clock:
                    clocks.setdefault(m.device, clock[1])
                    used += [c for c in clock[2] if c not in used]
            efficiency = statistics.median(per_clock)
            clock = self.tensor_clock()
            value = efficiency * peak * (clock[0] if clock else 1.0)
            where = (f"no GEMM measured on {self.name}; entries that stand for it" if why is None else
                     f"no GEMM measured on {self.name} or a device standing for it; {who} is nearest: {why}")
            per = "their median share per clock" if clocks else "their median share (no clock of theirs binds)"
            mine_clock = (f"times {self.name}'s clock under load ({clock[3]})" if clock else
                          f"at {self.name}'s boost clock (no power-bound clock is measured on it or a sibling)")
            how = (f"{where}: {'; '.join(said)}; {per}, {efficiency:.1%}, {mine_clock}, times its "
                   f"{_show(peak, fact)}" + "".join(f". {d}'s clock: {w}" for d, w in clocks.items())
                   + (f". {self.name}'s clock: {clock[1]}" if clock else ""))
            used += [c for c in (clock[2] if clock else []) if c not in used]
            return value, self._derived(fact, value, used, how)
        bf16 = out.get("tensor_bf16") if fact != "tensor_bf16" else None
        if bf16 and self.peak("tensor_bf16"):
            share = bf16[0] / self.peak("tensor_bf16")
            value = share * peak
            return value, {"value": _show(value, fact), "how": f"no {dtype} GEMM measured: the bf16 share "
                           f"({share:.1%}) times the {dtype} peak {_show(peak, fact)}",
                           "measurements": [], "origins": bf16[1]["origins"]}
        return None

    def tensor_clock(self):
        """This device's sustained clock under a full tensor load, as _sustained_clock gives it, or None where no
        clock measurement binds (see the module's docstring)."""
        part = _Part.of(self.name)  # only entries that stand for it: a clock carries within one SM design
        return _sustained_clock(self.pool, part, [(self.name, None)]) if part else None

    def entry_clock(self, m: Measurement):
        """The sustained clock of the part a GEMM measurement ran on, as tensor_clock gives it: a catalog device's
        own, else the part's (its sms, power_limit and boost_clock keys) from the clocks of the devices it stands
        for, else the first device it stands for."""
        if m.device in devices.catalog():
            return _Builder(m.device, self.exclude).tensor_clock() if m.device != self.name else self.tensor_clock()
        part = _Part.of_entry(m)
        if part is not None:
            places = [(m.device, None)] + [(s, f"which {m.device} stands for") for s in m.stands_for]
            return _sustained_clock(self.pool, part, places)
        return _Builder(m.stands_for[0], self.exclude).tensor_clock() if m.stands_for else None

    def rate(self, fact: str) -> float:
        found = self.share(fact)
        return found[0] if found else self.peak(fact)

    def nearest_value(self, fact: str, keep=lambda m: True, anywhere: bool = False):
        """A per-kernel or per-call cost: the device's own median, else one standing for it, else the nearest's; with
        `anywhere`, else the median over every device measured (said so)."""
        for who, why in self.chain():
            chosen = ([m for m in self.pool if m.fact == fact and keep(m) and m.device == who]
                      or [m for m in self.pool if m.fact == fact and keep(m) and who in m.stands_for])  # its own first
            if chosen:
                value = statistics.median(m.value for m in chosen)
                where = (f"the median of {len(chosen)} measurement(s) on {self.name} or standing for it" if why is None
                         else f"no measurement on {self.name}; {who}'s ({why}), taken as it is")
                return value, self._derived(fact, value, chosen, where)
        everywhere = [m for m in self.pool if m.fact == fact and keep(m)] if anywhere else []
        if everywhere:
            value = statistics.median(m.value for m in everywhere)
            measured = ", ".join(sorted({_measured_on(m) for m in everywhere}))
            return value, self._derived(fact, value, everywhere, f"no measurement on {self.name} or its nearest "
                                        f"devices; the median over every device measured ({measured}), taken as it is")
        return None

    def gemm_fixed_cost(self, out):
        """observed time − the calibrated model's roofline time for the shape, over the sweep points on this device
        (else its nearest, else Hopper's, the one swept widely), each with that device's achievable rates."""
        chain = list(self.chain())
        swept = [m.device if m.device in devices.catalog() else m.stands_for[0] for m in self.pool
                 if m.fact == "gemm_efficiency_at" and (m.device in devices.catalog() or m.stands_for)]
        for name in sorted(set(swept), key=lambda d: (-swept.count(d), d)):
            if name not in {who for who, _ in chain}:
                chain.append((name, "a device whose GEMMs were swept over sizes: a fixed cost is a property of "
                                    "launching and filling a GEMM kernel more than of one chip"))
        for who, why in chain:
            points = [m for m in self.pool if m.fact == "gemm_efficiency_at" and m.get("dtype") == "bf16"
                      and (m.device == who or who in m.stands_for)]
            if not points:
                continue
            builder = self if who == self.name else _Builder(who, self.exclude)
            roof = builder.roofline_device(out if who == self.name else None)
            extra, used = [], []
            for m in points:
                shape = (m.get("m"), m.get("n"), m.get("k"), m.get("batch", 1))
                observed = 2.0 * math.prod(shape) / m.value
                predicted = _matmul_time(roof, *shape)
                if predicted < LARGE_GEMM_MATH:
                    extra.append(observed - predicted)
                    used.append(m)
            if extra:
                value = max(RESOLUTION, statistics.median(extra))
                where = "" if why is None else (f"no sweep on {self.name}; {who}'s ({why}), taken as it is, with "
                                                f"{who}'s achievable rates: ")
                return value, self._derived("gemm_fixed_cost", value, used, f"{where}the median over {len(used)} "
                                            "sweep point(s) of observed time − the model's roofline time for the "
                                            "shape at the achievable rates (points whose roofline time is under "
                                            "50 µs)")
        return None

    def roofline_device(self, out=None):
        """The catalog device with its achievable HBM bandwidth and tensor rates (the profile so far)."""
        if out is None:
            out = {}
            found = self.share("hbm_bandwidth", lambda m: m.get("kernel") in STREAM_KERNELS)
            if found:
                out["hbm_bandwidth"] = found
            found = self.tensor("bf16")
            if found:
                out["tensor_bf16"] = found
        facts = {name: value for name, (value, _) in out.items() if name in ("hbm_bandwidth", "tensor_bf16")}
        return Profile(self.device.title, facts, {}, "the profile so far").apply(self.device)

    def link(self, link: str, algorithm: str | None = None):
        """The link's effective bandwidth: line rate × the median bus efficiency of the collectives measured over it
        (of one NCCL algorithm, if given)."""
        line = self.peak(f"{link}_bandwidth")
        if line is None:
            return None
        for who, why in self.chain():
            chosen = [m for m in self.pool if m.fact == "collective_bus_efficiency"
                      and (m.device == who or who in m.stands_for) and _line_rate(m)
                      and (algorithm is None or m.get("algorithm") == algorithm)]
            if link == "pcie" or not chosen:
                continue
            share = statistics.median(m.value / _line_rate(m) for m in chosen)
            value = share * line
            where = "" if why is None else f"no collective measured on {self.name}; {who}'s ({why}): "
            name = f"{link}_bandwidth" + (f"_{algorithm}" if algorithm else "")
            which = f" of {algorithm} runs" if algorithm else ""
            return value, self._derived(name, value, chosen, f"{where}the median bus efficiency{which} "
                                        f"(busbw / line rate per direction), {share:.1%}, times the {link} line rate "
                                        f"{_show(line, 'nvlink_bandwidth')}")
        return None


class _Part:
    """What the clock rule needs of a part: its SM count, board power limit (W) and boost clock (Hz)."""

    def __init__(self, name: str, sms: float, power: float, boost: float):
        self.name, self.sms, self.power, self.boost = name, sms, power, boost

    @property
    def power_per_sm(self) -> float:
        return self.power / self.sms

    @classmethod
    def of(cls, name: str) -> "_Part | None":
        device = devices.catalog().get(name)
        facts = [device.fact(f) for f in ("sms", "tdp", "boost_clock")] if device else [None]
        return cls(name, *(f.value for f in facts)) if all(facts) else None

    @classmethod
    def of_entry(cls, m: Measurement) -> "_Part | None":
        if m.device in devices.catalog():
            return cls.of(m.device)
        keys = [m.get(k) for k in ("sms", "power_limit", "boost_clock")]
        if all(isinstance(k, (int, float)) and not isinstance(k, bool) and math.isfinite(k) and k > 0 for k in keys):
            return cls(m.device, float(keys[0]), float(keys[1]), float(keys[2]) * 1e6)
        return None

    def words(self) -> str:
        return f"{self.power:g} W / {self.sms:g} SMs"


def _sustained_clock(pool, part: _Part, places: list[tuple[str, str | None]]):
    """(share of the boost clock, words, the entries used, short words) `part` sustains under a full tensor load,
    or None.

    Its own clock measured under a GEMM, or under another load at its power limit; else the power-bound clocks of
    the parts standing for it (or for the devices `places` lists after it), each scaled by power per SM (where
    power binds, the clock an SM sustains follows the power each may draw: RRZE's two Ada boards run the same
    kernel 22% slower on 14% less power per SM, so this is if anything generous), at most the boost clock."""
    clocks = [m for m in pool if m.fact == "sustained_clock" and math.isfinite(m.value) and m.value > 0]
    own = [m for m in clocks if m.device == part.name and (m.get("load") == "gemm" or m.get("power_bound") is True)]
    if own:
        value = statistics.median(m.value for m in own)
        share = value / part.boost
        loads = ", ".join(sorted({LOADS.get(m.get("load"), "a load not stated") for m in own}))
        words = (f"{value / 1e6:.0f} MHz sustained of its {part.boost / 1e6:.0f} MHz boost ({share:.1%}; measured "
                 f"on it under {loads}" + (", at its power limit" if any(m.get("power_bound") for m in own) else "")
                 + ")")
        return share, words, own, f"{value / 1e6:.0f} MHz measured, {share:.1%} of its boost"
    for who, why in places:
        found = [m for m in clocks if m.device != part.name and m.get("power_bound") is True
                 and (who in m.stands_for if who == part.name else (m.device == who or who in m.stands_for))]
        scaled = []
        for m in found:
            other = _Part.of_entry(m)
            if other is not None:
                scaled.append((min(part.boost, m.value * part.power_per_sm / other.power_per_sm), m, other))
        if not scaled:
            continue
        value = statistics.median(s for s, _, _ in scaled)
        share = value / part.boost
        each = "; ".join(f"{m.id}: {m.value / 1e6:.0f} MHz at {other.words()} -> {s / 1e6:.0f} MHz"
                         for s, m, other in scaled)
        source = "the power-bound clocks standing for it" if who == part.name else f"{who}'s power-bound clocks ({why})"
        words = (f"{value / 1e6:.0f} MHz of its {part.boost / 1e6:.0f} MHz boost ({share:.1%}), estimated from "
                 f"{source}, scaled by power per SM ({part.words()}) and held at most to the boost: {each}")
        return share, words, [m for _, m, _ in scaled], f"an estimated {value / 1e6:.0f} MHz, {share:.1%} of its boost"
    return None


def _attention_seconds(m: Measurement) -> float:
    """A published forward time, or a rate turned into one by the source's own count: 4·batch·heads·seq_q·seq_kv·
    head_dim FLOPs, halved when causal (FlashAttention's benchmarks, tritonbench and cuDNN's all count so)."""
    if m.entry["unit"] == "µs":
        return m.value
    flops = 4.0 * math.prod(int(m.get(k)) for k in ("batch", "heads", "seq_q", "seq_kv", "head_dim"))
    return flops * (0.5 if m.get("causal") else 1.0) / m.value


def _line_fit(rows: list[tuple[float, float]]) -> tuple[float, float] | None:
    """(share, overhead) from y = (x + overhead) / share, fitted by least squares on relative error (weights
    1 / y²); the overhead at least 0."""
    weights = [1 / y**2 for _, y in rows]
    total_w = sum(weights)
    sx = sum(w * x for w, (x, _) in zip(weights, rows))
    sy = sum(w * y for w, (_, y) in zip(weights, rows))
    sxx = sum(w * x * x for w, (x, _) in zip(weights, rows))
    sxy = sum(w * x * y for w, (x, y) in zip(weights, rows))
    spread = total_w * sxx - sx * sx
    slope = (total_w * sxy - sx * sy) / spread if spread > 0 else 0.0
    intercept = (sy - slope * sx) / total_w
    if slope <= 0 or intercept < 0:  # through the origin: no overhead
        slope, intercept = sxy / sxx, 0.0
    return (1 / slope, intercept / slope) if slope > 0 else None


def _measured_on(m: Measurement) -> str:
    """The catalog device a measurement was made on, or the first it stands for."""
    return m.device if m.device in devices.catalog() else m.stands_for[0]


_BASES: dict = {}


def _base_facts(device: str, exclude: frozenset[str]) -> dict:
    """A device's published facts but the decode kernel costs (kept: several devices' costs read them)."""
    key = (device, exclude)
    if key not in _BASES:
        _BASES[key] = _Builder(device, exclude).base_facts()
    return _BASES[key]


def _decode_step(m: Measurement, device: str, base: dict) -> tuple[float, int]:
    """The calibrated model's time of the decode step a measurement states, on `device` with the facts `base` (no
    decode kernel cost), and the step's kernels that stream from HBM."""
    from gpuspec import llm_catalog, model
    from gpuspec.kinds.decode import KERNELS_PER_LAYER, DecodeStep
    from gpuspec.kinds.decode.rules import layer_kernels

    llm = llm_catalog.lookup(m.get("model"))
    per_layer = int(m.get("kernels_per_layer", KERNELS_PER_LAYER["compiled"]))
    weights = m.get("weights", "bf16")
    catalog_device = devices.catalog()[device]
    facts = {name: value for name, (value, _) in base.items()}
    calibrated = Profile(catalog_device.title, facts, {}, "the profile so far").apply(catalog_device)
    step = DecodeStep(llm, calibrated, 1, int(m.get("context")), "compiled", bool(m.get("graph", True)), per_layer,
                      weights, m.get("kv", "bf16" if weights == "int4" else weights), 1 / 6,
                      weight_group=int(m.get("group_size", 128)) if weights == "int4" else None)
    layer = layer_kernels(per_layer)
    return model.estimate(step)["step_time"].number, int(llm.fact("layers").value) * (layer.weights + layer.attention)


def _matmul_time(device, m: int, n: int, k: int, batch: int) -> float:
    """The model's time of a bf16 GEMM of that shape on `device` (its default tiles)."""
    from gpuspec import model
    from gpuspec.kinds.matmul import Matmul, default_tile
    from gpuspec.tensors import Tensor

    lead = (batch,) if batch > 1 else ()
    a, b = Tensor("a", "bf16", (*lead, m, k)), Tensor("b", "bf16", (*lead, k, n))
    workload = Matmul(a, b, default_tile(m, n), device)
    return model.estimate(workload)["time"].number


def _line_rate(m: Measurement) -> float | None:
    rate = m.get("line_rate")
    return float(rate) * 1e9 if isinstance(rate, (int, float)) and rate > 0 else None


def _show(value: float, fact: str) -> str:
    dimension = devices.FIELDS[fact][0] if fact in devices.FIELDS else units.TIME
    return units.format_si(value, dimension, 4)


def data(device: str, exclude: frozenset[str] | tuple = ()) -> dict:
    """The published profile of a catalog device as the JSON a profile file holds (checked by schema.PROFILE).

    Building one runs the model's rules over hundreds of measurements (the fits), which costs more than checking
    a spec, so it is kept as JSON in the per-user cache folder, found by a hash of the catalogs' text and of the
    code that builds it; what is read back is checked again, fact by fact, or built afresh."""
    from gpuspec import cachedir

    if devices.catalog()[device].model_only:
        raise ProfileError(f"{device} has no published profile: it is model-only "
                           f"({devices.catalog()[device].model_only}), and no published measurement is of one")
    import json

    if not exclude:
        shipped = _shipped(device)
        if shipped is not None:
            return shipped
    # the measurements as read (what catalog_data gives, whatever file it came from), the code, the other catalogs
    measured = json.dumps(catalog_data("published"), separators=(",", ":"), ensure_ascii=False)
    material = cachedir.key(_code_key(), measured, device, *sorted(exclude))
    cached = cachedir.read_entry("published", material)
    if _well_formed(cached):
        return cached
    profile = _made(device, exclude)
    cachedir.store("published", material, profile)
    return profile


# Each catalog device's published profile as published.toml gives it, shipped built (scripts/
# generate_published_profiles.py writes them, and a test keeps them current): building one parses published.toml
# and runs the fits, more than a whole check of a spec takes. Used only while the catalogs are those they were built
# from; else a profile is built (and kept in the cache folder).
SHIPPED = "published"  # catalog/published/<device>.json.xz
_SHIPPED_LARGEST = 16 * 2**20  # bytes, decompressed: a profile is a few hundred kB


@cache
def shipped_inputs() -> str:
    """A hash of what the shipped profiles were built from: the catalogs' text and gpuspec's version."""
    import hashlib

    from gpuspec.files import read_regular
    from gpuspec.resources import data_dir
    from gpuspec.version import __version__

    digest = hashlib.sha256(__version__.encode())
    for name in ("published", "devices", "models"):
        text = read_regular(data_dir("catalog") / f"{name}.toml")
        digest.update(b"%d:" % len(text) + text)
    return digest.hexdigest()


def shipped_path(device: str) -> Path:
    from gpuspec.resources import data_dir

    return data_dir("catalog") / SHIPPED / f"{device}.json.xz"


def _shipped(device: str) -> dict | None:
    """The profile shipped for `device`, when it was built from the catalogs there are and reads as one; else None."""
    import json
    import lzma

    from gpuspec.files import read_regular

    try:
        raw = read_regular(shipped_path(device))
        unpacking = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
        text = unpacking.decompress(raw, max_length=_SHIPPED_LARGEST)
        if not unpacking.eof:
            return None
        payload = json.loads(text, parse_constant=_refused)
    except (OSError, lzma.LZMAError, ValueError, RecursionError):
        return None
    if not isinstance(payload, dict) or payload.get("inputs") != shipped_inputs():
        return None
    profile = payload.get("profile")
    return profile if _well_formed(profile) else None


def shipped_bytes(device: str) -> bytes:
    """What scripts/generate_published_profiles.py writes for `device`: its profile built afresh, and the inputs."""
    import json
    import lzma

    payload = {"inputs": shipped_inputs(), "profile": _made(device, ())}
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    return lzma.compress(text, format=lzma.FORMAT_XZ, preset=9)


def _refused(constant: str):
    raise ValueError(f"{constant} in a shipped profile")


# What a published profile is made from besides published.toml: the catalogs and the code of the rules it fits by.
_BUILT_BY = ("published.py", "devices.py", "profiles.py", "schema.py", "llm_catalog.py", "units.py", "tensors.py",
             "sources.py", "resources.py")


@cache
def _code_key() -> bytes:
    from gpuspec.resources import data_dir
    from gpuspec.version import __version__

    package = Path(__file__).parent
    code = [package / name for name in _BUILT_BY]
    code += sorted((package / "model").glob("*.py")) + sorted((package / "kinds").glob("**/*.py"))
    catalogs = [data_dir("catalog") / f"{name}.toml" for name in ("devices", "models")]
    from gpuspec import cachedir
    from gpuspec.files import read_regular

    return cachedir.key(__version__, *(read_regular(path) for path in (*code, *catalogs)))


def _well_formed(value) -> bool:
    """Whether a cache entry is a profile as `_made` makes them: its facts each in the range schema.FACTS allows,
    its derivations and reasons plain data (text only, never run)."""
    if not isinstance(value, dict) or set(value) != {"version", "gpu", "provenance", "facts", "derivations",
                                                        "unmeasured"}:
        return False
    facts, derivations, unmeasured = value["facts"], value["derivations"], value["unmeasured"]
    if value["version"] != VERSION or not isinstance(value["gpu"], str) or not isinstance(value["provenance"], dict):
        return False
    if not (isinstance(facts, dict) and isinstance(derivations, dict) and isinstance(unmeasured, dict)):
        return False
    try:
        for name, number in facts.items():
            schema.FACTS[name].check(number, name)
    except (KeyError, schema.Invalid):
        return False
    return (set(derivations) == set(facts) and all(isinstance(how, dict) for how in derivations.values())
            and all(name in schema.FACTS and isinstance(why, str) for name, why in unmeasured.items()))


def _made(device: str, exclude: frozenset[str] | tuple) -> dict:
    built = _Builder(device, frozenset(exclude)).facts()
    # The name the part's driver reports, so that the printed profile, given back with --profile, is of its device.
    part = devices.catalog()[device]
    profile = {"version": VERSION, "gpu": part.cuda_names[0] if part.cuda_names else part.title,
               "provenance": {"device": device, "source": "published measurements (gpuspec/catalog/published.toml)",
                              "excluded_origins": ", ".join(sorted(exclude)) or None},
               "facts": {name: value for name, (value, _) in built.items()},
               "derivations": {name: how for name, (_, how) in built.items()},
               "unmeasured": _unmeasured(device, built)}
    schema.PROFILE.check(profile, "")
    return profile


def _unmeasured(device: str, built: dict) -> dict[str, str]:
    """Each fact a profile can hold that this one does not, with why: published.toml's [[missing]] note where it has
    one for the device, else what the model does without it."""
    reasons = {}
    for entry in catalog_data("published").get("missing", []):
        if device in entry.get("devices", ()) and entry.get("fact") in schema.FACTS and entry["fact"] not in built:
            reasons[entry["fact"]] = str(entry.get("note", ""))[:1_000] or "no published measurement"
    part = devices.catalog()[device]
    for fact in schema.FACTS:
        if fact in built or fact in reasons:
            continue
        nowhere = f"no published measurement on {device} or its nearest measured devices"
        if "in profiles" in devices.FIELDS[fact][1]:  # a fact only a measurement gives: the rule that needs it is off
            reasons[fact] = f"{nowhere}: the rules that use it keep to the datasheet"
        elif part.fact(fact) is None:
            reasons[fact] = f"the catalog gives {device} no {fact} (the part has none, or no source states it)"
        else:
            reasons[fact] = f"{nowhere}: the catalog's {_show(part.fact(fact).value, fact)} stands"
    return reasons


@cache
def _cached(device: str, exclude: frozenset[str]) -> Profile:
    built = data(device, exclude)
    label = f"published profile of {device}" + (f" without {', '.join(sorted(exclude))}" if exclude else "")
    return Profile(built["gpu"], built["facts"], built["provenance"], label, built["derivations"], built["unmeasured"])


def build(device: str, exclude=()) -> Profile:
    """The published profile of a catalog device, leaving out the measurements of the origins in `exclude`."""
    if device not in devices.catalog():
        raise ProfileError(f"{device} is not a catalog device (those are {', '.join(devices.catalog())})")
    return _cached(device, frozenset(exclude))


def bundled(device: str) -> Profile | None:
    """The published profile gpuspec ships for a catalog device (None for a device of the user's own, or a
    model-only one)."""
    known = devices.catalog().get(device)
    return build(device) if known is not None and not known.model_only else None


def measurable() -> list[str]:
    """The catalog devices that have a published profile (all but the model-only ones)."""
    return [name for name, device in devices.catalog().items() if not device.model_only]


def main(argv: list[str] | None = None) -> int:
    """`python -m gpuspec.published DEVICE [--exclude ORIGIN ...]`: the published profile as the JSON a profile file
    holds (a file `--profile` reads), every fact with its derivation."""
    import argparse
    import sys

    from gpuspec.files import json_bytes

    parser = argparse.ArgumentParser(prog="python -m gpuspec.published", description=main.__doc__)
    parser.add_argument("device", help=f"a catalog device ({', '.join(measurable())})")
    parser.add_argument("--exclude", action="append", default=[], metavar="ORIGIN",
                        help=f"leave a source's measurements out (one of {', '.join(origins())})")
    args = parser.parse_args(argv)
    unknown = [o for o in args.exclude if o not in origins()]
    known = devices.catalog().get(args.device)
    if known is not None and known.model_only:
        parser.error(f"{args.device} has no published profile: it is model-only ({known.model_only})")
    if args.device not in measurable() or unknown:
        what = f"origin {unknown[0]!r}" if unknown else f"device {args.device!r}"
        parser.error(f"no {what} in the published measurements")
    sys.stdout.buffer.write(json_bytes(data(args.device, tuple(args.exclude))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
