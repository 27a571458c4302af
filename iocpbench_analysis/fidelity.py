"""Whether a point's blocking ratio is what was asked (docs/targets.md F1), read from the point's
`blocking_fidelity` block and its runs' `handler_time` (the harness judges each point; this reads
the verdict, says why, and finds the worst deviations of a file). Pure functions; the text is
fidelity_text.py's."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

TOLERANCE = 0.03  # the harness's kBlockingTolerance (engine/block_control.hpp)


def fidelity_problem(point: dict[str, Any]) -> str | None:
    """Why a point's blocking ratio is not what was asked (None when it is, or when the file
    predates blocking_fidelity: those count as within tolerance)."""
    fid = point.get("blocking_fidelity")
    if not isinstance(fid, dict) or fid.get("within_tolerance") is not False:
        return None
    achieved, blocked = fid.get("achieved_median"), fid.get("blocked_only_median")
    got = f"achieved {achieved:.3f}" if isinstance(achieved, (int, float)) else "achieved n/a"
    if isinstance(blocked, (int, float)):
        got += f", blocked-only {blocked:.3f}"
    tol = fid.get("tolerance")
    reason = f"; {fid['reason']}" if fid.get("reason") else ""
    return (f"requested {fid.get('requested', point['blocking']['ratio'])}, {got}"
            + (f", tolerance {tol}" if isinstance(tol, (int, float)) else "") + reason)


@dataclass(frozen=True)
class FidelityRow:
    """One point (or one ratio of a profiled point): what was asked and what its runs read."""

    point_id: str
    requested: float
    achieved: float | None       # median over the runs, runnable wait included
    blocked_only: float | None   # median over the runs, runnable wait excluded (None: not split)
    overshoot_us: float | None   # the blocks' mean overshoot of their target, mean over the runs
    target_us: float | None      # the blocks' mean target
    late_wakeups: int | None     # sleeps woken over 1 ms late, summed (None: not recorded)
    pool_fits: bool              # pool <= logical CPUs: no runnable wait expected

    def overshoots(self) -> bool:
        """The blocks overshoot by more than max(5% of the target, 2 us) (the run's rule)."""
        if self.overshoot_us is None or self.target_us is None:
            return False
        return self.overshoot_us > max(0.05 * self.target_us, 2.0)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _median_of(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [v for v in (_number(r.get(key)) for r in runs) if v is not None]
    return statistics.median(values) if values else None


def _handler_times(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r["handler_time"] for r in runs if isinstance(r.get("handler_time"), dict)]


def _mean_of(parts: list[dict[str, Any]], key: str) -> float | None:
    values = [v for v in (_number(p.get(key)) for p in parts) if v is not None]
    return statistics.mean(values) if values else None


def _late_wakeups(parts: list[dict[str, Any]]) -> int | None:
    counts = [p["late_wakeups"] for p in parts if isinstance(p.get("late_wakeups"), int)]
    return sum(counts) if counts else None


def point_rows(point: dict[str, Any], logical_cpus: int) -> list[FidelityRow]:
    """A point's rows: one, or one per ratio of a blocking profile (blocking_fidelity.levels,
    each judged against its own request by the harness)."""
    runs = point.get("runs", [])
    parts = _handler_times(runs)
    common = {
        "point_id": str(point.get("id", "?")),
        "overshoot_us": _mean_of(parts, "block_overshoot_us_mean"),
        "target_us": _mean_of(parts, "target_block_us_mean"),
        "late_wakeups": _late_wakeups(parts),
        "pool_fits": logical_cpus > 0 and int(point["pool"].get("value") or 0) <= logical_cpus,
    }
    levels = (point.get("blocking_fidelity") or {}).get("levels")
    if isinstance(levels, list) and levels:
        return [FidelityRow(requested=float(level["requested"]), achieved=_number(level.get("achieved_median")),
                            blocked_only=_number(level.get("blocked_only_median")),
                            **{**common, "point_id": f"{common['point_id']} @{float(level['requested']):g}"})
                for level in levels]
    return [FidelityRow(requested=float(point["blocking"]["ratio"]),
                        achieved=_median_of(runs, "achieved_blocking_ratio"),
                        blocked_only=_median_of(runs, "blocked_only_ratio"), **common)]


def file_rows(doc: dict[str, Any]) -> list[FidelityRow]:
    cpus = int(doc["machine"].get("logical_cpus") or 0)
    return [row for p in doc["points"] for row in point_rows(p, cpus)]


@dataclass(frozen=True)
class Worst:
    deviation: float   # |ratio - requested|
    point_id: str      # "-" when no row had the ratio

    def met(self) -> bool:
        return self.deviation <= TOLERANCE + 1e-12


def worst(rows: list[FidelityRow], ratio: str, only_fitting: bool) -> Worst:
    """The largest |ratio - requested| over the blocking rows (ratio: "achieved" or
    "blocked_only"; only_fitting: only rows whose pool fits the CPUs)."""
    pick = [(getattr(r, ratio), r) for r in rows
            if getattr(r, ratio) is not None and r.requested > 0 and (r.pool_fits or not only_fitting)]
    if not pick:
        return Worst(0.0, "-")
    value, row = max(pick, key=lambda vr: abs(vr[0] - vr[1].requested))
    return Worst(abs(value - row.requested), row.point_id)


# ---------------------------------------------------------------- the harness's judge, in Python
# A point's blocking_fidelity recomputed from its runs exactly as the harness writes it
# (harness/engine/blocking_judge.cpp and results/blocking_fidelity.cpp), for files whose runs
# were merged from several sweeps (iocpbench-ab). tests/python/test_ab.py checks it against
# files the harness wrote, a profiled one among them.

_SAME_LEVEL = 1e-9

Level = tuple[float, float, float | None]  # requested, achieved, blocked-only (None: not split)


def _run_levels(run: dict[str, Any], requested: float) -> list[Level]:
    ht = run.get("handler_time") if isinstance(run.get("handler_time"), dict) else None
    if ht is not None and isinstance(ht.get("profile_levels"), list):
        out: list[Level] = []
        for lv in ht["profile_levels"]:
            level, achieved = _number(lv.get("requested_ratio")), _number(lv.get("achieved_ratio"))
            if level is not None and achieved is not None:
                out.append((level, achieved, _number(lv.get("blocked_only_ratio"))))
        return out
    if requested > 0 and ht is not None and _number(ht.get("blocking_handlers")) == 0:
        return []
    achieved = _number(run.get("achieved_blocking_ratio"))
    if achieved is None:
        return []
    return [(requested, achieved, _number(run.get("blocked_only_ratio")))]


def _judge(readings: list[list[Level]], tolerance: float) -> tuple[list[dict[str, Any]], str | None]:
    """Each level's medians over the runs, and why any is off its request (None: all within)."""
    order: list[float] = []
    for run in readings:
        for level, _, _ in run:
            if not any(abs(level - seen) < _SAME_LEVEL for seen in order):
                order.append(level)
    levels, off = [], []
    what = "achieved" if len(readings) == 1 else "median"
    for level in order:
        mine = [lv for run in readings for lv in run if abs(lv[0] - level) < _SAME_LEVEL]
        achieved = statistics.median(lv[1] for lv in mine)
        blocked = [lv[2] for lv in mine if lv[2] is not None]
        blocked_only = statistics.median(blocked) if blocked else None
        levels.append({"requested": level, "achieved_median": achieved, "blocked_only_median": blocked_only})
        judged = blocked_only if blocked_only is not None else achieved
        if abs(judged - level) > tolerance + 1e-12:
            prefix = f"at the profile's {level:.2f}: " if len(order) > 1 else ""
            off.append(f"{prefix}{what} {judged:.3f} for a requested {level:.2f} (tolerance {tolerance:.2f})")
    return levels, "; ".join(off) if off else None


def _has_levels(run: dict[str, Any]) -> bool:
    return isinstance(run.get("handler_time"), dict) and "profile_levels" in run["handler_time"]


def judge_point(point: dict[str, Any], tolerance: float) -> dict[str, Any]:
    """The point's blocking_fidelity block, as the harness writes it."""
    requested = float(point.get("blocking", {}).get("ratio", 0.0))
    runs = [r for r in point.get("runs") or [] if isinstance(r, dict)]
    blocked_only = _median_of(runs, "blocked_only_ratio")
    out: dict[str, Any] = {"tolerance": tolerance, "requested": requested,
                           "achieved_median": _median_of(runs, "achieved_blocking_ratio"),
                           "blocked_only_median": blocked_only,
                           "judged_on": "blocked_only_ratio" if blocked_only is not None else "achieved_blocking_ratio"}
    profiled = any(_has_levels(r) for r in runs)
    readings = [lv for lv in (_run_levels(r, requested) for r in runs if _has_levels(r) or not profiled) if lv]
    if not readings:
        out["within_tolerance"] = requested == 0
        out["reason"] = (None if requested == 0 else "no runs" if not runs
                         else "no blocking handler ran in any run")
        return out
    levels, off = _judge(readings, tolerance)
    if profiled:
        out["levels"] = levels
    out["within_tolerance"] = off is None
    if off is not None:
        hints = [r["handler_time"]["hint"] for r in runs
                 if isinstance(r.get("handler_time"), dict) and isinstance(r["handler_time"].get("hint"), str)]
        off += f"; {hints[0]}" if hints else ""
    out["reason"] = off
    return out
