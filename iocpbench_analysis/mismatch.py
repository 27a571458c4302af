"""Why points did not match: for each point of one file that has no partner in the other, the
nearest point there (the fewest identity fields apart) and the fields that differ; and whether
the whole difference is one of grids (every unmatched point differs from its nearest in the
same fields, the same way), which a user fixes by rerunning with the other file's settings, not
by looking for a regression.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .match import identity

Difference = tuple[str, str, str]  # (field, base value, new value), values as text


@dataclass(frozen=True)
class Unmatched:
    point: dict[str, Any]
    nearest: dict[str, Any] | None  # the other file's closest point, None when it has none
    differences: list[Difference]  # from this point to `nearest`, (field, this side, that side)


def flat_identity(point: dict[str, Any], *, ignore_port: bool = False) -> dict[str, Any]:
    """A point's identity (match.identity) one level flat: a workload parameter under its own
    name (file_size_mib), another object's parts as field.part (blocking.ratio)."""
    flat: dict[str, Any] = {}
    for name, value in identity(point, ignore_port=ignore_port).items():
        if isinstance(value, dict):
            for part, v in value.items():
                flat[part if name == "workload_params" else f"{name}.{part}"] = v
        else:
            flat[name] = value
    return flat


def _text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, float):
        return f"{value:g}"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def differences(a: dict[str, Any], b: dict[str, Any], *, ignore_port: bool = False) -> list[Difference]:
    """The identity fields in which point a differs from point b, sorted by field."""
    fa, fb = flat_identity(a, ignore_port=ignore_port), flat_identity(b, ignore_port=ignore_port)
    return [(k, _text(fa.get(k)), _text(fb.get(k))) for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)]


def explain(points: Sequence[dict[str, Any]], others: Sequence[dict[str, Any]], *,
            ignore_port: bool = False) -> list[Unmatched]:
    """Each of `points` with its nearest in `others` (ties: the first) and their differences."""
    out = []
    for p in points:
        best: tuple[dict[str, Any] | None, list[Difference]] = (None, [])
        for q in others:
            d = differences(p, q, ignore_port=ignore_port)
            if best[0] is None or len(d) < len(best[1]):
                best = (q, d)
        out.append(Unmatched(p, best[0], best[1]))
    return out


def differences_text(diffs: Sequence[Difference]) -> str:
    """"file_size_mib 64 vs 256, work_us 10 vs 20"."""
    return ", ".join(f"{name} {a} vs {b}" for name, a, b in diffs)


def grid_difference(unmatched: Sequence[Unmatched]) -> list[Difference]:
    """The differences in the fields in which every unmatched point differs from its nearest
    partner, where each has one: a difference of grids (one file measured with other
    settings), each (field, this side, that side) once. Empty where the points differ each in
    their own fields, or some point has no partner."""
    if not unmatched or any(u.nearest is None or not u.differences for u in unmatched):
        return []
    common = set.intersection(*({name for name, _, _ in u.differences} for u in unmatched))
    return sorted({d for u in unmatched for d in u.differences if d[0] in common})


def flag_text(diffs: Sequence[Difference]) -> str:
    """The harness flags that set the differing fields to the base's values, as a user would
    type them ("--file-size-mib 256"); fields without a flag of their own name are left out."""
    flags: dict[str, str] = {}
    for name, base, _ in diffs:
        if (re.fullmatch(r"[a-z][a-z0-9_]*", name) and name not in ("workload", "port", "dispatch", "metrics")
                and base != "none" and name not in flags):
            flags[name] = f"--{name.replace('_', '-')} {base}"
    return " ".join(flags.values())
