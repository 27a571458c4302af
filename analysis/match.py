"""Match points across results files by their *specs*, not their values.

"2N+2" is 6 on a 2-CPU laptop and 130 on a 64-CPU server; matching on the spec is what lets
the two line up (architecture.md, "Cross-machine comparison").
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

# Workload parameters that name places on one machine rather than the experiment (a file
# workload's path): two machines never share them, so they must not keep points apart.
MACHINE_LOCAL_PARAMS = frozenset({"path", "file", "filename", "dir", "directory", "device"})

SpecKey = tuple[str, str, str, str, str, float, str, float]


def normalize_spec(spec: Any) -> str:
    """Spell a concurrency/pool spec one way: no spaces, capital N ("2n + 2" -> "2N+2")."""
    return "".join(str(spec).split()).upper()


def params_key(params: Any) -> str:
    if not isinstance(params, dict):
        return ""
    kept = {k: v for k, v in params.items() if k not in MACHINE_LOCAL_PARAMS}
    return json.dumps(kept, sort_keys=True, separators=(",", ":"))


def spec_key(point: dict[str, Any], *, ignore_port: bool = False) -> SpecKey:
    """The identity of a point across machines: workload and its params, port, concurrency
    and pool specs, blocking ratio and kind, work per completion."""
    blocking = point["blocking"]
    return (
        str(point["workload"]),
        params_key(point.get("workload_params")),
        "" if ignore_port else str(point["port"]),
        normalize_spec(point["concurrency"]["spec"]),
        normalize_spec(point["pool"]["spec"]),
        # Ratios come from decimal text (0.5, 0.9); rounding absorbs float noise a writer
        # may add when it converts them.
        round(float(blocking["ratio"]), 6),
        str(blocking.get("kind", "")),
        round(float(point["work_us"]), 6),
    )


def _fmt_num(x: float) -> str:
    return f"{x:g}"


def point_label(point: dict[str, Any], *, ignore_port: bool = False) -> str:
    """A short human label; the harness's `id` when it wrote one (it is what users grep for)."""
    if isinstance(point.get("id"), str) and point["id"] and not ignore_port:
        return point["id"]
    key = spec_key(point, ignore_port=ignore_port)
    parts = [key[0]]
    if key[2]:
        parts.append(key[2])
    parts += [f"c={key[3]}", f"p={key[4]}", f"b={_fmt_num(key[5])}", f"w={_fmt_num(key[7])}"]
    if key[6] and key[6] != "sleep":
        parts.append(key[6])
    if key[1] not in ("", "{}"):
        parts.append(key[1])
    return "/".join(parts)


@dataclass
class Matching:
    """Pairs of (base, new) points with the same spec key, and the leftovers of each side."""

    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    only_base: list[dict[str, Any]] = field(default_factory=list)
    only_new: list[dict[str, Any]] = field(default_factory=list)
    # Points whose key repeats within one file (a resumed sweep gone wrong, two files
    # concatenated): the first one is used, the rest are listed so they are not silently lost.
    duplicates: list[dict[str, Any]] = field(default_factory=list)


def index_points(
    points: Iterable[dict[str, Any]], *, ignore_port: bool = False
) -> tuple[dict[SpecKey, dict[str, Any]], list[dict[str, Any]]]:
    index: dict[SpecKey, dict[str, Any]] = {}
    dups: list[dict[str, Any]] = []
    for p in points:
        key = spec_key(p, ignore_port=ignore_port)
        if key in index:
            dups.append(p)
        else:
            index[key] = p
    return index, dups


def match_points(
    base: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]], *, ignore_port: bool = False
) -> Matching:
    """Pair points by spec key, in the base file's order."""
    base_index, base_dups = index_points(base, ignore_port=ignore_port)
    new_index, new_dups = index_points(new, ignore_port=ignore_port)
    m = Matching(duplicates=base_dups + new_dups)
    for key, bp in base_index.items():
        if key in new_index:
            m.pairs.append((bp, new_index[key]))
        else:
            m.only_base.append(bp)
    m.only_new = [np for key, np in new_index.items() if key not in base_index]
    return m
