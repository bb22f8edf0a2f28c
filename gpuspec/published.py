"""Published profiles: a calibration profile per catalog device, built from the public measurements in
catalog/published.toml, every number with the entries it came from, their conditions and the arithmetic.

Rules (one per fact; "own" entries are about the device itself, "sibling" entries name it in `stands_for`):
- hbm_bandwidth: the median of the own streaming kernels that read and write (copy, scale, add, triad, row-wise);
  read-only and store-only kernels are left out (RRZE's read kernel is occupancy-limited on Hopper, init only
  writes), and so is a kernel whose data stays in L2. Without own entries, a sibling's median as the same share of
  its datasheet bandwidth.
- tensor_<dtype>: the median of the own large-GEMM rates of that dtype (MAMF, cuBLAS 8192³ and up); else a
  sibling's, as the same share of its peak; else the device's bf16 share applied to the dtype's peak.
- gemm_fixed_cost: the time a GEMM kernel timed alone takes beyond its math at the achievable rate (launch latency,
  prologue, pipeline fill, epilogue): the median over the size sweeps (`gemm_efficiency_at`) of
  observed time − FLOPs / achievable rate, over the sweep points whose math takes under 50 µs (above that the
  difference is noise in the rate).
- decode_bandwidth: the median of the own batch-1 compiled decode steps' weight bytes / step time (what a decode's
  weight-streaming kernels reach, well under a copy's bandwidth); else a sibling's or the nearest's share of HBM.
  decode_bandwidth_int8, _fp8: the same for weight-only quantized weights (their kernels dequantize as they read).
- kernel_floor: the GPU-side cost of a small kernel run back to back with others (`kernel_gap`).
  graph_node_cost: what a graph node adds beyond that: 0, since the back-to-back gap was measured inside a graph.
- model_op_cost: the host time per kernel of an LLM's model code run eagerly (host-bound eager decode runs).
- launch_cost: the host cost of one eager PyTorch op; cpp_launch_cost: of one launch from a C++ loop (the
  device's own measurements first, then those standing for it).
- nvlink_bandwidth / pcie_bandwidth: the link's line rate times the median bus efficiency (busbw / line rate) of
  the large collectives measured over it, so that the model's ring time is NCCL's.
- exp_rate: no measurement exists; the programming guide's 16 exponentials per clock per SM at the boost clock.
  nvlink_bandwidth_ring and _nvls: the same over the runs of one NCCL algorithm (`set nccl_algorithm = ...`).
- collective_latency: the time of the smallest all-reduce measured (32 KiB), which its bandwidth term barely moves.
Where neither the device nor a sibling has an entry, the nearest sibling in `NEAREST` stands in, as a share of its
datasheet figure, and the derivation says so; where that has nothing either, the fact is left to the catalog.

`build(device, exclude=origins)` leaves whole sources out: the accuracy benchmark's leave-one-origin-out profiles.
"""
from __future__ import annotations

import math
import statistics
from functools import cache

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
    "L40S": ("H100-PCIe", "no Ada data-center part has a measured GEMM rate; the PCIe Hopper card is the nearest "
             "measured PCIe part"),
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
}
# sm_90 (XLA's table) is every Hopper SXM part: its peaks are H100-SXM's.
ALSO = {"sm_90": "H100-SXM"}

EXP_PER_CLOCK_PER_SM = 16  # CUDA C++ Programming Guide, throughput of exp2f (MUFU) per SM and clock
DECODE_FACTS = ("decode_bandwidth", "decode_bandwidth_int8", "decode_bandwidth_fp8")
STREAM_KERNELS = ("copy", "scale", "add", "triad", "rowwise")
TENSOR_DTYPES = ("bf16", "fp16", "fp8", "tf32", "int8")
LARGE_GEMM_MATH = 50e-6  # sweep points whose math takes longer say little about the fixed cost
RESOLUTION = 1e-9  # the smallest time a published profile writes (a profile's times are positive)
UNITS = {"GB/s": 1e9, "TB/s": 1e12, "TFLOP/s": 1e12, "µs": 1e-6, "MiB": 2**20, "MHz": 1e6}


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
        found.append(Measurement(entry))
    return tuple(found)


def origins() -> list[str]:
    return sorted({m.origin for m in measurements()})


class _Builder:
    def __init__(self, device: str, exclude: frozenset[str]):
        self.name, self.exclude = device, exclude
        self.device = devices.catalog()[device]
        self.pool = [m for m in measurements() if m.origin not in exclude]

    def chain(self):
        """(device, why) to look in: this device, then its nearest, that one's nearest, ... (no device twice)."""
        yield self.name, None
        seen, name, reasons = {self.name}, self.name, []
        while name in NEAREST and NEAREST[name][0] not in seen:
            name, why = NEAREST[name]
            reasons.append(why)
            seen.add(name)
            yield name, "; then ".join(reasons)

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
        out = {}
        bw = self.share("hbm_bandwidth", lambda m: m.get("kernel") in STREAM_KERNELS)
        if bw:
            out["hbm_bandwidth"] = bw
        for fact in DECODE_FACTS:
            decode = self.share(fact, peak_fact="hbm_bandwidth")
            if decode:
                out[fact] = decode
        for dtype in TENSOR_DTYPES:
            fact = f"tensor_{dtype}"
            if self.peak(fact) is None:
                continue
            found = self.share(fact)
            if found is None and "tensor_bf16" in out and fact != "tensor_bf16":
                share = out["tensor_bf16"][0] / self.peak("tensor_bf16")
                value = share * self.peak(fact)
                found = value, {"value": _show(value, fact), "how": f"no {dtype} GEMM measured: the bf16 share "
                                f"({share:.1%}) times the {dtype} peak {_show(self.peak(fact), fact)}",
                                "measurements": [], "origins": out["tensor_bf16"][1]["origins"]}
            if found:
                out[fact] = found
        exp = self.exp_rate()
        if exp:
            out["exp_rate"] = exp
        fixed = self.gemm_fixed_cost(out)
        if fixed:
            out["gemm_fixed_cost"] = fixed
        gap = self.nearest_value("kernel_gap")
        if gap:
            out["kernel_floor"] = gap
            out["graph_node_cost"] = RESOLUTION, {"value": "1 ns", "how": "the back-to-back cost (kernel_floor) "
                                                  "was measured as the time per node of a CUDA graph: a node adds "
                                                  "nothing the benchmark resolves (written as 1 ns: a profile's "
                                                  "times are positive)",
                                           "measurements": [], "origins": gap[1]["origins"]}
        op = self.nearest_value("model_op_cost")
        if op:
            out["model_op_cost"] = op
        cpp = self.nearest_value("cpp_launch_cost")
        if cpp:
            out["cpp_launch_cost"] = cpp
        eager = self.nearest_value("launch_cost")
        if eager:
            out["launch_cost"] = eager
        latency = self.nearest_value("collective_latency")
        if latency:
            out["collective_latency"] = latency
        for link in ("nvlink", "pcie"):
            found = self.link(link)
            if found:
                out[f"{link}_bandwidth"] = found
        for algorithm in ("ring", "nvls"):
            found = self.link("nvlink", algorithm)
            if found:
                out[f"nvlink_bandwidth_{algorithm}"] = found
        return out

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

    def rate(self, fact: str) -> float:
        found = self.share(fact)
        return found[0] if found else self.peak(fact)

    def nearest_value(self, fact: str):
        """A per-kernel or per-call cost: the device's own median, else one standing for it, else the nearest's."""
        for who, why in self.chain():
            chosen = ([m for m in self.pool if m.fact == fact and m.device == who]
                      or [m for m in self.pool if m.fact == fact and who in m.stands_for])  # its own first
            if chosen:
                value = statistics.median(m.value for m in chosen)
                where = (f"the median of {len(chosen)} measurement(s) on {self.name} or standing for it" if why is None
                         else f"no measurement on {self.name}; {who}'s ({why}), taken as it is")
                return value, self._derived(fact, value, chosen, where)
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
            for fact, keep in (("hbm_bandwidth", lambda m: m.get("kernel") in STREAM_KERNELS),
                               ("tensor_bf16", lambda m: True)):
                found = self.share(fact, keep)
                if found:
                    out[fact] = found
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
    """The published profile of a catalog device as the JSON a profile file holds (checked by schema.PROFILE)."""
    if devices.catalog()[device].model_only:
        raise ProfileError(f"{device} has no published profile: it is model-only "
                           f"({devices.catalog()[device].model_only}), and no published measurement is of one")
    built = _Builder(device, frozenset(exclude)).facts()
    profile = {"version": VERSION, "gpu": devices.catalog()[device].title,
               "provenance": {"device": device, "source": "published measurements (gpuspec/catalog/published.toml)",
                              "excluded_origins": ", ".join(sorted(exclude)) or None},
               "facts": {name: value for name, (value, _) in built.items()},
               "derivations": {name: how for name, (_, how) in built.items()}}
    schema.PROFILE.check(profile, "")
    return profile


@cache
def _cached(device: str, exclude: frozenset[str]) -> Profile:
    built = data(device, exclude)
    label = f"published profile of {device}" + (f" without {', '.join(sorted(exclude))}" if exclude else "")
    return Profile(built["gpu"], built["facts"], built["provenance"], label, built["derivations"])


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
    if args.device not in measurable() or unknown:
        what = f"origin {unknown[0]!r}" if unknown else f"device {args.device!r}"
        parser.error(f"no {what} in the published measurements")
    sys.stdout.buffer.write(json_bytes(data(args.device, tuple(args.exclude))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
