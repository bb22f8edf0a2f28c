"""Profiles: a device's ceilings as measured (copy bandwidth, launch costs, matmul rate), saved as JSON and applied
to the model as the `calibrated` source."""
from __future__ import annotations

from pathlib import Path

from attrs import field

from gpuspec import devices, schema
from gpuspec.devices import Device, Fact
from gpuspec.files import json_bytes, read_json, write_atomically
from gpuspec.record import Record, record

VERSION = schema.VERSION
# What a profile measures, and the device fact each one replaces (their ranges are in gpuspec.schema).
FACTS = tuple(schema.FACTS)
# A profile is a few kilobytes; this is room to spare, and a bound on what a planted file makes gpuspec read.
PROFILE_LIMIT = 1 << 20


class ProfileError(ValueError):
    """A profile file that is not what `gpuspec calibrate` writes."""


@record
class Profile(Record):
    """Measured ceilings of one GPU, with the provenance of the run that measured them."""

    gpu: str
    facts: dict[str, float]
    provenance: dict
    path: str = ""  # the file it was read from or written to
    # how each fact was derived, where the profile says (a published one does; text only, never run)
    derivations: dict = field(factory=dict, eq=False)

    def device_name(self) -> str | None:
        """The catalog device this profile was measured on, if the GPU's name says which."""
        return device_for_gpu(self.gpu)

    def apply(self, device: Device) -> Device:
        """`device` with its ceilings replaced by the measured ones."""
        facts = {}
        for name, value in self.facts.items():
            dimension = devices.FIELDS[name][0]
            derived = self.derivations.get(name) if isinstance(self.derivations, dict) else None
            how = derived.get("how") if isinstance(derived, dict) else None
            note = f"{self.path}: {how}" if isinstance(how, str) and how else f"measured: {self.path or 'profile'}"
            facts[name] = Fact(name, value, value, dimension, f"{value:g}", note=note)
        return device.with_facts(f"{device.name} (calibrated)", facts)


def device_for_gpu(gpu: str | None) -> str | None:
    """The catalog name of a GPU as its driver names it ("NVIDIA H100 80GB HBM3" -> H100-SXM), or None when the
    catalog has no entry for exactly that part (devices.for_gpu says how it is matched)."""
    found = devices.for_gpu(gpu)
    return found.name if found else None


def read_profile(path: str | Path) -> Profile:
    """The profile in a file. ProfileError (naming the file, the key and what would be right) if it is not one."""
    data = schema.read_checked(path, ProfileError, schema.PROFILE, ("facts", dict), "a profile", "a gpuspec profile",
                               limit=PROFILE_LIMIT)
    return _profile(data, str(path))


def _profile(data: dict, path: str) -> Profile:
    provenance = dict(data.get("provenance") or {})
    gpu = data.get("gpu") or provenance.get("gpu") or ""
    facts = {name: float(value) for name, value in data["facts"].items()}
    # a published profile written out says how each fact was derived (text only)
    return Profile(gpu, facts, provenance, path, data.get("derivations") or {})


def read_report(path: str | Path) -> dict:
    """The report the calibration program wrote to `path`. ProfileError with the reason if it is not JSON."""
    return read_json(path, ProfileError, limit=PROFILE_LIMIT, what="a calibration report")


def save(path: str | Path, report: dict) -> Profile:
    """Write the calibration program's report as a profile (atomically) and return it. ProfileError (and nothing
    written) if it measured what `read_profile` would refuse: a number that is not finite, or out of its range."""
    if not isinstance(report, dict):
        raise ProfileError(f"the calibration report is {schema.describe(report)}, not an object; {path} was not "
                           "written")
    measured = report.get("facts")
    facts = {k: v for k, v in measured.items() if k in FACTS} if isinstance(measured, dict) else measured
    provenance = report.get("provenance") or {}
    gpu = provenance.get("gpu") if isinstance(provenance, dict) else None
    data = {"version": VERSION, "gpu": gpu, "provenance": provenance, "facts": facts,
            "samples": report.get("samples", {}), "ladder": report.get("ladder", {})}
    try:
        schema.PROFILE.check(data, "")
    except schema.Invalid as problem:
        raise ProfileError(f"the calibration measured what a profile cannot hold: {problem}; {path} was not "
                           "written") from None
    write_atomically(path, json_bytes(data))
    return _profile(data, str(path))
