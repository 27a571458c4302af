"""Compare a base results file with one or more new ones, point by matched point.

Per point: the ratio NEW/BASE of medians, its 95% CI (bootstrap over the per-run values, or
from the two summaries when the runs are missing), and a Mann-Whitney U p-value from the
per-run values. A regression is significant (p < alpha) *and* worse than the threshold: the
effect-size gate keeps tiny but "significant" drifts from failing CI, the significance gate
keeps noisy points from doing so.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from . import stats
from .load import Results
from .match import Matching, SpecKey, match_points, point_label, spec_key
from .metrics import Metric, run_values, summary_stat, summary_value

DEFAULT_FAIL_ABOVE = 5.0
DEFAULT_ALPHA = 0.05


@dataclass(frozen=True)
class PointComparison:
    label: str
    base_median: float | None
    new_median: float | None
    ratio: float | None
    ci: tuple[float, float] | None
    p_value: float | None
    n_base: int
    n_new: int
    # Signed: positive = worse, in percent, whichever direction "better" is for the metric.
    worse_pct: float | None
    significant: bool
    regression: bool
    improvement: bool


@dataclass
class MachineComparison:
    results: Results
    label: str
    matching: Matching
    rows: dict[SpecKey, PointComparison] = field(default_factory=dict)

    @property
    def regressions(self) -> list[PointComparison]:
        return [r for r in self.rows.values() if r.regression]


@dataclass
class CompareReport:
    base: Results
    base_label: str
    metric: Metric
    fail_above: float
    alpha: float
    ignore_port: bool
    machines: list[MachineComparison]

    @property
    def has_regression(self) -> bool:
        return any(m.regressions for m in self.machines)


def machine_label(results: Results) -> str:
    m = results.machine
    host = m.get("hostname") or results.path.stem
    return f"{host} (N={m['logical_cpus']})"


def unique_labels(results: list[Results]) -> list[str]:
    """Column headers; a file compared with itself, or two runs on one host, would give two
    identical headers, so those get their file name added."""
    labels = [machine_label(r) for r in results]
    counts = Counter(labels)
    return [f"{lab} [{r.path.name}]" if counts[lab] > 1 else lab for lab, r in zip(labels, results)]


def _median_of(point: dict[str, Any], metric: str, runs: list[float]) -> float | None:
    # The median of the runs is what the bootstrap and MWU see, so use it when there are runs.
    return stats.median(runs) if runs else summary_value(point, metric)


def _worse_pct(ratio: float, metric: Metric) -> float:
    return (1.0 - ratio) * 100.0 if metric.higher_is_better else (ratio - 1.0) * 100.0


def compare_pair(
    base: dict[str, Any],
    new: dict[str, Any],
    metric: Metric,
    *,
    fail_above: float = DEFAULT_FAIL_ABOVE,
    alpha: float = DEFAULT_ALPHA,
    label: str = "",
    seed: int = 0,
) -> PointComparison:
    b_runs = run_values(base, metric.name)
    n_runs = run_values(new, metric.name)
    b_med = _median_of(base, metric.name, b_runs)
    n_med = _median_of(new, metric.name, n_runs)
    ratio = n_med / b_med if (b_med is not None and n_med is not None and b_med != 0) else None

    ci = stats.bootstrap_ratio_ci(b_runs, n_runs, seed=seed)
    if ci is None and ratio is not None:
        bs, ns = summary_stat(base, metric.name) or {}, summary_stat(new, metric.name) or {}
        ci = stats.ratio_ci_from_summaries(bs.get("ci95_low"), bs.get("ci95_high"), ns.get("ci95_low"), ns.get("ci95_high"))

    p = stats.mann_whitney_p(b_runs, n_runs)
    significant = p is not None and p < alpha
    worse = _worse_pct(ratio, metric) if ratio is not None else None
    return PointComparison(
        label=label or point_label(base),
        base_median=b_med,
        new_median=n_med,
        ratio=ratio,
        ci=ci,
        p_value=p,
        n_base=len(b_runs),
        n_new=len(n_runs),
        worse_pct=worse,
        significant=significant,
        regression=significant and worse is not None and worse > fail_above,
        improvement=significant and worse is not None and -worse > fail_above,
    )


def compare_results(
    base: Results,
    news: list[Results],
    metric: Metric,
    *,
    fail_above: float = DEFAULT_FAIL_ABOVE,
    alpha: float = DEFAULT_ALPHA,
    ignore_port: bool = False,
) -> CompareReport:
    labels = unique_labels([base, *news])
    machines: list[MachineComparison] = []
    for new, label in zip(news, labels[1:]):
        matching = match_points(base.points, new.points, ignore_port=ignore_port)
        mc = MachineComparison(results=new, label=label, matching=matching)
        for bp, np_ in matching.pairs:
            key = spec_key(bp, ignore_port=ignore_port)
            mc.rows[key] = compare_pair(
                bp, np_, metric, fail_above=fail_above, alpha=alpha,
                label=point_label(bp, ignore_port=ignore_port),
            )
        machines.append(mc)
    return CompareReport(base, labels[0], metric, fail_above, alpha, ignore_port, machines)


# ---------------------------------------------------------------- Markdown rendering


def fmt_value(x: float | None) -> str:
    """Compact, fixed-width-ish numbers for table cells (12.3k, 1.05M, 0.123)."""
    if x is None:
        return "n/a"
    ax = abs(x)
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if ax >= scale:
            return f"{x / scale:.3g}{suffix}"
    return f"{x:.3g}"


def fmt_p(p: float | None) -> str:
    if p is None:
        return "p=n/a"
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def fmt_cell(row: PointComparison) -> str:
    if row.ratio is None:
        return f"{fmt_value(row.new_median)} (no ratio: base is {fmt_value(row.base_median)})"
    ci = f", CI {row.ci[0]:.2f}-{row.ci[1]:.2f}" if row.ci else ""
    cell = f"{fmt_value(row.new_median)} ({row.ratio:.2f}x{ci}, {fmt_p(row.p_value)})"
    change = (row.ratio - 1.0) * 100.0  # the metric's own direction: cs/kop +30% is worse
    if row.regression:
        cell += f" **REGRESSION {change:+.1f}%**"
    elif row.improvement:
        cell += f" improved {change:+.1f}%"
    return cell


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def _table(report: CompareReport) -> list[str]:
    # Rows in base order, each base point that matched on at least one machine.
    keyed: dict[SpecKey, tuple[str, float | None]] = {}
    for mc in report.machines:
        for key, row in mc.rows.items():
            keyed.setdefault(key, (row.label, row.base_median))
    order = [spec_key(p, ignore_port=report.ignore_port) for p in report.base.points]
    keys = [k for k in dict.fromkeys(order) if k in keyed]
    head = ["point", f"base: {report.base_label}"] + [mc.label for mc in report.machines]
    lines = [
        "| " + " | ".join(_escape(h) for h in head) + " |",
        "|:--|" + "--:|" * (len(head) - 1),
    ]
    for key in keys:
        label, base_median = keyed[key]
        cells = [f"`{label}`", fmt_value(base_median)]
        for mc in report.machines:
            row = mc.rows.get(key)
            cells.append(fmt_cell(row) if row else "unmatched")
        lines.append("| " + " | ".join(_escape(c) for c in cells) + " |")
    return lines


def _unmatched(report: CompareReport) -> list[str]:
    lines: list[str] = []
    for mc in report.machines:
        m = mc.matching
        for title, pts in (
            (f"Only in base ({report.base_label}), not in {mc.label}", m.only_base),
            (f"Only in {mc.label}, not in base", m.only_new),
            (f"Repeated spec in one file, ignored ({mc.label} vs base)", m.duplicates),
        ):
            if pts:
                lines.append(f"**{_escape(title)}** ({len(pts)}):")
                lines += [f"- `{point_label(p, ignore_port=report.ignore_port)}`" for p in pts]
                lines.append("")
    return lines


def render_markdown(report: CompareReport) -> str:
    metric = report.metric
    better = "higher" if metric.higher_is_better else "lower"
    out = [
        f"## iocpbench compare: `{metric.name}` ({metric.unit}, {better} is better)",
        "",
        f"Base `{report.base.path.name}`; new: "
        + ", ".join(f"`{mc.results.path.name}`" for mc in report.machines)
        + f". Each cell: new median (NEW/BASE ratio of medians, bootstrap 95% CI, Mann-Whitney U p). "
        f"Regression: p < {report.alpha:g} and worse by more than {report.fail_above:g}%."
        + (" Points matched across port backends." if report.ignore_port else ""),
        "",
    ]
    if any(mc.rows for mc in report.machines):
        out += _table(report)
    else:
        out.append("_No points matched._")
    out.append("")

    too_few = sum(
        1
        for mc in report.machines
        for r in mc.rows.values()
        if stats.min_attainable_p(r.n_base, r.n_new) >= report.alpha
    )
    if too_few:
        out += [
            f"Note: {too_few} compared point(s) have too few runs for any difference to reach "
            f"p < {report.alpha:g} (Mann-Whitney U needs about 4 runs a side); use more repetitions.",
            "",
        ]

    n_reg = sum(len(mc.regressions) for mc in report.machines)
    if n_reg:
        out += [f"**{n_reg} significant regression(s) beyond {report.fail_above:g}%.**", ""]
    else:
        out += [f"No significant regression beyond {report.fail_above:g}%.", ""]

    unmatched = _unmatched(report)
    if unmatched:
        out += ["### Unmatched points", ""] + unmatched
    return "\n".join(out).rstrip() + "\n"
