"""The regression gate of iocpbench-compare: a rule with a stated error rate (docs/verdicts.md).

Everything is on the log scale, where a ratio is a difference and a run's noise is about its
CV. A sweep runs in rounds (every point once per round, in shuffled order; a run's
`repetition` is its round), and runs of one round share an effect: the machine a little
faster or slower for that minute. The rule accounts for it. For one comparison of K matched
points (gated: both sides with at least MIN_RUNS runs; paired: at least MIN_RUNS rounds on
both sides):

- a point *regresses* when the upper end of its one-sided confidence bound at 1 - alpha/K
  (Bonferroni over the K points, so the whole comparison, not each point, has the rate alpha)
  lies beyond the margin (ratio below 1 - margin for throughput). The spread behind the bound
  is the larger of the point's own and the comparison's pooled spread (a point that happens to
  look quiet must not make a small drift significant), and the quantile is Student's t with
  the degrees of freedom of the spread used: runs - 1 for a side's own, the pooled spread's
  for the pooled (Welch-Satterthwaite where the two sides differ);
- the comparison also regresses when the 95% CI of the geometric mean ratio over all K points
  lies beyond the margin: a loss spread over every point, each too small to flag alone. Its
  interval clusters by round: the variance of the mean over points comes from the spread of
  the per-round means (each side's, for two sweeps; the per-round log ratios', for paired
  rounds), with t at rounds - 1 degrees of freedom, so the effect a round has on all of its
  points counts once per round, not once per point.

Two kinds of comparison:

- *separate sweeps* (the default): per point d = mean(log new) - mean(log base);
- *paired rounds* (an iocpbench-ab session, whose two files ran the two builds round by
  round on one machine, or `--paired`): per point and round present on both sides
  d_r = log new_r - log base_r, and d = mean d_r with its spread from the d_r. Drift of the
  machine between rounds is then common to both sides and cancels.

Each gated point also has a *smallest detectable loss* (detectable_ratio): the change at which
its simultaneous bound, with the estimate at that change, just reaches the margin. compare
calls a comparison inconclusive when a point's is above a stated size (default_max_detectable).

Functions are pure; docs/verdicts.md gives the simulated and measured error rates (the
simulation: `python -m iocpbench_analysis.gate`), tests/python/test_gate.py and
tests/python/test_paired_gate.py reproduce them.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .lazy_stats import sps

DEFAULT_MARGIN_PCT = 5.0
FAMILY_ALPHA = 0.05
# Below this many runs a side (paired: rounds on both sides) a point gets no verdict: its own
# spread rests on one degree of freedom. The error rates in docs/verdicts.md are for
# RECOMMENDED_RUNS a side (paired: rounds); at 7 a 20% loss on one of 108 points at 6.6% CV is
# caught 68.8% of the time (two sweeps, no round effect), at 9 88.7%.
MIN_RUNS = 3
RECOMMENDED_RUNS = 7
CONFIDENCE = 0.95
# A gated point whose smallest detectable loss (detectable_ratio) is above this many percent
# makes the comparison inconclusive: 25 points above the margin, 30% at the default 5%. The
# reference grid compared with itself (5 runs a side, 108 points, quiet) shows 13.5-25% at 102
# points and 27-30.4% at its six noisiest; a point on its own spread reaches 30% at a CV of
# about 9.5% with 5 runs a side over 108 points, 13% with 7. `--max-detectable-loss` sets it
# (default_max_detectable).
DETECTABLE_ABOVE_MARGIN_PCT = 25.0
MAX_DETECTABLE_LOSS_PCT = DEFAULT_MARGIN_PCT + DETECTABLE_ABOVE_MARGIN_PCT


def default_max_detectable(margin_pct: float) -> float:
    """The default of --max-detectable-loss for a margin (--fail-above): 25 points above it,
    so a gate told to overlook a loss of PCT is not inconclusive for failing to see PCT."""
    return margin_pct + DETECTABLE_ABOVE_MARGIN_PCT


REGRESSION, IMPROVEMENT, OK, NO_VERDICT = "regression", "improvement", "ok", "no verdict"


def _positions(n: int) -> tuple[int, ...]:
    return tuple(range(n))


@dataclass(frozen=True)
class Sample:
    """One matched point: the logs of each side's per-run values, and each run's round (its
    `repetition`; None: the runs' positions)."""

    base: tuple[float, ...]
    new: tuple[float, ...]
    base_rounds: tuple[int, ...] | None = None
    new_rounds: tuple[int, ...] | None = None

    @property
    def gated(self) -> bool:
        return len(self.base) >= MIN_RUNS and len(self.new) >= MIN_RUNS

    @property
    def log_ratio(self) -> float:
        return float(np.mean(self.new) - np.mean(self.base))

    def rounds_of(self, side: str) -> tuple[int, ...]:
        values = self.base if side == "base" else self.new
        rounds = self.base_rounds if side == "base" else self.new_rounds
        return tuple(rounds) if rounds is not None and len(rounds) == len(values) else _positions(len(values))

    def round_means(self, side: str) -> dict[int, float]:
        """Per round, the mean of this side's logs in it (one run a round in a sweep)."""
        values = self.base if side == "base" else self.new
        by_round: dict[int, list[float]] = defaultdict(list)
        for value, rnd in zip(values, self.rounds_of(side)):
            by_round[rnd].append(value)
        return {rnd: float(np.mean(vs)) for rnd, vs in by_round.items()}

    def paired_diffs(self) -> dict[int, float]:
        """Per round present on both sides, log new - log base, by round."""
        b, n = self.round_means("base"), self.round_means("new")
        return {rnd: n[rnd] - b[rnd] for rnd in sorted(b.keys() & n.keys())}

    @property
    def paired_rounds(self) -> int:
        return len(self.paired_diffs())

    def is_gated(self, paired: bool) -> bool:
        return self.paired_rounds >= MIN_RUNS if paired else self.gated

    def estimate(self, paired: bool) -> float:
        """The point's log ratio: the mean of the per-round log ratios (paired), else the
        difference of the sides' means (a ratio of geometric means)."""
        if paired:
            ds = list(self.paired_diffs().values())
            return float(np.mean(ds)) if ds else self.log_ratio
        return self.log_ratio


@dataclass(frozen=True)
class Pooled:
    """The comparison's typical run-to-run spread (log sd) and its degrees of freedom."""

    sd: float
    df: int


@dataclass(frozen=True)
class PointVerdict:
    log_ratio: float
    se: float | None  # of log_ratio, with the pooled floor; None without a verdict
    ci: tuple[float, float] | None  # 95% CI of the ratio, from the same se and df
    bound: float | None  # the simultaneous bound on the ratio the verdict compares to the margin
    verdict: str
    detectable: float | None = None  # the ratio at which the bound just reaches the margin (detectable_ratio)
    df: float | None = None  # the degrees of freedom of se (inf: a normal quantile)
    q: float | None = None  # the simultaneous quantile the bound used


@dataclass(frozen=True)
class GlobalVerdict:
    points: int
    ratio: float | None  # geometric mean of the points' ratios
    ci: tuple[float, float] | None
    regression: bool
    rounds: int | None = None  # the clusters (rounds) behind the CI; None: not clustered
    df: float | None = None
    paired: bool = False


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
    found = pooled(samples)
    return found.sd if found else None


def pooled(samples: Sequence[Sample], *, paired: bool = False) -> Pooled | None:
    """The pooled spread of the gated points and its degrees of freedom: separate sweeps, the
    root mean of each point's two-side pooled variance (df: every run less one a side);
    paired, the root mean of the variances of the per-round log ratios (df: rounds less one
    a point)."""
    vs: list[float] = []
    df = 0
    for s in samples:
        if not s.is_gated(paired):
            continue
        if paired:
            ds = list(s.paired_diffs().values())
            vs.append(_var(ds))
            df += len(ds) - 1
        else:
            nb, nn = len(s.base), len(s.new)
            vs.append(((nb - 1) * _var(s.base) + (nn - 1) * _var(s.new)) / (nb + nn - 2))
            df += nb + nn - 2
    return Pooled(math.sqrt(float(np.mean(vs))), df) if vs else None


def _welch_df(parts: Sequence[tuple[float, float]]) -> float:
    """Welch-Satterthwaite: the degrees of freedom of a sum of independent variance estimates
    (variance, df); inf where the sum is zero."""
    total = sum(v for v, _ in parts)
    if total <= 0:
        return math.inf
    denom = sum(v * v / d for v, d in parts if v > 0)
    return total * total / denom if denom > 0 else math.inf


# A spread counts as a point's own only when it is above the pooled one by more than rounding
# (a point whose runs are the pool's, shifted, must not flip between the two).
OWN_ABOVE = 1 + 1e-9


def point_error(sample: Sample, pool: Pooled, *, paired: bool = False) -> tuple[float, float]:
    """A gated point's standard error and its degrees of freedom. Each spread (a side's, or
    the per-round log ratios' when paired) is the larger of its own and the pooled one; its
    degrees of freedom are its own runs' (n - 1) or the pooled spread's."""
    floor = pool.sd * pool.sd * OWN_ABOVE
    if paired:
        ds = list(sample.paired_diffs().values())
        v, n = _var(ds), len(ds)
        if v > floor:
            return math.sqrt(v / n), float(n - 1)
        return pool.sd / math.sqrt(n), float(pool.df)
    own: list[tuple[float, float]] = []
    from_pool = 0.0
    for xs in (sample.base, sample.new):
        v, n = _var(xs), len(xs)
        if v > floor:
            own.append((v / n, float(n - 1)))
        else:
            from_pool += pool.sd * pool.sd / n  # both sides' pooled parts rest on the one pooled estimate
    parts = own + ([(from_pool, float(pool.df))] if from_pool > 0 else [])
    se = math.sqrt(sum(v for v, _ in parts))
    return se, (_welch_df(parts) if own else float(pool.df))


def point_se(sample: Sample, pooled_sd: float) -> float:
    """The standard error of a point of separate sweeps with the pooled floor (point_error's
    without its degrees of freedom)."""
    return point_error(sample, Pooled(pooled_sd, 10**9))[0]


def quantile(points: int, df: float, alpha: float = FAMILY_ALPHA) -> float:
    """The one-sided quantile at 1 - alpha/points: Student's t with df degrees of freedom
    (normal for df inf)."""
    level = 1 - alpha / max(1, points)
    return float(sps.norm.ppf(level)) if math.isinf(df) else float(sps.t.ppf(level, df))


def bonferroni_z(points: int, alpha: float = FAMILY_ALPHA) -> float:
    """The one-sided normal quantile at 1 - alpha/points."""
    return quantile(points, math.inf, alpha)


@functools.cache
def z95() -> float:
    """The two-sided normal quantile at CONFIDENCE."""
    return float(sps.norm.ppf(0.5 + CONFIDENCE / 2))


def _two_sided(df: float) -> float:
    return z95() if math.isinf(df) else float(sps.t.ppf(0.5 + CONFIDENCE / 2, df))


def judge_point(sample: Sample, pool: Pooled | None, points: int, *, margin_pct: float,
                higher_is_better: bool, alpha: float = FAMILY_ALPHA, paired: bool = False) -> PointVerdict:
    """One point's verdict among `points` gated points (the Bonferroni K)."""
    d = sample.estimate(paired)
    if not sample.is_gated(paired) or pool is None:
        return PointVerdict(d, None, None, None, NO_VERDICT)
    se, df = point_error(sample, pool, paired=paired)
    q = quantile(points, df, alpha)
    limit = margin_limit(margin_pct, higher_is_better)
    half = _two_sided(df) * se
    ci = (math.exp(d - half), math.exp(d + half))
    if higher_is_better:
        worst, best = d + q * se, d - q * se  # the bound nearest to "no loss", and its mirror
        verdict = REGRESSION if worst < limit else IMPROVEMENT if best > -limit else OK
    else:
        worst, best = d - q * se, d + q * se
        verdict = REGRESSION if worst > limit else IMPROVEMENT if best < -limit else OK
    detectable = detectable_ratio(se, q, margin_pct=margin_pct, higher_is_better=higher_is_better)
    return PointVerdict(d, se, ci, math.exp(worst), verdict, detectable, df, q)


def _cluster_variance(rows: Sequence[tuple[Sequence[float], Sequence[int]]]) -> tuple[float, int] | None:
    """The variance of the mean over K points of each point's mean, clustered by round: per
    round r, c_r = sum over the points with a value in r of (value - point mean) / (n * K);
    the variance is R/(R-1) * sum c_r^2 over the R rounds (with one value a point per round,
    the variance of the R per-round means over the points, divided by R). None below 2 rounds."""
    k = len(rows)
    contrib: dict[int, float] = defaultdict(float)
    for values, rounds in rows:
        m, n = float(np.mean(values)), len(values)
        for value, rnd in zip(values, rounds):
            contrib[rnd] += (value - m) / (n * k)
    r = len(contrib)
    if r < 2:
        return None
    return r / (r - 1) * sum(c * c for c in contrib.values()), r


def judge_global_unclustered(samples: Sequence[Sample], ses: Sequence[float], *, margin_pct: float,
                             higher_is_better: bool) -> GlobalVerdict:
    """The geometric mean ratio with a t interval over the points, its spread at least what
    the points' own noise gives. It ignores the round effect (runs of one round share it), so
    it is too narrow where there is one: compare uses judge_global; this one is kept for the
    simulation that shows the difference, and for files whose runs have one round."""
    ds = [s.log_ratio for s in samples]
    k = len(ds)
    if k == 0:
        return GlobalVerdict(0, None, None, False)
    mean = float(np.mean(ds))
    noise = math.sqrt(float(np.mean(np.square(ses)))) / math.sqrt(k) if ses else 0.0
    spread = float(np.std(ds, ddof=1)) / math.sqrt(k) if k > 1 else 0.0
    se = max(noise, spread)
    t = float(sps.t.ppf(0.5 + CONFIDENCE / 2, k - 1)) if k > 1 else z95()
    low, high = mean - t * se, mean + t * se
    limit = margin_limit(margin_pct, higher_is_better)
    regression = high < limit if higher_is_better else low > limit
    return GlobalVerdict(k, math.exp(mean), (math.exp(low), math.exp(high)), regression)


def judge_global(samples: Sequence[Sample], ses: Sequence[float] = (), *, margin_pct: float,
                 higher_is_better: bool, paired: bool = False) -> GlobalVerdict:
    """The geometric mean ratio of the gated points with a 95% CI clustered by round.

    Paired: the mean over points of each point's mean log ratio, its variance from the
    per-round log ratios (_cluster_variance), t at rounds - 1 df. Separate sweeps: the
    difference of the two sides' means over points, each side's variance clustered by its own
    rounds, t at the Welch-Satterthwaite df of the two (rounds - 1 each). Where a side has
    fewer than 2 rounds, the unclustered interval (judge_global_unclustered, with `ses`)."""
    k = len(samples)
    if k == 0:
        return GlobalVerdict(0, None, None, False, paired=paired)
    mean = float(np.mean([s.estimate(paired) for s in samples]))
    if paired:
        rows = []
        for s in samples:
            diffs = s.paired_diffs()
            rows.append((list(diffs.values()), list(diffs.keys())))
        found = _cluster_variance(rows)
        if found is None:
            return judge_global_unclustered(samples, ses, margin_pct=margin_pct, higher_is_better=higher_is_better)
        var, rounds = found
        df = float(rounds - 1)
    else:
        sides = [_cluster_variance([(s.base, s.rounds_of("base")) for s in samples]),
                 _cluster_variance([(s.new, s.rounds_of("new")) for s in samples])]
        if sides[0] is None or sides[1] is None:
            return judge_global_unclustered(samples, ses, margin_pct=margin_pct, higher_is_better=higher_is_better)
        var = sides[0][0] + sides[1][0]
        rounds = min(sides[0][1], sides[1][1])
        df = _welch_df([(v, float(r - 1)) for v, r in sides]) if var > 0 else float(sides[0][1] + sides[1][1] - 2)
    half = _two_sided(df) * math.sqrt(var)
    low, high = mean - half, mean + half
    limit = margin_limit(margin_pct, higher_is_better)
    regression = high < limit if higher_is_better else low > limit
    return GlobalVerdict(k, math.exp(mean), (math.exp(low), math.exp(high)), regression, rounds, df, paired)


# Above this pooled spread (log sd, about the CV) the runs say more about a busy machine than
# about the code: the simulated rates in docs/verdicts.md go up to 0.066.
NOISY_LOG_SD = 0.10


@dataclass(frozen=True)
class Gate:
    points: list[PointVerdict]
    overall: GlobalVerdict
    pooled_sd: float | None = None
    paired: bool = False

    @property
    def regression(self) -> bool:
        return self.overall.regression or any(p.verdict == REGRESSION for p in self.points)


def judge(samples: Sequence[Sample], *, margin_pct: float = DEFAULT_MARGIN_PCT, higher_is_better: bool = True,
          alpha: float = FAMILY_ALPHA, paired: bool = False) -> Gate:
    """The whole comparison: a verdict per point and the global one."""
    pool = pooled(samples, paired=paired)
    gated = [s for s in samples if s.is_gated(paired)]
    verdicts = [judge_point(s, pool, len(gated), margin_pct=margin_pct, higher_is_better=higher_is_better,
                            alpha=alpha, paired=paired) for s in samples]
    ses = [v.se for v in verdicts if v.se is not None]
    overall = judge_global(gated, ses, margin_pct=margin_pct, higher_is_better=higher_is_better, paired=paired)
    return Gate(verdicts, overall, pool.sd if pool else None, paired)


# ---------------------------------------------------------------- the rule, vectorized

# How the vectorized rule draws its global interval: clustered by round (the rule), or over
# the points as before rounds were accounted for (to show what that costs).
CLUSTERED, UNCLUSTERED = "clustered", "unclustered"


def _t(level: float, df: np.ndarray | float) -> np.ndarray:
    return np.asarray(sps.t.ppf(level, df), dtype=float)


def judge_many_parts(base: np.ndarray, new: np.ndarray, *, margin_pct: float = DEFAULT_MARGIN_PCT,
                     alpha: float = FAMILY_ALPHA, paired: bool = False,
                     interval: str = CLUSTERED) -> tuple[np.ndarray, np.ndarray]:
    """The rule of `judge` (throughput's direction), vectorized over many comparisons of equal
    shape: base and new are (comparisons, points, rounds) logs, one run a point per round,
    rounds >= MIN_RUNS. Returns, per comparison, whether a point regressed and whether the
    geometric mean did. tests/python/test_gate.py checks it against `judge`."""
    c, k, r = base.shape
    limit = margin_limit(margin_pct, True)
    level = 1 - alpha / k
    if paired:
        dr = new - base
        d = dr.mean(axis=2)
        v = dr.var(axis=2, ddof=1)
        floor = v.mean(axis=1, keepdims=True)
        own = v > floor * OWN_ABOVE
        se = np.sqrt(np.where(own, v, floor) / r)
        df = np.where(own, r - 1, k * (r - 1))
        point = (d + _t(level, df) * se < limit).any(axis=1)
        u = dr.mean(axis=1)  # (comparisons, rounds): the per-round mean log ratio
        mean = u.mean(axis=1)
        gse = u.std(axis=1, ddof=1) / math.sqrt(r)
        overall = mean + float(sps.t.ppf(0.5 + CONFIDENCE / 2, r - 1)) * gse < limit
        return point, overall
    vb, vn = base.var(axis=2, ddof=1), new.var(axis=2, ddof=1)
    floor = ((vb + vn) / 2).mean(axis=1, keepdims=True)
    pooled_df = k * (2 * r - 2)
    ob, on = vb > floor * OWN_ABOVE, vn > floor * OWN_ABOVE
    cb, cn = np.where(ob, vb, floor) / r, np.where(on, vn, floor) / r
    pool_part = np.where(ob, 0.0, cb) + np.where(on, 0.0, cn)
    own_b, own_n = np.where(ob, cb, 0.0), np.where(on, cn, 0.0)
    total = cb + cn
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = own_b**2 / (r - 1) + own_n**2 / (r - 1) + pool_part**2 / pooled_df
        df = np.where(ob | on, total**2 / denom, pooled_df)
    se = np.sqrt(total)
    d = new.mean(axis=2) - base.mean(axis=2)
    point = (d + _t(level, df) * se < limit).any(axis=1)
    mean = d.mean(axis=1)
    if interval == UNCLUSTERED:
        noise = np.sqrt((se**2).mean(axis=1)) / math.sqrt(k)
        spread = d.std(axis=1, ddof=1) / math.sqrt(k) if k > 1 else np.zeros(c)
        t = float(sps.t.ppf(0.5 + CONFIDENCE / 2, k - 1)) if k > 1 else z95()
        return point, mean + t * np.maximum(noise, spread) < limit
    # Each side: the per-round means of the points' residuals, their variance over R rounds.
    ub = (base - base.mean(axis=2, keepdims=True)).mean(axis=1)
    un = (new - new.mean(axis=2, keepdims=True)).mean(axis=1)
    varb, varn = ub.var(axis=1, ddof=1) / r, un.var(axis=1, ddof=1) / r
    with np.errstate(divide="ignore", invalid="ignore"):
        gdf = (varb + varn) ** 2 / (varb**2 / (r - 1) + varn**2 / (r - 1))
    gdf = np.where(np.isfinite(gdf), gdf, 2 * r - 2)
    overall = mean + _t(0.5 + CONFIDENCE / 2, gdf) * np.sqrt(varb + varn) < limit
    return point, overall


def judge_many(base: np.ndarray, new: np.ndarray, *, margin_pct: float = DEFAULT_MARGIN_PCT,
               alpha: float = FAMILY_ALPHA, paired: bool = False) -> np.ndarray:
    """Whether each of many comparisons fails (judge_many_parts: a point or the geometric mean)."""
    point, overall = judge_many_parts(base, new, margin_pct=margin_pct, alpha=alpha, paired=paired)
    return point | overall


# ---------------------------------------------------------------- the simulation

# The CVs of this machine's points: the reference data's median (0.04) and 90th percentile
# (0.066), and a mix of them (MIXED: lognormal over the points with that median and 90th
# percentile, one value a point at its quantile).
MEDIAN_CV, P90_CV = 0.04, 0.066
MIXED = "mixed"
# The four A/A pairs of quick sweeps measured on this machine (docs/verdicts.md) differ as a
# whole by these ratios; the spread of their logs is the drift a separate sweep has.
AA_PAIR_RATIOS = (0.970, 1.008, 1.007, 0.937)
DRIFT_SD = float(np.std(np.log(AA_PAIR_RATIOS), ddof=1))


def mixed_cvs(points: int) -> np.ndarray:
    """Per-point log sds of the MIXED model: the lognormal with median MEDIAN_CV and 90th
    percentile P90_CV, at the points' evenly spaced quantiles (sorted, quietest first)."""
    shape = math.log(P90_CV / MEDIAN_CV) / float(sps.norm.ppf(0.9))
    z = sps.norm.ppf((np.arange(points) + 0.5) / points)
    return np.exp(math.log(MEDIAN_CV) + shape * z)


def point_sds(points: int, log_sd: float | str | Sequence[float]) -> np.ndarray:
    if isinstance(log_sd, str):
        if log_sd != MIXED:
            raise ValueError(f"log_sd: a number, per-point numbers or {MIXED!r}")
        return mixed_cvs(points)
    return np.broadcast_to(np.asarray(log_sd, dtype=float), (points,)).copy()


@dataclass(frozen=True)
class Model:
    """log value = point mean + drift + round effect + within-point noise.

    log_sd: the within-point noise (one value, per point, or MIXED); round_share: the round
    effect's variance as a share of the median point's within-point variance (one draw per
    side and round, shared by all points of that side's round); drift: the new side's shift
    against the base's (log ratio; for separate sweeps it is a change of the machine between
    the two sweeps, for paired rounds it is common to both sides and cancels), or drift_sd: a
    drift drawn per comparison from a normal with that sd; effect: the new build's true change
    (log ratio, one value or per point)."""

    points: int
    rounds: int = RECOMMENDED_RUNS
    log_sd: float | str | Sequence[float] = MIXED
    round_share: float = 0.0
    drift: float = 0.0
    drift_sd: float = 0.0
    effect: float | Sequence[float] = 0.0

    def draw(self, rng: np.random.Generator, comparisons: int, *, paired: bool) -> tuple[np.ndarray, np.ndarray]:
        k, r = self.points, self.rounds
        sd = point_sds(k, self.log_sd)[None, :, None]
        shift = np.broadcast_to(np.asarray(self.effect, dtype=float), (k,))[None, :, None]
        round_sd = math.sqrt(self.round_share) * float(np.median(sd))
        drift = self.drift + self.drift_sd * rng.normal(0.0, 1.0, (comparisons, 1, 1))
        base = rng.normal(0.0, 1.0, (comparisons, k, r)) * sd + rng.normal(0.0, round_sd, (comparisons, 1, r))
        new = rng.normal(0.0, 1.0, (comparisons, k, r)) * sd + rng.normal(0.0, round_sd, (comparisons, 1, r)) + shift
        if paired:  # the machine's drift is the same for both builds of a round: it cancels
            base = base + drift
        return base, new + drift


def simulate_parts(model: Model, *, comparisons: int, seed: int, paired: bool = False,
                   margin_pct: float = DEFAULT_MARGIN_PCT, interval: str = CLUSTERED,
                   chunk: int = 1000) -> tuple[float, float, float]:
    """The fractions of simulated comparisons in which a point regressed, the geometric mean
    did, and either (the gate failed)."""
    rng = np.random.default_rng(seed)
    counts = np.zeros(3)
    done = 0
    while done < comparisons:
        n = min(chunk, comparisons - done)
        base, new = model.draw(rng, n, paired=paired)
        point, overall = judge_many_parts(base, new, margin_pct=margin_pct, paired=paired, interval=interval)
        counts += (point.sum(), overall.sum(), (point | overall).sum())
        done += n
    return tuple(float(x) for x in counts / comparisons)  # type: ignore[return-value]


def simulate(*, points: int, runs: int, log_sd: float | str | Sequence[float], effect: Sequence[float] | float = 0.0,
             comparisons: int, seed: int, margin_pct: float = DEFAULT_MARGIN_PCT, round_share: float = 0.0,
             drift: float = 0.0, drift_sd: float = 0.0, paired: bool = False) -> float:
    """The fraction of `comparisons` simulated comparisons the gate fails (Model: normal log
    values with spread `log_sd`, the new side shifted by `effect`, log 0.9 for a 10% loss, per
    point or for all; `drift` a log ratio, log 0.97 for the new sweep 3% slower)."""
    model = Model(points=points, rounds=runs, log_sd=log_sd, round_share=round_share, drift=drift,
                  drift_sd=drift_sd, effect=effect)
    return simulate_parts(model, comparisons=comparisons, seed=seed, paired=paired, margin_pct=margin_pct)[2]


def one_point_loss(points: int, loss: float = 0.2, at: int | None = None) -> list[float]:
    """A loss on one point (log ratio per point): the noisiest decile's first point by default
    (for MIXED, the one at its 90th percentile CV; for one CV any point is alike)."""
    effect = [0.0] * points
    effect[int(0.9 * points) if at is None else at] = math.log(1 - loss)
    return effect


def rates_table(*, runs: Sequence[int] = (RECOMMENDED_RUNS,), comparisons: int = 4000, seed: int = 1) -> str:
    """Separate sweeps without round effects or drift, as a Markdown table: a row per (runs a
    side, points, CV)."""
    rows = ["| runs a side | points | CV (log sd) | no change: fails | 3% drift: fails "
            "| 10% loss everywhere: caught | 20% loss on one point: caught |", "|--:|--:|--:|--:|--:|--:|--:|"]
    for n in runs:
        for points in (36, 108):
            for sd in (0.02, MEDIAN_CV, P90_CV):
                cells = [simulate(points=points, runs=n, log_sd=sd, comparisons=comparisons, seed=seed + i, **kw)
                         for i, kw in enumerate(({}, {"drift": math.log(0.97)}, {"effect": math.log(0.9)},
                                                 {"effect": one_point_loss(points)}))]
                rows.append(f"| {n} | {points} | {sd:.3f} | " + " | ".join(f"{c:.1%}" for c in cells) + " |")
    return "\n".join(rows) + "\n"


DRIFTS = (0.0, 0.03, 0.055, 0.06)
ROUND_SHARES = (0.04, 0.20)


def _pct(x: float) -> str:
    return f"{x:.1%}"


def drift_table(*, comparisons: int = 4000, seed: int = 11, rounds: int = RECOMMENDED_RUNS) -> str:
    """False alarms with no change, MIXED CVs, 7 rounds: separate sweeps conditional on the
    drift between them (the new sweep slower by each of DRIFTS) and with a drift drawn from
    the A/A pairs' spread (DRIFT_SD); paired rounds with a 6% drift common to both sides."""
    head = ("| points | round effect (share of variance) | separate: drift 0% | 3% | 5.5% | 6% "
            f"| drift sd {DRIFT_SD:.3f} | paired A/B: 6% common drift |")
    rows = [head, "|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for points in (36, 108):
        for share in ROUND_SHARES:
            cells = []
            for i, drift in enumerate(DRIFTS):
                m = Model(points=points, rounds=rounds, round_share=share, drift=math.log(1 - drift))
                cells.append(simulate_parts(m, comparisons=comparisons, seed=seed + i)[2])
            m = Model(points=points, rounds=rounds, round_share=share, drift_sd=DRIFT_SD)
            cells.append(simulate_parts(m, comparisons=comparisons, seed=seed + 7)[2])
            m = Model(points=points, rounds=rounds, round_share=share, drift=math.log(0.94))
            cells.append(simulate_parts(m, comparisons=comparisons, seed=seed + 8, paired=True)[2])
            rows.append(f"| {points} | {share:.0%} | " + " | ".join(_pct(c) for c in cells) + " |")
    return "\n".join(rows) + "\n"


def margin_table(*, comparisons: int = 4000, seed: int = 21, rounds: int = RECOMMENDED_RUNS) -> str:
    """Every point truly at the margin (ratio 0.95), MIXED CVs, 7 rounds: how often the
    geometric mean's interval says "beyond" (nominal 2.5%, one side of a 95% CI), clustered
    by round and, for separate sweeps, unclustered as before; and the whole gate."""
    rows = ["| points | round effect | separate: geometric mean, unclustered | clustered | whole gate "
            "| paired: geometric mean | whole gate |", "|--:|--:|--:|--:|--:|--:|--:|"]
    at = math.log(1 - DEFAULT_MARGIN_PCT / 100)
    for points in (36, 108):
        for share in ROUND_SHARES:
            m = Model(points=points, rounds=rounds, round_share=share, effect=at)
            old = simulate_parts(m, comparisons=comparisons, seed=seed, interval=UNCLUSTERED)
            new = simulate_parts(m, comparisons=comparisons, seed=seed)
            pair = simulate_parts(m, comparisons=comparisons, seed=seed + 1, paired=True)
            cells = [old[1], new[1], new[2], pair[1], pair[2]]
            rows.append(f"| {points} | {share:.0%} | " + " | ".join(_pct(c) for c in cells) + " |")
    return "\n".join(rows) + "\n"


def power_table(*, comparisons: int = 4000, seed: int = 31, rounds: int = RECOMMENDED_RUNS) -> str:
    """How often a real loss is caught, 7 rounds, no drift: a 10% loss on every point, a 20%
    loss on one point (for MIXED, a point at the 90th percentile CV), separate and paired."""
    rows = ["| CV | points | round effect | separate: 10% everywhere | 20% on one point "
            "| paired: 10% everywhere | 20% on one point |", "|:--|--:|--:|--:|--:|--:|--:|"]
    for sd in (MIXED, MEDIAN_CV, P90_CV):
        for points in (36, 108):
            for share in ROUND_SHARES:
                cells = []
                for paired in (False, True):
                    for i, effect in enumerate((math.log(0.9), one_point_loss(points))):
                        m = Model(points=points, rounds=rounds, log_sd=sd, round_share=share, effect=effect)
                        cells.append(simulate_parts(m, comparisons=comparisons, seed=seed + i, paired=paired)[2])
                name = "mixed" if sd == MIXED else f"{sd:.3f}"
                rows.append(f"| {name} | {points} | {share:.0%} | " + " | ".join(_pct(c) for c in cells) + " |")
    return "\n".join(rows) + "\n"


def more_rounds_table(*, comparisons: int = 4000, seed: int = 32, share: float = 0.20,
                      rounds: Sequence[int] = (7, 9, 10, 12)) -> str:
    """A 20% loss on one point (mixed CVs: a point at the 90th-percentile CV), round effects
    at `share`: how often it is caught at more rounds, separate and paired."""
    rows = ["| rounds (runs a side) | points | separate: caught | paired: caught |", "|--:|--:|--:|--:|"]
    for r in rounds:
        for points in (36, 108):
            m = Model(points=points, rounds=r, round_share=share, effect=one_point_loss(points))
            cells = [simulate_parts(m, comparisons=comparisons, seed=seed, paired=p)[2] for p in (False, True)]
            rows.append(f"| {r} | {points} | " + " | ".join(_pct(c) for c in cells) + " |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    import sys

    args = sys.argv[1:]
    print(f"margin {DEFAULT_MARGIN_PCT:g}%, family alpha {FAMILY_ALPHA:g}; 4000 simulated comparisons a cell")
    if args and args[0] == "rounds":
        print("\nNo change (false alarms), mixed CVs (median 0.04, 90th percentile 0.066), 7 rounds:\n")
        sys.stdout.write(drift_table())
        print("\nEvery point at the margin (0.95), mixed CVs, 7 rounds:\n")
        sys.stdout.write(margin_table())
        print("\nPower, no drift, 7 rounds:\n")
        sys.stdout.write(power_table())
        print("\nA 20% loss on one point at the noisiest decile's CV (mixed), round effects at 20%:\n")
        sys.stdout.write(more_rounds_table())
    else:
        ns = [int(a) for a in args] or [RECOMMENDED_RUNS]
        print(f"separate sweeps, no round effect, no drift; runs a side {', '.join(map(str, ns))}")
        sys.stdout.write(rates_table(runs=ns))
