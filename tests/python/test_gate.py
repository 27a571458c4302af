"""The gate's error rates (docs/verdicts.md), by a seeded simulation, and the rule itself.

The simulation draws normal log values (a run's noise is about its CV on the log scale) for
gate.RECOMMENDED_RUNS (7) runs a side, the README's recommended repetitions for a gated
comparison, and counts how often a whole comparison fails (two separate sweeps, no round
effect, no drift: tests/python/test_paired_gate.py has those). The requirements: no real change
fails at most 5% of comparisons; a 10% loss on every point is caught at least 90% of the time;
a 20% loss on one point at least 80%. They are checked at the reference data's median CV (about
4%: results/reference/, the median of the points' log sd is 0.037) and at its 90th percentile
(6.6%), for the quick grid's 36 points and the default grid's 108. The single-point one does not
hold at 6.6% with 108 points at 7 runs (about 69%: a point's bound uses Student's t where it
rests on the point's own spread); it does at 9.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from iocpbench_analysis import gate

RUNS = gate.RECOMMENDED_RUNS
TRIALS = 2000


@pytest.mark.parametrize("points,sd", [(36, 0.04), (108, 0.04), (36, 0.066), (108, 0.066)])
def test_error_rates_at_the_reference_cvs(points: int, sd: float) -> None:
    start = time.monotonic()
    null = gate.simulate(points=points, runs=RUNS, log_sd=sd, comparisons=TRIALS, seed=1)
    everywhere = gate.simulate(points=points, runs=RUNS, log_sd=sd, effect=math.log(0.9), comparisons=TRIALS, seed=2)
    one = [0.0] * points
    one[points // 2] = math.log(0.8)
    single = gate.simulate(points=points, runs=RUNS, log_sd=sd, effect=one, comparisons=TRIALS, seed=3)
    assert null <= 0.05, f"false alarms {null:.3f}"
    assert everywhere >= 0.90, f"10% everywhere caught {everywhere:.3f}"
    if (points, sd) == (108, 0.066):
        # docs/verdicts.md: 68.8% at 7 runs a side; 9 runs meet the requirement.
        assert 0.60 <= single < 0.80, f"20% on one point caught {single:.3f}"
        nine = gate.simulate(points=points, runs=9, log_sd=sd, effect=one, comparisons=TRIALS, seed=3)
        assert nine >= 0.80, f"at 9 runs, 20% on one point caught {nine:.3f}"
    else:
        assert single >= 0.80, f"20% on one point caught {single:.3f}"
    assert time.monotonic() - start < 20  # the bound for this simulation


def test_why_seven_runs_a_side_and_a_drift() -> None:
    # At the sweep's default 5 runs a side, a 20% loss on one of 108 points at 6.6% CV is caught
    # well under 80% of the time: that is why the recommendation for a gated comparison is 7.
    one = [0.0] * 108
    one[54] = math.log(0.8)
    assert gate.simulate(points=108, runs=5, log_sd=0.066, effect=one, comparisons=TRIALS, seed=4) < 0.75
    # A 3% drift of the whole machine (the reference A/A pair's) is inside the margin: it passes.
    assert gate.simulate(points=36, runs=RUNS, log_sd=0.04, effect=math.log(0.97), comparisons=TRIALS, seed=6) <= 0.05


def test_too_few_runs_no_verdict_and_mixed_noise() -> None:
    rng = np.random.default_rng(7)
    # Points of very different noise (0.5% to 10% CV): the quiet ones take the pooled spread.
    sds = rng.choice([0.005, 0.02, 0.04, 0.1], size=108)
    assert gate.simulate(points=36, runs=RUNS, log_sd=sds[:36], comparisons=TRIALS, seed=8) <= 0.05
    assert gate.simulate(points=108, runs=RUNS, log_sd=sds, comparisons=TRIALS, seed=18) <= 0.05
    assert gate.simulate(points=108, runs=5, log_sd=sds, comparisons=TRIALS, seed=28) <= 0.05
    two = gate.Sample((0.0, 0.1), (-1.0, -1.1))
    assert not two.gated
    assert gate.judge([two] * 4).points[0].verdict == gate.NO_VERDICT


@pytest.mark.parametrize("paired", [False, True])
def test_vectorized_rule_is_the_rule(paired: bool) -> None:
    """judge_many_parts (used by the simulation) and judge (used by compare) agree, point by
    point and on the geometric mean, separate sweeps and paired rounds, with round effects and
    points of different noise (some on their own spread, some on the pooled floor)."""
    rng = np.random.default_rng(9)
    outcomes = []
    for _ in range(150):
        # Near the margins, so that both outcomes occur: one point 0-16% down, all 0-7% down.
        shifts = np.zeros(20)
        shifts[3] = math.log(rng.uniform(0.84, 1.0))
        sd = rng.choice([0.02, 0.04, 0.06], size=20)[None, :, None]
        rounds = rng.normal(0, 0.015, (1, 1, RUNS))
        base = rng.normal(0, 1, (1, 20, RUNS)) * sd + rounds
        new = (rng.normal(0, 1, (1, 20, RUNS)) * sd + rng.normal(0, 0.015, (1, 1, RUNS)) + shifts[None, :, None]
               + math.log(rng.uniform(0.93, 1.0)))
        point, overall = (bool(x[0]) for x in gate.judge_many_parts(base, new, paired=paired))
        one = gate.judge([gate.Sample(tuple(b), tuple(n)) for b, n in zip(base[0].tolist(), new[0].tolist())],
                         paired=paired)
        assert point == any(v.verdict == gate.REGRESSION for v in one.points)
        assert overall == one.overall.regression
        outcomes.append(point or overall)
    assert 0.1 < sum(outcomes) / len(outcomes) < 0.9  # the check saw both verdicts


def test_point_rule_by_hand() -> None:
    # Two points, both 5 runs with log sd 0.04 (pooled sd 0.04): se = 0.04 * sqrt(2/5).
    jitter = (-0.05, -0.025, 0.0, 0.025, 0.05)  # sample sd 0.0395
    flat = gate.Sample(jitter, jitter)
    hit = gate.Sample(jitter, tuple(x + math.log(0.8) for x in jitter))
    g = gate.judge([flat, hit])
    se = math.sqrt(np.var(jitter, ddof=1) * 2 / 5)
    # Both sides on the pooled spread (their own is no larger): t with its 2 x (5 + 5 - 2) df.
    q = gate.quantile(2, 16)
    assert g.points[1].df == 16 and g.points[1].q == pytest.approx(q)
    assert g.points[1].se == pytest.approx(se)
    assert g.points[1].bound == pytest.approx(0.8 * math.exp(q * se))
    assert g.points[1].verdict == gate.REGRESSION and g.points[0].verdict == gate.OK
    # Throughput up 20%: an improvement, never a failure.
    up = gate.judge([flat, gate.Sample(jitter, tuple(x + math.log(1.2) for x in jitter))])
    assert up.points[1].verdict == gate.IMPROVEMENT and not up.regression
    # Lower is better (latency): up 20% is the regression.
    lat = gate.judge([flat, gate.Sample(jitter, tuple(x + math.log(1.2) for x in jitter))], higher_is_better=False)
    assert lat.points[1].verdict == gate.REGRESSION


def reference_a_a_pair():
    """The reference A/A pair as (base, new) Results: the same build on the same machine, five
    minutes apart (results/reference/before-blocking-fix/, both at 5d1daf2)."""
    from synthetic import ROOT

    from iocpbench_analysis.load import load_results

    ref = ROOT / "results" / "reference" / "before-blocking-fix"
    return load_results(ref / "linux-2cpu-kvm.json"), load_results(ref / "linux-2cpu-kvm-auto.json")


def test_the_reference_a_a_pair_passes() -> None:
    """The reference A/A pair (results/reference/before-blocking-fix/linux-2cpu-kvm.json and
    results/reference/before-blocking-fix/linux-2cpu-kvm-auto.json, both at 5d1daf2): the same build on the same
    machine, five minutes apart. The old rule
    (p < 0.05 and 5% worse, per point) failed it with 3 "regressions" of 36; the gate passes it
    and shows the drift between the two sweeps in the geometric mean."""
    from iocpbench_analysis.compare import compare_results
    from iocpbench_analysis.metrics import METRICS

    base, new = reference_a_a_pair()
    report = compare_results(base, [new], METRICS["throughput_ops_per_s"], allow_missing=True)
    mc = report.machines[0]
    assert mc.gated_points == 36 and not mc.regressions and not report.has_failure
    assert mc.overall.ratio is not None and mc.overall.ci is not None
    assert mc.overall.ci[0] < mc.overall.ratio < mc.overall.ci[1] < 1.0  # a drift, inside the margin
    # Without --allow-missing the auto file lacks 72 of the base's 108 points: not a whole run.
    strict = compare_results(base, [new], METRICS["throughput_ops_per_s"])
    assert strict.has_failure and "72 base point(s) missing" in strict.machines[0].failures[0]


def test_losses_injected_into_the_reference_pair_are_caught() -> None:
    """Real noise, an injected change: the reference A/A pair's new side scaled by 0.9 on every
    point fails; scaled by 0.8 on one point (a few points tried) fails too."""
    import copy

    from iocpbench_analysis.compare import compare_results
    from iocpbench_analysis.load import Results
    from iocpbench_analysis.metrics import METRICS

    base, new = reference_a_a_pair()

    def scaled(factor: float, only: int | None = None) -> Results:
        data = copy.deepcopy(new.data)
        for i, p in enumerate(data["points"]):
            if only is None or i == only:
                for r in p["runs"]:
                    r["throughput_ops_per_s"] *= factor
        return Results(new.path, data)

    tp = METRICS["throughput_ops_per_s"]
    everywhere = compare_results(base, [scaled(0.9)], tp, allow_missing=True).machines[0]
    assert everywhere.overall.regression
    matched = [i for i, p in enumerate(new.points) if p["pool"]["spec"] != "auto"]
    for i in matched[::9]:
        mc = compare_results(base, [scaled(0.8, i)], tp, allow_missing=True).machines[0]
        assert [r.label for r in mc.regressions] == [new.points[i]["id"]]
