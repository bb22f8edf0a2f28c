"""The collectives model: ring all-reduce, all-gather, reduce-scatter, all-to-all and broadcast over NVLink or PCIe.

Rules (the usual ring algorithms):
- Each GPU sends (and at the same time receives) over its link: all_reduce 2(n−1)/n of the buffer, all_gather
  and reduce_scatter and all_to_all (n−1)/n, broadcast_to_all (n−1)/n.
- The catalog's link bandwidths count both directions together, so a ring moves data at half of it each way.
  A profile's link bandwidth is the line rate times NCCL's measured bus efficiency; where it gives one per
  algorithm (`set nccl_algorithm = ring`), that one.
- Ideal: time = the device's collective latency (a fixed cost per collective, from the catalog) + bytes each GPU
  sends / the link's bandwidth in one direction. algbw = buffer / time; busbw = what each link carries per second,
  the figure NCCL's tests report (for large buffers it does not depend on n for a ring).

Real collectives (only where a profile gives `collective_simple_cost`: the ideal model has none of this):
- Latency by caller: `set nccl_launch = graph` takes `collective_graph_latency` (a CUDA graph leaves no host work
  in the time), eager the measured `collective_latency`. Both are measured on an all-reduce across 8 GPUs; another
  collective or GPU count over NVLink moves by NCCL's tuning model's 0.6 µs per ring step (LL protocol, NVLink;
  NVIDIA/nccl src/graph/tuning.cc): 2(n−1) steps for an all-reduce, n−1 for the others.
- Protocols: NCCL sends small buffers with its LL protocol, whose 16-byte lines carry 8 bytes of data and two flags
  (ncclLLFifoLine), so the bytes take twice their time at the bus bandwidth, after the latency alone; large ones
  with its Simple protocol at the full bus bandwidth, after the latency plus `collective_simple_cost` (what size
  sweeps measure beyond that line). A call takes the faster of the two, as NCCL's tuner picks the faster.
- NVLink SHARP (NVLS, all-reduce only, more than 4 GPUs: NCCL does not use it on 4 or fewer): the switch reduces,
  and the algorithm bandwidth (buffer / time) stays near one measured figure, `nvls_bandwidth`, whatever the GPU
  count (H100 and H200 sweeps over 5 to 8 GPUs). `auto` takes the faster of ring and NVLS, as NCCL does.
"""
from __future__ import annotations

from gpuspec import units
from gpuspec.model.estimate import Estimate
from gpuspec.model.values import Value, given, product, quotient, renamed, smallest, total

COUNT, BYTES, TIME = units.COUNT, units.BYTES, units.TIME
_SHARE = {"all_reduce": (2, "2(n − 1)/n"), "all_gather": (1, "(n − 1)/n"), "reduce_scatter": (1, "(n − 1)/n"),
          "all_to_all": (1, "(n − 1)/n"), "broadcast_to_all": (1, "(n − 1)/n")}
# NCCL's tuning model (NVIDIA/nccl src/graph/tuning.cc at v2.18.5-1, hwLat[NVLINK][RING][LL]): each ring step
# adds 0.6 µs to a small collective over NVLink; its base latency (baseLat, 6.6 µs) is in the measured figure.
RING_STEP = 0.6e-6
MEASURED_STEPS = 14  # the profile's latencies are all-reduces across 8 GPUs: 2 × 7 ring steps
LL_DATA_SHARE = 0.5  # ncclLLFifoLine (src/include/devcomm.h): data1, flag1, data2, flag2, 4 bytes each
NVLS_MIN_GPUS = 5  # NCCL uses NVLink SHARP only above 4 GPUs (ml-engineering's and NCCL issue 1455's sweeps)


def gpus(e: Estimate) -> Value:
    return given("gpus", e.workload.gpus, COUNT)


def size(e: Estimate) -> Value:
    return given("size", e.workload.size, BYTES, note="the buffer")


def wire_share(e: Estimate) -> Value:
    factor, words = _SHARE[e.workload.op]
    n = e.workload.gpus
    return given("wire_share", factor * (n - 1) / n, COUNT, note=f"{e.workload.op}: {words} with n = {n}")


def wire_bytes(e: Estimate) -> Value:
    return product("wire_bytes", e["wire_share"], e["size"], note="sent by each GPU (and received)")


def link_bandwidth(e: Estimate) -> Value:
    both = e.fact(f"{e.workload.link}_bandwidth")
    by_algorithm = f"{e.workload.link}_bandwidth_{e.workload.algorithm}"
    if e.workload.algorithm == "ring" and e.device.fact(by_algorithm) is not None:
        both = e.fact(by_algorithm)
    return quotient("link_bandwidth", both, given("2 directions", 2, COUNT), note="one direction of the link")


def _real(e: Estimate) -> bool:
    """Whether the device carries a profile's rules for real collectives (the catalog's devices do not)."""
    return e.device.fact("collective_simple_cost") is not None


def _nvls(e: Estimate) -> bool:
    """Whether NVLink SHARP may run this collective: an all-reduce over NVLink across more than 4 GPUs, on a
    device whose profile measured it, unless the spec said ring."""
    w = e.workload
    return (_real(e) and w.algorithm != "ring" and w.op == "all_reduce" and w.link == "nvlink"
            and w.gpus >= NVLS_MIN_GPUS and e.device.fact("nvls_bandwidth") is not None)


def transfer_time(e: Estimate) -> Value:
    ring = quotient("ring transfer" if _nvls(e) else "transfer_time", e["wire_bytes"], e["link_bandwidth"])
    if not _nvls(e):
        return ring
    sharp = quotient("NVLS transfer", e["size"], e.fact("nvls_bandwidth"),
                     note="the switch reduces: the buffer at NVLS's measured algorithm bandwidth")
    if e.workload.algorithm == "nvls":
        return renamed("transfer_time", sharp)
    return smallest("transfer_time", ring, sharp, note="auto: the faster of ring and NVLS, as NCCL picks")


def _ring_steps(op: str, n: int) -> int:
    return 2 * (n - 1) if op == "all_reduce" else n - 1


def latency(e: Estimate) -> Value:
    """The fixed cost of one collective: the caller's measured latency, moved to this collective's ring steps."""
    w = e.workload
    return fixed_cost(e, w.op, w.gpus, w.launch == "graph", w.link)


def fixed_cost(e: Estimate, op: str, gpus: int, graph: bool, link: str = "nvlink") -> Value:
    """The latency of one small `op` across `gpus` GPUs, called eagerly or replayed from a CUDA graph: also what
    another kind's rules use (a decode step's tensor-parallel all-reduces). The catalog's collective_latency where
    the device has no profile's collective facts; else the profile's figure for the caller (both measured on an
    all-reduce across 8 GPUs), moved by NCCL's 0.6 µs per ring step over NVLink."""
    graph = graph and e.device.fact("collective_graph_latency") is not None
    measured = e.fact("collective_graph_latency" if graph else "collective_latency")
    steps = _ring_steps(op, gpus)
    if not _real(e) or link != "nvlink" or steps == MEASURED_STEPS:
        return renamed("latency", measured)
    fewer = steps < MEASURED_STEPS
    moved = product("fewer ring steps" if fewer else "more ring steps",
                    given("steps", abs(steps - MEASURED_STEPS), COUNT),
                    given("per step", RING_STEP, TIME, note="NCCL's tuning model, LL over NVLink"))
    number = measured.number + (-moved.number if fewer else moved.number)
    return Value("latency", number, TIME, "{0} − {1}" if fewer else "{0} + {1}", (measured, moved),
                 note=f"measured on an all-reduce across 8 GPUs, {MEASURED_STEPS} ring steps; {op} across {gpus} GPUs "
                      f"takes {steps}")


def time(e: Estimate) -> Value:
    if not _real(e):
        return total("time", e["latency"], e["transfer_time"])
    low = total("LL protocol", e["latency"],
                product("its bytes", e["transfer_time"], given("LL's lines", 1 / LL_DATA_SHARE, COUNT),
                        note="twice the time: each 16-byte line carries 8 bytes of data and two flags"))
    bulk = total("Simple protocol", e["latency"], e.fact("collective_simple_cost"), e["transfer_time"])
    return smallest("time", low, bulk, note="NCCL runs a call with the faster of its protocols")


def algbw(e: Estimate) -> Value:
    return quotient("algbw", e["size"], e["time"])


def busbw(e: Estimate) -> Value:
    return quotient("busbw", e["wire_bytes"], e["time"])


RULES = {
    "gpus": gpus, "size": size, "wire_share": wire_share, "wire_bytes": wire_bytes,
    "link_bandwidth": link_bandwidth, "transfer_time": transfer_time, "latency": latency, "time": time,
    "algbw": algbw, "busbw": busbw,
    "bytes_moved": lambda e: renamed("bytes_moved", e["wire_bytes"]),
    "memory_needed": lambda e: renamed("memory_needed", e["size"]),  # the buffer on each GPU, at the least
}
