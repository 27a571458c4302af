"""Compare a base results file with one or more new ones, point by matched point, and gate.

Per point: NEW/BASE as the ratio of geometric means of the per-run values, its 95% CI, and an
exact permutation p-value (descriptive). The verdict is the gate's (gate.py,
docs/verdicts.md): a simultaneous bound beyond the margin at a point, or the geometric mean
ratio of all points beyond it, with a 5% false-alarm rate for the whole comparison.

Before any ratio, a new file must be whole: a complete sweep, no run with errors, every run
drained, every base point present (unless allowed). A file that is not fails the gate with the
reason, because a broken run must never pass as "no regression".
Points whose blocking ratio was not achieved within tolerance (issue 14's blocking_fidelity)
on either side are left out and named: their throughput is of another ratio.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from . import gate, stats
from .gate import DEFAULT_MARGIN_PCT as DEFAULT_FAIL_ABOVE
from .gate import FAMILY_ALPHA as DEFAULT_ALPHA
from .load import Results
from .match import Matching, SpecKey, completion_path, completion_paths, match_points, point_label, spec_key
from .metrics import Metric, run_values, summary_ci, summary_value


@dataclass(frozen=True)
class PointComparison:
    label: str
    base_median: float | None
    new_median: float | None
    ratio: float | None  # of geometric means (of medians where the runs are missing)
    ci: tuple[float, float] | None
    p_value: float | None
    n_base: int
    n_new: int
    # Signed: positive = worse, in percent, whichever direction "better" is for the metric.
    worse_pct: float | None
    verdict: str  # gate.REGRESSION, IMPROVEMENT, OK or NO_VERDICT
    bound: float | None = None  # the simultaneous bound the verdict compared with the margin

    @property
    def regression(self) -> bool:
        return self.verdict == gate.REGRESSION

    @property
    def improvement(self) -> bool:
        return self.verdict == gate.IMPROVEMENT

    @property
    def significant(self) -> bool:
        return self.verdict in (gate.REGRESSION, gate.IMPROVEMENT)


@dataclass
class MachineComparison:
    results: Results
    label: str
    matching: Matching
    rows: dict[SpecKey, PointComparison] = field(default_factory=dict)
    # Matched points left out because either side missed its blocking ratio: (label, reason).
    left_out: list[tuple[str, str]] = field(default_factory=list)
    overall: gate.GlobalVerdict = field(default_factory=lambda: gate.GlobalVerdict(0, None, None, False))
    pooled_sd: float | None = None  # the gated points' pooled run-to-run spread (log scale)
    # Why this file cannot pass, whatever its ratios say (incomplete, errors, missing points).
    failures: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> list[PointComparison]:
        return [r for r in self.rows.values() if r.regression]

    @property
    def gated_points(self) -> int:
        return sum(1 for r in self.rows.values() if r.verdict != gate.NO_VERDICT)

    @property
    def failed(self) -> bool:
        return bool(self.failures) or bool(self.regressions) or self.overall.regression


@dataclass
class CompareReport:
    base: Results
    base_label: str
    metric: Metric
    fail_above: float
    alpha: float
    ignore_port: bool
    machines: list[MachineComparison]
    allow_missing: bool = False

    @property
    def has_regression(self) -> bool:
        return any(m.regressions or m.overall.regression for m in self.machines)

    @property
    def has_failure(self) -> bool:
        return any(m.failed for m in self.machines)


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
    return stats.median(runs) if runs else summary_value(point, metric)


def _worse_pct(ratio: float, metric: Metric) -> float:
    return (1.0 - ratio) * 100.0 if metric.higher_is_better else (ratio - 1.0) * 100.0


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


def run_problems(results: Results) -> list[str]:
    """What makes a results file unfit to gate on, one phrase each (empty when it is whole)."""
    problems: list[str] = []
    if results.data.get("sweep", {}).get("complete") is False:
        problems.append("the sweep is incomplete (sweep.complete is false)")
    kinds: dict[str, list[str]] = {"with errors": [], "not drained": [], "interrupted": []}
    for p in results.points:
        for r in p.get("runs") or []:
            if not isinstance(r, dict):
                continue
            if isinstance(r.get("errors"), int) and r["errors"] > 0:
                kinds["with errors"].append(point_label(p))
            accounting = r.get("accounting")
            detail = r.get("error_detail")
            if (isinstance(accounting, dict) and accounting.get("drained") is False) or (
                    isinstance(detail, dict) and detail.get("drain_timed_out") is True):
                kinds["not drained"].append(point_label(p))
            if r.get("interrupted") is True:
                kinds["interrupted"].append(point_label(p))
    for what, labels in kinds.items():
        if labels:
            problems.append(f"{len(labels)} run(s) {what} (first: {labels[0]})")
    return problems


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
    """One point judged alone (a comparison of one point): see compare_rows for many."""
    return compare_rows([(base, new)], metric, fail_above=fail_above, alpha=alpha,
                        labels=[label or point_label(base)], seed=seed)[0][0]


def _sample(b_runs: list[float], n_runs: list[float]) -> gate.Sample | None:
    lb, ln = stats.logs(b_runs), stats.logs(n_runs)
    if not lb or not ln:
        return None
    return gate.Sample(tuple(lb), tuple(ln))


def _descriptive(base: dict[str, Any], new: dict[str, Any], metric: Metric, b_runs: list[float],
                 n_runs: list[float]) -> tuple[float | None, tuple[float, float] | None]:
    """Ratio and CI of a point the gate cannot judge: from the runs where there are two a
    side, else from the summaries (their CIs only where they rest on two runs or more)."""
    both = stats.geomean_ratio_ci(b_runs, n_runs)
    if both is not None and both[1] is not None:
        return both
    b_med, n_med = _median_of(base, metric.name, b_runs), _median_of(new, metric.name, n_runs)
    ratio = n_med / b_med if (b_med and n_med is not None) else None
    bci, nci = summary_ci(base, metric.name), summary_ci(new, metric.name)
    ci = stats.ratio_ci_from_summaries(*bci, *nci) if bci and nci else None
    return (both[0] if both else ratio), ci


def compare_rows(
    pairs: list[tuple[dict[str, Any], dict[str, Any]]],
    metric: Metric,
    *,
    fail_above: float = DEFAULT_FAIL_ABOVE,
    alpha: float = DEFAULT_ALPHA,
    labels: list[str],
    seed: int = 0,
) -> tuple[list[PointComparison], gate.GlobalVerdict, float | None]:
    """Every matched point of one comparison, judged together (the gate's K is len(pairs))."""
    runs = [(run_values(b, metric.name), run_values(n, metric.name)) for b, n in pairs]
    samples = [_sample(b, n) for b, n in runs]
    present = [s for s in samples if s is not None]
    judged = gate.judge(present, margin_pct=fail_above, higher_is_better=metric.higher_is_better, alpha=alpha)
    verdicts = iter(judged.points)
    rows: list[PointComparison] = []
    for (bp, np_), (b_runs, n_runs), sample, label in zip(pairs, runs, samples, labels):
        v = next(verdicts) if sample is not None else None
        if v is not None and v.verdict != gate.NO_VERDICT:
            ratio, ci = math.exp(v.log_ratio), v.ci
        else:
            ratio, ci = _descriptive(bp, np_, metric, b_runs, n_runs)
        lb, ln = stats.logs(b_runs), stats.logs(n_runs)
        rows.append(PointComparison(
            label=label,
            base_median=_median_of(bp, metric.name, b_runs),
            new_median=_median_of(np_, metric.name, n_runs),
            ratio=ratio,
            ci=ci,
            p_value=stats.permutation_p(lb, ln, seed=seed) if lb and ln else None,
            n_base=len(b_runs),
            n_new=len(n_runs),
            worse_pct=_worse_pct(ratio, metric) if ratio is not None else None,
            verdict=v.verdict if v is not None else gate.NO_VERDICT,
            bound=v.bound if v is not None else None,
        ))
    return rows, judged.overall, judged.pooled_sd


def compare_results(
    base: Results,
    news: list[Results],
    metric: Metric,
    *,
    fail_above: float = DEFAULT_FAIL_ABOVE,
    alpha: float = DEFAULT_ALPHA,
    ignore_port: bool = False,
    allow_missing: bool = False,
) -> CompareReport:
    labels = unique_labels([base, *news])
    machines: list[MachineComparison] = []
    for new, label in zip(news, labels[1:]):
        matching = match_points(base.points, new.points, ignore_port=ignore_port)
        mc = MachineComparison(results=new, label=label, matching=matching)
        kept: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for bp, np_ in matching.pairs:
            why = [f"{side}: {w}" for side, w in (("base", fidelity_problem(bp)), ("new", fidelity_problem(np_))) if w]
            if why:
                mc.left_out.append((point_label(bp, ignore_port=ignore_port), "; ".join(why)))
            else:
                kept.append((bp, np_))
        names = [point_label(bp, ignore_port=ignore_port) for bp, _ in kept]
        rows, mc.overall, mc.pooled_sd = compare_rows(kept, metric, fail_above=fail_above, alpha=alpha, labels=names)
        for (bp, _), row in zip(kept, rows):
            mc.rows[spec_key(bp, ignore_port=ignore_port)] = row
        mc.failures = run_problems(new)
        missing = matching.only_base + [np_ for _, np_ in matching.pairs if not (np_.get("runs") or [])]
        if missing and not allow_missing:
            mc.failures.append(f"{len(missing)} base point(s) missing or without runs "
                               f"(first: {point_label(missing[0], ignore_port=ignore_port)}); "
                               "--allow-missing to compare what is there")
        machines.append(mc)
    return CompareReport(base, labels[0], metric, fail_above, alpha, ignore_port, machines, allow_missing)


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
    ci = f", CI {row.ci[0]:.2f}-{row.ci[1]:.2f}" if row.ci else ", CI n/a"
    cell = f"{fmt_value(row.new_median)} ({row.ratio:.2f}x{ci}, {fmt_p(row.p_value)})"
    change = (row.ratio - 1.0) * 100.0  # the metric's own direction: cs/kop +30% is worse
    if row.regression:
        cell += f" **REGRESSION {change:+.1f}%** (bound {row.bound:.2f})"
    elif row.improvement:
        cell += f" improved {change:+.1f}%"
    elif row.verdict == gate.NO_VERDICT:
        cell += " (no verdict)"
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


def _limit_text(report: CompareReport) -> str:
    m = report.fail_above / 100
    return f"below {max(0.0, 1 - m):.2f}" if report.metric.higher_is_better else f"above {1 + m:.2f}"


def _gate_lines(report: CompareReport, mc: MachineComparison) -> list[str]:
    """The verdict for one new file: why it cannot pass, its regressions, the geometric mean."""
    lines: list[str] = []
    o = mc.overall
    if o.ratio is not None and o.ci is not None:
        lines.append(f"- **{_escape(mc.label)}**: geometric mean ratio over {o.points} gated point(s) "
                     f"{o.ratio:.3f} (95% CI {o.ci[0]:.3f}-{o.ci[1]:.3f})"
                     + (f" **REGRESSION: the whole CI is {_limit_text(report)}**" if o.regression else ""))
    else:
        lines.append(f"- **{_escape(mc.label)}**: no gated points, no geometric mean verdict")
    for why in mc.failures:
        lines.append(f"  - **FAIL: {_escape(why)}**")
    n_reg = len(mc.regressions)
    if n_reg:
        lines.append(f"  - **{n_reg} point regression(s)**: " + ", ".join(f"`{_escape(r.label)}`" for r in mc.regressions))
    ungated = len(mc.rows) - mc.gated_points
    if ungated:
        lines.append(f"  - {ungated} point(s) with fewer than {gate.MIN_RUNS} runs a side: no verdict for them"
                     + (" (none could be gated: this comparison is descriptive only)" if not mc.gated_points else ""))
    if mc.pooled_sd is not None and mc.pooled_sd > gate.NOISY_LOG_SD:
        lines.append(f"  - **noisy runs**: the pooled run-to-run spread is {mc.pooled_sd:.0%} (log sd); the stated "
                     "error rates hold up to about 7%. A busy machine? Compare sweeps run back to back on a quiet one")
    few = sum(1 for r in mc.rows.values() if r.verdict != gate.NO_VERDICT
              and min(r.n_base, r.n_new) < gate.RECOMMENDED_RUNS)
    if few:
        lines.append(f"  - {few} gated point(s) with fewer than {gate.RECOMMENDED_RUNS} runs a side: "
                     f"the stated error rates (docs/verdicts.md) hold at {gate.RECOMMENDED_RUNS}; "
                     f"use --repetitions {gate.RECOMMENDED_RUNS}")
    return lines


def _paths_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{path} ({n} point{'s' if n != 1 else ''})" for path, n in counts.items()) or "none"


def _path_taken(point: dict[str, Any], machine: dict[str, Any]) -> str | None:
    """The completion path a point's I/O really took: None where the path does not apply, so a
    difference in what was recorded changes nothing: post; Windows, which ignores it (the kernel
    queues completions into the port); per-thread dispatch, whose workers reap their own rings."""
    if str(machine.get("os", "")) == "Windows" or point.get("dispatch", "shared") == "per-thread":
        return None
    return completion_path(point)


def crosses_completion_path(base: dict[str, Any], base_machine: dict[str, Any],
                            new: dict[str, Any], new_machine: dict[str, Any]) -> bool:
    """Whether a matched pair compares one completion path with the other: both points took
    one (_path_taken) and they differ."""
    b, n = _path_taken(base, base_machine), _path_taken(new, new_machine)
    return b is not None and n is not None and b != n


def completion_path_lines(report: CompareReport) -> list[str]:
    """Which completion path (Linux: how I/O completions reached the port) each side's file and
    socket points used, and how many matched pairs crossed from one path to the other (pairs
    where both sides took one: not Windows, not per-thread dispatch). Nothing when no side has
    I/O points."""
    sides = [(report.base_label, completion_paths(report.base.points))]
    sides += [(mc.label, completion_paths(mc.results.points)) for mc in report.machines]
    if not any(counts for _, counts in sides):
        return []
    lines = ["Completion path of the file and socket points (`--completion-path`; a point that "
             "records none was measured on thread): "
             + "; ".join(f"{_escape(label)}: {_paths_text(counts)}" for label, counts in sides) + "."]
    for mc in report.machines:
        crossed = sum(1 for bp, np_ in mc.matching.pairs
                      if crosses_completion_path(bp, report.base.machine, np_, mc.results.machine))
        if crossed:
            lines.append(f"- {_escape(mc.label)}: {crossed} matched point(s) compare one completion path "
                         "with the other: their ratios include the change of path.")
    return lines


def verdict_line(report: CompareReport) -> str:
    if report.has_failure:
        bad = sum(1 for mc in report.machines if mc.failed)
        return f"**FAIL: {bad} of {len(report.machines)} new file(s) regressed or are not whole runs.**"
    if not any(mc.rows for mc in report.machines):
        return "No verdict: no points compared."
    if not any(mc.gated_points for mc in report.machines):
        return ("No verdict: too few runs a side for the gate (descriptive table only); "
                f"use at least {gate.MIN_RUNS}, {gate.RECOMMENDED_RUNS} for the stated error rates.")
    return f"No regression beyond {report.fail_above:g}% (the gate's false-alarm rate: {report.alpha:g} per comparison)."


def render_markdown(report: CompareReport) -> str:
    metric = report.metric
    better = "higher" if metric.higher_is_better else "lower"
    out = [
        f"## iocpbench compare: `{metric.name}` ({metric.unit}, {better} is better)",
        "",
        f"Base `{report.base.path.name}`; new: "
        + ", ".join(f"`{mc.results.path.name}`" for mc in report.machines)
        + ". Each cell: new median (NEW/BASE ratio of geometric means, its 95% CI, exact permutation p). "
        f"Gate (docs/verdicts.md): a point regresses when its simultaneous bound (Bonferroni over the "
        f"compared points, family rate {report.alpha:g}) is {_limit_text(report)}; the comparison also "
        f"regresses when the geometric mean ratio's 95% CI is {_limit_text(report)}."
        + (" Points matched across port backends." if report.ignore_port else ""),
        "",
        verdict_line(report),
        "",
    ]
    paths = completion_path_lines(report)
    if paths:
        out += paths + [""]
    for mc in report.machines:
        out += _gate_lines(report, mc)
    out.append("")
    if any(mc.rows for mc in report.machines):
        out += _table(report)
    else:
        out.append("_No points matched._")
    out.append("")
    left = [(mc, lab, why) for mc in report.machines for lab, why in mc.left_out]
    if left:
        out += ["### Left out: blocking ratio not within tolerance", ""]
        out += [f"- `{_escape(lab)}` ({_escape(mc.label)}): {_escape(why)}" for mc, lab, why in left]
        out.append("")
    unmatched = _unmatched(report)
    if unmatched:
        out += ["### Unmatched points", ""] + unmatched
    return "\n".join(out).rstrip() + "\n"


def failure_lines(report: CompareReport) -> list[str]:
    """One line per new file that fails, for stderr: the file and every reason."""
    lines = []
    for mc in report.machines:
        reasons = list(mc.failures)
        if mc.regressions:
            reasons.append(f"{len(mc.regressions)} point regression(s) (first: {mc.regressions[0].label})")
        if mc.overall.regression and mc.overall.ratio is not None:
            reasons.append(f"geometric mean ratio {mc.overall.ratio:.3f}, its 95% CI {_limit_text(report)}")
        if reasons:
            lines.append(f"{mc.results.path}: " + "; ".join(reasons))
    return lines
