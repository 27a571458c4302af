"""Which setting: per workload family and blocking ratio of one results file, the best point,
the settings shown within the threshold of it ("indistinguishable" in the output), the
recommended one, and the rules of thumb (pool N, 2N, 2N+2) as a ratio of the best with CIs.

The rule is tune's (docs/tuning.md, "The rule"), at its one look: a sweep runs its points in
interleaved rounds (every point once per round, `runs[].repetition` is the round), so runs are
paired by round as tune pairs them and a round's drift cancels in the ratio. Of R common rounds
the first R - max(5, ceil(R/2)) choose the best (none when R < 7: then the best is chosen on
the judged rounds too) and the rest are judged: each point's ratio to the best is the
Hodges-Lehmann estimate of the paired log ratios with the Wilcoxon signed-rank 90% CI. Against
the indifference zone [1 - THRESHOLD - ZONE, 1 - THRESHOLD] (0.93..0.95):

- "within" ("indistinguishable" in the tables): the CI's lower end is above 0.93;
  "at_threshold" when the whole CI is inside the zone (either answer is right);
- "worse": the CI's upper end is below 0.95; "undecided": the CI covers the whole zone;
- "no_evidence": fewer than 5 rounds paired with the best.

The recommendation is the first point in tune's fixed order (the smallest fixed pool, then the
smallest concurrency; automatic pools last) that is within, else undecided with its estimate at
least the zone's middle (a sweep has no more rounds to add, so this is tune's last look), else
the best. Where two settings straddle the threshold, Answer.at_threshold names both and why the
rule takes the one it takes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from . import grid, machine_load, stats
from .fidelity import fidelity_problem
from .formatting import fmt_value
from .match import normalize_spec
from .metrics import run_values, summary_value

THRESHOLD = 0.05
ZONE = 0.02  # the indifference zone's width below 1 - THRESHOLD (tune/recommend.hpp kDefaultZonePct)
ERROR_RATE = 0.05  # each side, one-sided, at the one look (tune's kErrorRate): a 90% CI
MIN_PAIRS = 5  # the fewest pairs with a 90% signed-rank interval (tune's kMinFinalRounds)
WITHIN = ("best", "within", "at_threshold")
MEANING = ("indistinguishable: shown within the threshold of the best: the 90% CI (Wilcoxon signed-rank, runs "
           "paired by round) of the throughput ratio to the best lies above {lower:.2f}, the indifference "
           "zone's lower edge (a setting truly between {lower:.2f} and {upper:.2f} may go either way)")
RULES_OF_THUMB = ("N", "2N", "2N+2")
METRIC = "throughput_ops_per_s"


@dataclass(frozen=True)
class Setting:
    point: dict[str, Any]
    median: float
    ratio: float  # to the best, of geometric means (1 for the best itself)
    ci: tuple[float, float] | None  # 90%, over the judged rounds paired with the best
    indistinguishable: bool  # verdict is best, within or at_threshold: shown within the threshold
    verdict: str = "best"  # best, within, at_threshold, worse, undecided, no_evidence
    pairs: int = 0  # judged rounds paired with the best

    @property
    def label(self) -> str:
        return setting_label(self.point)

    @property
    def off_ratio(self) -> str | None:
        return fidelity_problem(self.point)


@dataclass(frozen=True)
class AtThreshold:
    """Two settings straddling the threshold: `smaller` has a CI that meets the indifference zone,
    `larger` is the answer if it is not (or the one it was preferred to)."""
    smaller: Setting
    larger: Setting
    picked_smaller: bool
    reason: str


@dataclass(frozen=True)
class Answer:
    family: grid.Family
    ratio: float
    best: Setting
    recommended: Setting
    settings: list[Setting]  # every point of this blocking ratio, best first
    rules: list[tuple[str, Setting | None]]  # (rule, the point at the rule's pool) per rule
    at_threshold: AtThreshold | None = None
    selection_rounds: int = 0  # rounds that chose the best (0: it was chosen on the judged ones)
    judged_rounds: int = 0

    @property
    def indistinguishable(self) -> list[Setting]:
        return [s for s in self.settings if s.indistinguishable]


def setting_label(point: dict[str, Any]) -> str:
    return f"c={grid.spec_value_text(point['concurrency'])} pool={grid.spec_value_text(point['pool'])}"


def _fixed_order(point: dict[str, Any], n: int = 0) -> tuple[bool, int, int]:
    """tune's order of preference: the smallest fixed pool, then the smallest concurrency (0,
    the port's default, is N: `n`)."""
    concurrency = int(point["concurrency"]["value"]) or n
    return (grid.is_auto_point(point), int(point["pool"]["value"]), concurrency)


def zone(threshold: float = THRESHOLD) -> tuple[float, float, float]:
    """The indifference zone's lower edge, upper edge and middle (geometric)."""
    lower, upper = 1 - threshold - ZONE, 1 - threshold
    return lower, upper, math.sqrt(lower * upper)


def signed_rank_critical_value(n: int, alpha: float) -> int:
    """The largest t with P(W <= t) <= alpha for the signed-rank statistic of n pairs under the
    null (exact to 300 pairs, then the normal approximation); -1 when even W = 0 is likelier
    (tune/recommend.cpp, the same numbers)."""
    if n <= 0:
        return -1
    top = n * (n + 1) // 2
    if n > 300:
        sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
        return math.floor(top / 2 + NormalDist().inv_cdf(alpha) * sd - 0.5)
    counts = [1] + [0] * top
    for k in range(1, n + 1):
        for total in range(top, k - 1, -1):
            counts[total] += counts[total - k]
    cumulative, critical = 0, -1
    for total, c in enumerate(counts):
        cumulative += c
        if cumulative > alpha * 2**n * (1 + 1e-12):
            break
        critical = total
    return critical


def paired_ratio_ci(logs: list[float], alpha: float = ERROR_RATE) -> tuple[float, tuple[float, float] | None]:
    """exp of the Hodges-Lehmann estimate of the paired log ratios, and the Wilcoxon signed-rank
    interval at one-sided `alpha` each side (None with too few pairs)."""
    walsh = sorted((logs[i] + logs[j]) / 2 for i in range(len(logs)) for j in range(i, len(logs)))
    m = len(walsh)
    estimate = math.exp((walsh[(m - 1) // 2] + walsh[m // 2]) / 2)
    t = signed_rank_critical_value(len(logs), alpha)
    if t < 0:
        return estimate, None
    return estimate, (math.exp(walsh[t]), math.exp(walsh[m - 1 - t]))


def by_round(point: dict[str, Any]) -> dict[int, float]:
    """A point's throughput per round (its runs' `repetition`); runs without one are left out."""
    out: dict[int, float] = {}
    for r in point.get("runs") or []:
        rep, tp = r.get("repetition"), r.get(METRIC)
        if isinstance(rep, int) and isinstance(tp, (int, float)):
            out[rep] = float(tp)
    return out


def selection_rounds_for(rounds: int) -> int:
    """tune's split: the judged rounds are max(5, ceil(R/2)), the rest choose the best."""
    judged = max(MIN_PAIRS, (rounds + 1) // 2)
    return rounds - judged if rounds > judged else 0


def verdict_of(ci: tuple[float, float] | None, threshold: float = THRESHOLD) -> str:
    if ci is None:
        return "no_evidence"
    lower, upper, _ = zone(threshold)
    within, worse = ci[0] >= lower, ci[1] < upper
    if within and worse:
        return "at_threshold"
    return "within" if within else "worse" if worse else "undecided"


def judge_setting(point: dict[str, Any], best: dict[str, Any], threshold: float = THRESHOLD,
                  judged: list[int] | None = None) -> Setting | None:
    """`point` against `best` over the rounds `judged` (all rounds both have when None)."""
    median = summary_value(point, METRIC)
    if median is None:
        return None
    mine, theirs = by_round(point), by_round(best)
    rounds = sorted(set(mine) & set(theirs)) if judged is None else [r for r in judged if r in mine and r in theirs]
    if point is best:
        return Setting(point, median, 1.0, None, True, "best", len(rounds))
    if any(mine[r] <= 0 or theirs[r] <= 0 for r in rounds):  # a stalled run: not "equal"
        return Setting(point, median, 0.0, (0.0, 0.0), False, "worse", len(rounds))
    if not rounds:  # no runs by round: the medians only, no interval
        best_median = summary_value(best, METRIC) or 0.0
        ratio = median / best_median if best_median else 0.0
        return Setting(point, median, ratio, None, False, "no_evidence", 0)
    estimate, ci = paired_ratio_ci([math.log(mine[r] / theirs[r]) for r in rounds])
    verdict = verdict_of(ci, threshold)
    return Setting(point, median, estimate, ci, verdict in WITHIN, verdict, len(rounds))


def _taken(ordered: list[Setting], best: Setting, threshold: float) -> Setting:
    """The first setting in the fixed order that the rule takes, else the best."""
    middle = zone(threshold)[2]
    for s in ordered:
        if s.verdict in WITHIN or (s.verdict == "undecided" and s.ratio >= middle):
            return s
    return best


def _near(s: Setting, threshold: float) -> bool:
    lower, upper, _ = zone(threshold)
    return s.verdict != "best" and s.ci is not None and s.ci[0] < upper and s.ci[1] > lower


def _reason(smaller: Setting, picked_smaller: bool, threshold: float) -> str:
    lower, upper, middle = zone(threshold)
    lo, hi = smaller.ci if smaller.ci else (0.0, math.inf)
    return {
        "at_threshold": f"the smaller one's CI ({lo:.3f}..{hi:.3f}) lies inside the indifference zone "
                        f"{lower:.2f}..{upper:.2f}, where either answer is right; the rule takes the smaller setting",
        "within": f"the smaller one's CI's lower end {lo:.3f} is above the zone's lower edge {lower:.2f}: within",
        "worse": f"the smaller one's CI's upper end {hi:.3f} is below the zone's upper edge {upper:.2f}: shown worse",
        "undecided": f"the smaller one's CI ({lo:.3f}..{hi:.3f}) covers the zone, so its estimate {smaller.ratio:.3f} "
                     f"decides: {'at least' if picked_smaller else 'below'} the zone's middle {middle:.3f}",
    }.get(smaller.verdict, "nothing was shown about the smaller one")


def at_threshold(ordered: list[Setting], recommended: Setting, best: Setting,
                 threshold: float = THRESHOLD) -> AtThreshold | None:
    """The two settings that straddle the threshold, as tune reports them (tune/recommend.cpp)."""
    if recommended is not best and _near(recommended, threshold):
        later = ordered[ordered.index(recommended) + 1:]
        larger = next((s for s in later if s.verdict in WITHIN or s.verdict == "undecided"), best)
        return AtThreshold(recommended, larger, True, _reason(recommended, True, threshold))
    passed = [s for s in ordered[:ordered.index(recommended)] if _near(s, threshold)] if recommended in ordered else []
    if passed:
        return AtThreshold(passed[-1], recommended, False, _reason(passed[-1], False, threshold))
    return None


def _rule_concurrency(points: list[dict[str, Any]], best: dict[str, Any]) -> str:
    """The rules of thumb size the pool at the port's default concurrency: N (or 0, which is N)."""
    specs = {normalize_spec(p["concurrency"]["spec"]) for p in points}
    for c in ("N", "0"):
        if c in specs:
            return c
    return normalize_spec(best["concurrency"]["spec"])


def _common_rounds(points: list[dict[str, Any]]) -> list[int]:
    rounds = [set(by_round(p)) for p in points]
    return sorted(set.intersection(*rounds)) if rounds else []


def _best_on(points: list[dict[str, Any]], rounds: list[int]) -> dict[str, Any]:
    """The highest median throughput over `rounds` (every round when there are none)."""
    def level(p: dict[str, Any]) -> float:
        values = [v for r, v in by_round(p).items() if r in rounds] if rounds else []
        return (stats.median(values) if values else summary_value(p, METRIC)) or 0.0
    return max(points, key=level)


def answer_for(fam: grid.Family, ratio: float, threshold: float = THRESHOLD) -> Answer | None:
    points = [p for p in grid.select(fam.points, ratio=ratio) if summary_value(p, METRIC) is not None]
    if not points:
        return None
    rounds = _common_rounds(points)
    selection = selection_rounds_for(len(rounds))
    # The best is chosen on rounds other than those it is judged on, so the noise that made it
    # the best does not also make the others read low against it.
    best = _best_on(points, rounds[:selection] if selection else rounds)
    judged = rounds[selection:] if rounds else None
    settings = [s for p in points if (s := judge_setting(p, best, threshold, judged)) is not None]
    best_setting = next(s for s in settings if s.point is best)
    n = next((int(p["concurrency"]["value"]) for p in points if normalize_spec(p["concurrency"]["spec"]) == "N"), 0)
    ordered = sorted(settings, key=lambda s: _fixed_order(s.point, n))
    recommended = _taken(ordered, best_setting, threshold)
    settings.sort(key=lambda s: (s is not best_setting, -s.ratio))
    conc = _rule_concurrency(points, best)
    rules: list[tuple[str, Setting | None]] = []
    for rule in RULES_OF_THUMB:
        match = [s for s in settings if normalize_spec(s.point["pool"]["spec"]) == rule
                 and normalize_spec(s.point["concurrency"]["spec"]) == conc]
        rules.append((f"pool {rule} (c={conc})", match[0] if match else None))
    return Answer(fam, ratio, best_setting, recommended, settings, rules,
                  at_threshold(ordered, recommended, best_setting, threshold), selection,
                  len(judged) if judged else 0)


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
    sweep's default 2): with fewer than 5 rounds there is no CI, and nothing is shown within."""
    counts = [len(run_values(p, METRIC)) for p in points]
    fewest = min(counts) if counts else 0
    if fewest >= enough:
        return None
    return (f"few runs: {fewest} a point at the least, so the CIs are wide or missing and few settings are "
            f"shown within the threshold; --repetitions {enough} tells settings apart")


def fmt_ratio(s: Setting | None) -> str:
    if s is None:
        return "not measured"
    if s.ci is None:
        return f"{s.ratio:.2f}" + (" (best)" if s.ratio == 1.0 else " (no CI)")
    return f"{s.ratio:.2f} [{s.ci[0]:.2f}, {s.ci[1]:.2f}]"


def switches_per_kop(s: Setting | None) -> float | None:
    """The context switches per 1,000 completions of a setting (median over runs): what its
    throughput costs."""
    return None if s is None else summary_value(s.point, "context_switches_per_kop")


def fmt_switches(s: Setting | None) -> str:
    v = switches_per_kop(s)
    return "n/a" if v is None else fmt_value(v)


def fmt_rule(s: Setting | None) -> str:
    """A rule of thumb's cell: its ratio to the best [90% CI] and its context switches."""
    return fmt_ratio(s) if s is None else f"{fmt_ratio(s)}, {fmt_switches(s)} cs/1k"


def answer_row(a: Answer) -> tuple[str, ...]:
    """One line of the text table: the recommended and the best setting, each with its
    throughput and context switches per 1,000 completions, and the rules of thumb."""
    rec, best = a.recommended, a.best
    return (a.family.workload, f"{a.ratio:g}", rec.label + (" *" if rec.off_ratio else ""),
            fmt_value(rec.median), fmt_switches(rec), best.label, fmt_value(best.median), fmt_switches(best),
            str(len(a.indistinguishable)), *(fmt_rule(s) for _, s in a.rules))


def at_threshold_lines(found: list[Answer]) -> list[str]:
    """Where two settings straddle the threshold: both, their ratios and CIs, and the rule's pick."""
    lines = []
    for a in found:
        t = a.at_threshold
        if t is None:
            continue
        picked = t.smaller if t.picked_smaller else t.larger
        lines.append(f"at the threshold ({a.family.workload}, b={a.ratio:g}): {t.smaller.label} {fmt_ratio(t.smaller)} "
                     f"and {t.larger.label} {fmt_ratio(t.larger)}; the rule takes {picked.label}: {t.reason}")
    return lines


def text_table(points: list[dict[str, Any]], threshold: float = THRESHOLD) -> str:
    """The short table scripts/main.sh prints: one line per workload family and blocking ratio."""
    rows = [("workload", "b", "recommended", "ops/s", "cs/1k", "best", "best ops/s", "best cs/1k",
             "indistinguishable", *(r for r in RULES_OF_THUMB))]
    rows += [answer_row(a) for a in answers(points, threshold)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines += at_threshold_lines(answers(points, threshold))
    lower, upper, _ = zone(threshold)
    lines.append(MEANING.format(lower=lower, upper=upper)
                 + "; cs/1k: context switches per 1,000 completions (median); "
                 f"pool N/2N/2N+2: ratio of the best [90% CI], cs/1k"
                 + ("; * blocking ratio not within tolerance" if any("*" in r[2] for r in rows[1:]) else ""))
    note = few_runs_note(points)
    if note:
        lines.append("note: " + note)
    busy = machine_load.busy_line(points)
    if busy:
        lines.append("warning: " + busy)
    return "\n".join(lines) + "\n"
