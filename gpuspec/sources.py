"""The calibrated and measured sources: what a claim's subject is worth beside the model's estimate.

calibrated: the model with the device's ceilings replaced by a profile's measured ones.
measured: the timings of a harness, joined with the model's counts (bytes, FLOPs) for the rates derived from them.
"""
from __future__ import annotations

import attrs

from gpuspec import model, units
from gpuspec.calibrate import Profile, device_for_gpu
from gpuspec.harness import workload_key
from gpuspec.model.values import Value
from gpuspec.results import Measurement

TIME, COUNT = units.TIME, units.COUNT


class NotAvailable(Exception):
    """This source has no value for the claim; the message says why (the verdict is a skip)."""


def rebind(workload, device):
    """The same workload on another device (and its inner workload, for a stream)."""
    changes = {"device": device}
    if getattr(workload, "kind", None) == "stream":
        changes["kernel"] = attrs.evolve(workload.kernel, device=device)
    return attrs.evolve(workload, **changes)


class Calibrated:
    """Estimates of workloads on their device as a profile measured it."""

    def __init__(self, profile: Profile):
        self.profile = profile
        self.device_name = profile.device_name()

    def estimate(self, workload):
        if workload.device.name.split(" ")[0] != self.device_name:
            raise NotAvailable(f"the profile was measured on {self.profile.gpu or 'an unknown GPU'}, "
                               f"not {workload.device.name}")
        return model.estimate(rebind(workload, self.profile.apply(workload.device)))

    def device(self, device):
        if device.name != self.device_name:
            raise NotAvailable(f"the profile was measured on {self.profile.gpu or 'an unknown GPU'}, not {device.name}")
        return self.profile.apply(device)


class Measured:
    """Measured metrics of workloads, found by workload key among the measurements given."""

    def __init__(self, measurements: dict[str, list[Measurement]], statements: dict[int, str], reason: str | None):
        self.measurements, self.statements, self.reason = measurements, statements, reason

    def estimate(self, workload):
        if self.reason:
            raise NotAvailable(self.reason)
        statement = self.statements.get(id(workload), "")
        found = self.measurements.get(workload_key(statement, workload))
        if not found:
            raise NotAvailable("no measurement of this workload (measure with --measure, or give --results)")
        here = workload.device.name.split(" ")[0]
        same_gpu = [m for m in found if device_for_gpu(m.provenance.get("gpu")) == here]
        return MeasuredView(workload, (same_gpu or found)[-1])  # the claim's own GPU first, else say where

    def device(self, device):
        raise NotAvailable("a device fact is not measured; `gpuspec calibrate` measures the ceilings")


class MeasuredView:
    """A workload's measured metrics, shaped like an Estimate for evaluation."""

    def __init__(self, workload, measurement: Measurement):
        self.workload, self.measurement = workload, measurement
        self.kind = workload.kind

    def __getitem__(self, name: str) -> Value:
        m = self.measurement
        if m.status != "ok":
            raise NotAvailable(f"the harness {'found the kernel wrong' if m.status == 'wrong' else 'failed'}: "
                               f"{m.reason}")
        measured_gpu = device_for_gpu(m.provenance.get("gpu"))
        if measured_gpu != self.workload.device.name.split(" ")[0]:
            raise NotAvailable(self._elsewhere(name, measured_gpu))
        value = self._metric(name)
        if value is None:
            available = ", ".join(sorted(self.measurement.metrics))
            raise NotAvailable(f"`{name}` is not measured (measured: {available})")
        return value

    def _timing(self, metric: str, name: str) -> Value | None:
        # Every summary here was checked where it entered (gpuspec.schema): a finite median above zero, p10 and p90
        # around it, and a part (busy_time, gpu_time) no more than timing noise above its whole.
        summary = self.measurement.metrics.get(metric)
        if summary is None:
            return None
        note = (f"median of {summary.get('samples')} samples, p10–p90 {summary['p10'] * 1e6:.3g}–"
                f"{summary['p90'] * 1e6:.3g} µs, on {self.measurement.gpu}")
        return Value(name, summary["median"], TIME, None, (), note=note)

    def _metric(self, name: str) -> Value | None:
        estimate = model.estimate(self.workload)
        if self.kind in ("elementwise", "matmul", "rowwise", "attention"):
            if name == "time":
                return self._timing("time", "time")
            time = self._timing("time", "measured time")
            if time is None:
                return None
            if name == "achieved_bandwidth":
                return Value(name, estimate["bytes_moved"].number / time.number, units.BANDWIDTH, "{0} / {1}",
                             (estimate["bytes_moved"], time))
            if name == "bandwidth_utilization":
                bandwidth = self._metric("achieved_bandwidth")
                peak = estimate.fact("hbm_bandwidth")
                return Value(name, bandwidth.number / peak.number, COUNT, "{0} / {1}", (bandwidth, peak), percent=True)
            if name == "achieved_flop_rate":
                return Value(name, estimate["flops"].number / time.number, units.FLOP_RATE, "{0} / {1}",
                             (estimate["flops"], time))
            return None
        if self.kind == "stream":
            time, busy = self._timing("time", "time"), self._timing("busy_time", "busy_time")
            if name in ("time", "host_time", "launch_time"):
                return None if name != "time" else time
            if name == "busy_time":
                return busy
            if time is None or busy is None:
                return None
            idle = Value("idle_time", max(0.0, time.number - busy.number), TIME, "{0} - {1}", (time, busy))
            if name == "idle_time":
                return idle
            if name == "busy_share":  # timed apart, busy may come out a hair above the whole: a full share
                return Value(name, min(1.0, busy.number / time.number), COUNT, "{0} / {1}", (busy, time), percent=True)
            if name == "idle_share":
                return Value(name, idle.number / time.number, COUNT, "{0} / {1}", (idle, time), percent=True)
            return None
        if self.kind == "decode":
            step, gpu = self._timing("step_time", "step_time"), self._timing("gpu_time", "gpu_time")
            if name in ("step_time", "time"):
                return step
            if name == "gpu_time":
                return gpu
            if step is None:
                return None
            if name == "tokens_per_s":
                batch = estimate["batch"]
                return Value(name, batch.number / step.number, units.divide(COUNT, TIME), "{0} / {1}", (batch, step))
            if gpu is not None and name == "busy_share":
                return Value(name, min(1.0, gpu.number / step.number), COUNT, "{0} / {1}", (gpu, step), percent=True)
            if gpu is not None and name == "overhead_share":
                idle = max(0.0, step.number - gpu.number)
                return Value(name, idle / step.number, COUNT, "(step_time - gpu_time) / step_time", (step, gpu),
                             percent=True)
        return None

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
