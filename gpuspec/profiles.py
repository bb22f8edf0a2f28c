"""Profiles: a device's facts as measured (bandwidths, launch and kernel costs, matmul rates, ...), each with how it
was derived and which facts were not measured and why, saved as JSON and applied to the model as the `calibrated`
source."""
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
    path: str = ""  # the file it was read from or written to (a published profile: its name)
    # how each fact was derived, where the profile says (a published one does; text only, never run)
    derivations: dict = field(factory=dict, eq=False)
    # the facts its calibration did not measure, each with why (text only)
    unmeasured: dict = field(factory=dict, eq=False)
    # fact -> the name of the profile it came from, where profiles were merged (gpuspec.sources); else this one's
    origins: dict = field(factory=dict, eq=False)
    name: str = ""  # how a report names it ("your profile h100.json"); the path where empty

    def title(self) -> str:
        return self.name or self.path or "your profile"

    def origin(self, fact: str) -> str:
        """The name of the profile a fact came from."""
        return self.origins.get(fact) or self.title()

    def device_name(self) -> str | None:
        """The catalog device this profile was measured on, if the GPU's name says which."""
        return device_for_gpu(self.gpu)

    def how(self, fact: str) -> str | None:
        """How a fact was derived, where the profile says (text only)."""
        derived = self.derivations.get(fact) if isinstance(self.derivations, dict) else None
        how = derived.get("how") if isinstance(derived, dict) else None
        return how if isinstance(how, str) and how else None

    def apply(self, device: Device) -> Device:
        """`device` with its ceilings replaced by the measured ones, each citing the profile it came from (as a
        catalog fact cites its source) with how it was derived there."""
        facts = {}
        for name, value in self.facts.items():
            dimension = devices.FIELDS[name][0]
            facts[name] = Fact(name, value, value, dimension, f"{value:g}", reference=self.origin(name),
                               note=self.how(name))
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
    # a calibration (and a published profile written out) says how each fact was derived (text only)
    return Profile(gpu, facts, provenance, path, data.get("derivations") or {}, dict(data.get("unmeasured") or {}),
                   name=f"your profile {path}")


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
    data = {"version": VERSION, "gpu": gpu, "provenance": provenance, "facts": facts}
    # what the calibration says besides its facts, kept as it wrote it (checked below, as reading checks it)
    data.update({key: report[key] for key in ("derivations", "unmeasured", "observations", "sweeps", "samples",
                                              "ladder") if key in report})
    try:
        schema.PROFILE.check(data, "")
    except schema.Invalid as problem:
        raise ProfileError(f"the calibration measured what a profile cannot hold: {problem}; {path} was not "
                           "written") from None
    write_atomically(path, json_bytes(data))
    return _profile(data, str(path))
