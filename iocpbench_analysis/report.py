"""One self-contained HTML page for one or more results files. It opens with the answer (per
workload and blocking ratio: the recommended setting, the settings indistinguishable from the
best, the rules of thumb as a ratio of the best; answer.py), then per file the machine, probe,
tuner recommendation, and per family of points their charts (embedded PNG) and a table. An
open-loop family (report_open_loop.py) has its latency-at-load table, knees and latency answer
instead, and the opening its latency answer.

Nothing is fetched: no scripts, fonts or stylesheets from elsewhere, so the page can be
attached to a CI run or mailed and still render.
"""

from __future__ import annotations

import base64
import html
import math
from typing import Any

from . import answer, grid, machine_load, port_lists, report_controllers, report_io_depth, report_open_loop, topology
from .charts import SkipChart, build_family_charts, figure_bytes, port_lists_figure
from .fidelity import fidelity_problem
from .formatting import fmt_value
from .load import Results
from .match import is_auto_spec, normalize_spec, point_label
from .metrics import achieved_ratio, achieved_total_ratio, central_value, dig, run_values, summary_stat, summary_value
from .stats import bootstrap_median_ci, median

NOISY_CV = 0.10  # above this the median is not worth much; flag the cell

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1400px; }
h1 { font-size: 1.6em; } h2 { border-bottom: 2px solid #446; padding-bottom: .2em; margin-top: 2em; }
h3 { margin-top: 1.6em; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: .9em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #eef; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.noisy { background: #fff3cd; } td.true { color: #060; } td.false { color: #a00; }
.warn { background: #fff3cd; border: 1px solid #e0c060; padding: .5em 1em; }
.src, .note { color: #666; font-size: .85em; }
td.off { background: #fde2e1; } .busy { color: #a000a0; font-weight: bold; }
.legend span { display: inline-block; padding: 0 .4em; margin-right: .3em; } .answer td { vertical-align: middle; } .answer td.num { white-space: nowrap; }
.small { font-size: .85em; }
img { max-width: 100%; border: 1px solid #ddd; margin: .4em 0; }
"""

E = html.escape


def _fmt(v: Any) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else "n/a"
    return str(v)


def render_any(v: Any) -> str:
    """Escaped HTML for a value of unknown shape (the tuner's rules of thumb, estimates)."""
    if isinstance(v, dict):
        return "; ".join(f"{E(str(k))}: {render_any(x)}" for k, x in v.items())
    if isinstance(v, list):
        return ", ".join(render_any(x) for x in v)
    return E(_fmt(v))


def kv_table(rows: list[tuple[str, Any]]) -> str:
    body = "".join(f"<tr><th>{E(k)}</th><td>{render_any(v)}</td></tr>" for k, v in rows if v is not None)
    return f"<table>{body}</table>"


def _bytes(n: Any) -> str | None:
    if not isinstance(n, (int, float)) or isinstance(n, bool):
        return None
    return f"{n / 2**30:.1f} GiB"


def machine_section(res: Results) -> str:
    m, data = res.machine, res.data
    tool = data.get("tool") or {}
    sweep = data.get("sweep") or {}
    rows = [
        ("hostname", m.get("hostname")), ("os", m.get("os")), ("kernel", m.get("kernel")),
        ("cpu model", m.get("cpu_model")), ("logical CPUs (N)", m.get("logical_cpus")),
        ("cores", m.get("cores")), *topology.topology_rows(m), ("memory", _bytes(m.get("memory_bytes"))),
        ("port backend", m.get("backend")), ("Wine", m.get("wine")),
        ("tool", " ".join(str(tool[k]) for k in ("name", "version", "git", "build_type", "compiler") if tool.get(k))
         or None),
    ]
    # load, rate, arrivals, max_in_flight: written by open-loop sweeps only (absent rows are left out).
    sweep_rows = [(k, sweep.get(k)) for k in ("workloads", "concurrency", "pool", "blocking", "load", "rate",
                                              "arrivals", "max_in_flight", "repetitions",
                                              "duration_s", "warmup_s", "seed", "started", "finished", "complete")]
    out = "<h3>Machine</h3>" + kv_table(rows) + "<h3>Sweep</h3>" + kv_table(sweep_rows)
    if sweep.get("complete") is False:
        out += '<p class="warn">This sweep is incomplete (interrupted); only its finished points are shown.</p>'
    return out


def probe_section(machine: dict[str, Any]) -> str:
    semantics = dig(machine, "probe.semantics")
    if not isinstance(semantics, dict) or not semantics:
        return '<h3>Port semantics probe</h3><p class="note">No probe in this file.</p>'
    rows = []
    for name, entry in semantics.items():
        entry = entry if isinstance(entry, dict) else {"value": entry}
        value = entry.get("value")
        cls = "true" if value is True else "false" if value is False else ""
        rows.append(f"<tr><td><code>{E(name)}</code></td><td class=\"{cls}\">{E(_fmt(value))}</td>"
                    f"<td>{E(_fmt(entry.get('evidence')))}</td></tr>")
    return ("<h3>Port semantics probe</h3><table><tr><th>semantic</th><th>value</th><th>evidence</th></tr>"
            + "".join(rows) + "</table>")


def tune_section(tune: Any) -> str:
    if not isinstance(tune, dict):
        return ""
    rec = tune.get("recommendation") or {}
    rows: list[tuple[str, Any]] = [("workload", tune.get("workload")), ("blocking", tune.get("blocking"))]
    for axis in ("concurrency", "pool"):
        sv = rec.get(axis)
        if isinstance(sv, dict):
            rng = grid.auto_range(sv)
            value = f"{rng[0]}..{rng[1]}" if rng else sv.get("value")
            rows.append((f"recommended {axis}", f"{sv.get('spec')} (= {value})"))
    tp = rec.get("throughput_ops_per_s")
    if isinstance(tp, dict):  # a summary: median with its 95% CI
        tp = f"{fmt_value(tp.get('median'))} (95% CI {fmt_value(tp.get('ci95_low'))}..{fmt_value(tp.get('ci95_high'))})"
    rows.append(("throughput (ops/s)", fmt_value(tp) if isinstance(tp, (int, float)) else tp))
    rows += [(k, v) for k, v in rec.items() if k not in ("concurrency", "pool", "throughput_ops_per_s")]
    rows.append(("queueing estimate N/(1-b)", tune.get("queueing_estimate")))
    out = "<h3>Tuner recommendation</h3>" + kv_table(rows)
    rules = tune.get("rules_of_thumb")
    if isinstance(rules, list) and rules:
        out += "<p>Rules of thumb beside it:</p><ul>" + "".join(f"<li>{render_any(r)}</li>" for r in rules) + "</ul>"
    evidence = tune.get("evidence")
    if isinstance(evidence, list) and evidence:
        out += "<p>Evidence points:</p><ul>" + "".join(f"<li><code>{render_any(e)}</code></li>" for e in evidence) + "</ul>"
    return out


def _stat_cell(point: dict[str, Any], metric: str, *, with_ci: bool = False) -> str:
    stat = summary_stat(point, metric)
    value = central_value(point, metric)
    if value is None:
        return '<td class="num">n/a</td>'
    text = fmt_value(value)
    cv = stat.get("cv") if stat else None
    if with_ci and stat and isinstance(stat.get("ci95_low"), (int, float)) and isinstance(stat.get("ci95_high"), (int, float)):
        text += f" [{fmt_value(stat['ci95_low'])}, {fmt_value(stat['ci95_high'])}]"
    noisy = isinstance(cv, (int, float)) and cv > NOISY_CV
    title = f' title="CV {cv:.1%}: noisy"' if noisy and isinstance(cv, (int, float)) else ""
    return f'<td class="num{" noisy" if noisy else ""}"{title}>{E(text)}</td>'


def _median_ci_cell(point: dict[str, Any], metric: str) -> str:
    """Median with the bootstrap 95% CI of the median (the harness's CI is the mean's)."""
    value = central_value(point, metric)
    if value is None:
        return '<td class="num">n/a</td>'
    ci = bootstrap_median_ci(run_values(point, metric))
    text = fmt_value(value) + (f" [{fmt_value(ci[0])}, {fmt_value(ci[1])}]" if ci else "")
    stat = summary_stat(point, metric)
    cv = stat.get("cv") if stat else None
    noisy = isinstance(cv, (int, float)) and cv > NOISY_CV
    title = f' title="CV {cv:.1%}: noisy"' if noisy and isinstance(cv, (int, float)) else ""
    return f'<td class="num{" noisy" if noisy else ""}"{title}>{E(text)}</td>'


def _spec_text(sv: dict[str, Any]) -> str:
    # An auto pool's value is only its ceiling: show its range instead.
    if is_auto_spec(sv["spec"]):
        return grid.spec_value_text(sv)
    return f"{sv['spec']} ({sv['value']})"


def points_table(points: list[dict[str, Any]]) -> str:
    conc = grid.spec_axis(points, "concurrency")
    pools = grid.spec_axis(points, "pool")
    ordered = sorted(points, key=lambda p: (
        float(p["blocking"]["ratio"]),
        conc.index(normalize_spec(p["concurrency"]["spec"])),
        pools.index(normalize_spec(p["pool"]["spec"])),
    ))
    head = ["concurrency", "pool", "blocking", "achieved (as judged: blocked-only where measured)",
            "achieved incl. runnable wait",
            "throughput ops/s median [bootstrap 95% CI]",
            "CV", "cs / 1,000 completions", "latency p50 us", "latency p99 us", "runs"]
    rows = []
    for p in ordered:
        tp = summary_stat(p, "throughput_ops_per_s") or {}
        achieved = achieved_ratio(p)
        off = fidelity_problem(p)
        # One run has no spread: a writer's CV of 0 for n = 1 is not a measurement.
        cv = tp.get("cv") if not (isinstance(tp.get("n"), int) and tp["n"] < 2) else None
        rows.append(
            "<tr>"
            f"<td>{E(_spec_text(p['concurrency']))}</td><td>{E(_spec_text(p['pool']))}{busy_mark(p)}</td>"
            f'<td class="num">{E(_fmt(p["blocking"]["ratio"]))}</td>'
            + (f'<td class="num off" title="not within tolerance: {E(off)}">{E(_fmt(achieved))} (off)</td>'
               if off else f'<td class="num">{E(_fmt(achieved))}</td>')
            + f'<td class="num">{E(_fmt(achieved_total_ratio(p)))}</td>'
            + _median_ci_cell(p, "throughput_ops_per_s")
            + f'<td class="num">{E(f"{cv:.1%}" if isinstance(cv, (int, float)) else "n/a")}</td>'
            + _stat_cell(p, "context_switches_per_kop")
            + _stat_cell(p, "latency_us.p50")
            + _stat_cell(p, "latency_us.p99")
            + f'<td class="num">{len(p.get("runs") or [])}</td>'
            "</tr>"
        )
    return ("<table><tr>" + "".join(f"<th>{E(h)}</th>" for h in head) + "</tr>" + "".join(rows) + "</table>"
            + marks_legend(points))


def marks_legend(points: list[dict[str, Any]]) -> str:
    """A legend on the page for every mark the table above uses (and only those)."""
    items = []
    if any(_noisy(p, m) for p in points for m in ("throughput_ops_per_s", "context_switches_per_kop",
                                                   "latency_us.p50", "latency_us.p99")):
        items.append(f'<span class="noisy-key" style="background:#fff3cd">yellow cell</span> noisy: the runs\' '
                     f"coefficient of variation is above {NOISY_CV:.0%}, so the median is not worth much")
    if any(fidelity_problem(p) for p in points):
        items.append('<span style="background:#fde2e1">(off)</span> the blocking ratio achieved is not within '
                     "tolerance of the one asked for (hover for why)")
    if machine_load.busy_points(points):
        items.append(f'<span class="busy">{E(machine_load.MARK)}</span> '
                     + E(machine_load.LEGEND.split(": ", 1)[1]))
    if not items:
        return ""
    return '<p class="note legend">' + "<br>".join(items) + "</p>"


def _noisy(point: dict[str, Any], metric: str) -> bool:
    stat = summary_stat(point, metric)
    cv = stat.get("cv") if stat else None
    return isinstance(cv, (int, float)) and not isinstance(cv, bool) and cv > NOISY_CV


def _window_ints(point: dict[str, Any], key: str) -> list[int]:
    """runs[].pool_sizing.window[key] over the runs that have it."""
    return [int(v) for v in run_values(point, f"pool_sizing.window.{key}")]


def auto_pool_row(point: dict[str, Any]) -> dict[str, str]:
    """One auto point's pool behaviour, as table text: mean threads (the harness's median over
    runs), the smallest and largest size seen in any measured window, and grows / shrinks a
    run (median, so the figure does not scale with the number of repetitions)."""
    lows, highs = _window_ints(point, "min_threads"), _window_ints(point, "max_threads")
    grows, shrinks = median(run_values(point, "pool_sizing.grows")), median(run_values(point, "pool_sizing.shrinks"))
    mean_threads = summary_value(point, "pool_mean_threads")
    if mean_threads is None:  # an older writer: the runs' own time-weighted means
        mean_threads = median(run_values(point, "pool_sizing.window.mean_threads"))
    return {
        "point": point_label(point),
        "pool": grid.spec_value_text(point["pool"]),
        "mean threads": _fmt(mean_threads),
        "threads min..max": f"{min(lows)}..{max(highs)}" if lows and highs else "n/a",
        "grows / shrinks per run": f"{_fmt(grows)} / {_fmt(shrinks)}",
        "throughput ops/s median": fmt_value(summary_value(point, "throughput_ops_per_s")),
    }


def auto_pool_table(points: list[dict[str, Any]]) -> str:
    """The self-sizing pool's size per auto point; empty for a family of fixed pools only."""
    autos = [p for p in points if grid.is_auto_point(p)]
    if not autos:
        return ""
    rows = [auto_pool_row(p) for p in autos]
    head = list(rows[0])
    text_cols = ("point", "pool")
    body = "".join(
        "<tr>" + "".join(f"<td>{E(r[k])}</td>" if k in text_cols else f'<td class="num">{E(r[k])}</td>'
                         for k in head) + "</tr>"
        for r in rows)
    return ("<h4>Self-sizing (auto) pool</h4>"
            '<p class="note">Threads over the measured windows: mean is time-weighted per run, '
            "median over runs; grows and shrinks count the whole run, warm-up included.</p>"
            "<table><tr>" + "".join(f"<th>{E(h)}</th>" for h in head) + "</tr>" + body + "</table>")


def busy_mark(point: dict[str, Any] | None) -> str:
    """The busy-machine mark (HTML) after a point measured on a busy machine, else nothing."""
    if point is None or not machine_load.is_busy(point):
        return ""
    why = "; ".join(machine_load.reasons(point)) or "busy"
    return f' <span class="busy" title="{E(why)}">{E(machine_load.MARK)}</span>'


def _setting_cell(s: answer.Setting, bold: bool, note: str = "") -> str:
    """A setting with its throughput and what it costs in context switches."""
    label = f"<b>{E(s.label)}</b>" if bold else E(s.label)
    return (f"{label}{busy_mark(s.point)}<br><span class=\"small\">{E(fmt_value(s.median))} ops/s, "
            f"{E(answer.fmt_switches(s))} cs / 1,000 completions{note}</span>")


def _rule_cell(s: answer.Setting | None) -> str:
    cost = "" if s is None else f'<br><span class="small">{E(answer.fmt_switches(s))} cs / 1,000</span>'
    return f'<td class="num">{E(answer.fmt_ratio(s))}{busy_mark(s.point if s else None)}{cost}</td>'


def _batch_text(family: grid.Family) -> str:
    """", dequeue batch 8" for a family of batched points; nothing for one packet per remove."""
    return "" if family.dequeue_batch == "1" else f", dequeue batch {family.dequeue_batch}"


def _answer_row(a: answer.Answer) -> str:
    rec = a.recommended
    same = ", ".join(E(s.label) for s in a.indistinguishable)
    rules = "".join(_rule_cell(s) for _, s in a.rules)
    off = rec.off_ratio
    achieved = achieved_ratio(rec.point)
    blocking = f"{a.ratio:g}" + (f" (got {achieved:.2f})" if achieved is not None and a.ratio > 0 else "")
    rec_class = ' class="off"' if off else ""
    note = f"; blocking ratio not within tolerance: {E(off)}" if off else ""
    return ("<tr>"
            f'<td title="{E(a.family.title)}"><b>{E(a.family.workload)}</b><br><span class="small">'
            f"{E(a.family.key[1])} port, {a.family.key[3]:g} us work{E(_batch_text(a.family))}</span></td>"
            f'<td class="num">{E(blocking)}</td>'
            f"<td{rec_class}>{_setting_cell(rec, True, note)}</td>"
            f"<td>{_setting_cell(a.best, False)}</td>"
            f'<td class="small">{same} <i>({len(a.indistinguishable)})</i></td>{rules}</tr>')


def answer_section(res: Results) -> str:
    """The page's opening: which setting, per workload family and blocking ratio."""
    rows = answer.answers(res.points)
    if not rows:
        return ""
    head = ["workload", "blocking ratio", "recommended", "best", "indistinguishable from the best",
            *(f"pool {r} / best" for r in answer.RULES_OF_THUMB)]
    return (f"<h3>Which setting: {E(side_name(res))}</h3>"
            f'<p class="note">Per workload and blocking ratio of {E(res.path.name)}: the best median throughput, '
            "the settings indistinguishable from it (" + E(answer.MEANING.format(lower=answer.zone()[0], upper=answer.zone()[1]))
            + "), and the recommended one: the first setting in the order smallest fixed pool, then smallest "
            "concurrency, that is shown within, or undecided with its estimate in the zone's upper half "
            "(docs/tuning.md, the rule tune uses at one look). The rules of thumb are at the port's default "
            "concurrency, as a ratio of the best's throughput (geometric means) with a 95% CI. Beside each "
            "setting, what it costs: context switches per 1,000 completions (median over runs).</p>"
            '<table class="answer"><tr>' + "".join(f"<th>{E(h)}</th>" for h in head) + "</tr>"
            + "".join(_answer_row(a) for a in rows) + "</table>"
            + (f'<p class="warn">{E(note)}</p>' if (note := answer.few_runs_note(res.points)) else "")
            + busy_warning(res.points))


def busy_warning(points: list[dict[str, Any]]) -> str:
    """A warning naming the points measured on a busy machine, with the mark's legend; empty
    where there are none (or the file does not record the machine's load)."""
    line = machine_load.busy_line(points)
    if line is None:
        return ""
    return (f'<p class="warn">{E(line[0].upper() + line[1:])}.<br><span class="busy">{E(machine_load.MARK)}</span>'
            f" {E(machine_load.LEGEND.split(': ', 1)[1])}.</p>")


def _share(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3%}"


def port_lists_rows(point: dict[str, Any]) -> list[tuple[str, str]]:
    """One point's lists as (row, text), medians over its runs (port_lists.point_lists);
    every row n/a, with the harness's reason in the first, where the runs have none."""
    pl = port_lists.point_lists(point)
    if pl is None:
        why = port_lists.unavailable_reason(point) or "not recorded in this file"
        return [("runs with the lists", f"none: {why}")]
    m = pl.mean
    wake = ("n/a (no handoff)" if pl.wake_p50_us is None
            else f"{fmt_value(pl.wake_p50_us)} / {fmt_value(pl.wake_p99_us)}")
    rnr = pl.released_not_running
    rng = pl.released_not_running_range
    return [
        ("runs with the lists", str(pl.runs)),
        ("mean waiting (threads in the port)", _fmt(m["waiting"])),
        (f"mean active (C), of M = {pl.concurrency if pl.concurrency is not None else 'n/a'}", _fmt(m["active"])),
        ("mean paused (released, then blocked)", _fmt(m["paused"])),
        ("mean queue depth (packets)", _fmt(m["depth"])),
        ("handoffs a run", _fmt(pl.handoffs)),
        ("wake-up delay p50 / p99 (us)", wake),
        ("released but not running (threads)",
         "n/a" if rnr is None else _fmt(rnr) + (f" ({_fmt(rng[0])}..{_fmt(rng[1])})" if rng and pl.runs > 1 else "")),
        ("queued with room (share of the window)", _share(pl.queued_with_room)),
    ]


def _lists_table(columns: list[tuple[str, dict[str, Any]]]) -> str:
    rows = [port_lists_rows(p) for _, p in columns]
    names: list[str] = []
    for r in rows:
        names += [k for k, _ in r if k not in names]
    cells = [dict(r) for r in rows]
    head = "<tr><th></th>" + "".join(f"<th>{E(h)}</th>" for h, _ in columns) + "</tr>"
    body = "".join(
        f"<tr><th>{E(name)}</th>" + "".join(f'<td class="num">{E(c.get(name, ""))}</td>' for c in cells) + "</tr>"
        for name in names)
    return f"<table>{head}{body}</table>"


def port_lists_section(res: Results) -> str:
    """Beside the answer: the port's lists at the recommended and the best setting of each
    workload family and blocking ratio, side by side, with their lists over time; empty
    where no run of those settings has the lists (older files, the kernel's port, ...)."""
    out = ""
    for a in answer.answers(res.points):
        rec, best = a.recommended.point, a.best.point
        if not (port_lists.has_lists(rec) or port_lists.has_lists(best)):
            continue
        if rec is best:
            columns = [(f"recommended, the best: {a.recommended.label}", rec)]
            panels = [(rec, "recommended, the best")]
        else:
            columns = [(f"recommended: {a.recommended.label}", rec), (f"best: {a.best.label}", best)]
            panels = [(rec, "recommended"), (best, "best")]
        out += (f"<h4>{E(a.family.title)}; blocking ratio {a.ratio:g}</h4>" + _lists_table(columns))
        title = f"{grid.machine_title(res.machine)}\nthe port's lists over time\n{a.family.title}"
        try:
            fig = port_lists_figure(panels, title)
        except SkipChart:
            continue
        data = base64.b64encode(figure_bytes(fig, "png")).decode("ascii")
        out += f'<div><img alt="{E(title)}" src="data:image/png;base64,{data}"></div>'
    if not out:
        return ""
    return ("<h3>The port's lists at the recommended and the best setting</h3>"
            f'<p class="note">What the emulated port recorded at its own transitions over each measured window '
            f"of {E(res.path.name)} (docs/port-semantics.md, \"The lists over a run\"), medians over the runs: "
            "the time-weighted mean of each list (waiting: threads in the port; active: released threads counted "
            "in C; paused: released threads blocked in a blocking region; queue depth: packets queued); the "
            "wake-up delay of a handoff, from the moment the port handed a waiter its packet and counted it in C "
            "until it ran (runs without a handoff left out); released but not running, those delays' total over "
            "the window: threads counted in C on average that had not run yet (min..max over the runs); queued "
            "with room, the share of the window with a packet queued, a thread waiting and C &lt; M at once. "
            "The charts show the first run's first transitions.</p>" + out)


def family_section(res: Results, fam: grid.Family, notes: list[str]) -> str:
    out = f"<h3>{E(fam.title)}</h3>"
    for chart in build_family_charts(res, fam, notes):
        data = base64.b64encode(figure_bytes(chart.figure, "png")).decode("ascii")
        out += f'<div><img alt="{E(chart.title)}" src="data:image/png;base64,{data}"></div>'
    controllers = report_controllers.family_section(fam.points)
    if fam.open_loop:
        return (out + report_open_loop.family_body(fam) + auto_pool_table(fam.points) + controllers
                + report_io_depth.family_tables(fam.points))
    return (out + points_table(fam.points) + auto_pool_table(fam.points) + controllers
            + report_io_depth.family_tables(fam.points))


def file_section(res: Results, notes: list[str]) -> str:
    start = len(notes)
    out = (f"<section><h2>{E(res.path.name)}: {E(grid.machine_title(res.machine))}</h2>"
           f'<p class="src">{E(str(res.path))}</p>'
           + machine_section(res) + probe_section(res.machine) + tune_section(res.data.get("tune")))
    if not res.points:
        out += '<p class="warn">No points in this file.</p>'
    for fam in grid.families(res.points):
        out += family_section(res, fam, notes)
    skipped = notes[start:]
    if skipped:
        out += '<p class="note">Skipped charts:</p><ul class="note">' + "".join(f"<li>{E(n)}</li>" for n in skipped) + "</ul>"
    return out + "</section>"


def side_name(res: Results) -> str:
    """A file as the page names it: its file name and host ("run_a.json on vm")."""
    host = res.machine.get("hostname")
    return f"{res.path.name} on {host}" if host else res.path.name


def render_report(results: list[Results], notes: list[str]) -> str:
    title = "iocpbench report: " + ", ".join(side_name(r) for r in results)
    opening = "".join(answer_section(r) + port_lists_section(r) + report_open_loop.latency_answer_section(r)
                      for r in results)
    body = "".join(file_section(r, notes) for r in results)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{E(title)}</title>'
            f"<style>{CSS}</style></head><body><h1>{E(title)}</h1>"
            + (f"<section><h2>The answer</h2>{opening}</section>" if opening else "")
            + f"{body}</body></html>\n")
