"""What a calibration report measured, made into a profile's facts: the calibration program derives most facts from
its own timings (templates/calibrate.py.jinja); gpuspec fits the ones that need the model's rules to its sweeps, the
same way gpuspec.published fits them to published figures:
- gemm_fixed_cost: the median, over the bf16 GEMM sweep's points whose roofline time is under 50 µs, of the time
  measured − the model's time for the shape (tiles and waves, the profile's own HBM bandwidth, bf16 rate and
  kernel floor): what a GEMM timed alone takes beyond its roofline (gpuspec/kinds/matmul/rules.py adds it).
- attention_share_flash2, attention_tile_overhead_flash2: PyTorch's flash backend's forward times fitted to the
  tiled-kernel rule (gpuspec/kinds/attention/rules.py): per point, time / (⌈tiles / SMs⌉ × SMs × t_block) =
  (key blocks per tile + overhead) / share, a straight line in key blocks per tile, by least squares on relative
  error, with the profile's own bf16 rate and exp_rate.
A fit that cannot be made (too few points, a GPU the catalog does not have, a value outside what a profile holds)
leaves the fact to the published profile, with the reason in the profile's `unmeasured`.
"""
from __future__ import annotations

import math
import statistics

from gpuspec import devices, schema, units
from gpuspec.published import LARGE_GEMM_MATH, RESOLUTION
from gpuspec.profiles import Profile, ProfileError

FLASH = "flash2"  # PyTorch's flash backend: FlashAttention-2, the implementation `auto` means


def complete(report: dict) -> dict:
    """The report with the facts gpuspec fits to its sweeps added (each with its derivation), or the reason each
    could not be fitted in `unmeasured`. ProfileError (naming the key) if what the fits read is malformed."""
    if not isinstance(report, dict):
        raise ProfileError(f"the calibration report is {schema.describe(report)}, not an object")
    for key, shape in (("facts", schema.PROFILE_FACTS), ("sweeps", schema.SWEEPS),
                       ("unmeasured", schema.UNMEASURED), ("provenance", schema.PROVENANCE)):
        try:
            shape.check(report.get(key, {}), key)
        except schema.Invalid as problem:
            raise ProfileError(f"the calibration measured what a profile cannot hold: {problem}") from None
    facts, sweeps = dict(report.get("facts", {})), report.get("sweeps", {})
    derivations = dict(report.get("derivations") or {})
    unmeasured = dict(report.get("unmeasured", {}))
    device = devices.for_gpu((report.get("provenance") or {}).get("gpu"))
    gemm = gemm_fixed_cost(facts, sweeps.get("gemm", []), device)
    attention = attention_fit(facts, sweeps.get("attention", []), device)
    groups = [{"gemm_fixed_cost": gemm},
              dict(zip((f"attention_share_{FLASH}", f"attention_tile_overhead_{FLASH}"),
                       (attention, attention) if isinstance(attention, str) else attention))]
    for group in groups:  # the facts of one fit are written together or not at all
        for name, found in group.items():
            if isinstance(found, str):
                continue
            value, shown, how = found
            if not schema.FACTS[name].low <= value <= schema.FACTS[name].high:
                why = f"the fit gives {name} = {shown}, and a profile holds {schema.FACTS[name].words}: {how}"
                group = dict.fromkeys(group, why[:1_000])
                break
        for name, found in group.items():
            facts.pop(name, None)
            derivations.pop(name, None)
            if isinstance(found, str):
                unmeasured[name] = found[:1_000]
            else:
                facts[name], derivations[name] = found[0], {"value": found[1], "how": found[2]}
                unmeasured.pop(name, None)
    return {**report, "facts": facts, "derivations": derivations, "unmeasured": unmeasured}


def _needs(facts: dict, names: tuple[str, ...], what: str) -> str | None:
    missing = [name for name in names if name not in facts]
    return f"{what} needs the profile's own {', '.join(missing)}, which it did not measure" if missing else None


def _catalog(device, what: str) -> str | None:
    if device is None:
        return (f"{what} takes the GPU's SMs and tiles from its catalog entry, and the catalog has no entry for this "
                "GPU")
    return None


def gemm_fixed_cost(facts: dict, points: list[dict], device):
    """(value, shown, how) of the GEMM fixed cost fitted to the sweep, or the reason there is none."""
    problem = _catalog(device, "the GEMM fit") or _needs(facts, ("hbm_bandwidth", "tensor_bf16", "kernel_floor"),
                                                         "the GEMM fit")
    if problem:
        return problem
    roof = Profile(device.title, {name: facts[name] for name in ("hbm_bandwidth", "tensor_bf16", "kernel_floor")},
                   {}, "this calibration").apply(device)
    extra, used = [], []
    for point in points:
        predicted = _matmul_time(roof, point["m"], point["n"], point["k"], point["batch"])
        if predicted < LARGE_GEMM_MATH:
            extra.append(point["seconds"] - predicted)
            used.append(f"{point['m']}×{point['n']}×{point['k']} {_us(point['seconds'])} − {_us(predicted)}")
    if not extra:
        return (f"no point of the GEMM sweep ({len(points)} of them) has a roofline time under "
                f"{_us(LARGE_GEMM_MATH)}, where a fixed cost stands out from the math")
    value = max(RESOLUTION, statistics.median(extra))
    return value, _us(value), (f"the median over {len(used)} bf16 GEMMs timed alone of the time measured − the "
                               "model's time for the shape (tiles, waves and this profile's HBM bandwidth, bf16 rate "
                               f"and kernel floor): {'; '.join(used)}"
                               + ("; at most a resolution of 1 ns" if value == RESOLUTION else ""))


def _matmul_time(device, m: int, n: int, k: int, batch: int) -> float:
    """The model's time of a bf16 GEMM of that shape on `device`, with the default tile for its shape."""
    from gpuspec import model
    from gpuspec.kinds.matmul import Matmul, default_tile
    from gpuspec.tensors import Tensor

    lead = (batch,) if batch > 1 else ()
    a, b = Tensor("a", "bf16", (*lead, m, k)), Tensor("b", "bf16", (*lead, k, n))
    return model.estimate(Matmul(a, b, default_tile(m, n), device))["time"].number


def attention_rows(points: list[dict], rate: float, exp_rate: float, sms: int) -> list[tuple[float, float]]:
    """(key blocks per tile, time / (⌈tiles / SMs⌉ × SMs × t_block)) per point: the tiled-kernel rule with share 1
    and overhead 0 in the denominator, so that each row is (x, (x + overhead) / share)."""
    from gpuspec.kinds.attention import rules

    rows = []
    for point in points:
        per_head = -(-point["seq_q"] // rules.TILE_ROWS)
        tiles = point["batch"] * point["heads"] * per_head
        scores = rules.TILE_ROWS * rules.KEY_BLOCK
        t_block = scores * (rules.MATMUL_FLOPS_PER_HEAD_DIM * point["head_dim"] + rules.SOFTMAX_FLOPS_PER_SCORE) / \
            rate + scores / exp_rate
        unit = -(-tiles // sms) * sms * t_block
        rows.append((rules.key_blocks(point["seq_q"], point["seq_kv"], point["causal"]) / per_head,
                     point["seconds"] / unit))
    return rows


def line_fit(rows: list[tuple[float, float]]) -> tuple[float, float] | None:
    """(share, overhead) from y = (x + overhead) / share, by least squares on relative error (weights 1 / y²); the
    overhead at least 0 (else a line through the origin). None without a positive slope."""
    weights = [1 / y**2 for _, y in rows]
    total = sum(weights)
    sx = sum(w * x for w, (x, _) in zip(weights, rows))
    sy = sum(w * y for w, (_, y) in zip(weights, rows))
    sxx = sum(w * x * x for w, (x, _) in zip(weights, rows))
    sxy = sum(w * x * y for w, (x, y) in zip(weights, rows))
    spread = total * sxx - sx * sx
    slope = (total * sxy - sx * sy) / spread if spread > 0 else 0.0
    intercept = (sy - slope * sx) / total
    if slope <= 0 or intercept < 0:
        slope, intercept = sxy / sxx, 0.0
    return (1 / slope, intercept / slope) if slope > 0 and math.isfinite(slope) else None


def attention_fit(facts: dict, points: list[dict], device):
    """((share, shown, how), (overhead, shown, how)) of PyTorch's flash attention fitted to the tiled-kernel rule,
    or the reason there is none."""
    problem = _catalog(device, "the attention fit") or _needs(facts, ("tensor_bf16", "exp_rate"), "the attention fit")
    if problem:
        return problem
    sms = device.fact("sms")
    if sms is None:
        return f"the catalog does not give {device.name}'s SM count, which the tiled-kernel rule divides tiles over"
    rows = attention_rows(points, facts["tensor_bf16"], facts["exp_rate"], int(sms.value))
    if len({round(x, 9) for x, _ in rows}) < 2:
        return (f"the attention fit needs forward times at two or more key-block counts per tile; the sweep has "
                f"{len(rows)} point(s)")
    fitted = line_fit(rows)
    if fitted is None:
        return "the attention times do not grow with the key blocks per tile: no line to fit"
    share, overhead = fitted
    shapes = "; ".join(f"batch {p['batch']} × {p['heads']} heads × {p['seq_q']}{' causal' if p['causal'] else ''} "
                       f"{_us(p['seconds'])}" for p in points)
    how = (f"PyTorch's flash backend forward times in bf16, head size {points[0]['head_dim']} ({shapes}), fitted "
           "to the tiled-kernel rule: time / (⌈tiles / SMs⌉ × SMs × t_block) = (key blocks per tile + overhead) / "
           "share, by least squares on relative error, with this profile's bf16 rate and exp_rate: share "
           f"{share:.3f}, overhead {overhead:.2f} key blocks")
    return (share, f"{share:.3f}", how), (overhead, f"{overhead:.2f} key blocks", how)


def _us(seconds: float) -> str:
    return units.format_si(seconds, units.TIME, 4)
