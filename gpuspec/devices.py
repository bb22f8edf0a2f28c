"""The device catalog: Device and Fact, loaded from catalog/devices.toml, with aliases and overrides."""
from __future__ import annotations

import functools
import re

from attrs import evolve, field

from gpuspec import units
from gpuspec.record import ValueRecord, record
from gpuspec.resources import catalog_data
from gpuspec.units import (
    BANDWIDTH,
    BYTES,
    COUNT,
    CYCLES,
    FLOP_RATE,
    FREQUENCY,
    POWER,
    TIME,
)

# Every numeric field a device may have: its dimension and what it means.
FIELDS: dict[str, tuple[units.Dimension, str]] = {
    "sms": (COUNT, "streaming multiprocessors"),
    "warp_size": (COUNT, "threads per warp"),
    "max_threads_per_sm": (COUNT, "resident threads per SM, at most"),
    "max_warps_per_sm": (COUNT, "resident warps per SM, at most"),
    "max_blocks_per_sm": (COUNT, "resident blocks per SM, at most"),
    "max_threads_per_block": (COUNT, "threads per block, at most"),
    "registers_per_sm": (COUNT, "32-bit registers per SM"),
    "max_registers_per_thread": (COUNT, "registers per thread, at most"),
    "register_allocation_unit": (COUNT, "registers per warp are allocated in multiples of this"),
    "register_file_per_sm": (BYTES, "register file per SM"),
    "shared_memory_per_sm": (BYTES, "shared memory per SM, at most"),
    "shared_memory_per_block": (BYTES, "shared memory per block, at most (opt-in)"),
    "shared_memory_reserved_per_block": (BYTES, "shared memory the runtime reserves per block"),
    "l1_shared_per_sm": (BYTES, "unified L1 and shared memory per SM"),
    "l2_size": (BYTES, "L2 cache, whole chip"),
    "memory_size": (BYTES, "device memory (HBM or GDDR)"),
    "hbm_bandwidth": (BANDWIDTH, "device memory bandwidth"),
    "boost_clock": (FREQUENCY, "maximum boost clock"),
    "tensor_clock": (FREQUENCY, "the clock the published tensor peaks imply"),
    "fp64": (FLOP_RATE, "peak plain (non-tensor) fp64 rate"),
    "fp32": (FLOP_RATE, "peak plain (non-tensor) fp32 rate"),
    "fp16": (FLOP_RATE, "peak plain (non-tensor) fp16 rate"),
    "bf16": (FLOP_RATE, "peak plain (non-tensor) bf16 rate"),
    "tensor_fp64": (FLOP_RATE, "peak dense fp64 tensor-core rate"),
    "tensor_tf32": (FLOP_RATE, "peak dense tf32 tensor-core rate"),
    "tensor_fp16": (FLOP_RATE, "peak dense fp16 tensor-core rate"),
    "tensor_bf16": (FLOP_RATE, "peak dense bf16 tensor-core rate"),
    "tensor_fp8": (FLOP_RATE, "peak dense fp8 tensor-core rate"),
    "tensor_int8": (FLOP_RATE, "peak dense int8 tensor-core rate (OP/s)"),
    "register_latency": (CYCLES, "register access latency"),
    "shared_memory_latency": (CYCLES, "shared memory load latency"),
    "l1_latency": (CYCLES, "L1 hit latency"),
    "l2_latency": (CYCLES, "L2 hit latency"),
    "hbm_latency": (CYCLES, "device memory latency"),
    "nvlink_bandwidth": (BANDWIDTH, "NVLink bandwidth per GPU"),
    "pcie_bandwidth": (BANDWIDTH, "PCIe bandwidth"),
    "tdp": (POWER, "board power"),
    "launch_cost": (TIME, "host time to launch one kernel from eager PyTorch"),
    "cpp_launch_cost": (TIME, "host time to launch one kernel from a C++ loop of cudaLaunchKernel"),
    "nvlink_bandwidth_ring": (BANDWIDTH, "NVLink bandwidth NCCL's ring reaches (measured, in profiles)"),
    "nvlink_bandwidth_nvls": (BANDWIDTH, "NVLink bandwidth NCCL's NVLS reaches (measured, in profiles)"),
    "model_op_cost": (TIME, "host time per kernel of an LLM's model code run eagerly (measured, in profiles)"),
    "kernel_floor": (TIME, "shortest GPU time of any kernel"),
    "graph_launch_cost": (TIME, "host time to launch one CUDA graph"),
    "graph_node_cost": (TIME, "GPU time added per kernel node in a CUDA graph"),
    "utilization_window": (TIME, "the sample period of nvidia-smi's GPU utilization"),
    "collective_latency": (TIME, "the fixed cost of one collective between GPUs, whatever its size"),
    "gemm_fixed_cost": (TIME, "time a GEMM kernel timed alone takes beyond its math (measured, in profiles)"),
    "exp_rate": (FLOP_RATE, "exponentials per second of the special-function units (in profiles)"),
    "decode_bandwidth": (BANDWIDTH, "bandwidth a batch-1 decode's weight reads reach (measured, in profiles)"),
    "decode_bandwidth_int8": (BANDWIDTH, "the same with int8 weight-only quantized weights (in profiles)"),
    "decode_bandwidth_fp8": (BANDWIDTH, "the same with fp8 weight-only quantized weights (in profiles)"),
}
_TEXT_FIELDS = ("title", "architecture", "compute_capability", "memory_type")

_NUMBER = r"[0-9][0-9,]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_VALUE = re.compile(rf"^\s*({_NUMBER})(?:\s*\.\.\s*({_NUMBER}))?\s*(\S+)?\s*$")


@record
class Fact(ValueRecord):
    """One number about a device, in SI base units, with where it was published.

    A measured latency is a range: low < high; for a single number low == high.
    """

    name: str
    low: float
    high: float
    dimension: units.Dimension
    written: str
    reference: str | None = None
    note: str | None = None

    @property
    def value(self) -> float:
        return self.low if self.low == self.high else (self.low + self.high) / 2

    @property
    def is_range(self) -> bool:
        return self.low != self.high


@record
class Device(ValueRecord):
    """A GPU: its catalog name, descriptive text fields and numeric facts."""

    name: str
    title: str
    facts: dict[str, Fact] = field(hash=False, eq=False, repr=False)
    text: dict[str, str] = field(factory=dict, hash=False, eq=False, repr=False)
    aliases: tuple[str, ...] = ()
    overridden: tuple[str, ...] = ()  # fields a spec changed, which makes this a different device

    def fact(self, name: str) -> Fact | None:
        return self.facts.get(name)

    def with_facts(self, name: str, facts: dict[str, Fact]) -> "Device":
        """A copy with some facts replaced (an override in a spec) under a new name."""
        merged = dict(self.facts)
        merged.update(facts)
        return evolve(self, name=name, facts=merged, overridden=tuple(sorted({*self.overridden, *facts})))


class CatalogError(ValueError):
    """The catalog file itself is malformed (a bug in gpuspec's data, not in a spec)."""


def parse_fact(name: str, written: str, reference: str | None = None, note: str | None = None,
               fields: dict | None = None) -> Fact:
    """A Fact from text such as `3.35 TB/s` or `200..300 cycles`; ValueError if it is not one.

    fields gives each known name's dimension (the device fields unless given).
    """
    match = _VALUE.match(written)
    if not match:
        raise ValueError(f"`{written}` is not a number with a unit")
    low_text, high_text, unit_text = match.groups()
    unit = units.parse_unit(unit_text) if unit_text else units.Unit("", 1.0, COUNT)
    low = float(low_text.replace(",", "")) * unit.scale
    high = float(high_text.replace(",", "")) * unit.scale if high_text else low
    fields = FIELDS if fields is None else fields
    expected = fields[name][0] if name in fields else unit.dimension
    if unit.dimension != expected:
        raise ValueError(f"`{written}` is in {units.si_symbol(unit.dimension) or 'plain numbers'}, "
                         f"but {name} is in {units.si_symbol(expected) or 'plain numbers'}")
    return Fact(name, low, high, expected, written, reference, note)


@functools.lru_cache(maxsize=1)
def catalog() -> dict[str, Device]:
    """Every device of the catalog, by its canonical name."""
    data = catalog_data("devices")
    references = data.get("references", {})
    defaults = facts_of(data.get("defaults", {}), references, "defaults")
    devices = {}
    for key, entry in data.get("devices", {}).items():
        facts = dict(defaults)
        facts.update(facts_of(entry, references, key))
        text = {k: str(entry[k]) for k in _TEXT_FIELDS if k in entry}
        devices[key] = Device(key, entry.get("title", key), facts, text, tuple(entry.get("aliases", ())))
    return devices


def references() -> dict[str, str]:
    """Source key -> title and address of every reference the catalog cites."""
    return dict(catalog_data("devices").get("references", {}))


def facts_of(entry: dict, references: dict, where: str, fields: dict | None = None) -> dict[str, Fact]:
    """The numeric facts of one catalog entry; CatalogError if one is malformed or cites an unknown source."""
    fields = FIELDS if fields is None else fields
    facts = {}
    for name, spec in entry.items():
        if name not in fields:
            continue
        if not isinstance(spec, dict) or "value" not in spec:
            raise CatalogError(f"{where}.{name}: expected {{ value = ..., ref = ... }}")
        ref = spec.get("ref")
        if ref is not None and ref not in references:
            raise CatalogError(f"{where}.{name}: reference {ref} is not in [references]")
        try:
            facts[name] = parse_fact(name, str(spec["value"]), ref, spec.get("note"), fields)
        except (ValueError, units.UnknownUnit) as error:
            raise CatalogError(f"{where}.{name}: {error}") from None
    return facts


@functools.lru_cache(maxsize=1)
def _names() -> dict[str, str]:
    names = {}
    for key, device in catalog().items():
        for alias in (key, *device.aliases):
            names[alias.lower()] = key
    return names


def lookup(name: str) -> Device | None:
    """The catalog device called `name` or one of its aliases, ignoring case; None if there is none."""
    key = _names().get(name.lower())
    return catalog()[key] if key else None


def known_names() -> list[str]:
    return sorted({*catalog(), *(a for d in catalog().values() for a in d.aliases)})


def blank(name: str) -> Device:
    """A device with no facts, for a spec that defines its own from scratch."""
    return Device(name, name, {}, {})
