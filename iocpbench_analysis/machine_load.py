"""Points measured on a busy machine: what each run recorded of the other work on its CPUs
(`runs[].machine_load`: busy, the reasons, steal time, other processes' CPU share, the share
of the workers' preemptions that other processes caused).

A run without the object was written before the harness measured it: its machine load is
unknown, never busy. A point is marked busy when any of its runs says busy: its median may
then rest on a run that measured the neighbours as much as the port.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .match import point_label

MARK = "busy"  # the report's and the charts' mark beside a busy point
LEGEND = ("busy: measured on a busy machine; at least one run of this point saw other work on its "
          "CPUs (runs[].machine_load: preemptions by other processes, steal time, other processes' "
          "CPU share), so its numbers may be the neighbours' as much as the port's")


def run_load(run: Any) -> dict[str, Any] | None:
    """A run's machine_load object, or None where the run has none (unknown)."""
    load = run.get("machine_load") if isinstance(run, dict) else None
    return load if isinstance(load, dict) else None


def run_busy(run: Any) -> bool:
    """True only where the run recorded busy; absent or malformed reads as not busy."""
    load = run_load(run)
    return load is not None and load.get("busy") is True


def busy_runs(point: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in point.get("runs") or [] if run_busy(r)]


def is_busy(point: dict[str, Any]) -> bool:
    return bool(busy_runs(point))


def busy_points(points: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in points if is_busy(p)]


def reasons(point: dict[str, Any]) -> list[str]:
    """The distinct reasons the busy runs of a point gave, in first-seen order."""
    out: list[str] = []
    for run in busy_runs(point):
        for why in (run_load(run) or {}).get("reasons") or []:
            if isinstance(why, str) and why not in out:
                out.append(why)
    return out


def point_text(point: dict[str, Any], label: Callable[[dict[str, Any]], str] = point_label) -> str:
    """"post/emulated/c=N/p=N/b=0/sleep/w=20 (2 of 5 runs: steal 12%)"."""
    runs = point.get("runs") or []
    why = reasons(point)
    return f"{label(point)} ({len(busy_runs(point))} of {len(runs)} runs" + (f": {'; '.join(why)})" if why else ")")


def busy_line(points: Iterable[dict[str, Any]], label: Callable[[dict[str, Any]], str] = point_label) -> str | None:
    """One line naming the points measured on a busy machine, or None when there are none."""
    busy = busy_points(points)
    if not busy:
        return None
    return (f"measured on a busy machine ({len(busy)} point(s)): "
            + ", ".join(point_text(p, label) for p in busy))
