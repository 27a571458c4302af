"""Group a file's points into families that share every axis except concurrency, pool and
blocking ratio: the three axes the charts and tables lay out.

Points of another dequeue batch (`--dequeue-batch`) form families of their own, titled with
it ("dequeue batch 8"); batch 1, the default and what files without the field measured, is
not named.

Open-loop points (those with an `open_loop` key) form families of their own, apart from the
closed-loop points of the same workload: they have one point per offered load in each
(concurrency, pool, blocking) cell, which the closed-loop charts and tables are not made for.
The open-loop mode (arrivals, and whether the points ask for loads or rates) is part of the
family key and title; latency_load.py lays out their load axis."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .match import dequeue_batch_spec, is_auto_spec, normalize_spec, params_key

FamilyKey = tuple[str, str, str, float, str, str, str]


@dataclass(frozen=True)
class Family:
    key: FamilyKey
    slug: str
    title: str
    points: list[dict[str, Any]]

    @property
    def workload(self) -> str:
        return self.key[0]

    @property
    def open_loop(self) -> bool:
        """True for a family of open-loop points (key[5] is their mode, "" when closed)."""
        return bool(self.key[5])

    @property
    def dequeue_batch(self) -> str:
        """The family's dequeue batch spec (key[6]): "1" for one packet per remove."""
        return self.key[6]


def is_open_loop(point: dict[str, Any]) -> bool:
    return isinstance(point.get("open_loop"), dict)


def open_loop_mode(point: dict[str, Any]) -> str:
    """The open-loop mode of a point, as its family's title says it: "" for a closed-loop
    point; "open loop, poisson arrivals" (and ", fixed rates" where the point asks for a rate
    rather than a load, ", seed S" for a Poisson schedule's seed other than 1, ", at most M in
    flight" where it sets --max-in-flight). Loads and rates are kept apart because they lay
    out different x axes."""
    spec = point.get("open_loop")
    if not isinstance(spec, dict):
        return ""
    arrivals = str(spec.get("arrivals") or "poisson")
    text = f"open loop, {arrivals} arrivals"
    if spec.get("load") is None and spec.get("rate_ops_per_s") is not None:
        text += ", fixed rates"
    seed = spec.get("seed")
    if arrivals == "poisson" and isinstance(seed, int) and not isinstance(seed, bool) and seed != 1:
        text += f", seed {seed}"
    mif = spec.get("max_in_flight")
    if isinstance(mif, int) and not isinstance(mif, bool):
        text += f", at most {mif} in flight"
    return text


def family_key(point: dict[str, Any]) -> FamilyKey:
    return (
        str(point["workload"]),
        str(point["port"]),
        str(point["blocking"].get("kind", "")),
        float(point["work_us"]),
        params_key(point.get("workload_params")),
        open_loop_mode(point),
        dequeue_batch_spec(point),
    )


def _slugify(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-") or "x"


# Workload parameters counted in bytes without a unit in their name (the harness's flags
# take them as plain byte counts).
BYTE_PARAMS = frozenset({"block_size", "message_size"})
UNIT_SUFFIXES = (("_mib", "MiB"), ("_kib", "KiB"), ("_bytes", "B"), ("_us", "us"), ("_ms", "ms"), ("_s", "s"))


def size_text(n: float) -> str:
    """Bytes in the largest binary unit that keeps a whole number: 4096 -> "4 KiB"."""
    for scale, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if n >= scale and n % scale == 0:
            return f"{n / scale:g} {unit}"
    return f"{n:g} B"


def param_text(name: str, value: Any) -> str:
    """One workload parameter as words: ("file_size_mib", 64) -> "file size 64 MiB",
    ("block_size", 4096) -> "block size 4 KiB", ("buffered", False) -> "buffered no"."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(value, bool):
        shown = "yes" if value else "no"
    elif number and name in BYTE_PARAMS:
        shown = size_text(float(value))
    else:
        shown = f"{value:g}" if number else str(value)
    for suffix, unit in UNIT_SUFFIXES:
        if number and name.endswith(suffix):
            name, shown = name[: -len(suffix)], f"{shown} {unit}"
            break
    return f"{name.replace('_', ' ')} {shown}"


def params_text(params: str) -> str:
    """A family's workload parameters (params_key's JSON) as words, comma-separated."""
    try:
        parsed = json.loads(params) if params else {}
    except ValueError:
        return params
    if not isinstance(parsed, dict):
        return params
    return ", ".join(param_text(str(k), v) for k, v in parsed.items())


def _title(key: FamilyKey) -> str:
    workload, port, kind, work, params, mode, batch = key
    text = f"{workload} workload, {port} port, work {work:g} us"
    if kind:
        text += f", {kind} blocking"
    if params not in ("", "{}"):
        text += f", {params_text(params)}"
    if batch != "1":
        text += f", dequeue batch {batch}"
    if mode:
        text += f"; {mode}"
    return text


def _base_slug(key: FamilyKey) -> str:
    text = f"{key[0]}-{key[1]}-w{key[3]:g}" + (f"-{key[2]}" if key[2] else "")
    if key[6] != "1":
        text += f"-batch{key[6]}"
    if key[5]:  # "open loop, poisson arrivals, ..." -> "open-poisson-..."
        text += "-open-" + key[5].removeprefix("open loop, ").replace(" arrivals", "")
    return _slugify(text)


def families(points: list[dict[str, Any]]) -> list[Family]:
    """Families in first-seen order, each with a file-name-safe slug unique within the file."""
    grouped: dict[FamilyKey, list[dict[str, Any]]] = {}
    for p in points:
        grouped.setdefault(family_key(p), []).append(p)
    base_slugs = {k: _base_slug(k) for k in grouped}
    counts = Counter(base_slugs.values())
    seen: Counter[str] = Counter()
    out: list[Family] = []
    for key, pts in grouped.items():
        slug = base_slugs[key]
        if counts[slug] > 1:  # only the workload params (or in-flight bound) differ: number them
            seen[slug] += 1
            slug = f"{slug}-{seen[slug]}"
        out.append(Family(key, slug, _title(key), pts))
    return out


def spec_order(spec: str, value: int) -> tuple[bool, int, str]:
    """Sort key of one normalized spec: fixed sizes by their value on this machine (so N, 2N,
    2N+2 read left to right), then by spelling; auto pools after all of them, by spelling
    only (their value is just the ceiling, and sorting by it would scatter them among the
    fixed sizes differently on every machine)."""
    auto = is_auto_spec(spec)
    return (auto, 0 if auto else value, spec)


def spec_axis(points: list[dict[str, Any]], axis: str) -> list[str]:
    """The normalized specs of `axis` ("concurrency" or "pool") in spec_order."""
    values: dict[str, int] = {}
    for p in points:
        spec = normalize_spec(p[axis]["spec"])
        values.setdefault(spec, int(p[axis]["value"]))
    return sorted(values, key=lambda s: spec_order(s, values[s]))


def _value_of(sv: Any) -> Any:
    return sv.get("value") if isinstance(sv, dict) else None


def auto_range(sv: dict[str, Any]) -> tuple[int, int] | None:
    """(min, max) threads of an auto pool on this machine, from pool.auto; None for a fixed
    pool or a file without the values."""
    auto = sv.get("auto")
    if not isinstance(auto, dict):
        return None
    ends = [_value_of(auto.get(k)) for k in ("min", "max")]
    if all(isinstance(v, int) and not isinstance(v, bool) for v in ends):
        return (ends[0], ends[1])
    return None


def spec_value_text(sv: dict[str, Any]) -> str:
    """The label of one spec/value object: "2N+2 (6)", "8", or an auto pool's range,
    "auto (2..8)"."""
    spec = normalize_spec(sv["spec"])
    if is_auto_spec(spec):
        rng = auto_range(sv)
        return f"{spec} ({rng[0]}..{rng[1]})" if rng else f"{spec} (max {sv['value']})"
    value = sv["value"]
    return spec if spec == str(value) else f"{spec} ({value})"


def spec_value_label(points: list[dict[str, Any]], axis: str, spec: str) -> str:
    for p in points:
        if normalize_spec(p[axis]["spec"]) == spec:
            return spec_value_text(p[axis])
    return spec


def is_auto_point(point: dict[str, Any]) -> bool:
    return is_auto_spec(point["pool"]["spec"])


def ratios(points: list[dict[str, Any]]) -> list[float]:
    return sorted({round(float(p["blocking"]["ratio"]), 6) for p in points})


def select(points: list[dict[str, Any]], **axes: Any) -> list[dict[str, Any]]:
    """Points whose concurrency/pool spec and blocking ratio equal the given ones."""
    out = []
    for p in points:
        if "concurrency" in axes and normalize_spec(p["concurrency"]["spec"]) != axes["concurrency"]:
            continue
        if "pool" in axes and normalize_spec(p["pool"]["spec"]) != axes["pool"]:
            continue
        if "ratio" in axes and round(float(p["blocking"]["ratio"]), 6) != axes["ratio"]:
            continue
        out.append(p)
    return out


def machine_title(machine: dict[str, Any]) -> str:
    host = machine.get("hostname") or "unknown host"
    cpu = machine.get("cpu_model")
    parts = [str(host)]
    if cpu:
        parts.append(str(cpu))
    parts.append(f"N={machine.get('logical_cpus', '?')}")
    extra = [str(machine.get("os", ""))]
    if machine.get("wine"):
        extra.append("Wine")
    if machine.get("backend"):
        extra.append(f"backend {machine['backend']}")
    return ", ".join(parts) + " (" + ", ".join(e for e in extra if e) + ")"
