"""The report's HTML for pool controllers (controllers.py computes, controllers_text.py spells
the cells): per group of a family with controllers, the score table against the best fixed
pool, with the reasons for n/a cells below it. A family without controllers gets nothing."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from . import controllers as ctl
from .controllers_text import HEAD, row_cells, row_notes, steps_text

E = html.escape

EXPLAIN = ("Share: mean throughput over the best fixed pool's (the fixed pool with the highest mean, "
           "starred), Fieller's 95% interval over the runs. Settled threads: the time-weighted mean of "
           "the timeline's threads over the profile's last segment (without a profile, the window's last "
           "quarter), median over runs; a fixed pool's size. Recovery: from a step of the blocking profile "
           "to the first window reaching 90% of the new best (the best fixed pool's mean ops/s in the new "
           "segment), median over runs; never: not before the next step. Switches per completion: median "
           "over runs. p99 (open loop): median over runs, and its ratio to the lowest fixed p99.")


def group_table(group: ctl.GroupScore) -> str:
    head = f"<h5>{E(group.label)}</h5>"
    if not group.judged:
        return head + f'<p class="note">cannot judge: {E(group.reason or "")}</p>'
    where = (f"profile {group.profile}; steps at {steps_text(group) or 'none in the window'}"
             if group.profile else "no blocking profile")
    rows = "".join("<tr>" + "".join(
        f"<td>{E(c)}</td>" if i == 0 else f'<td class="num">{E(c)}</td>' for i, c in enumerate(row_cells(r)))
        + "</tr>" for r in group.rows)
    notes = [n.strip() for r in group.rows for n in row_notes(r)]
    why = ('<p class="note">n/a because: ' + "; ".join(E(n) for n in notes) + "</p>") if notes else ""
    return (head + f'<p class="note">best fixed pool: {E(group.best_fixed or "")}; {E(where)}</p>'
            "<table><tr>" + "".join(f"<th>{E(h)}</th>" for h in HEAD) + "</tr>" + rows + "</table>" + why)


def family_section(points: Sequence[dict[str, Any]]) -> str:
    """The controllers' score tables of one family; "" when it has no controller pool."""
    if not ctl.has_controllers(points):
        return ""
    groups = [g for g in ctl.score_points(points) if ctl.has_controllers(g.points)]
    return ("<h4>Pool controllers against the best fixed pool</h4>"
            f'<p class="note">{E(EXPLAIN)}</p>' + "".join(group_table(g) for g in groups))
