"""The pool controllers' scores (controllers.py) as text tables and as JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .controllers import GroupScore, Recovery, Row, Share

HEAD = ("pool", "threads", "share of best (95% CI)", "settled threads", "recovery per step",
        "switches/completion", "p99 us (x best fixed)")


def fmt_num(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}g}"


def share_text(s: Share, best: bool) -> str:
    if best:
        return "1 (best fixed)"
    if s.ratio is None:
        return "n/a"
    ci = f" [{s.ci95_low:.3f}, {s.ci95_high:.3f}]" if s.ci95_low is not None and s.ci95_high is not None else ""
    return f"{s.ratio:.3f}{ci}"


def recovery_text(row: Row) -> str:
    if not row.recovery:
        return "n/a"
    return ", ".join(_one_recovery(r) for r in row.recovery)


def _one_recovery(r: Recovery) -> str:
    if r.recovery_ms is None:
        return "never" if r.new_best_ops_per_s is not None and r.runs else "n/a"
    return f"{r.recovery_ms:g} ms"


def threads_text(row: Row) -> str:
    if row.pool_value is None:
        return "n/a"
    return f"max {row.pool_value}" if row.controller else str(row.pool_value)


def p99_text(row: Row) -> str:
    if row.p99_us is None:
        return "-"
    ratio = f" (x{row.p99_ratio_to_best_fixed:.2f})" if row.p99_ratio_to_best_fixed is not None else ""
    return f"{row.p99_us:.4g}{ratio}"


def row_cells(row: Row) -> list[str]:
    return [row.pool + (" *" if row.best else ""), threads_text(row), share_text(row.share, row.best),
            fmt_num(row.settled_threads), recovery_text(row), fmt_num(row.switches_per_completion),
            p99_text(row)]


def row_notes(row: Row) -> list[str]:
    """Why a controller's cells are n/a, one line each."""
    if row.controller is None:
        return []
    notes = [(label, why) for label, why in (
        ("share", row.share.reason), ("settled threads", row.settled_reason),
        ("recovery", row.recovery_reason), ("switches", row.switches_reason)) if why]
    notes += [(f"recovery at {r.t_ms / 1000:g} s", r.reason) for r in row.recovery if r.reason]
    if row.p99_reason and row.p99_reason != "not an open-loop point":
        notes.append(("p99", row.p99_reason))
    return [f"  {row.pool}: {label}: {why}" for label, why in notes]


def steps_text(group: GroupScore) -> str:
    return ", ".join(f"{t / 1000:g} s ({a:g} -> {b:g})" for t, a, b in group.steps)


def group_text(group: GroupScore) -> str:
    """One group's table, its best fixed pool starred, n/a cells explained below it."""
    lines = [f"== {group.label}"]
    if not group.judged:
        return "\n".join(lines + [f"cannot judge: {group.reason}", ""]) + "\n"
    where = f"profile {group.profile}; steps at {steps_text(group) or 'none in the window'}" if group.profile \
        else "no blocking profile"
    lines.append(f"best fixed pool: {group.best_fixed}; {where}")
    table = [list(HEAD)] + [row_cells(r) for r in group.rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(HEAD))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in table]
    notes = [n for r in group.rows for n in row_notes(r)]
    if notes:
        lines += ["n/a because:"] + notes
    return "\n".join(lines) + "\n\n"


def text_report(groups: Sequence[GroupScore]) -> str:
    return "".join(group_text(g) for g in groups)


def json_scores(files: Sequence[tuple[str, Sequence[GroupScore]]]) -> dict[str, Any]:
    """The scores, machine-readable: {"files": [{"path", "groups": [GroupScore.as_dict()]}]}."""
    return {"files": [{"path": path, "groups": [g.as_dict() for g in groups]} for path, groups in files]}
