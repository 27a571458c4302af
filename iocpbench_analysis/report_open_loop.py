"""The report's HTML for open-loop families (latency_load.py computes, this lays out): a table
per family (setting, load, offered and achieved ops/s, response and service time, generator
lag, context switches per completion, flags; where the runs store histograms, the pooled p99
with its interval (pooled_latency.py), and where they account for them, the requests due,
timed and unfinished), the knee per setting, and the latency answer per blocking ratio.
Closed-loop families never reach this module.
"""

from __future__ import annotations

import html
from typing import Any

from . import grid, latency_load, pooled_latency
from .formatting import fmt_value
from .latency_load import Curve, LoadPoint, fmt_x
from .load import Results
from .pooled_latency_text import accounting_text, interval_legend, pooled_text, value_text

E = html.escape

HEAD = ("blocking", "setting", "load", "offered ops/s", "achieved ops/s", "response p50 us", "response p99 us",
        "response p99.9 us", "service p99 us", "generator lag p99 us", "cs / completion", "runs", "flags")
POOLED_HEAD = f"pooled response p99 [{pooled_latency.CONFIDENCE * 100:g}% interval]"
ACCOUNTING_HEAD = "due / timed / unfinished"
P99 = pooled_latency.QUANTILES["p99"]


def _num(text: str) -> str:
    return f'<td class="num">{E(text)}</td>'


def flag_cell(lp: LoadPoint) -> str:
    """"over capacity (1/3)", "generator-bound (3/3)", or empty; the runs' reasons in the
    cell's title."""
    flags: list[str] = []
    reasons: list[str] = []
    if lp.over_capacity:
        flags.append(f"over capacity ({lp.over_capacity_runs}/{lp.runs})")
        reasons += [f"over capacity: {r}" for r in lp.over_capacity_because]
    if lp.generator_bound:
        flags.append(f"generator-bound ({lp.generator_bound_runs}/{lp.runs})")
        reasons += [f"generator-bound: {r}" for r in lp.generator_bound_because]
    if not flags:
        return "<td></td>"
    cls = ' class="off"' if lp.over_capacity else ' class="noisy"'
    return f'<td{cls} title="{E("; ".join(reasons))}">{E(", ".join(flags))}</td>'


def _runs(point: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in point.get("runs") or [] if isinstance(r, dict)]


def pooled_cell(point: dict[str, Any]) -> str:
    """The point's pooled p99 and its interval; n/a, or the value alone, with the reason on hover."""
    p = pooled_latency.point_pooled(point, P99)
    if p.estimate.value_us is None:
        return f'<td class="num" title="{E(p.estimate.reason or "")}">n/a</td>'
    if p.interval.low_us is None:
        value = value_text(p, why_no_interval=False)
        return f'<td class="num" title="no interval: {E(p.interval.reason or "")}">{E(value)}</td>'
    return _num(value_text(p))


def accounting_cell(point: dict[str, Any]) -> str:
    acc = pooled_latency.accounting(_runs(point))
    title = "" if acc is not None else ' title="no accounting of due requests (an older file)"'
    return f'<td class="num"{title}>{E(accounting_text(acc))}</td>'


def _row(curve: Curve, lp: LoadPoint, kind: str, pooled: bool = False, accounted: bool = False) -> str:
    cs = lp.switches_per_completion
    return ("<tr>" + _num(f"{curve.ratio:g}") + f"<td>{E(curve.label)}</td>" + _num(fmt_x(lp.x, kind))
            + _num(fmt_value(lp.offered_ops_per_s)) + _num(fmt_value(lp.achieved_ops_per_s))
            + "".join(_num(fmt_value(lp.response_us.get(q))) for q in latency_load.PERCENTILES)
            + (pooled_cell(lp.point) if pooled else "")
            + _num(fmt_value(lp.service_p99_us)) + _num(fmt_value(lp.generator_lag_p99_us))
            + _num(f"{cs:.3g}" if cs is not None else "n/a") + _num(str(lp.runs))
            + (accounting_cell(lp.point) if accounted else "") + flag_cell(lp) + "</tr>")


def _head(kind: str, pooled: bool, accounted: bool) -> list[str]:
    head = [h if h != "load" else ("load" if kind == "load" else "offered rate") for h in HEAD]
    if pooled:
        head.insert(head.index("response p99.9 us") + 1, POOLED_HEAD)
    if accounted:
        head.insert(head.index("runs") + 1, ACCOUNTING_HEAD)
    return head


def open_loop_table(points: list[dict[str, Any]]) -> str:
    """The family's table, one row per setting and load, and the knee of each setting. The
    pooled p99 and the accounting columns appear where any run stores them (a file written
    before them shows the table it always had)."""
    curves = latency_load.curves(points)
    if not curves:
        return '<p class="note">No open-loop points with a load or rate.</p>'
    kind = latency_load.x_kind(points)
    pooled = pooled_latency.has_histograms(points)
    accounted = any(pooled_latency.accounting(_runs(p)) is not None for p in points)
    head = _head(kind, pooled, accounted)
    rows = "".join(_row(c, lp, kind, pooled, accounted) for c in curves for lp in c.points)
    knees = "".join(f"<li>{E(latency_load.knee_text(c, kind))}</li>" for c in curves)
    extra = ""
    if pooled:
        extra += f" Pooled response p99: {E(interval_legend())}; hover a value without one for why."
    if accounted:
        extra += (" Due / timed / unfinished: the requests due in the runs' measured windows, those timed, "
                  "and those that never finished, summed over runs (and those whose I/O failed, where any did).")
    return ("<h4>Open loop: latency at offered load</h4>"
            '<p class="note">Medians over runs. Response time runs from each request\'s intended start '
            "(no coordinated omission), service time from its actual issue; generator lag is how late the "
            "load generator issued it. Flags count the runs: over capacity (arrivals held or unissued: the "
            "server did not keep up) and generator-bound (the generator's lag is over 5% of the response "
            "p99: that latency is partly the generator's, not the server's); hover a flag for the reasons."
            f"{extra}</p><table><tr>" + "".join(f"<th>{E(h)}</th>" for h in head) + "</tr>" + rows + "</table>"
            f"<p>Knee per setting: the lowest load where the p99 response time is over "
            f"{latency_load.KNEE_FACTOR:g}x its value at the setting's lowest load.</p>"
            f'<ul class="knees">{knees}</ul>')


def answer_item(answer: latency_load.LatencyAnswer, kind: str) -> str:
    """The latency answer in words and, where the runs store histograms, the answer's pooled p99."""
    text = latency_load.answer_text(answer, kind)
    if answer.at is not None and pooled_latency.has_histograms([answer.at.point]):
        p = pooled_latency.point_pooled(answer.at.point, P99)
        text += f" Pooled over all its runs' requests: {pooled_text(p)}"
        if p.interval.low_us is not None:
            text += f" ({p.interval.confidence * 100:g}% interval, a bootstrap over runs)"
        text += "."
    return f"<li>{E(text)}</li>"


def latency_answer_list(fam: grid.Family) -> str:
    """The latency answer of each blocking ratio of an open-loop family, as a list."""
    kind = latency_load.x_kind(fam.points)
    items = "".join(answer_item(a, kind) for a in latency_load.latency_answers(fam.points))
    return f'<ul class="latency-answer">{items}</ul>' if items else ""


def latency_answer_section(res: Results) -> str:
    """The opening's part for open-loop families: the latency answer of each; "" for a file
    with none (so a closed-loop report is unchanged)."""
    fams = [f for f in grid.families(res.points) if f.open_loop]
    if not fams:
        return ""
    body = "".join(f"<p><b>{E(f.title)}</b></p>{latency_answer_list(f)}" for f in fams)
    return ("<h3>Which setting at the load it carries (open loop)</h3>"
            f'<p class="note">Per open-loop family and blocking ratio of {E(res.path.name)}: the setting with '
            "the lowest median p99 response time at the highest offered load where no setting had a run over "
            "capacity. Generator-bound runs are left out of that median: their latency is partly the load "
            "generator's, not the server's.</p>" + body)


def family_body(fam: grid.Family) -> str:
    """What an open-loop family shows under its charts: the table, knees and its answer."""
    answer = latency_answer_list(fam)
    return open_loop_table(fam.points) + (f"<p>The latency answer:</p>{answer}" if answer else "")
