"""The gate with round effects and drift (docs/verdicts.md, "Rounds and drift" and "Paired A/B
in one run"), by a seeded simulation (gate.Model), and the paired and clustered rules by hand.

The model: log value = point mean + drift + round effect + within-point noise. The noise is
MIXED (per point, lognormal with this machine's median CV 0.04 and 90th percentile 0.066); a
round effect is drawn per side and round and shared by all points of that round, with a
variance of 4-20% of the within-point variance (what this machine's sweeps show); the drift is
per side for separate sweeps and common to both builds in a paired A/B session. 7 rounds.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from iocpbench_analysis import gate

TRIALS = 2000
MARGIN = math.log(1 - gate.DEFAULT_MARGIN_PCT / 100)


def rates(model: gate.Model, seed: int, **kw: object) -> tuple[float, float, float]:
    """(a point regressed, the geometric mean did, either) over TRIALS comparisons."""
    return gate.simulate_parts(model, comparisons=TRIALS, seed=seed, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("points", [36, 108])
def test_paired_ab_does_not_see_a_common_drift(points: int) -> None:
    """No change, the machine 6% slower for both builds, round effects at 20%: the paired gate
    fails at most 5% of comparisons (docs: 0.0-0.2%); the same drift between two separate
    sweeps fails far more often."""
    start = time.monotonic()
    drift = gate.Model(points=points, round_share=0.20, drift=math.log(0.94))
    paired = rates(drift, seed=1, paired=True)[2]
    separate = rates(drift, seed=1)[2]
    assert paired <= 0.05, f"paired false alarms {paired:.3f}"
    assert separate > 0.10 and separate > 10 * max(paired, 0.001), f"separate {separate:.3f}, paired {paired:.3f}"
    assert time.monotonic() - start < 20


@pytest.mark.parametrize("points", [36, 108])
def test_the_clustered_interval_is_near_nominal_at_the_margin(points: int) -> None:
    """Every point truly at 0.95, round effects at 20%: the geometric mean's 95% CI lies wholly
    below 0.95 in about 2.5% of comparisons when it clusters by round (separate and paired),
    and far more often with the interval over the points that ignores the rounds."""
    start = time.monotonic()
    at_margin = gate.Model(points=points, round_share=0.20, effect=MARGIN)
    clustered = rates(at_margin, seed=2)[1]
    unclustered = rates(at_margin, seed=2, interval=gate.UNCLUSTERED)[1]
    paired = rates(at_margin, seed=3, paired=True)[1]
    assert clustered <= 0.05 and paired <= 0.05, (clustered, paired)
    assert 0.01 <= clustered and 0.01 <= paired  # near 2.5%, not merely conservative
    assert unclustered > 0.05 and unclustered > 2 * clustered, (unclustered, clustered)
    assert time.monotonic() - start < 20


@pytest.mark.parametrize("points", [36, 108])
def test_paired_ab_catches_ten_percent_everywhere(points: int) -> None:
    start = time.monotonic()
    loss = gate.Model(points=points, round_share=0.20, drift=math.log(0.94), effect=math.log(0.9))
    caught = rates(loss, seed=4, paired=True)[2]
    assert caught >= 0.90, f"paired: 10% everywhere caught {caught:.3f}"
    assert time.monotonic() - start < 20


def test_separate_sweeps_conditional_on_the_drift() -> None:
    """No change between two separate sweeps: a 3% drift passes, a drift beyond the margin
    does not; the A/A pairs' spread of drifts stays under 5% (docs: 2.6-4.2%)."""
    start = time.monotonic()
    three = rates(gate.Model(points=36, round_share=0.04, drift=math.log(0.97)), seed=5)[2]
    spread = rates(gate.Model(points=36, round_share=0.04, drift_sd=gate.DRIFT_SD), seed=6)[2]
    six = rates(gate.Model(points=36, round_share=0.04, drift=math.log(0.94)), seed=7)[2]
    assert three <= 0.01 and spread <= 0.05 and six > 0.2, (three, spread, six)
    assert gate.DRIFT_SD == pytest.approx(0.0349, abs=1e-4)
    assert time.monotonic() - start < 20


def test_mixed_cvs_are_the_machines() -> None:
    cvs = gate.mixed_cvs(108)
    assert np.median(cvs) == pytest.approx(0.04, rel=0.02)
    assert np.quantile(cvs, 0.9) == pytest.approx(0.066, rel=0.03)
    assert gate.one_point_loss(108).index(math.log(0.8)) == 97  # in the noisiest decile


def test_paired_point_rule_by_hand() -> None:
    """Per round d_r = log new - log base; the estimate is mean d_r; the standard error their
    sd / sqrt(n) with t at n - 1 df (a point noisier than the pool), else the pooled sd with
    the pool's df; rounds on one side only are left out."""
    rounds = (0, 1, 2, 3, 4)
    drift = (0.0, -0.3, 0.2, -0.1, 0.25)  # the machine, common to both builds of a round
    noisy_d = (-0.10, -0.02, -0.15, -0.05, -0.08)
    quiet_d = (0.001, -0.001, 0.0, 0.002, -0.002)
    noisy = gate.Sample(drift, tuple(x + d for x, d in zip(drift, noisy_d)), rounds, rounds)
    quiet = gate.Sample(drift + (9.0,), tuple(x + d for x, d in zip(drift, quiet_d)), rounds + (5,), rounds)
    g = gate.judge([noisy, quiet], paired=True)
    assert g.paired and quiet.paired_rounds == 5  # round 5 of base has no partner
    v = g.points[0]
    assert v.log_ratio == pytest.approx(np.mean(noisy_d))
    assert v.se == pytest.approx(np.std(noisy_d, ddof=1) / math.sqrt(5)) and v.df == 4
    assert v.q == pytest.approx(gate.quantile(2, 4))
    pool = math.sqrt((np.var(noisy_d, ddof=1) + np.var(quiet_d, ddof=1)) / 2)
    assert g.points[1].se == pytest.approx(pool / math.sqrt(5)) and g.points[1].df == 8
    # Unpaired, the drift is noise: the same points are far less certain.
    assert gate.judge([noisy, quiet]).points[0].se > 5 * v.se  # type: ignore[operator]


def test_clustered_global_by_hand() -> None:
    """The geometric mean's CI from the per-round means: two points whose residuals move
    together by round have the variance of those round means over R, t at R - 1 df."""
    rounds = (0, 1, 2, 3)
    effect = (0.05, -0.05, 0.02, -0.02)  # shared by both points of a round, new side only
    base = gate.Sample((0.0,) * 4, tuple(-0.1 + e for e in effect), rounds, rounds)
    other = gate.Sample((1.0,) * 4, tuple(0.9 + e for e in effect), rounds, rounds)
    o = gate.judge_global([base, other], margin_pct=5, higher_is_better=True)
    assert o.rounds == 4 and o.df == pytest.approx(3)
    half = float(gate.sps.t.ppf(0.975, 3)) * np.std(effect, ddof=1) / 2
    assert o.ci == pytest.approx((math.exp(-0.1 - half), math.exp(-0.1 + half)))
    # The interval over the points knows nothing of the rounds: the two points agree exactly.
    flat = gate.judge_global_unclustered([base, other], [0.0, 0.0], margin_pct=5, higher_is_better=True)
    assert flat.ci == pytest.approx((math.exp(-0.1), math.exp(-0.1)))
