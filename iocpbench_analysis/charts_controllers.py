"""The pool controllers' chart: per group of points that differ only in their pool
(controllers.py), pool size over time (top) and throughput over time (bottom), a line per
controller (the median over runs of each timeline window, drawn as steps: a window's value
holds over its width), the best fixed pool's throughput
dashed, the blocking profile's steps as vertical lines with the requested ratio written on
each segment. iocpbench-charts and iocpbench-report draw one per group with controllers and
timelines (charts.build_family_charts); iocpbench-controllers --charts writes the same files.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: no display is ever needed

from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from . import controllers as ctl  # noqa: E402
from . import grid  # noqa: E402
from .load import Results  # noqa: E402
from .match import normalize_spec  # noqa: E402
from .metrics import dig  # noqa: E402

WHAT = "pool controllers: pool size and throughput over time against the best fixed pool"


@dataclass(frozen=True)
class ControllerChart:
    name: str  # unique within one results file's family; part of the file name
    title: str
    figure: Figure


def has_timelines(points: Sequence[ctl.Point]) -> bool:
    return any(ctl.run_windows(r) for p in points for r in p.get("runs") or [] if isinstance(r, dict))


def _seconds(series: list[tuple[float, float]]) -> tuple[list[float], list[float]]:
    return [t / 1000 for t, _ in series], [v for _, v in series]


def _mark_steps(axes: Sequence[Axes], group: ctl.GroupScore, intervals: list[ctl.Interval] | None) -> None:
    """Each step a vertical line on both panels; each segment's requested ratio on the top one."""
    for t_ms, _, _ in group.steps:
        for ax in axes:
            ax.axvline(t_ms / 1000, color="grey", lw=0.8, ls=":")
    for start, end, ratio in intervals or []:
        axes[0].text((start + end) / 2000, 1.0, f"b={ratio:g}", transform=axes[0].get_xaxis_transform(),
                     ha="center", va="bottom", fontsize=7, color="dimgrey")


def group_figure(group: ctl.GroupScore, title: str) -> Figure:
    points = group.points
    fig = Figure(figsize=(9, 6.4), layout="constrained")
    fig.suptitle(title, fontsize=10)
    top, bottom = fig.add_subplot(2, 1, 1), fig.add_subplot(2, 1, 2)
    bottom.sharex(top)
    controllers = [p for p in points if ctl.is_controller(p)]
    for k, p in enumerate(controllers):
        style = {"color": f"C{k % 10}", "lw": 1.4, "drawstyle": "steps-post", "label": ctl.pool_label(p)}
        top.plot(*_seconds(ctl.median_series(p, "mean_threads")), **style)
        bottom.plot(*_seconds(ctl.median_series(p, "ops_per_s")), **style)
    best = ctl.best_fixed(points)
    if best is not None:
        bottom.plot(*_seconds(ctl.median_series(best, "ops_per_s")), color="black", lw=1.2, ls="--",
                    drawstyle="steps-post", label=f"best fixed: {ctl.pool_label(best)}")
    _mark_steps((top, bottom), group, ctl.group_intervals(points))
    top.set_ylabel("worker threads\n(mean per window)")
    bottom.set_ylabel("throughput ops/s\n(per window)")
    bottom.set_xlabel("seconds from the measured window's start; dotted: a step of the blocking profile")
    top.set_ylim(bottom=0)
    bottom.set_ylim(bottom=0)
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    return fig


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-") or "x"


def group_slug(group: ctl.GroupScore) -> str:
    first = group.points[0]
    conc = normalize_spec(dig(first, "concurrency.spec") or "?")
    where = f"profile{group.profile}" if group.profile else f"b{group.blocking_ratio:g}" \
        if group.blocking_ratio is not None else ""
    load = dig(first, "open_loop.load") or dig(first, "open_loop.rate_ops_per_s")
    return _slug(f"controllers-c{conc}-{where}" + (f"-load{load:g}" if isinstance(load, (int, float)) else ""))


def family_charts(points: Sequence[ctl.Point], fam_slug: str, head: str, fam_title: str) -> list[ControllerChart]:
    """One chart per group of the family with controllers and timelines; [] for none."""
    groups = [g for g in ctl.score_points(points) if ctl.has_controllers(g.points) and has_timelines(g.points)]
    slugs = [group_slug(g) for g in groups]
    counts, seen = Counter(slugs), Counter[str]()
    out = []
    for g, slug in zip(groups, slugs):
        if counts[slug] > 1:
            seen[slug] += 1
            slug = f"{slug}-{seen[slug]}"
        title = f"{head}\n{WHAT}\n{fam_title}\n{g.label}"
        out.append(ControllerChart(f"{fam_slug}-{slug}", title, group_figure(g, title)))
    return out


def file_charts(res: Results) -> list[ControllerChart]:
    head = grid.machine_title(res.machine)
    return [c for fam in grid.families(res.points) for c in family_charts(fam.points, fam.slug, head, fam.title)]


def write_controller_charts(results: list[Results], outdir: Path) -> list[Path]:
    """The charts as FILE-FAMILY-controllers-....{png,svg}, named as iocpbench-charts names them."""
    from .charts import figure_files, file_prefixes

    outdir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for prefix, res in zip(file_prefixes(results), results):
        for chart in file_charts(res):
            for fmt, data in figure_files(chart.figure):
                path = outdir / f"{prefix}-{chart.name}.{fmt}"
                path.write_bytes(data)
                written.append(path)
    return written
