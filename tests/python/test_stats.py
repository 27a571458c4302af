"""iocpbench_analysis.stats against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from iocpbench_analysis import stats


def test_median_and_mean_of_known_lists() -> None:
    assert stats.median([3.0, 1.0, 2.0]) == 2.0
    assert stats.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert stats.mean([1.0, 2.0, 3.0, 4.0]) == 2.5
    assert stats.median([]) is None and stats.mean([]) is None


def test_t_interval_of_one_to_five() -> None:
    # mean 3, sd sqrt(2.5), sem sqrt(0.5), t(0.975, 4) = 2.7764451
    low, high = stats.ci95([1.0, 2.0, 3.0, 4.0, 5.0])  # type: ignore[misc]
    half = 2.7764451 * math.sqrt(0.5)
    assert low == pytest.approx(3 - half, rel=1e-6)
    assert high == pytest.approx(3 + half, rel=1e-6)


@pytest.mark.parametrize("xs", [[10.0, 11.0], [5.0, 5.5, 6.0, 9.0], [100.0, 101.0, 99.0, 100.5, 98.0]])
def test_ci_contains_the_mean(xs: list[float]) -> None:
    low, high = stats.ci95(xs)  # type: ignore[misc]
    assert low <= stats.mean(xs) <= high  # type: ignore[operator]


def test_cv() -> None:
    assert stats.cv([1.0, 2.0, 3.0, 4.0, 5.0]) == pytest.approx(math.sqrt(2.5) / 3)
    assert stats.cv([1.0]) is None
    assert stats.cv([0.0, 0.0]) is None


def test_summarize_skips_missing_and_nan_values() -> None:
    s = stats.summarize([1.0, None, float("nan"), 3.0, "x", True])
    assert s.n == 2 and s.median == 2.0 and s.mean == 2.0
    one = stats.summarize([7.0])
    assert one.n == 1 and one.median == 7.0 and one.ci95_low is None and one.cv is None
    assert set(one.as_dict()) == {"median", "mean", "ci95_low", "ci95_high", "cv", "n"}


def test_permutation_p_identical_samples_is_one() -> None:
    xs = [10.0, 11.0, 12.0, 13.0, 14.0]
    assert stats.permutation_p(xs, list(xs)) == pytest.approx(1.0)
    assert stats.permutation_p([5.0] * 5, [5.0] * 5) == 1.0


def test_permutation_p_clearly_different_samples() -> None:
    a = [100.0, 101.0, 102.0, 99.0, 100.5]
    b = [70.0, 71.0, 69.0, 70.5, 72.0]
    p = stats.permutation_p(a, b)
    # Complete separation of 5 vs 5: the exact two-sided p is 2 / C(10, 5).
    assert p == pytest.approx(2 / 252)
    assert stats.permutation_p([], b) is None and stats.permutation_p([1.0], b) is None


def test_permutation_p_is_exact_with_ties() -> None:
    # Histogram bucket midpoints tie. Enumerated by hand: of the 252 splits of these ten
    # values, those whose difference of means is at least |observed| in either direction.
    import itertools

    a, b = [50.0, 50.0, 50.0, 60.0, 60.0], [60.0, 60.0, 70.0, 70.0, 70.0]
    pooled = a + b
    obs = abs(sum(a) / 5 - sum(b) / 5)
    hits = 0
    for idx in itertools.combinations(range(10), 5):
        x = [pooled[i] for i in idx]
        y = [pooled[i] for i in range(10) if i not in idx]
        hits += abs(sum(x) / 5 - sum(y) / 5) >= obs - 1e-9
    assert stats.permutation_p(a, b) == pytest.approx(hits / 252)


def test_geomean_ratio_ci() -> None:
    base = [100.0, 102.0, 98.0, 101.0, 99.0]
    ratio, ci = stats.geomean_ratio_ci(base, [x * 0.7 for x in base])  # type: ignore[misc]
    assert ratio == pytest.approx(0.7) and ci is not None and ci[0] <= 0.7 <= ci[1]
    assert stats.geomean_ratio_ci([1.0], [2.0]) == (2.0, None)
    assert stats.geomean_ratio_ci([0.0, 1.0], [2.0, 3.0]) is None  # no log of 0


def test_bootstrap_median_ci_within_the_range_and_reproducible() -> None:
    xs = [10.0, 11.0, 9.0, 10.5, 30.0]
    ci = stats.bootstrap_median_ci(xs, seed=3)
    assert ci is not None and min(xs) <= ci[0] <= stats.median(xs) <= ci[1] <= max(xs)  # type: ignore[operator]
    assert ci == stats.bootstrap_median_ci(xs, seed=3)
    assert stats.bootstrap_median_ci([1.0]) is None


def test_min_attainable_p() -> None:
    assert stats.min_attainable_p(3, 3) == pytest.approx(0.1)
    assert stats.min_attainable_p(5, 5) == pytest.approx(2 / 252)
    assert stats.min_attainable_p(0, 5) == 1.0


def test_bootstrap_ratio_ci_contains_the_true_ratio_and_is_reproducible() -> None:
    base = [100.0, 102.0, 98.0, 101.0, 99.0]
    new = [x * 0.7 for x in base]
    ci = stats.bootstrap_ratio_ci(base, new, seed=1)
    assert ci is not None and ci[0] <= 0.7 <= ci[1]
    assert ci == stats.bootstrap_ratio_ci(base, new, seed=1)
    assert stats.bootstrap_ratio_ci([1.0], new) is None


def test_ratio_ci_from_summaries() -> None:
    assert stats.ratio_ci_from_summaries(90.0, 110.0, 45.0, 55.0) == pytest.approx((45 / 110, 55 / 90))
    assert stats.ratio_ci_from_summaries(None, 110.0, 45.0, 55.0) is None
    assert stats.ratio_ci_from_summaries(0.0, 110.0, 45.0, 55.0) is None
