"""Charts of one results file, per point family (see grid.py).

Builders take points and return a matplotlib Figure, or raise SkipChart with the reason when
the file lacks what the chart needs (optional fields, a single blocking ratio, ...): the
caller notes the reason on stderr and goes on, so one missing field never costs the others.
A chart about something a family does not have at all (the auto pool's size, for fixed pools)
raises NotApplicable instead, and is left out without a note.
Figures are made with matplotlib.figure.Figure directly, not pyplot, so no global state is
kept between charts and no display is ever needed.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # before anything pulls in pyplot: headless CI has no display

from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter  # noqa: E402

from . import answer, charts_controllers, grid, latency_load, machine_load, port_lists  # noqa: E402
from .compare import CompareReport  # noqa: E402
from .formatting import fmt_value  # noqa: E402
from .load import Results  # noqa: E402
from .metrics import (  # noqa: E402
    LATENCY_PERCENTILES, achieved_ratio, central_value, dig, run_values, summary_value, within_tolerance,
)
from .stats import bootstrap_median_ci  # noqa: E402

COLS_MAX = 3


class SkipChart(Exception):
    """The data for a chart is missing; the message says what."""


class NotApplicable(SkipChart):
    """The chart is about something the family does not have (the auto pool's size, for a
    family of fixed pools): skipped without a note, because nothing is missing."""


def closed_loop_only(points: Points) -> None:
    """The closed-loop charts lay out one point per (concurrency, pool, blocking) cell; an
    open-loop family has one per offered load there, and its own charts (latency-vs-load)."""
    if any(grid.is_open_loop(p) for p in points):
        raise NotApplicable("an open-loop family")


def open_loop_only(points: Points) -> None:
    if not any(grid.is_open_loop(p) for p in points):
        raise NotApplicable("a closed-loop family")


@dataclass(frozen=True)
class Chart:
    name: str  # unique within one results file; becomes part of the file name
    title: str
    figure: Figure


Points = list[dict[str, Any]]


def wrap_title(title: str, width_in: float) -> str:
    """Wrap each title line to the figure's width (about 13 characters an inch at 10 pt),
    so long family descriptions are not cut off on one-panel figures."""
    chars = max(30, int(width_in * 13))
    return "\n".join(textwrap.fill(line, chars) for line in title.split("\n"))


def _log_y(ax: Axes) -> None:
    """Log scale with plain numbers (10, 20, 50k) instead of 2x10^1; minor ticks labelled
    only when the data spans less than a decade (else they crowd)."""
    ys = [y for line in ax.lines for y in line.get_ydata()]
    ax.set_yscale("log")
    fmt = FuncFormatter(lambda y, _pos: fmt_value(y))
    ax.yaxis.set_major_formatter(fmt)
    ax.yaxis.set_minor_formatter(fmt if ys and max(ys) / min(ys) < 10 else NullFormatter())
    ax.tick_params(axis="y", which="minor", labelsize=7)


def _subplots(n: int, title: str, *, width: float = 4.6, height: float = 3.6) -> tuple[Figure, list[Axes]]:
    cols = min(COLS_MAX, max(1, n))
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(width * cols, height * rows + 0.8), layout="constrained")
    fig.suptitle(wrap_title(title, width * cols), fontsize=10)
    axes = [fig.add_subplot(rows, cols, i + 1) for i in range(n)]
    return fig, axes


def _ci_err(point: dict[str, Any], metric: str) -> tuple[float, float]:
    """Error-bar lengths below and above the median: the bootstrap 95% CI of the median over
    the runs (what the charts' labels say), 0 where there are fewer than two runs."""
    med = central_value(point, metric)
    ci = bootstrap_median_ci(run_values(point, metric))
    if med is None or ci is None:
        return (0.0, 0.0)
    return (max(0.0, med - ci[0]), max(0.0, ci[1] - med))


OUTLINE = "#e8112d"  # indistinguishable-from-the-best outline: visible on viridis's dark and bright ends
RECOMMENDED_STYLE: dict[str, Any] = dict(ls="", marker="*", ms=13, color="#ff8c00", mec="black", mew=0.9, zorder=5)
BUSY_STYLE: dict[str, Any] = dict(ls="", marker="D", ms=12, mfc="none", mec="#d000d0", mew=1.8, zorder=6)
RECOMMENDED_TEXT = "recommended: the cheapest setting indistinguishable from the best"
BUSY_TEXT = "measured on a busy machine (a run saw other work on its CPUs)"


def _recommended_handle() -> Line2D:
    return Line2D([], [], label=RECOMMENDED_TEXT, **RECOMMENDED_STYLE)


def _busy_handle() -> Line2D:
    return Line2D([], [], label=BUSY_TEXT, **BUSY_STYLE)


def mark_busy(ax: Axes, marks: list[tuple[float, float, dict[str, Any]]]) -> bool:
    """A hollow diamond over each (x, y) whose point was measured on a busy machine; whether
    any was drawn (the caller then adds the legend entry)."""
    busy = [(x, y) for x, y, p in marks if machine_load.is_busy(p)]
    if busy:
        ax.plot([x for x, _ in busy], [y for _, y in busy], **BUSY_STYLE)
    return bool(busy)


def _add_busy_legend(ax: Axes, drawn: bool) -> None:
    """The busy mark's legend entry beside the axes' own (labelled lines of the busy style)."""
    if drawn:
        ax.plot([], [], label=BUSY_TEXT, **BUSY_STYLE)


def heatmap(points: Points, title: str) -> Figure:
    """Median throughput, concurrency (rows) x pool (columns), one panel per blocking ratio.
    Colour is the fraction of the panel's best median on one 0..1 scale for every panel (so
    1% apart looks 1% apart); cells indistinguishable from the best are outlined."""
    closed_loop_only(points)
    conc = grid.spec_axis(points, "concurrency")
    pools = grid.spec_axis(points, "pool")
    rs = grid.ratios(points)
    answers = answer.answers(points)
    close = {id(s.point) for a in answers for s in a.indistinguishable}
    recommended = {id(a.recommended.point) for a in answers}
    # A one-cell heatmap still needs room for its title, colour bar and legend.
    fig, axes = _subplots(len(rs), title, width=max(5.2, 1.1 * len(pools) + 2.2),
                          height=max(3.6, 0.7 * len(conc) + 2.4))
    busy_drawn = False
    drawn = 0
    image = None
    for ax, r in zip(axes, rs):
        cells = [[math.nan] * len(pools) for _ in conc]
        marks: list[tuple[int, int, dict[str, Any]]] = []
        for p in grid.select(points, ratio=r):
            v = summary_value(p, "throughput_ops_per_s")
            if v is not None:
                ci = conc.index(grid.normalize_spec(p["concurrency"]["spec"]))
                pi = pools.index(grid.normalize_spec(p["pool"]["spec"]))
                cells[ci][pi] = v
                marks.append((ci, pi, p))
        finite = [v for row in cells for v in row if not math.isnan(v)]
        if not finite or max(finite) <= 0:
            ax.set_axis_off()
            ax.set_title(f"b={r:g}: no data", fontsize=9)
            continue
        drawn += 1
        best = max(finite)
        fraction = [[v / best for v in row] for row in cells]
        image = ax.imshow(fraction, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto", origin="upper")
        off = 0
        for i, j, p in marks:
            v = cells[i][j]
            star = "" if within_tolerance(p) else "*"
            off += bool(star)
            rec = id(p) in recommended
            ax.text(j, i, f"{fmt_value(v)}{star}\n{v / best:.2f}", ha="center", va="center", fontsize=7.5,
                    color="black" if v / best > 0.55 else "white", fontweight="bold" if rec else "normal")
            if id(p) in close:
                ax.add_patch(Rectangle((j - 0.46, i - 0.46), 0.92, 0.92, fill=False, edgecolor=OUTLINE, lw=2.2))
            if rec:
                ax.plot([j - 0.3], [i - 0.28], **RECOMMENDED_STYLE)
            if machine_load.is_busy(p):
                ax.plot([j + 0.3], [i - 0.28], **BUSY_STYLE)
                busy_drawn = True
        ax.set_xticks(range(len(pools)), [grid.spec_value_label(points, "pool", s) for s in pools], fontsize=8)
        ax.set_yticks(range(len(conc)), [grid.spec_value_label(points, "concurrency", s) for s in conc], fontsize=8)
        ax.set_xlabel("pool size")
        ax.set_ylabel("concurrency")
        ax.set_title(f"blocking ratio {r:g}: ops/s and fraction of best ({fmt_value(best)})"
                     + (f"\n* {off} cell(s): blocking ratio not within tolerance" if off else ""), fontsize=8.5)
    if not drawn or image is None:
        raise SkipChart("no throughput medians")
    fig.colorbar(image, ax=axes, shrink=0.85, pad=0.02, label="median throughput,\nfraction of the panel's best")
    handles = [Line2D([], [], ls="", marker="s", ms=10, mfc="none", mec=OUTLINE, mew=2,
                      label="indistinguishable from the best"), _recommended_handle()]
    if busy_drawn:
        handles.append(_busy_handle())
    axes[0].legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(0.0, -0.2), borderaxespad=0.0)
    return fig


def throughput_vs_blocking(points: Points, title: str) -> Figure:
    """Throughput against the blocking ratio each point achieved (the request can be missed,
    docs/architecture.md), a line per pool spec, a panel per concurrency spec; points not within the
    tolerance are marked with a red cross."""
    closed_loop_only(points)
    rs = grid.ratios(points)
    if len(rs) < 2:
        raise SkipChart(f"only one blocking ratio ({rs[0]:g})")
    conc = grid.spec_axis(points, "concurrency")
    pools = grid.spec_axis(points, "pool")
    fig, axes = _subplots(len(conc), title)
    for ax, c in zip(axes, conc):
        off_marked = False
        marks: list[tuple[float, float, dict[str, Any]]] = []
        for k, pool in enumerate(pools):
            pts = sorted(grid.select(points, concurrency=c, pool=pool), key=lambda p: p["blocking"]["ratio"])
            xs, ys, lo, hi, off = [], [], [], [], []
            for p in pts:
                v = summary_value(p, "throughput_ops_per_s")
                if v is None:
                    continue
                e = _ci_err(p, "throughput_ops_per_s")
                got = achieved_ratio(p)
                xs.append(got if got is not None else p["blocking"]["ratio"])
                ys.append(v)
                marks.append((xs[-1], v, p))
                lo.append(e[0])
                hi.append(e[1])
                if not within_tolerance(p):
                    off.append((xs[-1], v))
            if xs:
                ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", ms=3, capsize=3, color=f"C{k % 10}",
                            label=f"pool {grid.spec_value_label(points, 'pool', pool)}")
            if off:
                ax.plot([x for x, _ in off], [y for _, y in off], "x", color=OUTLINE, ms=9, mew=2,
                        label=None if off_marked else "blocking ratio not within tolerance")
                off_marked = True
        _add_busy_legend(ax, mark_busy(ax, marks))
        ax.set_title(f"concurrency {grid.spec_value_label(points, 'concurrency', c)}", fontsize=9)
        _blocking_axes(ax, "throughput (ops/s): median,\nbootstrap 95% CI of the median")
    return fig


def _blocking_axes(ax: Axes, ylabel: str, ylabel_size: float | None = None) -> None:
    """The axes of a chart against the blocking ratio achieved: labels, limits, grid, legend."""
    ax.set_xlabel("blocking ratio achieved, median over runs\n(blocked-only where measured)")
    ax.set_ylabel(ylabel, fontsize=ylabel_size)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _pos: fmt_value(y)))
    ax.set_ylim(bottom=0)
    ax.set_xlim(-0.03, 1.0)
    ax.grid(alpha=0.3)
    if ax.lines:
        ax.legend(fontsize=7)


def _lines_over_pool(
    points: Points, title: str, value: Callable[[dict[str, Any]], float | None],
    ylabel: str, what: str, *, err_metric: str | None = None, log: bool = False,
) -> Figure:
    """A panel per blocking ratio, pool spec on x, a line per concurrency spec."""
    pools = grid.spec_axis(points, "pool")
    conc = grid.spec_axis(points, "concurrency")
    rs = grid.ratios(points)
    if not any(value(p) is not None for p in points):
        raise SkipChart(f"no {what} in the points")
    fig, axes = _subplots(len(rs), title)
    for ax, r in zip(axes, rs):
        marks: list[tuple[float, float, dict[str, Any]]] = []
        for c in conc:
            xs, ys, lo, hi = [], [], [], []
            for i, pool in enumerate(pools):
                for p in grid.select(points, ratio=r, concurrency=c, pool=pool)[:1]:
                    v = value(p)
                    if v is None:
                        continue
                    e = _ci_err(p, err_metric) if err_metric else (0.0, 0.0)
                    xs.append(i)
                    ys.append(v)
                    marks.append((i, v, p))
                    lo.append(e[0])
                    hi.append(e[1])
            if xs:
                ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", ms=3, capsize=3,
                            label=f"concurrency {grid.spec_value_label(points, 'concurrency', c)}")
        ax.set_xticks(range(len(pools)), [grid.spec_value_label(points, "pool", s) for s in pools], fontsize=8)
        ax.set_xlabel("pool size")
        ax.set_ylabel(ylabel)
        ax.set_title(f"blocking ratio {r:g}", fontsize=9)
        ax.grid(alpha=0.3)
        _add_busy_legend(ax, mark_busy(ax, marks))
        if log and wide_range([y for _, y, _ in marks]):
            _log_y(ax)
        else:
            ax.set_ylim(bottom=0)
        if ax.lines:
            ax.legend(fontsize=7)
    return fig


def context_switches(points: Points, title: str) -> Figure:
    closed_loop_only(points)
    return _lines_over_pool(
        points, title, lambda p: summary_value(p, "context_switches_per_kop"),
        "context switches per 1,000 completions:\nmedian, bootstrap 95% CI of the median", "context switch counts",
        err_metric="context_switches_per_kop",
    )


LATENCY_SHOWN = ("p50", "p99")  # two lines per concurrency keep a panel readable; the table has the rest


def wide_range(values: list[float]) -> bool:
    """Whether the values are positive and span a decade or more: a log axis then helps; over
    a narrower range it only stretches small differences into large-looking ones."""
    return bool(values) and min(values) > 0 and max(values) / min(values) >= 10


def latency(points: Points, title: str) -> Figure:
    """Latency p50 (solid) and p99 (dashed) over pool size, one colour per concurrency spec, a
    panel per blocking ratio, with the bootstrap 95% CI of each median as error bars; a log
    axis only where the values span a decade or more. The legend sits beside the panels."""
    closed_loop_only(points)
    present = [q for q in LATENCY_SHOWN if any(central_value(p, f"latency_us.{q}") is not None for p in points)]
    if not present:
        present = [q for q in LATENCY_PERCENTILES if any(central_value(p, f"latency_us.{q}") is not None for p in points)][:2]
    if not present:
        raise SkipChart("no latency percentiles in the points")
    styles = {"p50": "-", "p90": "-.", "p99": "--", "p999": ":"}
    pools = grid.spec_axis(points, "pool")
    conc = grid.spec_axis(points, "concurrency")
    rs = grid.ratios(points)
    fig, axes = _subplots(len(rs), title)
    busy_drawn = False
    for ax, r in zip(axes, rs):
        marks: list[tuple[float, float, dict[str, Any]]] = []
        for ci, c in enumerate(conc):
            color = f"C{ci % 10}"
            for q in present:
                xs, ys, lo, hi = [], [], [], []
                for i, pool in enumerate(pools):
                    for p in grid.select(points, ratio=r, concurrency=c, pool=pool)[:1]:
                        v = central_value(p, f"latency_us.{q}")
                        if v is not None:
                            e = _ci_err(p, f"latency_us.{q}")
                            xs.append(i)
                            ys.append(v)
                            lo.append(e[0])
                            hi.append(e[1])
                            marks.append((i, v, p))
                if xs:
                    ax.errorbar(xs, ys, yerr=[lo, hi], linestyle=styles[q], marker="o", ms=3, capsize=3,
                                color=color, label=f"c={grid.spec_value_label(points, 'concurrency', c)} {q}")
        busy_drawn = mark_busy(ax, marks) or busy_drawn
        ax.set_xticks(range(len(pools)), [grid.spec_value_label(points, "pool", s) for s in pools], fontsize=8)
        ax.set_xlabel("pool size")
        ax.set_title(f"blocking ratio {r:g}: " + " and ".join(present), fontsize=9)
        ax.grid(alpha=0.3, which="both")
        if wide_range([y for _, y, _ in marks]):
            _log_y(ax)
            ax.set_ylabel("latency (us, log scale): median,\nbootstrap 95% CI of the median")
        else:
            ax.set_ylim(bottom=0)
            ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _pos: fmt_value(y)))
            ax.set_ylabel("latency (us): median,\nbootstrap 95% CI of the median")
    drawn = [ax for ax in axes if ax.lines]
    if drawn:
        handles, labels = drawn[0].get_legend_handles_labels()
        if busy_drawn:
            handles.append(_busy_handle())
            labels.append(BUSY_TEXT)
        # One legend, outside the last panel: the lines are the same in every panel.
        axes[-1].legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                        borderaxespad=0.0, title="p50 solid, p99 dashed;\nbars: 95% CI of the median",
                        title_fontsize=7)
    return fig


def _switches_per_completion(point: dict[str, Any]) -> float | None:
    kop = summary_value(point, "context_switches_per_kop")
    return None if kop is None else kop / 1000.0


def throughput_vs_switches(points: Points, title: str) -> Figure:
    """What each setting's throughput costs: median throughput (bootstrap 95% CI of the median)
    against context switches per completion, a panel per blocking ratio, a colour per pool
    spec, each point labelled with its setting; the recommended setting (answer.py) starred."""
    closed_loop_only(points)
    if not any(_switches_per_completion(p) is not None and summary_value(p, "throughput_ops_per_s") is not None
               for p in points):
        raise SkipChart("no context switch counts with throughput in the points")
    rs = grid.ratios(points)
    pools = grid.spec_axis(points, "pool")
    recommended = {id(a.recommended.point) for a in answer.answers(points)}
    fig, axes = _subplots(len(rs), title)
    busy_drawn = False
    for ax, r in zip(axes, rs):
        marks: list[tuple[float, float, dict[str, Any]]] = []
        for k, pool in enumerate(pools):
            xs, ys, lo, hi = [], [], [], []
            for p in grid.select(points, ratio=r, pool=pool):
                x, y = _switches_per_completion(p), summary_value(p, "throughput_ops_per_s")
                if x is None or y is None:
                    continue
                e = _ci_err(p, "throughput_ops_per_s")
                xs.append(x)
                ys.append(y)
                lo.append(e[0])
                hi.append(e[1])
                marks.append((x, y, p))
                ax.annotate(f"c={grid.spec_value_text(p['concurrency'])}", (x, y), xytext=(4, 4),
                            textcoords="offset points", fontsize=6.5, color="dimgrey")
            if xs:
                ax.errorbar(xs, ys, yerr=[lo, hi], ls="", marker="o", ms=5, capsize=3, color=f"C{k % 10}",
                            label=f"pool {grid.spec_value_label(points, 'pool', pool)}")
        for x, y, p in marks:
            if id(p) in recommended:
                ax.plot([x], [y], **RECOMMENDED_STYLE)
        busy_drawn = mark_busy(ax, marks) or busy_drawn
        ax.set_xlabel("context switches per completion,\nmedian over runs")
        ax.set_ylabel("throughput (ops/s): median,\nbootstrap 95% CI of the median")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _pos: fmt_value(y)))
        if marks:  # from 0, with room on the right for the labels
            ax.set_xlim(0, max(x for x, _, _ in marks) * 1.3 or 1.0)
        ax.set_ylim(bottom=0)
        ax.set_title(f"blocking ratio {r:g}", fontsize=9)
        ax.grid(alpha=0.3)
    drawn = [ax for ax in axes if ax.lines]
    if drawn:
        handles, labels = drawn[0].get_legend_handles_labels()
        extra = [_recommended_handle()] + ([_busy_handle()] if busy_drawn else [])
        axes[-1].legend([*handles, *extra], [*labels, *(h.get_label() for h in extra)], fontsize=7,
                        loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                        title="pool (colour); label: concurrency", title_fontsize=7)
    return fig


def mean_shares(point: dict[str, Any]) -> list[float] | None:
    """Each thread's share of completions, sorted descending within each run, then averaged
    rank by rank over the runs (runs may have seen different numbers of threads)."""
    runs = [r.get("thread_shares") for r in point.get("runs") or [] if isinstance(r, dict)]
    lists = [sorted((float(x) for x in s if isinstance(x, (int, float))), reverse=True)
             for s in runs if isinstance(s, list) and s]
    if not lists:
        return None
    width = max(len(s) for s in lists)
    return [sum(s[i] if i < len(s) else 0.0 for s in lists) / len(lists) for i in range(width)]


LIFO_CAPTION = (
    "Each thread's share of the completions, busiest thread first (each run's shares sorted, then "
    "averaged rank by rank over the runs). A completion port wakes the most recently waiting thread "
    "(LIFO), so a few threads take most of the work and the line falls steeply; a pool that wakes "
    "its threads in turn (FIFO) spreads the work evenly, a flat line at 1 / pool size."
)


def lifo_signature(points: Points, title: str) -> Figure:
    """Thread rank vs share of completions. IOCP wakes the most recently waiting thread
    (LIFO), so a few threads take most of the work; a FIFO pool spreads it evenly."""
    closed_loop_only(points)
    if not any(mean_shares(p) for p in points):
        raise SkipChart("no runs[].thread_shares in the points")
    rs = grid.ratios(points)
    fig, axes = _subplots(len(rs), title)
    for ax, r in zip(axes, rs):
        for p in grid.select(points, ratio=r):
            shares = mean_shares(p)
            if shares:
                ax.plot(range(1, len(shares) + 1), shares, marker="o", ms=3, drawstyle="steps-mid",
                        label=f"c={grid.spec_value_text(p['concurrency'])} p={grid.spec_value_text(p['pool'])}")
        ax.set_xlabel("thread rank (busiest first)")
        ax.set_ylabel("share of completions")
        ax.set_ylim(0, 1)
        ax.set_title(f"LIFO signature, blocking ratio {r:g}", fontsize=9)
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=6, ncol=2)
    fig.supxlabel(textwrap.fill(LIFO_CAPTION, max(60, int(fig.get_figwidth() * 18))), fontsize=7.5,
                  ha="left", x=0.01)
    return fig


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def pool_timeline(run: dict[str, Any]) -> tuple[list[float], list[int]] | None:
    """A run's auto pool size as step points (ms from the measured window's start, threads),
    carried on to the window's end at seconds*1000. Changes after that end (while the run
    stops and its threads are woken to leave) are left out: they are not part of what was
    measured. Without a timeline, the window's starting size; None when the run has neither."""
    sizing = run.get("pool_sizing")
    if not isinstance(sizing, dict):
        return None
    seconds = run.get("seconds")
    end = float(seconds) * 1000 if _number(seconds) else None
    xs: list[float] = []
    ys: list[int] = []
    timeline = sizing.get("timeline_ms_threads")
    for item in timeline if isinstance(timeline, list) else []:
        if not (isinstance(item, list) and len(item) == 2 and _number(item[0]) and _number(item[1])):
            continue
        if end is not None and item[0] > end:
            continue
        xs.append(float(item[0]))
        ys.append(int(item[1]))
    if not xs:
        window = sizing.get("window")
        start = window.get("threads_at_start") if isinstance(window, dict) else None
        if not _number(start):
            return None
        xs, ys = [0.0], [int(start)]
    if end is not None and end > xs[-1]:
        xs.append(end)
        ys.append(ys[-1])
    return xs, ys


def _fixed_pool_lines(points: Points, conc: str, ratio: float) -> list[tuple[str, int]]:
    """(label, threads) of the fixed pools measured beside an auto point: the sizes the auto
    pool can be read against."""
    fixed = [p for p in grid.select(points, concurrency=conc, ratio=ratio) if not grid.is_auto_point(p)]
    specs = grid.spec_axis(fixed, "pool")
    return [(grid.spec_value_label(fixed, "pool", s), int(grid.select(fixed, pool=s)[0]["pool"]["value"]))
            for s in specs]


def pool_size(points: Points, title: str) -> Figure:
    """Worker threads of the self-sizing (auto) pool over time, a step line per run, a panel
    per auto point; warm-up (t < 0) shaded, the pool's min and max dotted, the fixed pools of
    the same concurrency and blocking ratio dashed."""
    closed_loop_only(points)
    autos = [p for p in points if grid.is_auto_point(p)]
    if not autos:
        raise NotApplicable("no auto pools")
    panels = [grid.select(autos, concurrency=c, pool=pool, ratio=r)[0]
              for c in grid.spec_axis(autos, "concurrency") for pool in grid.spec_axis(autos, "pool")
              for r in grid.ratios(autos) if grid.select(autos, concurrency=c, pool=pool, ratio=r)]
    fig, axes = _subplots(len(panels), title)
    drawn = 0
    for ax, p in zip(axes, panels):
        conc = grid.normalize_spec(p["concurrency"]["spec"])
        ratio = round(float(p["blocking"]["ratio"]), 6)
        head = (f"c={grid.spec_value_text(p['concurrency'])}, pool {grid.spec_value_text(p['pool'])}, "
                f"blocking ratio {ratio:g}")
        runs = [r for r in p.get("runs") or [] if isinstance(r, dict)]
        lines = [(i, r, tl) for i, r in enumerate(runs) if (tl := pool_timeline(r)) is not None]
        if not lines:
            ax.set_axis_off()
            ax.set_title(f"{head}: no pool timeline", fontsize=9)
            continue
        drawn += 1
        for i, run, (xs, ys) in lines:
            ax.plot(xs, ys, drawstyle="steps-post", lw=1.2, alpha=0.85, color=f"C{i % 10}",
                    label=f"run {run.get('repetition', i)}")
        left = min(tl[0][0] for _, _, tl in lines)
        if left < 0:
            ax.axvspan(left, 0, color="grey", alpha=0.15, lw=0, label="warm-up")
        top = max(y for _, _, tl in lines for y in tl[1])
        bounds = grid.auto_range(p["pool"])
        if bounds:
            for k, b in enumerate(bounds):
                ax.axhline(b, color="grey", ls=":", lw=1, label="auto min / max" if k == 0 else None)
            top = max(top, bounds[1])
        for j, (label, threads) in enumerate(_fixed_pool_lines(points, conc, ratio)):
            ax.axhline(threads, color=f"C{(len(runs) + j) % 10}", ls="--", lw=0.9, label=f"fixed pool {label}")
            top = max(top, threads)
        # A full timeline (1024 entries) keeps overwriting its last entry: the changes between
        # the last two steps are lost, so say so rather than let the line look complete.
        dropped = sum(int(d) for _, r, _ in lines
                      if _number(d := r["pool_sizing"].get("timeline_dropped")))
        ax.set_title(head + (f"\n{dropped} changes not recorded (timeline full)" if dropped else ""),
                     fontsize=9)
        ax.set_xlabel("time from the measured window's start (ms)")
        ax.set_ylabel("worker threads")
        ax.set_ylim(0, top + 1)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, ncol=2)
    if not drawn:
        raise SkipChart("no runs[].pool_sizing in the auto points")
    return fig


# The port's lists over a run (port_lists.py): the emulated port's own record of its waiting,
# released (C), paused threads and queued packets.

PORT_LISTS_PANELS_MAX = 6  # a big sweep's family: per blocking ratio the recommended and the best
LIST_COLORS = {"waiting": "C0", "active": "C3", "paused": "C2", "depth": "grey"}
LIST_LABELS = {"waiting": "waiting (in the port)", "active": "active (C)", "paused": "paused (blocked)",
               "depth": "queue depth (right axis)"}
PORT_LISTS_CAPTION = (
    "Steps at the port's recorded changes, taken as its lock is released (every change while they "
    "come at most every 2 us, one in K when faster; the first run of each point, the window's first "
    "400 records). waiting: threads in the port's stack W, "
    "waiting for a packet; active (C): released threads the port counts against the concurrency "
    "value M (dashed); paused: released threads now blocked in a blocking region, not counted in C; "
    "queue depth (grey, right axis): packets queued in the port."
)


def _panel_setting(point: dict[str, Any]) -> str:
    """A point's setting for a panel heading: concurrency, pool, blocking ratio, and the
    offered load or rate of an open-loop point."""
    text = f"{answer.setting_label(point)}, blocking ratio {float(point['blocking']['ratio']):g}"
    load, rate = dig(point, "open_loop.load"), dig(point, "open_loop.rate_ops_per_s")
    if _number(load):
        text += f", load {load:g}"
    elif _number(rate):
        text += f", {fmt_value(rate)} ops/s offered"
    return text


def port_lists_panels(points: Points, limit: int = PORT_LISTS_PANELS_MAX) -> list[tuple[dict[str, Any], str]]:
    """The points the port-lists chart draws, each with its role: per blocking ratio the
    recommended setting and the best (answer.py), where their first run recorded transitions;
    where there is no answer (an open-loop family, no throughput), the first points (by
    blocking ratio, concurrency, pool) that recorded some. At most `limit`."""
    chosen: list[tuple[dict[str, Any], str]] = []
    for a in answer.answers(points):
        if a.recommended.point is a.best.point:
            pairs = [(a.best.point, "recommended, the best")]
        else:
            pairs = [(a.recommended.point, "recommended"), (a.best.point, "best")]
        chosen += [(p, role) for p, role in pairs if port_lists.event_series(p) is not None]
    if not chosen:
        conc = grid.spec_axis(points, "concurrency")
        pools = grid.spec_axis(points, "pool")
        ordered = sorted(points, key=lambda p: (
            float(p["blocking"]["ratio"]), conc.index(grid.normalize_spec(p["concurrency"]["spec"])),
            pools.index(grid.normalize_spec(p["pool"]["spec"]))))
        chosen = [(p, "") for p in ordered if port_lists.event_series(p) is not None]
    return chosen[:limit]


def _lists_panel(ax: Axes, series: port_lists.StepSeries, head: str) -> list[Any]:
    """One run's lists as steps: threads on the left axis, queued packets on the right; the
    handles for the legend."""
    t = series.t_ms
    for name in ("waiting", "active", "paused"):
        ax.plot(t, series.levels[name], drawstyle="steps-post", lw=1.3, color=LIST_COLORS[name],
                label=LIST_LABELS[name], alpha=0.9)
    top = max(max(series.levels[name]) for name in ("waiting", "active", "paused"))
    if series.concurrency is not None:
        ax.axhline(series.concurrency, color="black", ls="--", lw=1, label="concurrency value M")
        top = max(top, series.concurrency)
    depth_ax = ax.twinx()
    depth_ax.plot(t, series.levels["depth"], drawstyle="steps-post", lw=1, color=LIST_COLORS["depth"],
                  alpha=0.7, label=LIST_LABELS["depth"])
    depth_ax.set_ylim(0, max(series.levels["depth"]) * 1.1 + 1)
    depth_ax.set_ylabel("packets queued", fontsize=8, color="dimgrey")
    depth_ax.tick_params(axis="y", labelsize=7, colors="dimgrey")
    depth_ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_zorder(depth_ax.get_zorder() + 1)  # the threads' lines over the queue's
    ax.patch.set_visible(False)
    ax.set_ylim(0, top + 1)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(0, t[-1] if t[-1] > 0 else 1)
    ax.set_xlabel("time from the measured window's start (ms)")
    ax.set_ylabel("threads")
    ax.grid(alpha=0.3)
    shown = f"{fmt_value(series.shown_ms)} of {fmt_value(series.window_ms)} ms" if series.window_ms else \
        f"{fmt_value(series.shown_ms)} ms"
    run = f"run {series.repetition}" if series.repetition is not None else "first run"
    title = "\n".join(textwrap.wrap(head, 48))
    ax.set_title(f"{title}\n{run}: {series.recorded} records, {shown}"
                 + (" (record full)" if series.cut else ""), fontsize=8.5)
    handles, _ = ax.get_legend_handles_labels()
    depth_handles, _ = depth_ax.get_legend_handles_labels()
    return handles + depth_handles


def port_lists_figure(panels: list[tuple[dict[str, Any], str]], title: str) -> Figure:
    """A panel per (point, role): the lists of the point's first run over time (port_lists.
    event_series), one legend beside the panels and a caption saying what each list is.
    SkipChart where none of the points recorded transitions."""
    drawable = [(p, role, s) for p, role in panels if (s := port_lists.event_series(p)) is not None]
    if not drawable:
        raise SkipChart("no runs[].port_lists.events in the points (recorded in repetition 0 only)")
    fig, axes = _subplots(len(drawable), title)
    handles: list[Any] = []
    for ax, (p, role, series) in zip(axes, drawable):
        head = _panel_setting(p) + (f": {role}" if role else "")
        handles = _lists_panel(ax, series, head)
    # Beside the last panel, past its right axis (the queue's) and that axis's labels.
    axes[-1].legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.2, 1.0),
                    borderaxespad=0.0, title="the port's lists", title_fontsize=7)
    fig.supxlabel(textwrap.fill(PORT_LISTS_CAPTION, max(60, int(fig.get_figwidth() * 18))), fontsize=7.5,
                  ha="left", x=0.01)
    return fig


def port_lists_over_time(points: Points, title: str) -> Figure:
    """The port's lists over time for the recommended and the best setting of each blocking
    ratio (port_lists_panels): waiting, active (C), paused and queued, with M dashed."""
    if not port_lists.any_lists(points):
        raise NotApplicable("no runs[].port_lists")
    return port_lists_figure(port_lists_panels(points), title)


@dataclass(frozen=True)
class ListsCurve:
    """One (concurrency, pool) setting's lists numbers against the blocking ratio: a value per
    point, the median over its runs, with the runs' min and max."""

    concurrency: str
    pool: str
    x: list[float]  # blocking ratio achieved (the requested one where none was recorded)
    released_not_running: list[tuple[float, float, float] | None]  # (median, min, max)
    queued_with_room: list[tuple[float, float, float] | None]


def lists_vs_blocking_curves(points: Points) -> list[ListsCurve]:
    """Per (concurrency, pool) spec, the points that have lists in order of blocking ratio."""
    curves = []
    for c in grid.spec_axis(points, "concurrency"):
        for pool in grid.spec_axis(points, "pool"):
            pts = sorted(grid.select(points, concurrency=c, pool=pool), key=lambda p: p["blocking"]["ratio"])
            xs: list[float] = []
            rnr: list[tuple[float, float, float] | None] = []
            qwr: list[tuple[float, float, float] | None] = []
            for p in pts:
                pl = port_lists.point_lists(p)
                if pl is None:
                    continue
                got = achieved_ratio(p)
                xs.append(got if got is not None else float(p["blocking"]["ratio"]))
                rnr.append(None if pl.released_not_running is None or pl.released_not_running_range is None
                           else (pl.released_not_running, *pl.released_not_running_range))
                qwr.append(None if pl.queued_with_room is None or pl.queued_with_room_range is None
                           else (pl.queued_with_room, *pl.queued_with_room_range))
            if xs:
                curves.append(ListsCurve(c, pool, xs, rnr, qwr))
    return curves


LISTS_VS_BLOCKING = (
    ("released_not_running", "released but not running",
     "released but not running (threads): the wake-up\ndelays' total / window, median (min..max over runs)"),
    ("queued_with_room", "queued with room",
     "queued with room: share of the window with a packet\nqueued, a thread waiting and C < M; median (min..max)"),
)


def port_lists_vs_blocking(points: Points, title: str) -> Figure:
    """Per concurrency spec, two panels against the blocking ratio achieved, a line per pool:
    the threads the port counted in C that had not run yet since their handoff (the wake-up
    delays' total over the window), and the share of the window with a packet queued while a
    thread waited and C < M."""
    closed_loop_only(points)
    if not port_lists.any_lists(points):
        raise NotApplicable("no runs[].port_lists")
    rs = grid.ratios([p for p in points if port_lists.has_lists(p)])
    if len(rs) < 2:
        raise SkipChart(f"port lists at only one blocking ratio ({rs[0]:g})")
    curves = lists_vs_blocking_curves(points)
    conc = [c for c in grid.spec_axis(points, "concurrency") if any(k.concurrency == c for k in curves)]
    pools = grid.spec_axis(points, "pool")
    fig, axes = _subplots(2 * len(conc), title)
    for i, c in enumerate(conc):
        for j, (field, what, ylabel) in enumerate(LISTS_VS_BLOCKING):
            ax = axes[2 * i + j]
            for curve in (k for k in curves if k.concurrency == c):
                drawn = [(x, v) for x, v in zip(curve.x, getattr(curve, field)) if v is not None]
                if not drawn:
                    continue
                ys = [v[0] for _, v in drawn]
                err = [[max(0.0, v[0] - v[1]) for _, v in drawn], [max(0.0, v[2] - v[0]) for _, v in drawn]]
                ax.errorbar([x for x, _ in drawn], ys, yerr=err, marker="o", ms=3, capsize=3,
                            color=f"C{pools.index(curve.pool) % 10}",
                            label=f"pool {grid.spec_value_label(points, 'pool', curve.pool)}")
            ax.set_title(f"concurrency {grid.spec_value_label(points, 'concurrency', c)}: {what}", fontsize=9)
            _blocking_axes(ax, ylabel, 8)
    return fig


# Open-loop families: latency and switches against the offered load (latency_load.py).

PERCENTILE_STYLES = {"p50": "-", "p99": "--", "p999": ":"}
FLAG_NOTES = (
    "x: a run over capacity (its backlog grew through the window)",
    "hollow: a run generator-bound (latency partly the generator's)",
)


def _setting_colors(curves: list[latency_load.Curve]) -> dict[tuple[str, str], str]:
    """One colour per (concurrency, pool), the same in every panel."""
    keys: list[tuple[str, str]] = []
    for c in curves:
        if (c.concurrency, c.pool) not in keys:
            keys.append((c.concurrency, c.pool))
    return {k: f"C{i % 10}" for i, k in enumerate(keys)}


def _flagged_markers(ax: Axes, lps: list[latency_load.LoadPoint], ys: list[float | None], color: str) -> None:
    """A marker per point: filled, hollow where a run was generator-bound, and an x on top
    where a run was over capacity."""
    for lp, y in zip(lps, ys):
        if y is None:
            continue
        face = "none" if lp.generator_bound else color
        ax.plot([lp.x], [y], "o", ms=4.5, color=color, markerfacecolor=face, mew=1.2)
        if lp.over_capacity:
            ax.plot([lp.x], [y], "x", ms=8, color=OUTLINE, mew=1.8)


def _load_axis(ax: Axes, kind: str) -> None:
    ax.set_xlabel(latency_load.x_label(kind))
    if kind == "load":
        ax.set_xlim(0, 1.05)
    else:
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: fmt_value(x)))
    ax.grid(alpha=0.3, which="both")


def _flag_handles() -> list[Line2D]:
    return [Line2D([], [], ls="", marker="x", color=OUTLINE, mew=1.8, ms=8, label=FLAG_NOTES[0]),
            Line2D([], [], ls="", marker="o", color="grey", markerfacecolor="none", ms=5, label=FLAG_NOTES[1])]


def _legend_beside(axes: list[Axes], handles: list[Line2D], title: str) -> None:
    """One legend, outside the last panel: the settings are the same in every panel."""
    axes[-1].legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                    borderaxespad=0.0, title=title, title_fontsize=7)


def _load_panels(points: Points, title: str, value: Callable[[Any], float | None], missing: str) -> tuple:
    """What both load charts start from: the open-loop curves (SkipChart with `missing` when
    `value` is None at every load point), the x axis's kind, a colour per setting, and a figure
    with a panel per blocking ratio: (curves, kind, colors, fig, axes, ratios)."""
    open_loop_only(points)
    curves = latency_load.curves(points)
    if not any(value(lp) is not None for c in curves for lp in c.points):
        raise SkipChart(missing)
    rs = sorted({c.ratio for c in curves})
    fig, axes = _subplots(len(rs), title)
    return curves, latency_load.x_kind(points), _setting_colors(curves), fig, axes, rs


def latency_vs_load(points: Points, title: str) -> Figure:
    """Response time p50, p99 and p99.9 against offered load on a log axis, a panel per
    blocking ratio, a colour per setting (concurrency, pool), a line style per percentile; the
    knee of each setting's p99 starred; points with a run over capacity crossed, with a
    generator-bound run hollow."""
    panels = _load_panels(points, title, lambda lp: lp.p99, "no runs[].latency_us in the open-loop points")
    curves, kind, colors, fig, axes, rs = panels
    for ax, r in zip(axes, rs):
        for c in (c for c in curves if c.ratio == r):
            color = colors[(c.concurrency, c.pool)]
            for q, style in PERCENTILE_STYLES.items():
                ys = [lp.response_us.get(q) for lp in c.points]
                drawn = [(lp.x, y) for lp, y in zip(c.points, ys) if y is not None]
                if drawn:
                    ax.plot([x for x, _ in drawn], [y for _, y in drawn], linestyle=style, color=color, lw=1.3)
                    _flagged_markers(ax, c.points, ys, color)
            if c.knee is not None and c.knee.p99 is not None:
                ax.plot([c.knee.x], [c.knee.p99], "*", ms=15, color=color, markeredgecolor="black", mew=0.8)
        _load_axis(ax, kind)
        ax.set_title(f"blocking ratio {r:g}", fontsize=9)
        if wide_range([float(y) for line in ax.lines for y in line.get_ydata()]):
            _log_y(ax)
            ax.set_ylabel("response time from the intended start\n(us, log scale), median over runs")
        else:
            ax.set_ylim(bottom=0)
            ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _pos: fmt_value(y)))
            ax.set_ylabel("response time from the intended start\n(us), median over runs")
    labels = {(c.concurrency, c.pool): c.label for c in curves}
    handles = [Line2D([], [], color=colors[k], lw=2, label=labels[k]) for k in colors]
    handles += [Line2D([], [], color="grey", ls=style, label=latency_load.PERCENTILE_TEXT[q])
                for q, style in PERCENTILE_STYLES.items()]
    handles.append(Line2D([], [], ls="", marker="*", ms=12, color="grey", markeredgecolor="black",
                          label=f"knee: p99 over {latency_load.KNEE_FACTOR:g}x its value at the lowest load"))
    handles += _flag_handles()
    _legend_beside(axes, handles, "setting (colour), percentile (line)")
    return fig


def switches_vs_load(points: Points, title: str) -> Figure:
    """Context switches per completion against offered load, a line per setting, a panel per
    blocking ratio; the same flag markers as latency-vs-load."""
    panels = _load_panels(points, title, lambda lp: lp.switches_per_completion,
                          "no context switch counts in the open-loop points")
    curves, kind, colors, fig, axes, rs = panels
    for ax, r in zip(axes, rs):
        for c in (c for c in curves if c.ratio == r):
            color = colors[(c.concurrency, c.pool)]
            ys = [lp.switches_per_completion for lp in c.points]
            drawn = [(lp.x, y) for lp, y in zip(c.points, ys) if y is not None]
            if drawn:
                ax.plot([x for x, _ in drawn], [y for _, y in drawn], color=color, lw=1.3)
                _flagged_markers(ax, c.points, ys, color)
        _load_axis(ax, kind)
        ax.set_ylim(bottom=0)
        ax.set_ylabel("context switches per completion,\nmedian over runs")
        ax.set_title(f"blocking ratio {r:g}", fontsize=9)
    labels = {(c.concurrency, c.pool): c.label for c in curves}
    handles = [Line2D([], [], color=colors[k], lw=2, label=labels[k]) for k in colors] + _flag_handles()
    _legend_beside(axes, handles, "setting")
    return fig


BUILDERS: list[tuple[str, str, Callable[[Points, str], Figure]]] = [
    ("heatmap", "throughput heatmap, concurrency x pool", heatmap),
    ("throughput-vs-blocking", "throughput vs blocking ratio", throughput_vs_blocking),
    ("context-switches", "context switches per 1,000 completions vs pool size", context_switches),
    ("latency", "latency percentiles vs pool size", latency),
    ("throughput-vs-switches", "throughput vs context switches per completion: what each setting costs",
     throughput_vs_switches),
    ("lifo", "LIFO signature: each thread's share of completions", lifo_signature),
    ("pool-size", "self-sizing (auto) pool: worker threads over time", pool_size),
    ("port-lists", "the port's lists over time: waiting, active (C), paused, queued", port_lists_over_time),
    ("port-lists-vs-blocking", "the port's lists: released but not running, queued with room, vs blocking ratio",
     port_lists_vs_blocking),
    ("latency-vs-load", "open loop: response time percentiles vs offered load", latency_vs_load),
    ("switches-vs-load", "open loop: context switches per completion vs offered load", switches_vs_load),
]


def build_family_charts(results: Results, fam: grid.Family, notes: list[str]) -> list[Chart]:
    """Every chart of one family; reasons for skipped charts are appended to `notes`."""
    head = grid.machine_title(results.machine)
    charts: list[Chart] = []
    for name, what, builder in BUILDERS:
        title = f"{head}\n{what}\n{fam.title}"
        try:
            fig = builder(fam.points, title)
        except NotApplicable:
            continue
        except SkipChart as why:
            notes.append(f"{results.path}: {fam.slug}: skipped {name} chart: {why}")
            continue
        except Exception as err:  # a chart bug must not cost the other charts
            notes.append(f"{results.path}: {fam.slug}: skipped {name} chart: {type(err).__name__}: {err}")
            continue
        charts.append(Chart(f"{fam.slug}-{name}", title, fig))
    return charts + controller_charts(results, fam, head, notes)


def controller_charts(results: Results, fam: grid.Family, head: str, notes: list[str]) -> list[Chart]:
    """The pool controllers' chart per group with controllers and timelines (charts_controllers.py)."""
    try:
        made = charts_controllers.family_charts(fam.points, fam.slug, head, fam.title)
    except Exception as err:  # a chart bug must not cost the other charts
        notes.append(f"{results.path}: {fam.slug}: skipped controllers chart: {type(err).__name__}: {err}")
        return []
    return [Chart(c.name, c.title, c.figure) for c in made]


def build_charts(results: Results, notes: list[str]) -> list[Chart]:
    """Every chart for every family of the file."""
    if not results.points:
        notes.append(f"{results.path}: no points, no charts")
    return [c for fam in grid.families(results.points) for c in build_family_charts(results, fam, notes)]


def figure_bytes(fig: Figure, fmt: str) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=110 if fmt == "png" else None)
    return buf.getvalue()


def figure_files(fig: Figure) -> list[tuple[str, bytes]]:
    """The figure as PNG, then SVG. The SVG keeps the layout the PNG's save computed: a figure
    with a layout engine is laid out again at every save, about a third of a chart's time."""
    png = figure_bytes(fig, "png")
    fig.set_layout_engine(None)  # no engine: also no extra layout draw before the save
    return [("png", png), ("svg", figure_bytes(fig, "svg"))]


def file_prefixes(results: list[Results]) -> list[str]:
    """One output-name prefix per input file: its stem, numbered when two stems collide."""
    stems = [r.path.stem for r in results]
    return [s if stems.count(s) == 1 else f"{s}-{i + 1}" for i, s in enumerate(stems)]


def write_charts(results: list[Results], outdir: Path, notes: list[str]) -> list[Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for prefix, res in zip(file_prefixes(results), results):
        for chart in build_charts(res, notes):
            for fmt, data in figure_files(chart.figure):
                path = outdir / f"{prefix}-{chart.name}.{fmt}"
                path.write_bytes(data)
                written.append(path)
    return written


def ratio_chart(report: CompareReport) -> Figure:
    """NEW/BASE ratio per matched point with its CI, one marker colour per new machine."""
    keys: list[Any] = []
    labels: dict[Any, str] = {}
    for mc in report.machines:
        for key, row in mc.rows.items():
            if key not in labels:
                keys.append(key)
                labels[key] = row.label
    n = max(1, len(keys))
    fig = Figure(figsize=(9, 1.6 + 0.28 * n * max(1, len(report.machines)) ** 0.5), layout="constrained")
    ax = fig.add_subplot()
    m = report.metric
    fig.suptitle(f"{m.name}: new / base ({report.base_label}); "
                 f"{'higher' if m.higher_is_better else 'lower'} is better", fontsize=10)
    k = len(report.machines)
    gated = not report.cross_machine  # a cross-machine comparison reports, it has no margin
    for j, mc in enumerate(report.machines):
        labelled = False
        offset = (j - (k - 1) / 2) * (0.6 / max(1, k))
        for i, key in enumerate(keys):
            row = mc.rows.get(key)
            if row is None or row.ratio is None:
                continue
            err = [[max(0.0, row.ratio - row.ci[0])], [max(0.0, row.ci[1] - row.ratio)]] if row.ci else None
            ax.errorbar([row.ratio], [i + offset], xerr=err, fmt="o", ms=4, capsize=2, color=f"C{j % 10}",
                        markeredgecolor="red" if row.regression and gated else f"C{j % 10}",
                        label=None if labelled else mc.label)
            labelled = True
    ax.axvline(1.0, color="black", lw=0.8)
    band = report.fail_above / 100
    for x in (1 - band, 1 + band) if gated else ():
        ax.axvline(x, color="grey", lw=0.6, ls="--")
    ax.set_yticks(range(len(keys)), [labels[k_] for k_ in keys], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("ratio of geometric means (95% CI); dashed: the margin (--fail-above); red edge: a regression"
                  if gated else "ratio of geometric means (95% CI); comparing machines: not gated")
    ax.grid(alpha=0.3, axis="x")
    if report.machines and keys:
        ax.legend(fontsize=7)
    return fig
