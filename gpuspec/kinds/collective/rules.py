"""The collectives model: ring all-reduce, all-gather, reduce-scatter, all-to-all and broadcast over NVLink or PCIe.

Rules (the usual ring algorithms):
- Each GPU sends (and at the same time receives) over its link: all_reduce 2(n−1)/n of the buffer, all_gather
  and reduce_scatter and all_to_all (n−1)/n, broadcast_to_all (n−1)/n.
- The catalog's link bandwidths count both directions together, so a ring moves data at half of it each way.
  A profile's link bandwidth is the line rate times NCCL's measured bus efficiency; where it gives one per
  algorithm (`set nccl_algorithm = ring` or `nvls`), that one. NVLS reduces in the switch, so its effective
  bandwidth can exceed the line rate.
- time = the device's collective latency (a fixed cost per collective, from the catalog) + bytes each GPU sends /
  the link's bandwidth in one direction. algbw = buffer / time; busbw = what each link carries per second, the
  figure NCCL's tests report (for large buffers it does not depend on n for a ring).
"""
from __future__ import annotations

from gpuspec import units
from gpuspec.model.estimate import Estimate
from gpuspec.model.values import Value, given, product, quotient, renamed, total

COUNT, BYTES = units.COUNT, units.BYTES
_SHARE = {"all_reduce": (2, "2(n − 1)/n"), "all_gather": (1, "(n − 1)/n"), "reduce_scatter": (1, "(n − 1)/n"),
          "all_to_all": (1, "(n − 1)/n"), "broadcast_to_all": (1, "(n − 1)/n")}


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
    if e.workload.algorithm != "auto" and e.device.fact(by_algorithm) is not None:
        both = e.fact(by_algorithm)
    return quotient("link_bandwidth", both, given("2 directions", 2, COUNT), note="one direction of the link")


def transfer_time(e: Estimate) -> Value:
    return quotient("transfer_time", e["wire_bytes"], e["link_bandwidth"])


def time(e: Estimate) -> Value:
    return total("time", e.fact("collective_latency"), e["transfer_time"])


def algbw(e: Estimate) -> Value:
    return quotient("algbw", e["size"], e["time"])


def busbw(e: Estimate) -> Value:
    return quotient("busbw", e["wire_bytes"], e["time"])


RULES = {
    "gpus": gpus, "size": size, "wire_share": wire_share, "wire_bytes": wire_bytes,
    "link_bandwidth": link_bandwidth, "transfer_time": transfer_time, "time": time, "algbw": algbw, "busbw": busbw,
    "bytes_moved": lambda e: renamed("bytes_moved", e["wire_bytes"]),
}
