"""Compare a base results file with one or more new ones, point by matched point, and gate.

Per point: NEW/BASE as the ratio of geometric means of the per-run values, its 95% CI, and an
exact permutation p-value (descriptive). The verdict is the gate's (gate.py,
docs/verdicts.md): a simultaneous bound beyond the margin at a point, or the geometric mean
ratio of all points beyond it, with a 5% false-alarm rate for the whole comparison.

Two files of one A/B session (iocpbench-ab: a top-level `ab` block with the same session), or
any two with `paired`, are judged as paired rounds (gate.py): per point the mean of the
per-round log ratios, so the machine's drift between rounds cancels.

The gate fails closed: a comparison that cannot show "no regression" never passes. Its status
(Status) is one of three:

- FAIL: a regression, or a file that is not a whole run. BASE and each NEW file are checked
  alike: a complete sweep, no run with errors, undrained, interrupted or failed, no run with a
  zero or null throughput (or a value of the compared metric the gate cannot use), no point
  twice, every point of one side present and with runs on the other (unless allowed). A point
  that met its blocking ratio in BASE and missed it in NEW is a regression too.
- INCONCLUSIVE: nothing wrong shown, but not everything could be judged: a point with fewer
  than gate.MIN_RUNS runs a side, a point left out because its blocking ratio was missed in
  BASE (in both files or in BASE only), no point compared at all, or a point whose smallest
  detectable loss is above the stated size (--max-detectable-loss).
- PASS: every matched point judged, none regressed, and the gate could have seen a loss of the
  stated size at each.

FAIL wins over INCONCLUSIVE. Files from different machines (hostname, OS, CPU model, logical
CPUs, kernel, build type) or with different run lengths or warm-ups are refused before any of
this (SetupRefused, bad input) unless the comparison is asked to span machines.

A comparison asked to span machines (cross_machine) reports and does not gate: per point the
ratio and its 95% CI, per group of points that differ only in concurrency and pool whether the
machines rank the settings alike (cross_machine.py). Its status is FAIL only when BASE or a NEW
file is not a whole run (the checks above), else REPORTED: never a regression, never
INCONCLUSIVE.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import cross_machine as xm
from . import gate, grid, machine_load, mismatch, pooled_latency, stats
from .gate import DEFAULT_MARGIN_PCT as DEFAULT_FAIL_ABOVE
from .gate import FAMILY_ALPHA as DEFAULT_ALPHA
from .load import InputError, Results
from .match import (
    RUN_LENGTH_FIELDS,
    Matching,
    SpecKey,
    canonical,
    completion_path,
    completion_paths,
    index_points,
    match_points,
    point_label,
    spec_key,
)
from .metrics import DEFAULT_METRIC, Metric, dig, run_values, summary_ci, summary_value
from .fidelity import fidelity_problem
from .formatting import fmt_p, fmt_value
from .pooled_latency_text import interval_legend, value_text

PASS, FAIL, INCONCLUSIVE = "pass", "fail", "inconclusive"
# The status of a cross-machine comparison of whole runs: reported, not gated (exit 0).
REPORTED = "reported"


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
    # The smallest loss (worse_pct) the gate could show at this point (gate.detectable_ratio).
    detectable_pct: float | None = None
    # Judged as paired rounds: how many rounds the point has on both sides.
    paired: bool = False
    paired_rounds: int = 0

    @property
    def regression(self) -> bool:
        return self.verdict == gate.REGRESSION

    @property
    def improvement(self) -> bool:
        return self.verdict == gate.IMPROVEMENT

    @property
    def significant(self) -> bool:
        return self.verdict in (gate.REGRESSION, gate.IMPROVEMENT)

    @property
    def too_few_runs(self) -> bool:
        """Runs on both sides, but too few to judge (a side without any is a missing point);
        paired, too few rounds with a run on both sides."""
        if self.verdict != gate.NO_VERDICT or min(self.n_base, self.n_new) == 0:
            return False
        return min(self.n_base, self.n_new) < gate.MIN_RUNS or (self.paired and self.paired_rounds < gate.MIN_RUNS)

    @property
    def unjudged(self) -> bool:
        """Enough runs, and still no verdict: values the gate cannot use (zero, below zero)."""
        return self.verdict == gate.NO_VERDICT and min(self.n_base, self.n_new) >= gate.MIN_RUNS and not self.too_few_runs


# Which side of a matched pair missed its blocking ratio (blocking_fidelity.within_tolerance
# false): NEW only is a regression; BASE only, or both, leaves the point unjudged.
MISSED_IN_NEW, MISSED_IN_BASE, MISSED_IN_BOTH = "new", "base", "both"
MISSED_TEXT = {MISSED_IN_NEW: "new only (a regression)", MISSED_IN_BASE: "base only", MISSED_IN_BOTH: "both"}


@dataclass(frozen=True)
class LeftOut:
    """A matched point left out of the ratios because a side missed its blocking ratio."""

    label: str
    missed: str  # MISSED_IN_NEW, MISSED_IN_BASE or MISSED_IN_BOTH
    reason: str  # what each side that missed achieved

    @property
    def regression(self) -> bool:
        return self.missed == MISSED_IN_NEW


@dataclass(frozen=True)
class SetupDifference:
    """A setting two files must share to be gated on: where it is, and each file's value."""

    name: str  # "machine.hostname", "sweep.duration_s", "points' duration_s"
    base: Any
    new: Any

    def text(self) -> str:
        return f"{self.name} ({_value_text(self.base)} vs {_value_text(self.new)})"


class SetupRefused(InputError):
    """BASE and a NEW file differ in machine or run settings and no cross-machine comparison
    was asked for (bad input: exit 2)."""


@dataclass
class MachineComparison:
    results: Results
    label: str
    matching: Matching
    rows: dict[SpecKey, PointComparison] = field(default_factory=dict)
    # Matched points left out because either side missed its blocking ratio.
    left_out: list[LeftOut] = field(default_factory=list)
    overall: gate.GlobalVerdict = field(default_factory=lambda: gate.GlobalVerdict(0, None, None, False))
    pooled_sd: float | None = None  # the gated points' pooled run-to-run spread (log scale)
    # Why this file cannot pass, whatever its ratios say (incomplete, errors, missing points).
    failures: list[str] = field(default_factory=list)
    # Why nothing wrong shown is still no pass (inconclusive_reasons).
    inconclusive: list[str] = field(default_factory=list)
    # How this file's machine or run settings differ from BASE's (a cross-machine comparison).
    setup_differences: list[SetupDifference] = field(default_factory=list)
    # A cross-machine comparison: per group of points that differ only in concurrency and
    # pool, whether the machines rank the settings alike (empty for a gate).
    ranks: list[xm.RankComparison] = field(default_factory=list)
    # Judged as paired rounds (gate.py), and the A/B session both files belong to (None when
    # pairing was asked for with --paired rather than found).
    paired: bool = False
    session: str | None = None
    # The settings in which every unmatched base point differs from its nearest NEW point, the
    # same way (mismatch.grid_difference): the files were measured on different grids.
    grid_differences: list[mismatch.Difference] = field(default_factory=list)

    @property
    def regressions(self) -> list[PointComparison]:
        return [r for r in self.rows.values() if r.regression]

    @property
    def fidelity_regressions(self) -> list[LeftOut]:
        return [lo for lo in self.left_out if lo.regression]

    @property
    def gated_points(self) -> int:
        return sum(1 for r in self.rows.values() if r.verdict != gate.NO_VERDICT)

    @property
    def regressed(self) -> bool:
        return bool(self.regressions) or bool(self.fidelity_regressions) or self.overall.regression

    @property
    def failed(self) -> bool:
        return bool(self.failures) or self.regressed

    @property
    def status(self) -> str:
        return FAIL if self.failed else INCONCLUSIVE if self.inconclusive else PASS

    def detectable(self, excluding: set[str] | None = None) -> tuple[str, float] | None:
        """The gated point that could show the least, and its smallest detectable loss (%);
        points labelled in `excluding` are passed over."""
        known = [(r.label, r.detectable_pct) for r in self.rows.values()
                 if r.detectable_pct is not None and r.label not in (excluding or set())]
        return max(known, key=lambda item: item[1]) if known else None  # type: ignore[return-value,arg-type]


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
    # Why BASE cannot be gated on, whatever the ratios say (checked as each NEW file is).
    base_failures: list[str] = field(default_factory=list)
    max_detectable: float = gate.MAX_DETECTABLE_LOSS_PCT
    cross_machine: bool = False

    @property
    def has_regression(self) -> bool:
        return any(m.regressed for m in self.machines)

    @property
    def has_failure(self) -> bool:
        return bool(self.base_failures) or any(m.failed for m in self.machines)

    @property
    def is_inconclusive(self) -> bool:
        return any(m.inconclusive for m in self.machines)

    @property
    def has_file_failure(self) -> bool:
        """BASE or a NEW file is not a whole run (what fails a cross-machine comparison)."""
        return bool(self.base_failures) or any(m.failures for m in self.machines)

    @property
    def status(self) -> str:
        if self.cross_machine:  # reports, does not gate: only a file that is not a whole run fails
            return FAIL if self.has_file_failure else REPORTED
        return FAIL if self.has_failure else INCONCLUSIVE if self.is_inconclusive else PASS


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


def _value_text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return ", ".join(_value_text(v) for v in value)
    return str(value)


def named(labels: Iterable[str], most: int = 3) -> str:
    """The points a reason is about, for a message: up to `most` distinct labels, then a count."""
    distinct = list(dict.fromkeys(labels))
    more = len(distinct) - most
    return ", ".join(distinct[:most]) + (f" and {more} more" if more > 0 else "")


# ---------------------------------------------------------------- same machine, same settings

# The settings two files must share to be gated on: the machine (the same hardware, OS and
# kernel), the build, and how long each run and its warm-up lasted.
SETUP_FIELDS = (
    ("machine", "hostname"), ("machine", "os"), ("machine", "cpu_model"), ("machine", "logical_cpus"),
    ("machine", "kernel"), ("tool", "build_type"), ("sweep", "duration_s"), ("sweep", "warmup_s"),
)


# The machine's shape, named when a comparison spans machines (not gated on: files written
# before the harness recorded a topology have none). Compared only where both files record it.
TOPOLOGY_FIELDS = ("sockets", "physical_cores", "threads_per_core", "numa_nodes")


def topology_differences(base: Results, new: Results) -> list[SetupDifference]:
    """How two files' machine.topology differ in sockets, cores, SMT and NUMA nodes (a field
    one file lacks or leaves null is not compared)."""
    diffs: list[SetupDifference] = []
    for name in TOPOLOGY_FIELDS:
        b, n = dig(base.machine, f"topology.{name}"), dig(new.machine, f"topology.{name}")
        if b is not None and n is not None and b != n:
            diffs.append(SetupDifference(f"machine.topology.{name}", b, n))
    return diffs


def _points_setting(results: Results, name: str) -> list[Any]:
    """The distinct values of a per-point setting (duration_s) in a file, sorted; empty where
    its points do not record it."""
    values = {canonical(p[name]) for p in results.points if p.get(name) is not None}
    return sorted(values, key=str)


def setup_differences(base: Results, new: Results) -> list[SetupDifference]:
    """How two files' machines, builds and run lengths differ (empty when they do not). A
    setting recorded in one file only is a difference; one neither records is not."""
    diffs: list[SetupDifference] = []
    for block, name in SETUP_FIELDS:
        b, n = dig(base.data.get(block), name), dig(new.data.get(block), name)
        if canonical(b) != canonical(n):
            diffs.append(SetupDifference(f"{block}.{name}", b, n))
    for name in sorted(RUN_LENGTH_FIELDS):
        b_set, n_set = _points_setting(base, name), _points_setting(new, name)
        if b_set != n_set:
            diffs.append(SetupDifference(f"points' {name}", b_set or None, n_set or None))
    return diffs


def refusal_message(base: Results, new: Results, diffs: list[SetupDifference]) -> str:
    return (f"base and new differ in {', '.join(d.text() for d in diffs)} (base {base.path}, new {new.path}); "
            "pass --cross-machine to compare them anyway")


# ---------------------------------------------------------------- whole runs


def left_out(base: dict[str, Any], new: dict[str, Any], label: str) -> LeftOut | None:
    """The matched pair left out of the ratios for its blocking ratio, and which side missed
    it; None when both met it."""
    b, n = fidelity_problem(base), fidelity_problem(new)
    if b is None and n is None:
        return None
    missed = MISSED_IN_BOTH if b and n else MISSED_IN_BASE if b else MISSED_IN_NEW
    return LeftOut(label, missed, "; ".join(f"{side}: {why}" for side, why in (("base", b), ("new", n)) if why))


def _usable(value: Any) -> bool:
    """A per-run value the gate can use: a finite number above 0 (it works on logs)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value > 0)


def run_problems(results: Results, metric: Metric | None = None) -> list[str]:
    """What makes a results file unfit to gate on, one phrase each naming its points (empty
    when it is whole): an incomplete sweep; runs with errors, undrained, interrupted or failed;
    runs whose throughput, or the compared metric's value, is zero, null or not a number."""
    problems: list[str] = []
    if results.data.get("sweep", {}).get("complete") is False:
        problems.append("the sweep is incomplete (sweep.complete is false)")
    kinds: dict[str, list[str]] = {"with errors": [], "not drained": [], "interrupted": [],
                                   "failed (points[].failures)": [], "with zero or null throughput": []}
    other = metric.name if metric is not None and metric.name != DEFAULT_METRIC else None
    if other:
        kinds[f"with a zero or null {other}"] = []
    for p in results.points:
        label = point_label(p)
        failed = p.get("failures")
        kinds["failed (points[].failures)"] += [label] * (len(failed) if isinstance(failed, list) else 0)
        for r in p.get("runs") or []:
            if not isinstance(r, dict):
                continue
            if isinstance(r.get("errors"), int) and r["errors"] > 0:
                kinds["with errors"].append(label)
            accounting = r.get("accounting")
            detail = r.get("error_detail")
            if (isinstance(accounting, dict) and accounting.get("drained") is False) or (
                    isinstance(detail, dict) and detail.get("drain_timed_out") is True):
                kinds["not drained"].append(label)
            if r.get("interrupted") is True:
                kinds["interrupted"].append(label)
            if not _usable(r.get(DEFAULT_METRIC)):
                kinds["with zero or null throughput"].append(label)
            if other and not _usable(dig(r, other)):
                kinds[f"with a zero or null {other}"].append(label)
    for what, labels in kinds.items():
        if labels:
            problems.append(f"{len(labels)} run(s) {what} (at {named(labels)})")
    return problems


def duplicate_problem(points: list[dict[str, Any]], *, ignore_port: bool = False) -> str | None:
    """A point whose identity (match.spec_key) repeats within one file: which to judge is
    anyone's guess, so the file cannot be gated on."""
    _, dups = index_points(points, ignore_port=ignore_port)
    if not dups:
        return None
    return (f"{len(dups)} duplicate point(s), the same point identity twice "
            f"(at {named(point_label(p, ignore_port=ignore_port) for p in dups)})")


def runless(points: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in points if not (p.get("runs") or [])]


def file_problems(results: Results, metric: Metric, *, ignore_port: bool) -> list[str]:
    """run_problems and duplicate points: the checks BASE and each NEW file share."""
    dup = duplicate_problem(results.points, ignore_port=ignore_port)
    return run_problems(results, metric) + ([dup] if dup else [])


# ---------------------------------------------------------------- the ratios and the gate


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


def run_rounds(point: dict[str, Any], metric: str) -> tuple[list[float], list[int]]:
    """Per-run values of a metric (as metrics.run_values) and each one's round: the run's
    `repetition`, or its position where it has none."""
    values: list[float] = []
    rounds: list[int] = []
    for i, r in enumerate(point.get("runs") or []):
        if not isinstance(r, dict):
            continue
        found = stats.clean([dig(r, metric)])
        if found:
            rep = r.get("repetition")
            values.append(found[0])
            rounds.append(rep if isinstance(rep, int) and not isinstance(rep, bool) else i)
    return values, rounds


def _sample(b_runs: list[float], n_runs: list[float], b_rounds: list[int] | None = None,
            n_rounds: list[int] | None = None) -> gate.Sample | None:
    lb, ln = stats.logs(b_runs), stats.logs(n_runs)
    if not lb or not ln:
        return None
    return gate.Sample(tuple(lb), tuple(ln), tuple(b_rounds) if b_rounds is not None else None,
                       tuple(n_rounds) if n_rounds is not None else None)


def ab_session(results: Results) -> str | None:
    """The A/B session a file belongs to (iocpbench-ab's top-level `ab.session`), else None."""
    ab = results.data.get("ab")
    session = ab.get("session") if isinstance(ab, dict) else None
    return session if isinstance(session, str) and session else None


def same_session(base: Results, new: Results) -> str | None:
    """The session two files share (their rounds are paired), else None."""
    b = ab_session(base)
    return b if b is not None and b == ab_session(new) else None


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
    paired: bool = False,
) -> tuple[list[PointComparison], gate.GlobalVerdict, float | None]:
    """Every matched point of one comparison, judged together (the gate's K is the number of
    gated points); `paired`: as paired rounds."""
    with_rounds = [(run_rounds(b, metric.name), run_rounds(n, metric.name)) for b, n in pairs]
    runs = [(b[0], n[0]) for b, n in with_rounds]
    samples = [_sample(b[0], n[0], b[1], n[1]) for b, n in with_rounds]
    present = [s for s in samples if s is not None]
    judged = gate.judge(present, margin_pct=fail_above, higher_is_better=metric.higher_is_better, alpha=alpha,
                        paired=paired)
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
            detectable_pct=_worse_pct(v.detectable, metric) if v is not None and v.detectable is not None else None,
            paired=paired,
            paired_rounds=sample.paired_rounds if sample is not None and paired else 0,
        ))
    return rows, judged.overall, judged.pooled_sd


def _loss_word(metric: Metric) -> str:
    return "loss" if metric.higher_is_better else "increase"


def generator_bound(point: dict[str, Any]) -> bool:
    """Whether any run of an open-loop point was generator-bound: its pacer lagged by more than
    5% of the response time's p99, so its latency is partly the generator's (docs/open-loop.md)."""
    return any(isinstance(r, dict) and isinstance(r.get("open_loop"), dict)
               and r["open_loop"].get("generator_bound") is True for r in point.get("runs") or [])


def identical_points(mc: MachineComparison, metric: Metric, *, ignore_port: bool = False) -> set[str]:
    """Labels of matched points whose runs give the same values of the metric on both sides (a
    file compared with itself): their ratio is exactly 1 whatever the number of runs, so no
    question of power or of a missed blocking ratio makes them inconclusive."""
    same: set[str] = set()
    for bp, np_ in mc.matching.pairs:
        values = run_values(bp, metric.name)
        if values and values == run_values(np_, metric.name):
            same.add(point_label(bp, ignore_port=ignore_port))
    return same


def inconclusive_reasons(mc: MachineComparison, metric: Metric, max_detectable: float, *,
                         ignore_port: bool = False) -> list[str]:
    """Why a comparison that shows nothing wrong is still no pass, one phrase each naming its
    points (empty when every matched point was judged and could have shown a loss of
    max_detectable percent, or has identical runs on both sides)."""
    reasons: list[str] = []
    same = identical_points(mc, metric, ignore_port=ignore_port)
    if not mc.rows and not mc.left_out:
        reasons.append("no point of base was compared (none matched)")
    few = [r.label for r in mc.rows.values() if r.too_few_runs and r.label not in same]
    if few:
        unit = "rounds with a run on both sides (paired)" if mc.paired else "runs a side"
        reasons.append(f"{len(few)} point(s) with fewer than {gate.MIN_RUNS} {unit}, not judged (at {named(few)})"
                       + ("; none could be: the table is descriptive only" if not mc.gated_points else ""))
    unjudged = [r.label for r in mc.rows.values() if r.unjudged]
    if unjudged:
        reasons.append(f"{len(unjudged)} point(s) with values the gate cannot use, not judged (at {named(unjudged)})")
    for missed, where in ((MISSED_IN_BOTH, "both files"), (MISSED_IN_BASE, "base only")):
        labels = [lo.label for lo in mc.left_out if lo.missed == missed and lo.label not in same]
        if labels:
            reasons.append(f"{len(labels)} point(s) left out, their blocking ratio missed in {where} (at {named(labels)})")
    if metric.name.startswith("latency_us"):  # the response time includes the generator's lag
        bound = [point_label(bp) for bp, np_ in mc.matching.pairs if generator_bound(bp) or generator_bound(np_)]
        if bound:
            reasons.append(f"{len(bound)} point(s) with generator-bound runs, whose {metric.name} is partly "
                           f"the load generator's, not the server's (at {named(bound)})")
    worst = mc.detectable(excluding=same)
    if worst is not None and worst[1] > max_detectable:
        word = _loss_word(metric)
        reasons.append(f"the smallest {word} the gate could show at {worst[0]} is {worst[1]:.0f}%, above "
                       f"{max_detectable:g}% (--max-detectable-loss): runs too noisy or too few")
    return reasons


def compare_results(
    base: Results,
    news: list[Results],
    metric: Metric,
    *,
    fail_above: float = DEFAULT_FAIL_ABOVE,
    alpha: float = DEFAULT_ALPHA,
    ignore_port: bool = False,
    allow_missing: bool = False,
    max_detectable: float | None = None,
    cross_machine: bool = False,
    paired: bool = False,
) -> CompareReport:
    """The whole comparison. Raises SetupRefused when a NEW file's machine or run settings
    differ from BASE's and cross_machine is not set. max_detectable defaults to
    gate.default_max_detectable(fail_above). A NEW file of BASE's A/B session is judged as
    paired rounds, every NEW file when `paired` (not across machines: that does not gate)."""
    limit = gate.default_max_detectable(fail_above) if max_detectable is None else max_detectable
    diffs = [setup_differences(base, new) + (topology_differences(base, new) if cross_machine else [])
             for new in news]
    if not cross_machine:
        for new, d in zip(news, diffs):
            if d:
                raise SetupRefused(refusal_message(base, new, d))
    labels = unique_labels([base, *news])
    base_failures = file_problems(base, metric, ignore_port=ignore_port)
    no_runs = runless(base.points)
    if no_runs and not allow_missing:
        base_failures.append(f"{len(no_runs)} point(s) without runs "
                             f"(at {named(point_label(p, ignore_port=ignore_port) for p in no_runs)}); "
                             "--allow-missing to compare what is there")
    machines: list[MachineComparison] = []
    for new, label, diff in zip(news, labels[1:], diffs):
        matching = match_points(base.points, new.points, ignore_port=ignore_port)
        mc = MachineComparison(results=new, label=label, matching=matching, setup_differences=diff)
        if not cross_machine:
            mc.session = same_session(base, new)
            mc.paired = paired or mc.session is not None
        kept: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for bp, np_ in matching.pairs:
            out = left_out(bp, np_, point_label(bp, ignore_port=ignore_port))
            if out is None:
                kept.append((bp, np_))
            else:
                mc.left_out.append(out)
        names = [point_label(bp, ignore_port=ignore_port) for bp, _ in kept]
        rows, mc.overall, mc.pooled_sd = compare_rows(kept, metric, fail_above=fail_above, alpha=alpha, labels=names,
                                                      paired=mc.paired)
        for (bp, _), row in zip(kept, rows):
            mc.rows[spec_key(bp, ignore_port=ignore_port)] = row
        mc.failures = file_problems(new, metric, ignore_port=ignore_port)
        mc.grid_differences = mismatch.grid_difference(
            mismatch.explain(matching.only_base, matching.only_new, ignore_port=ignore_port))
        missing = matching.only_base + runless(np_ for _, np_ in matching.pairs)
        if missing and not allow_missing:
            grids = (f"; a grid mismatch, not a regression: the files differ in "
                     f"{mismatch.differences_text(mc.grid_differences)} (base vs new)" if mc.grid_differences else "")
            mc.failures.append(f"{len(missing)} base point(s) missing or without runs "
                               f"(at {named(point_label(p, ignore_port=ignore_port) for p in missing)}){grids}; "
                               "--allow-missing to compare what is there")
        mc.inconclusive = inconclusive_reasons(mc, metric, limit, ignore_port=ignore_port)
        if cross_machine:
            mc.ranks = xm.rank_groups(kept, ignore_port=ignore_port)
        machines.append(mc)
    return CompareReport(base, labels[0], metric, fail_above, alpha, ignore_port, machines, allow_missing,
                         base_failures, limit, cross_machine)


# ---------------------------------------------------------------- Markdown rendering


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


def _table_rows(report: CompareReport) -> tuple[dict[SpecKey, tuple[str, float | None]], list[SpecKey], list[str]]:
    """The rows of a comparison table: each base point that matched on at least one machine,
    in base order, with its label and base median; and the table's head."""
    keyed: dict[SpecKey, tuple[str, float | None]] = {}
    for mc in report.machines:
        for key, row in mc.rows.items():
            keyed.setdefault(key, (row.label, row.base_median))
    order = [spec_key(p, ignore_port=report.ignore_port) for p in report.base.points]
    keys = [k for k in dict.fromkeys(order) if k in keyed]
    head = ["point", f"base: {report.base_label}"] + [mc.label for mc in report.machines]
    return keyed, keys, head


def _table(report: CompareReport) -> list[str]:
    keyed, keys, head = _table_rows(report)
    lines = [
        "| " + " | ".join(_escape(h) for h in head) + " |",
        "|:--|" + "--:|" * (len(head) - 1),
    ]
    for key in keys:
        label, base_median = keyed[key]
        cells = [f"`{shown_label(label, report.base.machine)}`", fmt_value(base_median)]
        for mc in report.machines:
            row = mc.rows.get(key)
            cells.append(fmt_cell(row) if row else "unmatched")
        lines.append("| " + " | ".join(_escape(c) for c in cells) + " |")
    return lines


def _lacks_histograms(points: list[dict[str, Any]]) -> bool:
    return not pooled_latency.has_histograms(p for p in points if grid.is_open_loop(p))


def pooled_lines(report: CompareReport) -> list[str]:
    """Under a latency comparison with open-loop points: each matched point's percentile pooled
    over its runs' histograms, with its interval, on base and new (pooled_latency.py), where both
    files have histograms; a file without them (an older one) is named once. Descriptive: the
    gate does not use it. Empty for other metrics and closed-loop files."""
    q = pooled_latency.quantile_of(report.metric.name)
    if q is None:
        return []
    name = pooled_latency.percentile_name(q)
    pairs = [(mc, bp, np_) for mc in report.machines for bp, np_ in mc.matching.pairs if grid.is_open_loop(bp)]
    if not pairs:
        return []
    base_lacks = _lacks_histograms(report.base.points)
    new_lacks = {id(mc) for mc in report.machines if _lacks_histograms(mc.results.points)}
    lines = [f"### Pooled {name} (open loop)", "",
             f"Per matched open-loop point, the pooled {name}: {interval_legend()}. Descriptive: the gate "
             "does not use it.", ""]
    lacking = ([report.base.path.name] if base_lacks else []) + [
        mc.results.path.name for mc in report.machines if id(mc) in new_lacks]
    lines += [f"- `{_escape(path)}` has no latency histograms (an older file): no pooled {name}."
              for path in lacking]
    no_interval: Counter[str] = Counter()
    for mc, bp, np_ in pairs:
        if base_lacks or id(mc) in new_lacks:
            continue
        label = shown_label(point_label(bp, ignore_port=report.ignore_port), report.base.machine)
        base, new = pooled_latency.point_pooled(bp, q), pooled_latency.point_pooled(np_, q)
        no_interval.update(p.interval.reason for p in (base, new)
                           if p.estimate.value_us is not None and p.interval.reason)
        lines.append(f"- `{label}`: base {_escape(value_text(base, why_no_interval=False))}; "
                     f"{_escape(mc.label)} {_escape(value_text(new, why_no_interval=False))}")
    lines += [f"- no interval at {n} value(s): {_escape(why)}" for why, n in no_interval.items()]
    return lines + [""]


def shown_label(label: str, machine: dict[str, Any]) -> str:
    """A point label as printed: concurrency 0 (the port's default, N) with the file's
    logical CPU count, "c=0 (N=2)"."""
    n = machine.get("logical_cpus")
    if not isinstance(n, int) or isinstance(n, bool):
        return label
    return re.sub(r"(^|/)c=0(?=/|$)", rf"\1c=0 (N={n})", label)


def _unmatched_line(report: CompareReport, point: dict[str, Any], machine: dict[str, Any],
                    why: mismatch.Unmatched | None, base_side: bool) -> str:
    """One unmatched point, and how it differs from the other file's nearest point (base vs new)."""
    line = f"- `{shown_label(point_label(point, ignore_port=report.ignore_port), machine)}`"
    if why is None or why.nearest is None or not why.differences:
        return line
    diffs = why.differences if base_side else [(k, b, a) for k, a, b in why.differences]
    other = point_label(why.nearest, ignore_port=report.ignore_port)
    return line + f": nearest in {'new' if base_side else 'base'} `{other}`; differs in " + _escape(
        mismatch.differences_text(diffs)) + " (base vs new)"


def _unmatched(report: CompareReport) -> list[str]:
    lines: list[str] = []
    ip = report.ignore_port
    for mc in report.machines:
        m = mc.matching
        base_m, new_m = report.base.machine, mc.results.machine
        for title, pts, machine, whys, base_side in (
            (f"Only in base ({report.base_label}), not in {mc.label}", m.only_base, base_m,
             mismatch.explain(m.only_base, m.only_new, ignore_port=ip), True),
            (f"Only in {mc.label}, not in base", m.only_new, new_m,
             mismatch.explain(m.only_new, m.only_base, ignore_port=ip), False),
            (f"Duplicate point in base ({report.base_label}): the comparison fails", m.base_duplicates, base_m, [], True),
            (f"Duplicate point in {mc.label}: the comparison fails", m.new_duplicates, new_m, [], False),
        ):
            if pts:
                lines.append(f"**{_escape(title)}** ({len(pts)}):")
                lines += [_unmatched_line(report, p, machine, whys[i] if whys else None, base_side)
                          for i, p in enumerate(pts)]
                lines.append("")
    return lines


def grid_mismatch_lines(report: CompareReport) -> list[str]:
    """A headline per NEW file measured on another grid than BASE, with the remedy."""
    lines = []
    for mc in report.machines:
        if not mc.grid_differences:
            continue
        flags = mismatch.flag_text(mc.grid_differences)
        lines.append(
            f"**GRID MISMATCH: {_escape(mc.results.path.name)} was measured on another grid than base "
            f"({_escape(mismatch.differences_text(mc.grid_differences))}, base vs new): "
            f"{len(mc.matching.only_base)} base point(s) have no partner.** This is not a regression. "
            "Rerun the new sweep with base's settings" + (f" ({_escape(flags)})" if flags else "")
            + ", or pass --allow-missing to compare the points both files have.")
    return lines


def busy_lines(report: CompareReport) -> list[str]:
    """One line naming, per file, the points measured on a busy machine; none where no file
    recorded one (files without runs[].machine_load count as unknown, not busy)."""
    sides = [(report.base_label, report.base)] + [(mc.label, mc.results) for mc in report.machines]
    named_sides = []
    for label, res in sides:
        line = machine_load.busy_line(res.points, lambda p, res=res: shown_label(point_label(p), res.machine))
        if line:
            named_sides.append(f"{label}: {line.split(': ', 1)[1]}")
    if not named_sides:
        return []
    return ["**Measured on a busy machine** (runs[].machine_load.busy; their ratios may be the "
            "neighbours' as much as the code's): " + _escape("; ".join(named_sides)) + "."]


def _limit_text(report: CompareReport) -> str:
    m = report.fail_above / 100
    return f"below {max(0.0, 1 - m):.2f}" if report.metric.higher_is_better else f"above {1 + m:.2f}"


PAIRED_TEXT = ("Paired rounds (an iocpbench-ab session, or --paired): per point the NEW/BASE ratio is the "
               "geometric mean of its per-round ratios, and its CI and bound come from their spread, so "
               "the machine's drift between rounds cancels.")


def paired_text(mc: MachineComparison) -> str:
    """How a file was paired with BASE, for its summary line."""
    rounds = f", {mc.overall.rounds} rounds" if mc.overall.rounds else ""
    if mc.session is not None:
        return f"paired rounds (A/B session {mc.session}{rounds})"
    return f"paired rounds (--paired{rounds})"


def _gate_lines(report: CompareReport, mc: MachineComparison) -> list[str]:
    """The verdict for one new file: its status, why it cannot pass, its regressions, why it is
    inconclusive, the geometric mean."""
    lines: list[str] = []
    o = mc.overall
    head = f"- **{_escape(mc.label)}**: {mc.status.upper()}; " + (f"{_escape(paired_text(mc))}; " if mc.paired else "")
    clustered = f", clustered by {o.rounds} rounds" if o.rounds else ""
    if o.ratio is not None and o.ci is not None:
        lines.append(head + f"geometric mean ratio over {o.points} gated point(s) "
                     f"{o.ratio:.3f} (95% CI {o.ci[0]:.3f}-{o.ci[1]:.3f}{clustered})"
                     + (f" **REGRESSION: the whole CI is {_limit_text(report)}**" if o.regression else ""))
    else:
        lines.append(head + "no gated points, no geometric mean verdict")
    if mc.setup_differences:
        lines.append("  - spans machines (--cross-machine): differs from base in "
                     + _escape(", ".join(d.text() for d in mc.setup_differences)))
    for why in mc.failures:
        lines.append(f"  - **FAIL: {_escape(why)}**")
    n_reg = len(mc.regressions)
    if n_reg:
        lines.append(f"  - **{n_reg} point regression(s)**: " + ", ".join(f"`{_escape(r.label)}`" for r in mc.regressions))
    lost = mc.fidelity_regressions
    if lost:
        lines.append(f"  - **{len(lost)} point regression(s) of the blocking ratio** (met in base, missed in new): "
                     + ", ".join(f"`{_escape(lo.label)}`" for lo in lost))
    for why in mc.inconclusive:
        lines.append(f"  - **INCONCLUSIVE: {_escape(why)}**")
    worst = mc.detectable()
    if worst is not None:
        lines.append(f"  - smallest detectable {_loss_word(report.metric)}: up to {worst[1]:.0f}% "
                     f"(at `{_escape(worst[0])}`; above {report.max_detectable:g}% the comparison is inconclusive)")
    if mc.pooled_sd is not None and mc.pooled_sd > gate.NOISY_LOG_SD:
        lines.append(f"  - **noisy runs**: the pooled run-to-run spread is {mc.pooled_sd:.0%} (log sd); the stated "
                     "error rates hold up to about 7%. A busy machine? Compare sweeps run back to back on a quiet one")
    few = sum(1 for r in mc.rows.values() if r.verdict != gate.NO_VERDICT
              and (r.paired_rounds if mc.paired else min(r.n_base, r.n_new)) < gate.RECOMMENDED_RUNS)
    if few and mc.paired:
        lines.append(f"  - {few} gated point(s) with fewer than {gate.RECOMMENDED_RUNS} paired rounds: the stated "
                     f"error rates (docs/verdicts.md) hold at {gate.RECOMMENDED_RUNS}; use iocpbench-ab --rounds "
                     f"{gate.RECOMMENDED_RUNS}")
    elif few:
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


@dataclass(frozen=True)
class Reason:
    """One reason for a comparison's status: FAIL or INCONCLUSIVE, the file it is about, why."""

    status: str
    path: Path
    text: str
    base: bool = False

    def where(self, *, short: bool = False) -> str:
        return (self.path.name if short else str(self.path)) + (" (base)" if self.base else "")


def reasons(report: CompareReport) -> list[Reason]:
    """Every reason the comparison is not a PASS, failures first, in file order."""
    out = [Reason(FAIL, report.base.path, why, base=True) for why in report.base_failures]
    if report.cross_machine:  # not gated: only the files' own failures
        return out + [Reason(FAIL, mc.results.path, why) for mc in report.machines for why in mc.failures]
    for mc in report.machines:
        path = mc.results.path
        out += [Reason(FAIL, path, why) for why in mc.failures]
        if mc.regressions:
            out.append(Reason(FAIL, path, f"{len(mc.regressions)} point regression(s) "
                                          f"(at {named(r.label for r in mc.regressions)})"))
        lost = mc.fidelity_regressions
        if lost:
            out.append(Reason(FAIL, path, f"{len(lost)} point(s) met their blocking ratio in base and missed it in "
                                          f"new (at {named(lo.label for lo in lost)})"))
        if mc.overall.regression and mc.overall.ratio is not None:
            out.append(Reason(FAIL, path, f"geometric mean ratio {mc.overall.ratio:.3f}, its 95% CI {_limit_text(report)}"))
    for mc in report.machines:
        out += [Reason(INCONCLUSIVE, mc.results.path, why) for why in mc.inconclusive]
    return sorted(out, key=lambda r: r.status != FAIL)


def verdict_line(report: CompareReport) -> str:
    """The status and why, on one line."""
    if report.cross_machine:
        return cross_machine_verdict_line(report)
    status = report.status
    if status == PASS:
        return (f"**PASS.** No regression beyond {report.fail_above:g}% (the gate's false-alarm rate: "
                f"{report.alpha:g} per comparison); every matched point judged, each able to show a "
                f"{report.max_detectable:g}% {_loss_word(report.metric)}.")
    deciding = [r for r in reasons(report) if r.status == status]
    why = "; ".join(f"{r.where(short=True)}: {r.text}" for r in deciding)
    if status == FAIL:
        bad = sum(1 for mc in report.machines if mc.failed)
        grids = sum(1 for mc in report.machines if mc.failed and mc.grid_differences and not mc.regressed)
        what = ("measured on another grid than base (a grid mismatch, not a regression; above)"
                if grids == bad and not report.base_failures else "regressed or are not whole runs")
        lead = (f"**FAIL: {bad} of {len(report.machines)} new file(s) {what}"
                + ("; base is not a whole run" if report.base_failures else "") + ".**")
        also = " Also inconclusive (below)." if report.is_inconclusive else ""
        return f"{lead} {_escape(why)}.{also}"
    return (f"**INCONCLUSIVE: no regression shown, but the gate could not judge everything.** {_escape(why)}.")


def render_markdown(report: CompareReport) -> str:
    if report.cross_machine:
        return render_cross_machine(report)
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
        f"regresses when the geometric mean ratio's 95% CI (clustered by round) is {_limit_text(report)}."
        + (f" {PAIRED_TEXT}" if any(mc.paired for mc in report.machines) else "")
        + (" Points matched across port backends." if report.ignore_port else ""),
        "",
        *(line for g in grid_mismatch_lines(report) for line in (g, "")),
        verdict_line(report),
        "",
    ]
    return _render_body(report, out, _gate_lines, _table(report), pooled_lines(report),
                        "Missed in new only: a regression. Missed in base (only, or in both): not judged, "
                        "the comparison is inconclusive.", MISSED_TEXT)


def _render_body(report: CompareReport, head: list[str],
                 machine_lines: Callable[[CompareReport, MachineComparison], list[str]], table: list[str],
                 after_table: list[str], left_intro: str, missed_text: dict[str, str]) -> str:
    """What a gate's and a cross-machine comparison's Markdown share after their heading: the
    completion paths, the base's failures, each new file's lines, the table (or that nothing
    matched), `after_table`, the points left out and the unmatched ones."""
    out = list(head)
    for line in busy_lines(report):
        out += [line, ""]
    paths = completion_path_lines(report)
    if paths:
        out += paths + [""]
    for why in report.base_failures:
        out.append(f"- **base ({_escape(report.base_label)}): FAIL: {_escape(why)}**")
    for mc in report.machines:
        out += machine_lines(report, mc)
    out.append("")
    out += table if any(mc.rows for mc in report.machines) else ["_No points matched._"]
    out.append("")
    out += after_table
    left = [(mc, lo) for mc in report.machines for lo in mc.left_out]
    if left:
        out += ["### Left out: blocking ratio not within tolerance", "", left_intro, ""]
        out += [f"- `{_escape(lo.label)}` ({_escape(mc.label)}), missed in {missed_text[lo.missed]}: {_escape(lo.reason)}"
                for mc, lo in left]
        out.append("")
    unmatched = _unmatched(report)
    if unmatched:
        out += ["### Unmatched points", ""] + unmatched
    return "\n".join(out).rstrip() + "\n"


def reason_lines(report: CompareReport) -> list[str]:
    """One line per reason, for stderr: "fail: FILE: why" or "inconclusive: FILE: why"."""
    return [f"{r.status}: {r.where()}: {r.text}" for r in reasons(report)]


def note_lines(report: CompareReport) -> list[str]:
    """Notes for stderr: a comparison that spans machines (--cross-machine)."""
    return [f"the comparison spans machines: base {report.base.path} and new {mc.results.path} differ in "
            + ", ".join(d.text() for d in mc.setup_differences)
            + "; a cross-machine comparison reports ratios and rankings and does not gate"
            for mc in report.machines if mc.setup_differences]


# ---------------------------------------------------------------- Markdown: comparing machines


def cross_machine_verdict_line(report: CompareReport) -> str:
    """A cross-machine comparison's status and why: FAIL for a file that is not a whole run,
    else that it reports and does not gate."""
    if report.status == FAIL:
        bad = sum(1 for mc in report.machines if mc.failures)
        why = "; ".join(f"{r.where(short=True)}: {r.text}" for r in reasons(report))
        lead = (f"**FAIL: {bad} of {len(report.machines)} new file(s) are not whole runs"
                + ("; base is not a whole run" if report.base_failures else "") + ".**")
        return f"{lead} {_escape(why)}. A cross-machine comparison does not gate; it fails only for this."
    return ("**REPORTED: base and every new file are whole runs.** A cross-machine comparison "
            "reports ratios and rankings; it does not gate (exit 0 whatever the ratios).")


def fmt_ratio_cell(row: PointComparison) -> str:
    """A cross-machine table cell: the new median, the ratio and its 95% CI, no verdict."""
    if row.ratio is None:
        return f"{fmt_value(row.new_median)} (no ratio: base is {fmt_value(row.base_median)})"
    ci = f", CI {row.ci[0]:.2f}-{row.ci[1]:.2f}" if row.ci else ", CI n/a"
    return f"{fmt_value(row.new_median)} ({row.ratio:.2f}x{ci})"


def _cross_machine_lines(report: CompareReport, mc: MachineComparison) -> list[str]:
    """One new file's summary: the geometric mean ratio, how the rankings agree, what differs
    from base, why the file is not a whole run."""
    o = mc.overall
    head = f"- **{_escape(mc.label)}**: "
    if o.ratio is not None and o.ci is not None:
        head += (f"geometric mean ratio over {o.points} point(s) with {gate.MIN_RUNS}+ runs a side "
                 f"{o.ratio:.3f} (95% CI {o.ci[0]:.3f}-{o.ci[1]:.3f})")
    else:
        head += f"no point with {gate.MIN_RUNS}+ runs a side, no geometric mean ratio"
    if mc.ranks:
        same = sum(1 for r in mc.ranks if r.best_differs is False)
        rhos = [r.rho for r in mc.ranks if r.rho is not None]
        head += f"; the same best setting in {same} of {len(mc.ranks)} group(s)"
        if rhos:
            low, high = f"{min(rhos):.2f}", f"{max(rhos):.2f}"
            span = low if low == high else f"from {low} to {high}"
            head += f"; Spearman's rho over {len(rhos)} group(s) with {xm.MIN_SETTINGS}+ settings {span}"
    lines = [head]
    if mc.setup_differences:
        lines.append("  - spans machines (--cross-machine): differs from base in "
                     + _escape(", ".join(d.text() for d in mc.setup_differences)))
    for why in mc.failures:
        lines.append(f"  - **FAIL: {_escape(why)}**")
    return lines


def _cross_table(report: CompareReport) -> list[str]:
    keyed, keys, head = _table_rows(report)
    lines = ["| " + " | ".join(_escape(h) for h in head) + " |", "|:--|" + "--:|" * (len(head) - 1)]
    for key in keys:
        label, base_median = keyed[key]
        cells = [f"`{shown_label(label, report.base.machine)}`", fmt_value(base_median)]
        cells += [fmt_ratio_cell(mc.rows[key]) if key in mc.rows else "unmatched" for mc in report.machines]
        lines.append("| " + " | ".join(_escape(c) for c in cells) + " |")
    return lines


def _best_text(setting: xm.SettingMedians | None, side: str) -> str:
    return "n/a" if setting is None else f"{setting.label} ({fmt_value(getattr(setting, side))})"


def rank_lines(report: CompareReport) -> list[str]:
    """The rank section: per new file, per group of points that differ only in concurrency and
    pool, Spearman's rho over the settings' median throughputs and each machine's best setting."""
    if not any(mc.ranks for mc in report.machines):
        return []
    lines = ["### Do the machines rank the settings alike?", "",
             "Per group of matched points that differ only in concurrency and pool: Spearman's rank "
             f"correlation of the settings' median throughputs on base and new (none below "
             f"{xm.MIN_SETTINGS} settings), and each machine's best setting (its highest median "
             "throughput). Points left out for their blocking ratio are not ranked.", ""]
    for mc in report.machines:
        if not mc.ranks:
            continue
        if len(report.machines) > 1:
            lines += [f"#### {_escape(report.base_label)} vs {_escape(mc.label)}", ""]
        lines += ["| group | settings | Spearman's rho | best on base | best on new | same best |",
                  "|:--|--:|--:|:--|:--|:--|"]
        for r in mc.ranks:
            rho = f"{r.rho:.2f}" if r.rho is not None else f"n/a ({r.reason})"
            if r.unranked:
                rho += f"; not ranked, no median: {', '.join(r.unranked)}"
            same = {True: "**no**", False: "yes", None: "n/a"}[r.best_differs]
            cells = [r.group, str(len(r.settings)), rho, _best_text(r.base_best, "base"),
                     _best_text(r.new_best, "new"), same]
            lines.append("| " + " | ".join(_escape(c) for c in cells) + " |")
        lines.append("")
    return lines


CROSS_MISSED_TEXT = {MISSED_IN_NEW: "new only", MISSED_IN_BASE: "base only", MISSED_IN_BOTH: "both"}


def render_cross_machine(report: CompareReport) -> str:
    """The Markdown of a cross-machine comparison: ratios with CIs, the rank section, no gate."""
    metric = report.metric
    better = "higher" if metric.higher_is_better else "lower"
    out = [
        f"## iocpbench compare across machines: `{metric.name}` ({metric.unit}, {better} is better)",
        "",
        f"Base `{report.base.path.name}`; new: "
        + ", ".join(f"`{mc.results.path.name}`" for mc in report.machines)
        + ". A cross-machine comparison (`--cross-machine`, docs/verdicts.md \"Comparing machines\"): "
        "it reports and does not gate. Each cell: new median (NEW/BASE ratio of geometric means, its 95% CI)."
        + (" Points matched across port backends." if report.ignore_port else ""),
        "",
        *(line for g in grid_mismatch_lines(report) for line in (g, "")),
        cross_machine_verdict_line(report),
        "",
    ]
    return _render_body(report, out, _cross_machine_lines, _cross_table(report),
                        rank_lines(report) + pooled_lines(report),
                        "Not in the ratios or the ranking (a cross-machine comparison does not judge them).",
                        CROSS_MISSED_TEXT)
