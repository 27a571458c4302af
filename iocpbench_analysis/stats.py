"""Small statistics over per-run values: the same summaries the harness writes, and the tests
compare and the report use: an exact permutation test (valid where values tie, as latency
bucket midpoints do), the ratio of two points' geometric means with a t interval on the log
scale, and a bootstrap CI of a median.

All functions are pure; the resampling ones take an explicit seed so reports are reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from .lazy_stats import sps

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Summary:
    """The six keys of a summary object in a results file."""

    median: float | None
    mean: float | None
    ci95_low: float | None
    ci95_high: float | None
    cv: float | None
    n: int

    def as_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


def clean(values: Sequence[object]) -> list[float]:
    """Finite numbers only: a run may lack a metric (null) or report NaN."""
    out: list[float] = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if math.isfinite(v):
            out.append(float(v))
    return out


def median(values: Sequence[float]) -> float | None:
    return float(np.median(values)) if len(values) else None


def mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def cv(values: Sequence[float]) -> float | None:
    """Coefficient of variation: sample standard deviation over the mean."""
    if len(values) < 2:
        return None
    m = float(np.mean(values))
    if m == 0:
        return None
    return float(np.std(values, ddof=1)) / abs(m)


def ci95(values: Sequence[float]) -> tuple[float, float] | None:
    """Student-t 95% confidence interval of the mean. With the 5 repetitions a sweep usually
    has, t is better behaved than a bootstrap (which can never exceed the sample's range)."""
    n = len(values)
    if n < 2:
        return None
    m = float(np.mean(values))
    sem = float(np.std(values, ddof=1)) / math.sqrt(n)
    half = float(sps.t.ppf(0.5 + CONFIDENCE / 2, n - 1)) * sem
    return (m - half, m + half)


def summarize(values: Sequence[object]) -> Summary:
    xs = clean(values)
    interval = ci95(xs)
    return Summary(
        median=median(xs),
        mean=mean(xs),
        ci95_low=interval[0] if interval else None,
        ci95_high=interval[1] if interval else None,
        cv=cv(xs),
        n=len(xs),
    )


# Up to this many splits a permutation test enumerates them all (5 runs against 5: 252;
# 8 against 8: 12,870); beyond, it draws this many at random from a fixed seed.
EXACT_PERMUTATIONS_MAX = 20_000


def permutation_p(a: Sequence[float], b: Sequence[float], *, seed: int = 0) -> float | None:
    """Two-sided permutation p-value of the difference of means.

    Exact (every split of the pooled runs) at the sizes a sweep has, so ties are handled as
    they are, unlike the U test's normal approximation, which scipy falls back to with ties.
    Two samples of one identical value have nothing to permute: p = 1. A side of one run
    gets None (scipy's test needs two)."""
    if len(a) < 2 or len(b) < 2:
        return None
    if len(set(a) | set(b)) == 1:
        return 1.0
    splits = math.comb(len(a) + len(b), len(a))
    exact = splits <= EXACT_PERMUTATIONS_MAX
    result = sps.permutation_test(
        (np.asarray(a, dtype=float), np.asarray(b, dtype=float)),
        lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        permutation_type="independent", alternative="two-sided", vectorized=True,
        n_resamples=np.inf if exact else 9_999, random_state=seed,
    )
    p = float(result.pvalue)
    return min(1.0, p) if math.isfinite(p) else 1.0


def min_attainable_p(n_a: int, n_b: int) -> float:
    """The smallest two-sided exact permutation (or U test) p-value for these sample sizes:
    complete separation. With 3 runs a side it is 0.1: nothing can reach p < 0.05."""
    if n_a == 0 or n_b == 0:
        return 1.0
    return min(1.0, 2.0 / math.comb(n_a + n_b, n_a))


def logs(values: Sequence[float]) -> list[float] | None:
    """Natural logs, or None where a value is not positive (a ratio of it means nothing)."""
    if any(v <= 0 for v in values):
        return None
    return [math.log(v) for v in values]


def log_sd(values: Sequence[float]) -> float | None:
    """Sample standard deviation of the logs (about the CV, for small CVs)."""
    lx = logs(values)
    if lx is None or len(lx) < 2:
        return None
    return float(np.std(lx, ddof=1))


def geomean_ratio_ci(
    base: Sequence[float], new: Sequence[float], *, confidence: float = CONFIDENCE
) -> tuple[float, tuple[float, float] | None] | None:
    """new/base as the ratio of geometric means, with a Welch t interval on the log scale
    (None with fewer than 2 runs a side). None when either side is empty or not positive."""
    lb, ln = logs(base), logs(new)
    if not lb or not ln:
        return None
    d = float(np.mean(ln) - np.mean(lb))
    if len(lb) < 2 or len(ln) < 2:
        return math.exp(d), None
    vb, vn = float(np.var(lb, ddof=1)) / len(lb), float(np.var(ln, ddof=1)) / len(ln)
    se = math.sqrt(vb + vn)
    if se == 0:
        return math.exp(d), (math.exp(d), math.exp(d))
    df = (vb + vn) ** 2 / ((vb**2 / (len(lb) - 1)) + (vn**2 / (len(ln) - 1))) if vb + vn > 0 else len(lb) + len(ln) - 2
    half = float(sps.t.ppf(0.5 + confidence / 2, df)) * se
    return math.exp(d), (math.exp(d - half), math.exp(d + half))


def bootstrap_median_ci(
    values: Sequence[float], *, resamples: int = 2000, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap 95% CI of the median (None with fewer than 2 values). It can
    never leave the sample's range: with 5 runs it is the honest "where the median lies"."""
    if len(values) < 2:
        return None
    rng = np.random.default_rng(seed)
    x = np.asarray(values, dtype=float)
    meds = np.median(rng.choice(x, size=(resamples, x.size), replace=True), axis=1)
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(meds, [tail, 100 - tail])
    return (float(low), float(high))


def bootstrap_ratio_ci(
    base: Sequence[float],
    new: Sequence[float],
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap 95% CI of median(new) / median(base), resampling each side
    independently (the runs of two machines are unpaired)."""
    if len(base) < 2 or len(new) < 2:
        return None
    rng = np.random.default_rng(seed)
    b = np.asarray(base, dtype=float)
    n = np.asarray(new, dtype=float)
    mb = np.median(rng.choice(b, size=(resamples, b.size), replace=True), axis=1)
    mn = np.median(rng.choice(n, size=(resamples, n.size), replace=True), axis=1)
    ok = mb != 0
    if not ok.any():
        return None
    ratios = mn[ok] / mb[ok]
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return (float(low), float(high))


def ratio_ci_from_summaries(
    base_low: float | None, base_high: float | None, new_low: float | None, new_high: float | None
) -> tuple[float, float] | None:
    """A conservative ratio interval from two CIs (used when per-run values are missing):
    the smallest new over the largest base, and the reverse."""
    if None in (base_low, base_high, new_low, new_high):
        return None
    assert base_low is not None and base_high is not None and new_low is not None and new_high is not None
    if base_low <= 0 or base_high <= 0:
        return None
    return (new_low / base_high, new_high / base_low)


def _welch_df(parts: Sequence[tuple[float, int]]) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of independent variance terms, each
    (variance of the term, runs behind it); terms of zero variance add nothing."""
    total = sum(v for v, _ in parts)
    denom = sum(v * v / (n - 1) for v, n in parts if v > 0)
    return total * total / denom if denom > 0 else float(min(n for _, n in parts) - 1)


def fieller_ratio_ci(
    base: Sequence[float], new: Sequence[float], *, confidence: float = CONFIDENCE
) -> tuple[float, tuple[float, float] | None] | None:
    """mean(new) / mean(base), the ratio of arithmetic means, with Fieller's interval for two
    independent samples (unequal variances; t with Welch-Satterthwaite degrees of freedom at the
    point estimate). None when a side is empty or base's mean is not positive; the interval is
    None with fewer than 2 runs a side, or where base's mean is not distinguishable from zero
    (Fieller's set is then unbounded). With base of zero variance it is new's t interval of the
    mean divided by base's mean: new [90, 100, 110] over base [100, 100, 100] gives 1.0, about
    [0.752, 1.248] (t = 4.303 at 2 degrees of freedom)."""
    if not base or not new:
        return None
    a, b = float(np.mean(new)), float(np.mean(base))
    if b <= 0:
        return None
    ratio = a / b
    if len(base) < 2 or len(new) < 2:
        return ratio, None
    va = float(np.var(new, ddof=1)) / len(new)
    vb = float(np.var(base, ddof=1)) / len(base)
    if va == 0 and vb == 0:
        return ratio, (ratio, ratio)
    df = _welch_df([(va, len(new)), (ratio * ratio * vb, len(base))])
    t2 = float(sps.t.ppf(0.5 + confidence / 2, df)) ** 2
    lead = b * b - t2 * vb  # the quadratic's leading coefficient: positive when b is significant
    if lead <= 0:
        return ratio, None
    disc = (a * b) ** 2 - lead * (a * a - t2 * va)
    root = math.sqrt(max(0.0, disc))
    return ratio, ((a * b - root) / lead, (a * b + root) / lead)
