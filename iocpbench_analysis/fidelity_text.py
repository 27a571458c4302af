"""The blocking-fidelity report of a results file as text (iocpbench-fidelity): a row per point
(per ratio of a profiled point), then the worst deviations. Computation is fidelity.py's."""

from __future__ import annotations

from typing import Any

from .fidelity import TOLERANCE, file_rows, worst


def _cell(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def fidelity_report(doc: dict[str, Any]) -> str:
    rows = file_rows(doc)
    lines = [f"{'point':58s} {'requested':>9s} {'achieved':>9s} {'blocked':>9s} {'overshoot_us':>13s} "
             f"{'target_us':>10s} {'late':>5s}"]
    for r in rows:
        late = "-" if r.late_wakeups is None else str(r.late_wakeups)
        lines.append(f"{r.point_id[:58]:58s} {r.requested:9.2f} {_cell(r.achieved):>9s} {_cell(r.blocked_only):>9s} "
                     f"{_cell(r.overshoot_us, 1):>13s} {_cell(r.target_us, 1):>10s} {late:>5s}")
    achieved = worst(rows, "achieved", only_fitting=True)
    blocked = worst(rows, "blocked_only", only_fitting=False)
    with_blocks = [r for r in rows if r.overshoot_us is not None]
    late_rows = [r for r in rows if r.late_wakeups]
    m, tool = doc["machine"], doc.get("tool", {})
    lines += [
        "",
        f"machine: {m.get('hostname')} {m.get('cpu_model')} x{m.get('logical_cpus')}, kernel {m.get('kernel')}; "
        f"build {tool.get('git')}",
        f"worst |achieved - requested|, pool <= N:     {achieved.deviation:.3f} ({achieved.point_id})  "
        f"target <= {TOLERANCE}: " + ("met" if achieved.met() else "NOT met"),
        f"worst |blocked-only - requested|, any pool: {blocked.deviation:.3f} ({blocked.point_id})  "
        f"target <= {TOLERANCE}: " + ("met" if blocked.met() else "NOT met"),
        f"points whose blocks overshoot by more than max(5%, 2 us): "
        f"{sum(1 for r in with_blocks if r.overshoots())} of {len(with_blocks)}",
        "sleeps woken over 1 ms late (the host's; repaid by later sleeps): "
        + ("not recorded (results made before the field)" if all(r.late_wakeups is None for r in rows)
           else f"{sum(r.late_wakeups or 0 for r in rows)} in {len(late_rows)} points"),
    ]
    return "\n".join(lines) + "\n"
