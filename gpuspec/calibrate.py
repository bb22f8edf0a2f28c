"""Profiles: a device's ceilings as measured (copy bandwidth, launch costs, matmul rate), saved as JSON and applied
to the model as the `calibrated` source."""
from __future__ import annotations

import json
from pathlib import Path

from gpuspec import devices
from gpuspec.devices import Device, Fact
from gpuspec.files import read_json, write_atomically

VERSION = 1
# What a profile measures, and the device fact each one replaces.
FACTS = ("hbm_bandwidth", "launch_cost", "graph_launch_cost", "graph_node_cost", "kernel_floor", "tensor_bf16",
         "l2_latency", "hbm_latency")


class ProfileError(ValueError):
    """A profile file that is not what `gpuspec calibrate` writes."""


class Profile:
    """Measured ceilings of one GPU, with the provenance of the run that measured them."""

    def __init__(self, gpu: str, facts: dict[str, float], provenance: dict, path: str = ""):
        self.gpu, self.facts, self.provenance, self.path = gpu, facts, provenance, path

    def device_name(self) -> str | None:
        """The catalog device this profile was measured on, if the GPU's name says which."""
        return device_for_gpu(self.gpu)

    def apply(self, device: Device) -> Device:
        """`device` with its ceilings replaced by the measured ones."""
        facts = {}
        for name, value in self.facts.items():
            dimension = devices.FIELDS[name][0]
            facts[name] = Fact(name, value, value, dimension, f"{value:g}", note=f"measured: {self.path or 'profile'}")
        return device.with_facts(f"{device.name} (calibrated)", facts)


def device_for_gpu(gpu: str | None) -> str | None:
    """The catalog name of a GPU as CUDA names it ("NVIDIA H100 80GB HBM3" -> H100-SXM), or None.

    The longest catalog name or alias found in the GPU's name wins, ignoring case, spaces and dashes.
    """
    if not gpu:
        return None
    squeezed, words = _squeeze(gpu), {_squeeze(w) for w in gpu.split()}
    best, length = None, 0
    for device in devices.catalog().values():
        for name in (device.name, *device.aliases):
            key = _squeeze(name)
            found = key in words or (len(key) > 3 and key in squeezed)  # short names only as whole words
            if found and len(key) > length:
                best, length = device.name, len(key)
    return best


def _squeeze(name: str) -> str:
    return "".join(c for c in name.upper() if c.isalnum())


def load(path: str | Path) -> Profile:
    """The profile in a file. ProfileError (with the reason) if it is not one."""
    data = read_json(path, ProfileError)
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("facts"), dict):
        raise ProfileError(f"{path} is not a gpuspec profile of version {VERSION}")
    facts = {}
    for name, value in data["facts"].items():
        if name not in FACTS or not isinstance(value, (int, float)) or not value > 0:
            raise ProfileError(f"{path}: `{name}` = {value!r} is not a measured ceiling gpuspec knows")
        facts[name] = float(value)
    provenance = data.get("provenance") if isinstance(data.get("provenance"), dict) else {}
    return Profile(str(data.get("gpu") or provenance.get("gpu") or ""), facts, provenance, str(path))


def save(path: str | Path, report: dict) -> Profile:
    """Write the calibration program's report as a profile (atomically) and return it."""
    facts = {k: v for k, v in (report.get("facts") or {}).items() if k in FACTS and isinstance(v, (int, float))}
    provenance = report.get("provenance") or {}
    data = {"version": VERSION, "gpu": provenance.get("gpu"), "provenance": provenance, "facts": facts,
            "samples": report.get("samples", {}), "ladder": report.get("ladder", {})}
    write_atomically(path, json.dumps(data, indent=1) + "\n")
    return Profile(str(data["gpu"] or ""), facts, provenance, str(path))
