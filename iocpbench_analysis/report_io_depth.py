"""The report's HTML for the I/O depth of file and socket points (io_depth.py computes, this lays
out): per family, the depth asked for beside the depth held (the time-weighted mean, the
maximum, the share of the window at full depth) and Little's law's estimate; and per file point
the equivalent fio and DiskSpd command lines. A family without either (post, older files)
gets nothing.
"""

from __future__ import annotations

import html
from typing import Any

from . import grid, io_depth
from .formatting import fmt_value
from .match import point_label

E = html.escape

HEAD = ("concurrency", "pool", "blocking", "requested", "held: mean (median of runs)", "held: max",
        "share of window at full depth", "Little's law (throughput x end-to-end time)", "runs")


def _num(value: float | int | None, *, share: bool = False) -> str:
    if value is None:
        return '<td class="num">n/a</td>'
    text = f"{value:.1%}" if share else fmt_value(float(value))
    return f'<td class="num">{E(text)}</td>'


def _ordered(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(points, key=lambda p: (float(p["blocking"]["ratio"]), point_label(p)))


def depth_row(point: dict[str, Any], depth: io_depth.PointDepth) -> str:
    cells = (f"<td>{E(grid.spec_value_text(point['concurrency']))}</td>"
             f"<td>{E(grid.spec_value_text(point['pool']))}</td>"
             f'<td class="num">{E(fmt_value(float(point["blocking"]["ratio"])))}</td>')
    if depth.unavailable_because is not None:
        return f"<tr>{cells}<td colspan=\"6\" class=\"note\">not measured: {E(depth.unavailable_because)}</td></tr>"
    requested = f"{depth.requested} ({depth.requested_by})" if depth.requested_by else str(depth.requested)
    return ("<tr>" + cells + f"<td>{E(requested)}</td>" + _num(depth.mean) + _num(depth.max)
            + _num(depth.full_share, share=True) + _num(depth.littles_law) + f'<td class="num">{depth.runs}</td></tr>')


def depth_table(points: list[dict[str, Any]]) -> str:
    rows = [depth_row(p, d) for p in _ordered(points) if (d := io_depth.point_depth(p)) is not None]
    if not rows:
        return ""
    return ("<h4>I/O depth: requested and held</h4>"
            '<p class="note">Held: I/Os handed to the transport and not yet taken from the port by a worker '
            "(socket: connections with a receive or an echo in flight), integrated over the measured window. "
            "Little's law counts each I/O until its handler is done, so it stays near the request even when "
            "the handler keeps the I/O depth low.</p>"
            "<table><tr>" + "".join(f"<th>{E(h)}</th>" for h in HEAD) + "</tr>" + "".join(rows) + "</table>")


def peer_commands_list(points: list[dict[str, Any]]) -> str:
    items = []
    for p in _ordered(points):
        peers = io_depth.peer_commands(p)
        if peers is None:
            continue
        notes = "".join(f"<li>{E(n)}</li>" for n in peers.notes)
        items.append(f"<li>{E(point_label(p))}<br><code>{E(peers.fio)}</code><br><code>{E(peers.diskspd)}</code>"
                     + (f'<ul class="note">{notes}</ul>' if notes else "") + "</li>")
    if not items:
        return ""
    return ("<details><summary>The same I/O in fio and DiskSpd (one line each per point)</summary>"
            '<p class="note">fio reaps its own completions and reissues at once; iocpbench passes each through '
            "the port to a pool thread and its handler first (harness/workloads/README.md).</p>"
            f'<ul class="small">{"".join(items)}</ul></details>')


def family_tables(points: list[dict[str, Any]]) -> str:
    return depth_table(points) + peer_commands_list(points)
