"""The I/O depth of a file or socket point: the depth asked for (`--outstanding`, one receive
per connection) beside the depth held, measured per run (runs[].workload_stats.inflight_depth:
the time-weighted mean, the maximum, the time share per depth) and Little's law's estimate
(runs[].achieved_outstanding: throughput x mean end-to-end time, handler included); and a file
point's equivalent fio and DiskSpd command lines (points[].peer_commands).

Files written before these fields read as "no depth" (None): nothing here requires them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .stats import median


@dataclass(frozen=True)
class PointDepth:
    requested: int | None
    requested_by: str | None
    mean: float | None  # median over the runs of each run's time-weighted mean
    max: int | None  # the largest over the runs
    full_share: float | None  # median share of the window at the requested depth or over
    littles_law: float | None  # median over the runs of achieved_outstanding
    runs: int  # runs that measured it
    unavailable_because: str | None  # why no run measured it, where the runs say


@dataclass(frozen=True)
class PeerCommands:
    fio: str
    diskspd: str
    notes: tuple[str, ...]


def _depth_blocks(point: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = []
    for run in point.get("runs") or []:
        block = (run.get("workload_stats") or {}).get("inflight_depth")
        if isinstance(block, dict) and isinstance(block.get("mean"), (int, float)):
            blocks.append(block)
    return blocks


def _unavailable(point: dict[str, Any]) -> str | None:
    for run in point.get("runs") or []:
        reason = (run.get("workload_stats") or {}).get("inflight_depth_unavailable_because")
        if isinstance(reason, str):
            return reason
    return None


def full_share(block: dict[str, Any]) -> float | None:
    """The share of the window at the requested depth or deeper."""
    requested = block.get("requested")
    buckets = block.get("time_share_by_depth")
    if not isinstance(requested, int) or not isinstance(buckets, list):
        return None
    return sum(float(b.get("time_share", 0)) for b in buckets
               if isinstance(b, dict) and isinstance(b.get("depth_max"), int) and b["depth_max"] >= requested)


def point_depth(point: dict[str, Any]) -> PointDepth | None:
    """The point's depth, or None where no run records the field (older files, other workloads)."""
    blocks = _depth_blocks(point)
    reason = _unavailable(point)
    if not blocks and reason is None:
        return None
    littles = [float(r["achieved_outstanding"]) for r in point.get("runs") or []
               if isinstance(r.get("achieved_outstanding"), (int, float))]
    shares = [s for s in (full_share(b) for b in blocks) if s is not None]
    maxima = [int(b["max"]) for b in blocks if isinstance(b.get("max"), int)]
    first = blocks[0] if blocks else {}
    return PointDepth(
        requested=first.get("requested") if isinstance(first.get("requested"), int) else None,
        requested_by=first.get("requested_by") if isinstance(first.get("requested_by"), str) else None,
        mean=median([float(b["mean"]) for b in blocks]),
        max=max(maxima) if maxima else None,
        full_share=median(shares),
        littles_law=median(littles),
        runs=len(blocks),
        unavailable_because=None if blocks else reason,
    )


def peer_commands(point: dict[str, Any]) -> PeerCommands | None:
    """A file point's fio and DiskSpd lines, or None (other workloads, older files)."""
    block = point.get("peer_commands")
    if not isinstance(block, dict) or not isinstance(block.get("fio"), str):
        return None
    notes = block.get("notes")
    return PeerCommands(fio=block["fio"], diskspd=str(block.get("diskspd", "")),
                        notes=tuple(str(n) for n in notes) if isinstance(notes, list) else ())
