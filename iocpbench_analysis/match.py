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
# Parameters of the measurement, not of the workload (the post workload's latency sample: one
# packet in K timed): they change how latency is sampled, not what runs, so files written
# before and after such a parameter existed still line up.
MEASUREMENT_PARAMS = frozenset({"latency_sample_every"})
# How the emulation brings I/O completions to the port on Linux (`--completion-path`): the same
# experiment (workload, port, concurrency, pool, blocking), reached by a different route, so
# an older file (thread) still meets a newer one (port). compare says which each side used.
EMULATION_PARAMS = frozenset({"completion_path"})
# The workloads whose I/O takes a completion path, and what a point of theirs without the
# field was measured on: results recorded only `port` while `thread` was the default, and every
# point records its path since `port` became the default (results.schema.json).
IO_WORKLOADS = frozenset({"file", "socket"})
LEGACY_COMPLETION_PATH = "thread"

SpecKey = tuple[str, str, str, str, str, float, str, float]


AUTO = "auto"
# auto[:MIN:MAX[:GROW_BELOW_PCT:SHRINK_ABOVE_PCT[:IDLE_MS]]], as the harness's pool_spec.hpp;
# its parameters go in groups, and only a whole group can be left to its defaults.
AUTO_DEFAULTS = ("N", "4N", "75", "90", "100")
AUTO_GROUPS = ((0, 2), (2, 4), (4, 5))


def is_auto_spec(spec: Any) -> bool:
    """A self-sizing pool ("auto", "auto:1:8") rather than a thread count."""
    return "".join(str(spec).split())[:4].lower() == AUTO


def _same_param(a: str, b: str) -> bool:
    # Percentages may be written 75 or 75.0; counts (N, 4N) compare as text.
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b


def _normalize_auto(text: str) -> str:
    """An auto spec as the harness writes it ("AUTO:n:4n:75:90" -> "auto"): the keyword
    lower-case, the N of the counts capital, and whole groups at their defaults dropped from
    the right, so a file that spelled the defaults out still meets one that did not."""
    params = [p.upper() for p in text[len(AUTO):].split(":")[1:]]
    for start, end in reversed(AUTO_GROUPS):
        if len(params) == end and all(_same_param(params[i], AUTO_DEFAULTS[i]) for i in range(start, end)):
            params = params[:start]
    return ":".join([AUTO, *params])


def normalize_spec(spec: Any) -> str:
    """Spell a concurrency/pool spec one way: no spaces, capital N ("2n + 2" -> "2N+2");
    an auto pool keeps its lower-case keyword ("Auto:1:4n" -> "auto:1:4N")."""
    text = "".join(str(spec).split())
    if is_auto_spec(text):
        return _normalize_auto(text)
    return text.upper()


def params_key(params: Any) -> str:
    if not isinstance(params, dict):
        return ""
    ignored = MACHINE_LOCAL_PARAMS | MEASUREMENT_PARAMS | EMULATION_PARAMS
    kept = {k: v for k, v in params.items() if k not in ignored}
    return json.dumps(kept, sort_keys=True, separators=(",", ":"))


def completion_path(point: dict[str, Any]) -> str | None:
    """The completion path a point's I/O took (file, socket), by the schema's rule: the
    recorded one, else thread; None for a workload without I/O (post)."""
    if str(point.get("workload")) not in IO_WORKLOADS:
        return None
    params = point.get("workload_params")
    path = params.get("completion_path") if isinstance(params, dict) else None
    return str(path) if isinstance(path, str) and path else LEGACY_COMPLETION_PATH


def completion_paths(points: Iterable[dict[str, Any]]) -> dict[str, int]:
    """How many I/O points took each completion path, by path name (sorted)."""
    counts: dict[str, int] = {}
    for p in points:
        path = completion_path(p)
        if path is not None:
            counts[path] = counts.get(path, 0) + 1
    return dict(sorted(counts.items()))


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
