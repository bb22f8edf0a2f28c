"""Occupancy and waves: how many blocks each SM holds at once, and how many waves the grid takes."""
from __future__ import annotations

from gpuspec import units
from gpuspec.model.estimate import Estimate, ModelError
from gpuspec.model.values import (
    Value,
    ceil_quotient,
    ceiling,
    choice,
    fact,
    floor_quotient,
    given,
    product,
    quotient,
    smallest,
    total,
)

COUNT = units.COUNT


def threads_per_block(e: Estimate) -> Value:
    threads = e.workload.threads_per_block
    most = e.device.fact("max_threads_per_block")
    if most is not None and threads > most.value:
        raise ModelError(f"{threads} threads per block is more than {e.device.name} allows ({most.value:.0f})")
    return given("threads_per_block", threads, COUNT)


def warps_per_block(e: Estimate) -> Value:
    return ceil_quotient("warps_per_block", e["threads_per_block"], e.fact("warp_size"))


def resident_limits(e: Estimate) -> dict[str, Value]:
    """Blocks per SM allowed by each per-SM resource; only the resources the workload uses count."""
    limits = {
        "threads": floor_quotient("blocks_by_threads", e.fact("max_threads_per_sm"), e["threads_per_block"]),
        "warps": floor_quotient("blocks_by_warps", e.fact("max_warps_per_sm"), e["warps_per_block"]),
        "blocks": e.fact("max_blocks_per_sm"),
    }
    if e.workload.registers_per_thread:
        per_thread = given("registers_per_thread", e.workload.registers_per_thread, COUNT)
        # Registers are allocated per warp, in units of register_allocation_unit.
        per_warp = product("registers_per_warp_needed", per_thread, e.fact("warp_size"))
        units_per_warp = ceil_quotient("allocation_units_per_warp", per_warp, e.fact("register_allocation_unit"))
        allocated = product("registers_per_warp", units_per_warp, e.fact("register_allocation_unit"))
        warps = floor_quotient("warps_by_registers", e.fact("registers_per_sm"), allocated)
        limits["registers"] = floor_quotient("blocks_by_registers", warps, e["warps_per_block"])
    if e.workload.shared_memory_per_block:
        asked = given("shared_memory_per_block", e.workload.shared_memory_per_block, units.BYTES)
        reserved = e.device.fact("shared_memory_reserved_per_block")
        if reserved is not None:
            asked = total("shared_memory_per_block_with_reserve", asked, fact(reserved))
        limits["shared memory"] = floor_quotient("blocks_by_shared_memory", e.fact("shared_memory_per_sm"), asked)
    return limits


def resident_blocks_per_sm(e: Estimate) -> Value:
    limits = resident_limits(e)
    value = smallest("resident_blocks_per_sm", *limits.values())
    if value.number < 1:
        raise ModelError(f"one block of {e.workload.threads_per_block} threads does not fit on an SM of "
                         f"{e.device.name}")
    return value


def residency_limit(e: Estimate) -> Value:
    limits = resident_limits(e)
    least = min(v.number for v in limits.values())
    names = [k for k, v in limits.items() if v.number == least]
    rule = "whichever of " + _listed([f"{{{i}}}" for i in range(len(limits))]) + " allows the fewest blocks"
    return choice("residency_limit", " and ".join(names), rule, tuple(limits.values()))


def _listed(items: list[str]) -> str:
    """`a, b and c`."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def blocks_per_wave(e: Estimate) -> Value:
    return product("blocks_per_wave", e.fact("sms"), e["resident_blocks_per_sm"])


def sms_used(e: Estimate) -> Value:
    """SMs a kernel's grid occupies: one per block until every SM has one (a 64-block grid on a 132-SM H100 uses
    64 of them, whatever each block does)."""
    return smallest("sms_used", e["blocks"], e.fact("sms"), note="blocks up to the SM count")


def waves(e: Estimate) -> Value:
    return quotient("waves", e["blocks"], e["blocks_per_wave"])


def waves_started(e: Estimate) -> Value:
    return ceiling("waves_started", e["waves"])


def last_wave_occupancy(e: Estimate) -> Value:
    whole = e["waves_started"].number - 1
    left = given("blocks_in_last_wave", e["blocks"].number - whole * e["blocks_per_wave"].number, COUNT)
    return quotient("last_wave_occupancy", left, e["blocks_per_wave"], percent=True)


RULES = {
    "threads_per_block": threads_per_block,
    "warps_per_block": warps_per_block,
    "resident_blocks_per_sm": resident_blocks_per_sm,
    "residency_limit": residency_limit,
    "blocks_per_wave": blocks_per_wave,
    "waves": waves,
    "waves_started": waves_started,
    "sms_used": sms_used,
    "last_wave_occupancy": last_wave_occupancy,
}
