"""The device catalog: Device and Fact, loaded from catalog/devices.toml, with aliases and overrides; which catalog
entry a GPU is, by the name its driver reports; and the device `check --device` rebinds specs to."""
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
    PER_SECOND,
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
    "l2_bandwidth": (BANDWIDTH, "L2 read bandwidth, whole chip (a datasheet figure is a ceiling, its note says; a "
                                "profile's is measured: a kernel whose data stays in L2)"),
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
    "arithmetic_latency": (CYCLES, "cycles before a dependent arithmetic instruction can issue (FMA pipeline)"),
    "shared_memory_latency": (CYCLES, "shared memory load latency"),
    "l1_latency": (CYCLES, "L1 hit latency"),
    "l2_latency": (CYCLES, "L2 hit latency"),
    "hbm_latency": (CYCLES, "device memory latency"),
    "nvlink_bandwidth": (BANDWIDTH, "NVLink bandwidth per GPU"),
    "pcie_bandwidth": (BANDWIDTH, "PCIe bandwidth"),
    "ici_bandwidth": (BANDWIDTH, "inter-chip interconnect per link, both directions (TPUs; no collective uses it yet)"),
    "tdp": (POWER, "board power"),
    "launch_cost": (TIME, "host time to launch one kernel from eager PyTorch"),
    "cpp_launch_cost": (TIME, "host time to launch one kernel from a C++ loop of cudaLaunchKernel"),
    "nvlink_bandwidth_ring": (BANDWIDTH, "NVLink bandwidth NCCL's ring reaches (measured, in profiles)"),
    "nvls_bandwidth": (BANDWIDTH, "algorithm bandwidth of an NVLink SHARP all-reduce, any GPU count above 4 "
                       "(measured, in profiles)"),
    "model_op_cost": (TIME, "host time per op an LLM's model code dispatches when run eagerly (measured, in profiles)"),
    "kernel_floor": (TIME, "shortest GPU time of any kernel"),
    "kernel_gap": (TIME, "GPU time a kernel run back to back with others costs beyond its work (in profiles)"),
    "stream_launch_gap": (TIME, "GPU time a kernel launched from a stream costs beyond one in a CUDA graph "
                                "(in profiles)"),
    "l2_usable": (BYTES, "the largest working set that stays in L2 at its bandwidth (measured, in profiles)"),
    "lone_kernel_latency": (TIME, "time of a tiny kernel timed alone after an L2 flush, between CUDA events "
                                  "(in profiles)"),
    "graph_launch_cost": (TIME, "host time to launch one CUDA graph"),
    "graph_node_cost": (TIME, "GPU time added per kernel node in a CUDA graph"),
    "utilization_window": (TIME, "the sample period of nvidia-smi's GPU utilization"),
    "collective_latency": (TIME, "the fixed cost of one collective between GPUs, whatever its size"),
    "collective_graph_latency": (TIME, "the same for a collective replayed from a CUDA graph (in profiles)"),
    "collective_simple_cost": (TIME, "what NCCL's full-bandwidth protocol adds to a large collective's latency "
                               "(measured, in profiles)"),
    "tp_allreduce_latency": (TIME, "an LLM engine's one-shot all-reduce of a decode step's activations (in profiles)"),
    "gemm_fixed_cost": (TIME, "time a GEMM kernel timed alone takes beyond its math (measured, in profiles)"),
    "exp_rate": (PER_SECOND, "exponentials per second of the special-function units (in profiles)"),
    "decode_bandwidth": (BANDWIDTH, "bandwidth a batch-1 decode's weight reads reach (measured, in profiles)"),
    "decode_bandwidth_int8": (BANDWIDTH, "the same with int8 weight-only quantized weights (in profiles)"),
    "decode_bandwidth_fp8": (BANDWIDTH, "the same with fp8 weight-only quantized weights (in profiles)"),
    # a fused attention implementation's share of the tiled kernel's rate, and the key blocks' worth of time each
    # tile adds (measured, in profiles; gpuspec/kinds/attention/rules.py)
    **{f"attention_share_{name}": (COUNT, f"share of the tiled attention rate {name} reaches (measured, in profiles)")
       for name in ("flash2", "flash3", "cudnn", "triton")},
    **{f"attention_tile_overhead_{name}": (COUNT, f"key blocks' worth of time each {name} tile adds (measured, in "
                                                  "profiles)") for name in ("flash2", "flash3", "cudnn", "triton")},
    "decode_kernel_cost": (TIME, "GPU time a decode step's streaming kernel takes beyond its bytes (measured, in "
                                 "profiles)"),
    "decode_kernel_cost_int8": (TIME, "the same for int8 weight-only quantized kernels (in profiles)"),
    "decode_kernel_cost_fp8": (TIME, "the same for fp8 weight-only quantized kernels (in profiles)"),
    "decode_kernel_cost_int4": (TIME, "the same for int4 weight-only quantized kernels (in profiles)"),
}
_TEXT_FIELDS = ("title", "vendor", "architecture", "compute_capability", "memory_type")
# What a published figure that is not the catalog's says about it (`[[devices.X.figures]]`): it is the kind of slip
# a claim that matches it is diagnosed as.
FIGURE_KINDS = {
    "announced": "announced before the final datasheet",
    "other-part": "the figure of another part",
    "driver": "what the driver reports",
    "full-die": "the full die's, not this part's",
    "third-party": "what third-party spec tables list",
    "marketed": "the marketed figure",
}

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
class Figure(ValueRecord):
    """Another published figure for a device fact, and why it is not the catalog's (an announcement revised by the
    final datasheet, another part's figure, what a driver reports): sourced data a failing claim is compared with."""

    fact: str
    value: float
    written: str
    kind: str  # a key of FIGURE_KINDS
    what: str  # in words, written to follow "the claim matches ..."
    reference: str | None = None


@record
class Device(ValueRecord):
    """A GPU: its catalog name, descriptive text fields and numeric facts."""

    name: str
    title: str
    facts: dict[str, Fact] = field(hash=False, eq=False, repr=False)
    text: dict[str, str] = field(factory=dict, hash=False, eq=False, repr=False)
    aliases: tuple[str, ...] = ()
    overridden: tuple[str, ...] = ()  # fields a spec changed, which makes this a different device
    # The catalog device whose measurements and profiles stand for this one: set when `check --device` rebinds a
    # device a spec derived from another (`device mine from H100-SXM with ...` becomes mine from the GPU at hand).
    stands_for: str | None = None
    cuda_names: tuple[str, ...] = field(default=(), hash=False, eq=False, repr=False)  # as the driver names it
    # Why gpuspec can model this device but not measure it (a GPU whose harnesses would need ROCm, a TPU); None
    # for a GPU the harnesses run on. A device derived from it is model-only too.
    model_only: str | None = field(default=None, hash=False, eq=False, repr=False)
    figures: tuple[Figure, ...] = field(default=(), hash=False, eq=False, repr=False)
    # Facts the part does not have at all, each with why (`nvlink_bandwidth`: the L40S has no NVLink).
    absent: dict[str, str] = field(factory=dict, hash=False, eq=False, repr=False)

    def fact(self, name: str) -> Fact | None:
        return self.facts.get(name)

    def missing(self, name: str) -> str:
        """Why the device has no `name`, and what to write: the message of a claim that needs it."""
        why = self.absent.get(name)
        if why is not None and name not in self.facts:
            return f"device {self.name} has no `{name}`: {why}"
        return f"device {self.name} has no `{name}`; set it with `device {self.name} with {name} = ...`"

    @property
    def hardware(self) -> str:
        """The name of the GPU a measurement or profile must come from to be this device's: its catalog name (a
        profile's `H200 (calibrated)` is the H200), or the one a rebound derived device stands for."""
        return self.stands_for or self.name.split(" ")[0]

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
        # The defaults are NVIDIA figures (CUDA's warp, NVML's sample period, PyTorch's launch cost on CUDA): other
        # vendors' parts have only the facts their entries cite.
        facts = dict(defaults) if entry.get("vendor", "NVIDIA") == "NVIDIA" else {}
        facts.update(facts_of(entry, references, key))
        text = {k: str(entry[k]) for k in _TEXT_FIELDS if k in entry}
        devices[key] = Device(key, entry.get("title", key), facts, text, tuple(entry.get("aliases", ())),
                              cuda_names=tuple(entry.get("cuda_names", ())), model_only=entry.get("model_only"),
                              figures=figures_of(entry.get("figures", []), facts, references, key),
                              absent=absent_of(entry.get("absent", {}), references, key))
    return devices


def figures_of(entries: list, facts: dict[str, Fact], references: dict, where: str) -> tuple[Figure, ...]:
    """The other published figures of a catalog entry; CatalogError if one is malformed."""
    found = []
    for number, entry in enumerate(entries, 1):
        place = f"{where}.figures[{number}]"
        if not isinstance(entry, dict) or not {"fact", "value", "kind", "what", "ref"} <= set(entry):
            raise CatalogError(f"{place}: expected {{ fact, value, kind, what, ref }}")
        name, kind, ref = entry["fact"], entry["kind"], entry["ref"]
        if name not in FIELDS:
            raise CatalogError(f"{place}: devices have no field `{name}`")
        if kind not in FIGURE_KINDS:
            raise CatalogError(f"{place}: kind `{kind}` is not one of {', '.join(FIGURE_KINDS)}")
        if ref not in references:
            raise CatalogError(f"{place}: reference {ref} is not in [references]")
        if name not in facts:
            raise CatalogError(f"{place}: {where} has no `{name}` for this figure to differ from")
        try:
            parsed = parse_fact(name, str(entry["value"]))
        except (ValueError, units.UnknownUnit) as error:
            raise CatalogError(f"{place}: {error}") from None
        if parsed.is_range or parsed.value == facts[name].value:
            raise CatalogError(f"{place}: a figure is one number that differs from the catalog's")
        found.append(Figure(name, parsed.value, parsed.written, kind, str(entry["what"]), ref))
    return tuple(found)


def absent_of(entry: dict, references: dict, where: str) -> dict[str, str]:
    """Facts a part does not have: name -> why (its reference appended)."""
    found = {}
    for name, spec in entry.items():
        if name not in FIELDS or not isinstance(spec, dict) or "why" not in spec or spec.get("ref") not in references:
            raise CatalogError(f"{where}.absent.{name}: expected a device field with {{ why = ..., ref = ... }}")
        found[name] = f"{spec['why']} [{spec['ref']}]"
    return found


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


def published_name(device: Device) -> str | None:
    """The catalog device whose published profile (gpuspec.published) describes `device`, as the calibrated source
    finds it: the device's own catalog name, which a device with some facts changed in a spec keeps (`H100-SXM with
    launch_cost = 5 µs`); None for a model-only part and for a device a spec named anew."""
    name = device.name.split(" ")[0]
    return name if device.model_only is None and name in catalog() else None


def known_names() -> list[str]:
    return sorted({*catalog(), *(a for d in catalog().values() for a in d.aliases)})


def blank(name: str) -> Device:
    """A device with no facts, for a spec that defines its own from scratch."""
    return Device(name, name, {}, {})


# --- The GPU at hand ------------------------------------------------------------------------------------------------

def _words(gpu: str) -> tuple[str, ...]:
    """A driver's GPU name as words: upper case, with dashes, underscores and runs of spaces as one separator, and
    the vendor's leading NVIDIA dropped ("NVIDIA A100-SXM4-80GB" and "nvidia a100 sxm4 80gb" are one name)."""
    words = tuple(re.sub(r"[\s_\-]+", " ", gpu.upper()).split())
    return words[1:] if words[:1] == ("NVIDIA",) else words


@functools.lru_cache(maxsize=1)
def _by_cuda_name() -> dict[tuple[str, ...], str]:
    return {_words(cuda): key for key, device in catalog().items() for cuda in device.cuda_names}


def for_gpu(gpu: str | None) -> Device | None:
    """The catalog device a GPU is, from the name its driver reports (torch.cuda.get_device_name, nvidia-smi), or
    None when the catalog has no entry for exactly that part.

    Only the names the catalog lists for an entry (`cuda_names`) match, whole: a name that merely contains one is
    another part ("NVIDIA GH200 480GB" is not an H200, "NVIDIA H200 NVL" is the PCIe card with other clocks and
    power, a "MIG 1g.18gb" slice has a fraction of the SMs, an "RTX 4090 D" fewer SMs than the 4090)."""
    if not gpu or len(gpu) > _LONGEST_GPU_NAME:
        return None
    key = _by_cuda_name().get(_words(gpu))
    return catalog()[key] if key else None


_LONGEST_GPU_NAME = 200  # drivers name a GPU in under 100 characters; longer text is no GPU's name


class NoSuchDevice(ValueError):
    """A device `check --device` cannot rebind to: what is wrong, and what would be right."""

    def __init__(self, message: str, help: str | None = None, code: str = "unknown-device"):
        super().__init__(message)
        self.message, self.help, self.code = message, help, code


def rebinding_target(asked: str) -> Device:
    """The catalog device `check --device NAME` names: a catalog name or alias (any case), or a GPU's name as its
    driver reports it ("NVIDIA H200"). NoSuchDevice, with the close names, when there is none."""
    from gpuspec.diagnostics import did_you_mean
    from gpuspec.text import escaped

    if not asked.strip():
        raise NoSuchDevice("--device needs a device name", "name a catalog device (`gpuspec devices` lists them), "
                           "or write `--device auto` for the GPU that --measure runs on")
    found = lookup(asked) or for_gpu(asked)
    if found is not None:
        return found
    shown = escaped(asked if len(asked) <= 80 else f"{asked[:80]}… ({len(asked):,} characters)")
    hint = did_you_mean(asked, known_names()) if len(asked) <= _LONGEST_GPU_NAME else None
    raise NoSuchDevice(f"--device: unknown device `{shown}`",
                       f"{hint + ' ' if hint else ''}`gpuspec devices` lists the catalog; `--device auto` takes the "
                       "GPU that --measure runs on")


def found_gpu(names: list[str]) -> Device:
    """The catalog device of the GPU found (`check --device auto`), from the names the driver gives each GPU the
    harnesses may run on. NoSuchDevice when there is none, when they are different parts, or when the catalog has
    no entry for this one (the closest names are in its help)."""
    from gpuspec.diagnostics import did_you_mean
    from gpuspec.text import escaped

    if not names:
        raise NoSuchDevice("--device auto: no GPU was found to rebind the specs to",
                           "measure on a machine with a CUDA GPU, or name the device: --device H100-SXM", "no-gpu")
    kinds = sorted({_words(name) for name in names})
    if len(kinds) > 1:
        shown = ", ".join(f"`{escaped(name)}`" for name in dict.fromkeys(names))
        raise NoSuchDevice(f"--device auto: the GPUs found are different parts ({shown})",
                           "keep one kind visible (CUDA_VISIBLE_DEVICES) or name the device with --device NAME",
                           "different-gpus")
    gpu = names[0]
    found = for_gpu(gpu)
    if found is not None:
        return found
    shown = escaped(gpu if len(gpu) <= 80 else f"{gpu[:80]}… ({len(gpu):,} characters)")
    close = did_you_mean(gpu, [c for d in catalog().values() for c in d.cuda_names]) \
        if len(gpu) <= _LONGEST_GPU_NAME else None
    nearest = ""
    if close:
        names_of = {c.lower(): d.name for d in catalog().values() for c in d.cuda_names}
        picked = re.findall(r"`([^`]*)`", close)
        nearest = "the catalog's nearest: " + ", ".join(f"{names_of[p.lower()]} (its driver calls it `{p}`)"
                                                         for p in picked) + "; "
    raise NoSuchDevice(f"--device auto: the GPU found, `{shown}`, is no catalog device",
                       f"{nearest}if one of them is close enough, name it with --device NAME; `gpuspec devices` "
                       "lists the catalog", "unknown-gpu")
