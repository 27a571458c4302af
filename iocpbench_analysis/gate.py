"""The regression gate of iocpbench-compare: a rule with a stated error rate (docs/verdicts.md).

Everything is on the log scale, where a ratio is a difference and a run's noise is about its
CV. For one comparison of K matched points (both sides with at least MIN_RUNS runs):

- a point *regresses* when the upper end of its one-sided confidence bound at 1 - alpha/K
  (Bonferroni over the K points, so the whole comparison, not each point, has the rate alpha)
  lies beyond the margin (ratio below 1 - margin for throughput). Each side's spread is the
  larger of its own and the comparison's pooled spread: 5 runs estimate a spread badly, and
  a point that happens to look quiet must not make a small drift significant;
- the comparison also regresses when the 95% CI of the geometric mean ratio over all K
  points lies beyond the margin: a loss spread over every point, each too small to flag alone.

Each gated point also has a *smallest detectable loss* (detectable_ratio): the change at which
its simultaneous bound, with the estimate at that change, just reaches the margin. compare
calls a comparison inconclusive when a point's is above a stated size (default_max_detectable).

Functions are pure; docs/verdicts.md gives the simulated and measured error rates, and
tests/python/test_gate.py reproduces the simulation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

DEFAULT_MARGIN_PCT = 5.0
FAMILY_ALPHA = 0.05
# Below this many runs a side a point gets no verdict: its own spread rests on one degree of
# freedom. The error rates in docs/verdicts.md are for RECOMMENDED_RUNS a side: at 5 (the
# sweep's default) a 20% loss on one point of 108 at 6.6% CV is caught only 65.8% of the
# time, at 7 87.5% (a step-down correction such as Holm's cannot help there: its first step,
# the one a single loss must pass, is Bonferroni's).
MIN_RUNS = 3
RECOMMENDED_RUNS = 7
CONFIDENCE = 0.95
# A gated point whose smallest detectable loss (detectable_ratio) is above this many percent
# makes the comparison inconclusive: 25 points above the margin, 30% at the default 5%. Quiet
# sweeps stay under it: the reference grid compared with itself (5 runs a side, 108 points) can
# show 10-14% at 102 points, up to 26% at its noisiest (file c=N p=2N b=0). A point's own CV
# reaches it at about 15% with 5 runs a side over 108 points, 12% with 3 runs over 36.
# `--max-detectable-loss` sets it (default_max_detectable).
DETECTABLE_ABOVE_MARGIN_PCT = 25.0
MAX_DETECTABLE_LOSS_PCT = DEFAULT_MARGIN_PCT + DETECTABLE_ABOVE_MARGIN_PCT


def default_max_detectable(margin_pct: float) -> float:
    """The default of --max-detectable-loss for a margin (--fail-above): 25 points above it,
    so a gate told to overlook a loss of PCT is not inconclusive for failing to see PCT."""
    return margin_pct + DETECTABLE_ABOVE_MARGIN_PCT


REGRESSION, IMPROVEMENT, OK, NO_VERDICT = "regression", "improvement", "ok", "no verdict"


@dataclass(frozen=True)
class Sample:
    """One matched point: the logs of each side's per-run values."""

    base: tuple[float, ...]
    new: tuple[float, ...]

    @property
    def gated(self) -> bool:
        return len(self.base) >= MIN_RUNS and len(self.new) >= MIN_RUNS

    @property
    def log_ratio(self) -> float:
        return float(np.mean(self.new) - np.mean(self.base))


@dataclass(frozen=True)
class PointVerdict:
    log_ratio: float
    se: float | None  # of log_ratio, with the pooled floor; None without a verdict
    ci: tuple[float, float] | None  # 95% CI of the ratio, from the same se
    bound: float | None  # the simultaneous bound on the ratio the verdict compares to the margin
    verdict: str
    detectable: float | None = None  # the ratio at which the bound just reaches the margin (detectable_ratio)


@dataclass(frozen=True)
class GlobalVerdict:
    points: int
    ratio: float | None  # geometric mean of the points' ratios
    ci: tuple[float, float] | None
    regression: bool


def margin_limit(margin_pct: float, higher_is_better: bool) -> float:
    """The log ratio at the margin, on the side that is worse: log 0.95 for throughput with
    a 5% margin, log 1.05 for a lower-is-better metric."""
    if not higher_is_better:
        return math.log(1 + margin_pct / 100)
    return math.log(1 - margin_pct / 100) if margin_pct < 100 else -math.inf  # no loss exceeds 100%


def detectable_ratio(se: float, q: float, *, margin_pct: float, higher_is_better: bool) -> float:
    """A point's smallest detectable change, as a ratio: where its simultaneous bound (q
    standard errors from the estimate) would just reach the margin were the estimate the true
    ratio, exp(log(1 - margin) - q*se) for throughput, exp(log(1 + margin) + q*se) for a
    lower-is-better metric. A true change of that size is caught about half the time."""
    limit = margin_limit(margin_pct, higher_is_better)
    return math.exp(limit - q * se) if higher_is_better else math.exp(limit + q * se)


def _var(xs: Sequence[float]) -> float:
    return float(np.var(xs, ddof=1))


def pooled_log_sd(samples: Sequence[Sample]) -> float | None:
    """The comparison's typical run-to-run spread: the root mean of the gated points' pooled
    within-point variances (log scale)."""
    vs = [((len(s.base) - 1) * _var(s.base) + (len(s.new) - 1) * _var(s.new)) / (len(s.base) + len(s.new) - 2)
          for s in samples if s.gated]
    return math.sqrt(float(np.mean(vs))) if vs else None


def point_se(sample: Sample, pooled_sd: float) -> float:
    sb = max(math.sqrt(_var(sample.base)), pooled_sd)
    sn = max(math.sqrt(_var(sample.new)), pooled_sd)
    return math.sqrt(sb**2 / len(sample.base) + sn**2 / len(sample.new))


def bonferroni_z(points: int, alpha: float = FAMILY_ALPHA) -> float:
    """The one-sided normal quantile at 1 - alpha/points."""
    return float(sps.norm.ppf(1 - alpha / max(1, points)))


Z95 = float(sps.norm.ppf(0.5 + CONFIDENCE / 2))


def judge_point(sample: Sample, pooled_sd: float | None, q: float, *, margin_pct: float,
                higher_is_better: bool) -> PointVerdict:
    """One point's verdict; q is the simultaneous quantile (bonferroni_z of the comparison)."""
    d = sample.log_ratio
    if not sample.gated or pooled_sd is None:
        return PointVerdict(d, None, None, None, NO_VERDICT)
    se = point_se(sample, pooled_sd)
    z95 = Z95
    limit = margin_limit(margin_pct, higher_is_better)
    ci = (math.exp(d - z95 * se), math.exp(d + z95 * se))
    if higher_is_better:
        worst, best = d + q * se, d - q * se  # the bound nearest to "no loss", and its mirror
        verdict = REGRESSION if worst < limit else IMPROVEMENT if best > -limit else OK
    else:
        worst, best = d - q * se, d + q * se
        verdict = REGRESSION if worst > limit else IMPROVEMENT if best < -limit else OK
    detectable = detectable_ratio(se, q, margin_pct=margin_pct, higher_is_better=higher_is_better)
    return PointVerdict(d, se, ci, math.exp(worst), verdict, detectable)


def judge_global(samples: Sequence[Sample], ses: Sequence[float], *, margin_pct: float,
                 higher_is_better: bool) -> GlobalVerdict:
    """The geometric mean ratio of the gated points with a t interval over the points; its
    spread is at least what the points' own noise gives (so K equal ratios are not certain)."""
    ds = [s.log_ratio for s in samples]
    k = len(ds)
    if k == 0:
        return GlobalVerdict(0, None, None, False)
    mean = float(np.mean(ds))
    noise = math.sqrt(float(np.mean(np.square(ses)))) / math.sqrt(k) if ses else 0.0
    spread = float(np.std(ds, ddof=1)) / math.sqrt(k) if k > 1 else 0.0
    se = max(noise, spread)
    t = float(sps.t.ppf(0.5 + CONFIDENCE / 2, k - 1)) if k > 1 else Z95
    low, high = mean - t * se, mean + t * se
    limit = margin_limit(margin_pct, higher_is_better)
    regression = high < limit if higher_is_better else low > limit
    return GlobalVerdict(k, math.exp(mean), (math.exp(low), math.exp(high)), regression)


# Above this pooled spread (log sd, about the CV) the runs say more about a busy machine than
# about the code: the simulated rates in docs/verdicts.md go up to 0.066.
NOISY_LOG_SD = 0.10


@dataclass(frozen=True)
class Gate:
    points: list[PointVerdict]
    overall: GlobalVerdict
    pooled_sd: float | None = None

    @property
    def regression(self) -> bool:
        return self.overall.regression or any(p.verdict == REGRESSION for p in self.points)


def judge(samples: Sequence[Sample], *, margin_pct: float = DEFAULT_MARGIN_PCT, higher_is_better: bool = True,
          alpha: float = FAMILY_ALPHA) -> Gate:
    """The whole comparison: a verdict per point and the global one."""
    pooled = pooled_log_sd(samples)
    q = bonferroni_z(sum(1 for s in samples if s.gated), alpha)
    verdicts = [judge_point(s, pooled, q, margin_pct=margin_pct, higher_is_better=higher_is_better)
                for s in samples]
    gated = [s for s in samples if s.gated]
    ses = [v.se for v in verdicts if v.se is not None]
    overall = judge_global(gated, ses, margin_pct=margin_pct, higher_is_better=higher_is_better)
    return Gate(verdicts, overall, pooled)


def judge_many(base: np.ndarray, new: np.ndarray, *, margin_pct: float = DEFAULT_MARGIN_PCT,
               alpha: float = FAMILY_ALPHA) -> np.ndarray:
    """The same rule as `judge` (throughput's direction), vectorized over many comparisons of
    equal shape: base and new are (comparisons, points, runs) logs, runs >= MIN_RUNS. Returns
    whether each comparison fails. tests/python/test_gate.py checks it against `judge`."""
    c, k, r = base.shape
    vb, vn = base.var(axis=2, ddof=1), new.var(axis=2, ddof=1)
    pooled = np.sqrt(((vb + vn) / 2).mean(axis=1, keepdims=True))
    se = np.sqrt(np.maximum(vb, pooled**2) / r + np.maximum(vn, pooled**2) / r)
    d = new.mean(axis=2) - base.mean(axis=2)
    limit = margin_limit(margin_pct, True)
    point = (d + bonferroni_z(k, alpha) * se < limit).any(axis=1)
    noise = np.sqrt((se**2).mean(axis=1)) / math.sqrt(k)
    spread = d.std(axis=1, ddof=1) / math.sqrt(k) if k > 1 else np.zeros(c)
    t = float(sps.t.ppf(0.5 + CONFIDENCE / 2, k - 1)) if k > 1 else Z95
    overall = d.mean(axis=1) + t * np.maximum(noise, spread) < limit
    return point | overall


def simulate(*, points: int, runs: int, log_sd: float | Sequence[float], effect: Sequence[float] | float = 0.0,
             comparisons: int, seed: int, margin_pct: float = DEFAULT_MARGIN_PCT) -> float:
    """The fraction of `comparisons` simulated comparisons the gate fails: normal log values
    with spread `log_sd` (one value, or one per point), the new side shifted by `effect`
    (log ratio: log 0.9 for a 10% loss, per point or for all)."""
    rng = np.random.default_rng(seed)
    sd = np.broadcast_to(np.asarray(log_sd, dtype=float), (points,))[None, :, None]
    shift = np.broadcast_to(np.asarray(effect, dtype=float), (points,))[None, :, None]
    base = rng.normal(0.0, 1.0, (comparisons, points, runs)) * sd
    new = rng.normal(0.0, 1.0, (comparisons, points, runs)) * sd + shift
    return float(judge_many(base, new, margin_pct=margin_pct).mean())


def rates_table(*, runs: Sequence[int] = (RECOMMENDED_RUNS,), comparisons: int = 4000, seed: int = 1) -> str:
    """The simulated error rates docs/verdicts.md quotes, as a Markdown table: a row per
    (runs a side, points, CV)."""
    rows = ["| runs a side | points | CV (log sd) | no change: fails | 3% drift: fails "
            "| 10% loss everywhere: caught | 20% loss on one point: caught |", "|--:|--:|--:|--:|--:|--:|--:|"]
    for n in runs:
        for points in (36, 108):
            for sd in (0.02, 0.04, 0.066):
                one = [0.0] * points
                one[points // 2] = math.log(0.8)
                cells = [simulate(points=points, runs=n, log_sd=sd, effect=e, comparisons=comparisons, seed=seed + i)
                         for i, e in enumerate((0.0, math.log(0.97), math.log(0.9), one))]
                rows.append(f"| {n} | {points} | {sd:.3f} | " + " | ".join(f"{c:.1%}" for c in cells) + " |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    import sys

    ns = [int(a) for a in sys.argv[1:]] or [RECOMMENDED_RUNS]
    print(f"runs a side {', '.join(map(str, ns))}; margin {DEFAULT_MARGIN_PCT:g}%, family alpha {FAMILY_ALPHA:g}")
    sys.stdout.write(rates_table(runs=ns))
