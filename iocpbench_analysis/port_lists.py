"""The port's lists over a run (runs[].port_lists; docs/port-semantics.md, "The lists over a
run"): per point, the medians over its runs of the lists' time-weighted means, of the wake-up
delay, of the time released threads spent not running and of the time a packet was queued
while the port had room; and one run's first transitions as step series, for a chart.

A run has no lists where the port keeps none (the kernel's IOCP, the comparison ports,
per-thread dispatch, --no-metrics: port_lists null with port_lists_unavailable_because) or in
a file from before they were kept (no port_lists key): every function here then gives None.
Pure functions of the parsed file; nothing is drawn here (charts.py draws).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .stats import median

LISTS = ("waiting", "active", "paused", "depth")
LIST_TEXT = {
    "waiting": "waiting: threads in the port (W), waiting for a packet",
    "active": "active (C): released threads the port counts against M",
    "paused": "paused: released threads blocked in a blocking region (not counted in C)",
    "depth": "queue depth: packets queued in the port (E)",
}


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def run_lists(run: Any) -> dict[str, Any] | None:
    """A run's port_lists block, or None (absent, null, or not an object)."""
    if not isinstance(run, dict):
        return None
    lists = run.get("port_lists")
    return lists if isinstance(lists, dict) else None


def _runs(point: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in point.get("runs") or [] if isinstance(r, dict)]


def runs_with_lists(point: dict[str, Any]) -> list[dict[str, Any]]:
    """The port_lists blocks of a point's runs that have one, in the file's order."""
    return [lists for r in _runs(point) if (lists := run_lists(r)) is not None]


def has_lists(point: dict[str, Any]) -> bool:
    return bool(runs_with_lists(point))


def any_lists(points: list[dict[str, Any]]) -> bool:
    return any(has_lists(p) for p in points)


def unavailable_reason(point: dict[str, Any]) -> str | None:
    """Why a point's runs have no lists, as the harness wrote it (the first run's reason);
    None where a run has lists or no run gives a reason (an older file)."""
    if has_lists(point):
        return None
    for r in _runs(point):
        why = r.get("port_lists_unavailable_because")
        if isinstance(why, str) and why:
            return why
    return None


def _ratio(num: Any, den: Any) -> float | None:
    if not (_number(num) and _number(den)) or den <= 0:
        return None
    return float(num) / float(den)


def released_not_running(lists: dict[str, Any]) -> float | None:
    """Released but not running: the wake-up delays' total over the window's length, the
    number of threads the port counted in C on average that had not run yet since their
    handoff."""
    wake = lists.get("wake_delay")
    return _ratio(wake.get("total_s") if isinstance(wake, dict) else None, lists.get("window_s"))


def queued_with_room(lists: dict[str, Any]) -> float | None:
    """Queued with room: the share of the window with a packet queued, a thread waiting and
    C < M at once."""
    return _ratio(lists.get("queued_with_room_s"), lists.get("window_s"))


def _median_of(values: list[Any]) -> float | None:
    return median([float(v) for v in values if _number(v)])


def _range_of(values: list[float | None]) -> tuple[float, float] | None:
    xs = [v for v in values if v is not None]
    return (min(xs), max(xs)) if xs else None


@dataclass(frozen=True)
class PointLists:
    """One point's lists, each a median over the runs that have them."""

    runs: int  # runs with lists
    concurrency: int | None  # M
    mean: dict[str, float | None]  # time-weighted mean of each list (LISTS)
    handoffs: float | None  # handoffs timed a run
    # The wake-up delay (handoff to running), over the runs with at least one handoff: a run
    # without one has no delay to report (the harness writes 0 there).
    wake_mean_us: float | None
    wake_p50_us: float | None
    wake_p99_us: float | None
    released_not_running: float | None  # threads, on average (wake total / window)
    released_not_running_range: tuple[float, float] | None  # min, max over the runs
    queued_with_room: float | None  # share of the window
    queued_with_room_range: tuple[float, float] | None


def point_lists(point: dict[str, Any]) -> PointLists | None:
    """The medians over a point's runs, or None where no run has lists."""
    blocks = runs_with_lists(point)
    if not blocks:
        return None
    means = [b.get("mean") if isinstance(b.get("mean"), dict) else {} for b in blocks]
    wakes = [b.get("wake_delay") if isinstance(b.get("wake_delay"), dict) else {} for b in blocks]
    woke = [w for w in wakes if _number(w.get("handoffs")) and w["handoffs"] > 0]
    conc = [int(b["concurrency"]) for b in blocks if _number(b.get("concurrency"))]
    rnr = [released_not_running(b) for b in blocks]
    qwr = [queued_with_room(b) for b in blocks]
    return PointLists(
        runs=len(blocks),
        concurrency=conc[0] if conc else None,
        mean={name: _median_of([m.get(name) for m in means]) for name in LISTS},
        handoffs=_median_of([w.get("handoffs") for w in wakes]),
        wake_mean_us=_median_of([w.get("mean_us") for w in woke]),
        wake_p50_us=_median_of([w.get("p50_us") for w in woke]),
        wake_p99_us=_median_of([w.get("p99_us") for w in woke]),
        released_not_running=_median_of(rnr),
        released_not_running_range=_range_of(rnr),
        queued_with_room=_median_of(qwr),
        queued_with_room_range=_range_of(qwr),
    )


@dataclass(frozen=True)
class StepSeries:
    """One run's recorded transitions as steps: at t_ms[i] each list took its value [i] and
    kept it until t_ms[i + 1]. Where the record was not cut, a last step carries the levels
    on to the window's end; where it was (`cut`), the series ends at the last transition
    recorded and the rest of the window is not shown."""

    repetition: int | None
    concurrency: int | None  # M
    window_ms: float | None
    cut: bool
    t_ms: list[float]
    levels: dict[str, list[float]]  # LISTS -> one value per t_ms
    recorded: int  # transitions recorded (the carried-on end step is not one)

    @property
    def shown_ms(self) -> float:
        """The part of the window the series covers."""
        return self.t_ms[-1] if self.t_ms else 0.0


def _events_columns(lists: dict[str, Any]) -> tuple[list[float], dict[str, list[float]], bool] | None:
    """The events' columns cut to their common length (a malformed file's longer columns lose
    their tail); None where there are none."""
    events = lists.get("events")
    if not isinstance(events, dict):
        return None
    cols = {k: events.get(k) for k in ("t_us", *LISTS)}
    if not all(isinstance(c, list) for c in cols.values()):
        return None
    n = min(len(c) for c in cols.values())
    rows = [i for i in range(n) if all(_number(c[i]) for c in cols.values())]
    if not rows:
        return None
    t_ms = [float(cols["t_us"][i]) / 1000 for i in rows]
    levels = {k: [float(cols[k][i]) for i in rows] for k in LISTS}
    return t_ms, levels, events.get("cut") is True


def event_series(point: dict[str, Any]) -> StepSeries | None:
    """The first run's recorded transitions (repetition 0 where it has them, else the
    lowest-numbered run that does), or None where no run recorded any."""
    candidates = []
    for i, r in enumerate(_runs(point)):
        lists = run_lists(r)
        cols = _events_columns(lists) if lists is not None else None
        if lists is None or cols is None:
            continue
        rep = r.get("repetition")
        order = (0, int(rep)) if _number(rep) else (1, i)
        candidates.append((order, rep if _number(rep) else None, lists, cols))
    if not candidates:
        return None
    _, rep, lists, (t_ms, levels, cut) = min(candidates, key=lambda c: c[0])
    window_ms = float(lists["window_s"]) * 1000 if _number(lists.get("window_s")) else None
    recorded = len(t_ms)
    if not cut and window_ms is not None and window_ms > t_ms[-1]:
        t_ms = [*t_ms, window_ms]
        levels = {k: [*v, v[-1]] for k, v in levels.items()}
    conc = lists.get("concurrency")
    return StepSeries(repetition=int(rep) if rep is not None else None,
                      concurrency=int(conc) if _number(conc) else None,
                      window_ms=window_ms, cut=cut, t_ms=t_ms, levels=levels, recorded=recorded)
