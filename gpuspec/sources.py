"""The calibrated and measured sources: what a claim's subject is worth beside the model's estimate.

calibrated: the model with the device's ceilings replaced by a profile's measured ones: a user's profile (`merged`
over the published profile of its device, which gives the facts it lacks), else the device's published profile.
measured: the model's rules with the times a harness measured in place of the model's (the kind's measured leaves):
the rates, shares and utilizations that follow from a measured time are computed by the model's own rules.
"""
from __future__ import annotations

import attrs

from gpuspec import kinds, model, units
from gpuspec.model.values import Value, leaves
from gpuspec.profiles import Profile, device_for_gpu
from gpuspec.results import Measurement
from gpuspec.schema import PARTS

TIME = units.TIME


class NotAvailable(Exception):
    """This source has no value for the claim; the message says why (the verdict is a skip)."""


def rebind(workload, device):
    """The same workload on another device (and the workload it repeats, for a stream, and so on down: the graph a
    stream replays repeats a workload of its own)."""
    changes = {"device": device}
    kernel = getattr(workload, "kernel", None)
    if kernel is not None:
        changes["kernel"] = rebind(kernel, device)
    return attrs.evolve(workload, **changes)


# Facts measured together, each meaningless beside another profile's: a user's profile with one of them takes none of
# the others from the published profile (a graph node's cost beyond the kernel gap it was measured with, the usable
# L2 found at one bandwidth, the share and overhead of one fit, the ring bandwidth beside the link's).
TOGETHER = (
    ("kernel_gap", "kernel_floor", "graph_node_cost", "stream_launch_gap"),
    ("l2_bandwidth", "l2_usable"),
    ("nvlink_bandwidth", "nvlink_bandwidth_ring"),
    *((f"attention_share_{name}", f"attention_tile_overhead_{name}") for name in ("flash2", "flash3", "cudnn",
                                                                               "triton")),
)


def merged(own: Profile, published: Profile | None) -> Profile:
    """A user's profile with the published profile of the same device beneath it: every fact the user's profile has
    is its own; a fact it lacks is the published profile's (so that no real-hardware rule is switched off by giving
    a profile), unless the user's profile measured another fact of its group (TOGETHER). Each fact keeps its
    derivation and the name of the profile it came from."""
    if published is None:
        return own
    facts, derivations = dict(own.facts), dict(own.derivations) if isinstance(own.derivations, dict) else {}
    origins = {name: own.title() for name in own.facts}
    for name, value in published.facts.items():
        group = next((g for g in TOGETHER if name in g), (name,))
        if name in own.facts or any(other in own.facts for other in group):
            continue
        facts[name], origins[name] = value, published.title()
        derivations[name] = published.derivations.get(name, {})
    return attrs.evolve(own, facts=facts, derivations=derivations, origins=origins)


class Calibrated:
    """Estimates of workloads on their device as a profile measured it: a user's profile, with the published profile
    of the same device giving the facts it lacks (`merged`)."""

    def __init__(self, profile: Profile):
        self.own = profile
        self.device_name = profile.device_name()
        from gpuspec import published

        beneath = published.bundled(self.device_name) if self.device_name else None
        self.profile = merged(profile, beneath)
        self.published = beneath

    def estimate(self, workload):
        if workload.device.hardware != self.device_name:
            raise NotAvailable(f"the profile was measured on {self.own.gpu or 'an unknown GPU'}, "
                               f"not {workload.device.name}")
        return model.estimate(rebind(workload, self.profile.apply(workload.device)))

    def device(self, device):
        if device.hardware != self.device_name:
            raise NotAvailable(f"the profile was measured on {self.own.gpu or 'an unknown GPU'}, not {device.name}")
        return self.profile.apply(device)

    def label(self, device, value: Value | None = None) -> str:
        """Which profile a calibrated value came from: the user's, and the published profile's facts it used (all of
        them, without a value)."""
        mine = self.own.title()
        if value is None:
            borrowed = sorted(set(self.profile.facts) - set(self.own.facts))
        else:
            borrowed = sorted(name for name in facts_used(value, self.profile)
                              if self.profile.origin(name) != mine)
        if not borrowed:
            return mine
        if value is None or len(borrowed) > 4:
            return f"{mine}, {len(borrowed)} facts from the {self.published.title()}"
        return f"{mine}; {', '.join(borrowed)} from the {self.published.title()}"


def facts_used(value: Value, profile: Profile) -> set[str]:
    """The profile's facts a value's derivation rests on (its leaves that cite the profile)."""
    return {leaf.name for leaf in leaves(value)
            if leaf.name in profile.facts and leaf.reference == profile.origin(leaf.name)}


class Published:
    """Estimates of workloads on their device as its published profile (gpuspec.published) has it: the calibrated
    source when no profile of the user's own is given."""

    def estimate(self, workload):
        return model.estimate(rebind(workload, self._profile(workload.device).apply(workload.device)))

    def device(self, device):
        return self._profile(device).apply(device)

    def label(self, device, value: Value | None = None) -> str:
        return self._profile(device).title()

    @staticmethod
    def _profile(device):
        from gpuspec import published

        name = device.name.split(" ")[0]
        profile = published.bundled(name)
        if profile is None and device.model_only:
            raise NotAvailable(f"{device.name} is model-only ({device.model_only}), so no published profile "
                               "describes it; give a profile of your own with --profile FILE")
        if profile is None:
            raise NotAvailable(f"{device.name} is not a catalog device, so no published profile describes it; "
                               "give a profile of your own (`gpuspec calibrate`, then --profile FILE)")
        return profile


class Measured:
    """Measured metrics of workloads, found by workload key among the measurements given."""

    def __init__(self, measurements: dict[str, list[Measurement]], statements: dict[int, str], reason: str | None):
        self.measurements, self.statements, self.reason = measurements, statements, reason

    def estimate(self, workload):
        if self.reason:
            raise NotAvailable(self.reason)
        from gpuspec.harness import workload_key  # here: the check path without measurements never imports harness

        statement = self.statements.get(id(workload), "")
        found = self.measurements.get(workload_key(statement, workload))
        if not found:
            raise NotAvailable("no measurement of this workload (measure with --measure, or give --results)")
        here = workload.device.hardware
        same_gpu = [m for m in found if device_for_gpu(m.provenance.get("gpu")) == here]
        return MeasuredView(workload, (same_gpu or found)[-1])  # the claim's own GPU first, else say where

    def device(self, device):
        raise NotAvailable("a device fact is not measured; `gpuspec calibrate` measures the ceilings")


class MeasuredView:
    """A workload's metrics as one measurement gives them, shaped like an Estimate for evaluation: the model's rules
    with the measured leaves. A metric whose model value depends on no leaf measured is not measured."""

    def __init__(self, workload, measurement: Measurement):
        self.workload, self.measurement = workload, measurement
        self._estimate = None

    def __getitem__(self, name: str) -> Value:
        m = self.measurement
        if m.status != "ok":
            raise NotAvailable(f"the harness {'found the kernel wrong' if m.status == 'wrong' else 'failed'}: "
                               f"{m.reason}")
        measured_gpu = device_for_gpu(m.provenance.get("gpu"))
        if measured_gpu != self.workload.device.hardware:
            raise NotAvailable(self._elsewhere(name, measured_gpu))
        value = self._metric(name)
        if value is None:
            available = ", ".join(sorted(self.measurement.metrics))
            raise NotAvailable(f"`{name}` is not measured (measured: {available})")
        return value

    def _metric(self, name: str) -> Value | None:
        """The metric by the model's rules with the measured leaves; None unless it depends on a leaf, and only on
        leaves this measurement has."""
        behind = model.leaves_behind(self.workload, name)
        if not behind or not behind <= set(self.measurement.metrics):
            return None
        if self._estimate is None:
            self._estimate = model.measured_estimate(self.workload, self._leaves())
        return self._estimate[name]

    def _leaves(self) -> dict[str, Value]:
        # Every summary here was checked where it entered (gpuspec.schema): a finite median above zero, p10 and p90
        # around it, and a part (busy_time, gpu_time) no more than timing noise above its whole.
        metrics = self.measurement.metrics
        leaves = {}
        for name in kinds.of(self.workload).measured_leaves:
            summary = metrics.get(name)
            if summary is None:
                continue
            note = (f"median of {summary.get('samples')} samples, p10–p90 {summary['p10'] * 1e6:.3g}–"
                    f"{summary['p90'] * 1e6:.3g} µs, on {self.measurement.gpu}")
            leaves[name] = Value(name, summary["median"], TIME, None, (), note=note)
        for part, whole, _ in PARTS:  # timed apart, a part may come out a hair above its whole: the whole, then
            if part in leaves and whole in leaves and leaves[part].number > leaves[whole].number:
                leaves[part] = attrs.evolve(leaves[part], number=leaves[whole].number,
                                            note=f"{leaves[part].note}; timed apart, a hair above {whole}: as much")
        return leaves

    def _elsewhere(self, name: str, measured_gpu: str | None) -> str:
        gpu = self.measurement.gpu
        text = f"measured on {gpu}, not {self.workload.device.name}"
        value = self._metric(name) if measured_gpu else None
        if value is not None and measured_gpu:
            from gpuspec import devices

            there = devices.lookup(measured_gpu)
            try:
                predicted = model.estimate(rebind(self.workload, there))[name]
                text += f": {value.format()} measured, where the model predicts {predicted.format()} on {there.name}"
            except (model.ModelError, NotAvailable):
                text += f": {value.format()} measured"
        return text
