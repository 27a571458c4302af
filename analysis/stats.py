"""Small statistics over per-run values: the same summaries the harness writes, and the tests
compare uses (Mann-Whitney U, as Google Benchmark's compare.py, and a bootstrap ratio CI).

All functions are pure; the bootstrap takes an explicit seed so reports are reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats as sps

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


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Two-sided Mann-Whitney U p-value; None when either side is empty.

    Two samples that are all one identical value have no ranks to compare: scipy returns NaN
    there, but "no evidence of a difference" (p = 1) is the honest answer."""
    if not a or not b:
        return None
    if len(set(a)) == 1 and set(a) == set(b):
        return 1.0
    p = float(sps.mannwhitneyu(a, b, alternative="two-sided").pvalue)
    return p if math.isfinite(p) else 1.0


def min_attainable_p(n_a: int, n_b: int) -> float:
    """The smallest two-sided exact MWU p-value for these sample sizes (complete separation).
    With 3 runs a side it is 0.1: no difference can ever be significant at 0.05."""
    if n_a == 0 or n_b == 0:
        return 1.0
    return min(1.0, 2.0 / math.comb(n_a + n_b, n_a))


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
