"""Which setting: per workload family and blocking ratio of one results file, the best point,
the settings indistinguishable from it, the recommended one, and the rules of thumb (pool N,
2N, 2N+2) as a ratio of the best with CIs.

"Indistinguishable" is judged by the ratio's CI against the threshold, as tune does: a point
is indistinguishable from the best when the upper end of the 95% CI of its throughput ratio to
the best reaches 1 - THRESHOLD, i.e. the data cannot rule out that it is within 5% of the best.
The recommendation is the cheapest of those: the smallest fixed pool, then the smallest
concurrency, then the fewest context switches per completion.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import grid, stats
from .compare import fidelity_problem, fmt_value
from .match import normalize_spec
from .metrics import run_values, summary_value

THRESHOLD = 0.05
RULES_OF_THUMB = ("N", "2N", "2N+2")
METRIC = "throughput_ops_per_s"


@dataclass(frozen=True)
class Setting:
    point: dict[str, Any]
    median: float
    ratio: float  # to the best, of geometric means (1 for the best itself)
    ci: tuple[float, float] | None
    indistinguishable: bool

    @property
    def label(self) -> str:
        return setting_label(self.point)

    @property
    def off_ratio(self) -> str | None:
        return fidelity_problem(self.point)


@dataclass(frozen=True)
class Answer:
    family: grid.Family
    ratio: float
    best: Setting
    recommended: Setting
    settings: list[Setting]  # every point of this blocking ratio, best first
    rules: list[tuple[str, Setting | None]]  # (rule, the point at the rule's pool) per rule

    @property
    def indistinguishable(self) -> list[Setting]:
        return [s for s in self.settings if s.indistinguishable]


def setting_label(point: dict[str, Any]) -> str:
    return f"c={grid.spec_value_text(point['concurrency'])} pool={grid.spec_value_text(point['pool'])}"


def _cost(point: dict[str, Any]) -> tuple[bool, int, int, float]:
    cs = summary_value(point, "context_switches_per_kop")
    return (grid.is_auto_point(point), int(point["pool"]["value"]), int(point["concurrency"]["value"]),
            cs if cs is not None else float("inf"))


def judge_setting(point: dict[str, Any], best: dict[str, Any], threshold: float = THRESHOLD) -> Setting | None:
    median = summary_value(point, METRIC)
    if median is None:
        return None
    if point is best:
        return Setting(point, median, 1.0, None, True)
    both = stats.geomean_ratio_ci(run_values(best, METRIC), run_values(point, METRIC))
    best_median = summary_value(best, METRIC) or 0.0
    if both is None:  # no runs: the medians only, no interval
        ratio = median / best_median if best_median else 0.0
        return Setting(point, median, ratio, None, ratio >= 1 - threshold)
    ratio, ci = both
    reach = ci[1] if ci else ratio
    return Setting(point, median, ratio, ci, reach >= 1 - threshold)


def _rule_concurrency(points: list[dict[str, Any]], best: dict[str, Any]) -> str:
    """The rules of thumb size the pool at the port's default concurrency: N (or 0, which is N)."""
    specs = {normalize_spec(p["concurrency"]["spec"]) for p in points}
    for c in ("N", "0"):
        if c in specs:
            return c
    return normalize_spec(best["concurrency"]["spec"])


def answer_for(fam: grid.Family, ratio: float, threshold: float = THRESHOLD) -> Answer | None:
    points = [p for p in grid.select(fam.points, ratio=ratio) if summary_value(p, METRIC) is not None]
    if not points:
        return None
    best = max(points, key=lambda p: summary_value(p, METRIC) or 0.0)
    settings = [s for p in points if (s := judge_setting(p, best, threshold)) is not None]
    settings.sort(key=lambda s: -s.ratio)
    eligible = [s for s in settings if s.indistinguishable]
    recommended = min(eligible, key=lambda s: _cost(s.point))
    conc = _rule_concurrency(points, best)
    rules: list[tuple[str, Setting | None]] = []
    for rule in RULES_OF_THUMB:
        match = [s for s in settings if normalize_spec(s.point["pool"]["spec"]) == rule
                 and normalize_spec(s.point["concurrency"]["spec"]) == conc]
        rules.append((f"pool {rule} (c={conc})", match[0] if match else None))
    return Answer(fam, ratio, settings[0], recommended, settings, rules)


def answers(points: list[dict[str, Any]], threshold: float = THRESHOLD) -> list[Answer]:
    """Closed-loop families only: an open-loop point's throughput is the load it was offered,
    so its answer is about latency (latency_load.latency_answers)."""
    out = []
    for fam in grid.families(points):
        if fam.open_loop:
            continue
        for r in grid.ratios(fam.points):
            a = answer_for(fam, r, threshold)
            if a is not None:
                out.append(a)
    return out


def indistinguishable_keys(points: list[dict[str, Any]], threshold: float = THRESHOLD) -> set[int]:
    """id() of every point indistinguishable from the best of its family and blocking ratio
    (the heatmaps outline them)."""
    return {id(s.point) for a in answers(points, threshold) for s in a.indistinguishable}


def few_runs_note(points: list[dict[str, Any]], enough: int = 5) -> str | None:
    """A line for files whose points have fewer runs than the README recommends (the quick
    sweep's default 2): their CIs are wide, so many settings look indistinguishable."""
    counts = [len(run_values(p, METRIC)) for p in points]
    fewest = min(counts) if counts else 0
    if fewest >= enough:
        return None
    return (f"few runs: {fewest} a point at the least, so the CIs are wide and many settings look "
            f"indistinguishable; --repetitions {enough} tells settings apart")


def fmt_ratio(s: Setting | None) -> str:
    if s is None:
        return "not measured"
    if s.ci is None:
        return f"{s.ratio:.2f}" + (" (best)" if s.ratio == 1.0 else " (no CI)")
    return f"{s.ratio:.2f} [{s.ci[0]:.2f}, {s.ci[1]:.2f}]"


def text_table(points: list[dict[str, Any]], threshold: float = THRESHOLD) -> str:
    """The short table scripts/main.sh prints: one line per workload family and blocking ratio."""
    rows = [("workload", "b", "recommended", "ops/s", "indistinguishable", *(r for r in RULES_OF_THUMB))]
    for a in answers(points, threshold):
        rec = a.recommended
        rows.append((
            a.family.workload, f"{a.ratio:g}", rec.label + (" *" if rec.off_ratio else ""),
            fmt_value(rec.median), str(len(a.indistinguishable)),
            *(fmt_ratio(s) for _, s in a.rules),
        ))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.append(f"indistinguishable: settings whose throughput ratio to the best has a 95% CI reaching "
                 f"{1 - threshold:.2f}; pool N/2N/2N+2: ratio of the best [95% CI]"
                 + ("; * blocking ratio not within tolerance" if any("*" in r[2] for r in rows[1:]) else ""))
    note = few_runs_note(points)
    if note:
        lines.append("note: " + note)
    return "\n".join(lines) + "\n"
