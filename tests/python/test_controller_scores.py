"""The pool controllers' scores (controllers.py) on synthetic, hand-checkable groups."""

from __future__ import annotations

import pytest
from synthetic_controllers import PROFILE, make_pool_point, make_run, step_group, timeline

from iocpbench_analysis import controllers as ctl
from iocpbench_analysis.stats import fieller_ratio_ci


def _rows(group: ctl.GroupScore) -> dict[str, ctl.Row]:
    return {r.pool: r for r in group.rows}


def test_controller_specs_are_told_from_fixed_ones() -> None:
    for spec, kind in (("auto", "auto"), ("auto:1:8", "auto"), ("hill", "hill"), ("HILL:1:8", "hill"),
                       ("formula", "formula"), ("stall:50:4N", "stall")):
        assert ctl.controller_kind(spec) == kind
    for spec in ("N", "2N", "2N+2", "4", "4N"):
        assert ctl.controller_kind(spec) is None
    assert ctl.pool_label({"pool": {"spec": "stall:50:4n", "value": 8}}) == "stall:50:4N"
    assert ctl.pool_label({"pool": "2n + 2"}) == "2N+2"


def test_fieller_ratio_of_means_on_hand_checkable_runs() -> None:
    ratio, ci = fieller_ratio_ci([100, 100, 100], [90, 100, 110])
    # base has no variance: new's t interval of the mean over 100; t(0.975, 2) = 4.3027, sem = 10/sqrt(3)
    half = 4.302653 * 10 / 3 ** 0.5 / 100
    assert ratio == pytest.approx(1.0)
    assert ci == pytest.approx((1 - half, 1 + half), abs=1e-5)
    assert fieller_ratio_ci([100], [90, 100]) == (pytest.approx(0.95), None)


def test_best_fixed_is_the_highest_mean_fixed_pool_and_controllers_are_not_candidates() -> None:
    points = [make_pool_point("N", 2, [make_run(t) for t in (80, 80, 80)]),
              make_pool_point("2N", 4, [make_run(t) for t in (100, 100, 100)]),
              make_pool_point("hill", 8, [make_run(t) for t in (90, 100, 110)]),
              make_pool_point("formula", 8, [make_run(t) for t in (500, 500, 500)])]
    assert ctl.pool_label(ctl.best_fixed(points)) == "2N"
    group = ctl.score_group(points)
    assert group.judged and group.best_fixed == "2N"
    rows = _rows(group)
    assert rows["2N"].best and rows["2N"].share.ratio == 1.0
    share = rows["hill"].share
    assert share.ratio == pytest.approx(1.0)
    assert (share.ci95_low, share.ci95_high) == pytest.approx((0.751586, 1.248414), abs=1e-5)
    assert rows["N"].share.ratio == pytest.approx(0.8) and rows["formula"].share.ratio == pytest.approx(5.0)
    assert [r.pool for r in group.rows] == ["N", "2N", "hill", "formula"]  # fixed by size, then controllers


def test_share_is_null_with_a_reason_below_two_runs() -> None:
    points = [make_pool_point("N", 2, [make_run(100.0)]), make_pool_point("hill", 8, [make_run(90.0), make_run(95.0)])]
    rows = _rows(ctl.score_group(points))
    share = rows["hill"].share
    assert share.ratio is None and share.ci95_low is None and share.ci95_high is None
    assert share.reason == "fewer than 2 runs on either side (2 here, 1 for the best)"
    assert rows["hill"].mean_ops_per_s == pytest.approx(92.5)


def test_groups_keep_concurrencies_and_profiles_apart() -> None:
    points = [make_pool_point("N", 2, [make_run(100.0)], conc="N"),
              make_pool_point("hill", 8, [make_run(100.0)], conc="N"),
              make_pool_point("N", 2, [make_run(100.0)], conc="2N"),
              make_pool_point("hill", 8, [make_run(100.0)], conc="2N", profile=PROFILE)]
    groups = ctl.score_points(points)
    assert [len(g.rows) for g in groups] == [2, 0, 0]
    assert [g.reason for g in groups[1:]] == ["no controller pool (auto, hill, formula, stall) in this group",
                                             "no fixed pool in this group to compare with"]
    assert groups[2].profile == "0.1:5,0.7:5" and "p=" not in groups[0].label


def test_profile_intervals_repeat_hold_and_merge() -> None:
    assert ctl.profile_intervals([(0.1, 5), (0.7, 5)], True, 20_000) == [
        (0, 5000, 0.1), (5000, 10000, 0.7), (10000, 15000, 0.1), (15000, 20000, 0.7)]
    assert ctl.profile_intervals([(0.1, 5), (0.7, None)], False, 20_000) == [(0, 5000, 0.1), (5000, 20000, 0.7)]
    assert ctl.profile_intervals([(0.1, 5), (0.1, 5)], True, 12_000) == [(0, 12000, 0.1)]


def test_recovery_found_at_the_first_window_reaching_90_percent_of_the_new_best() -> None:
    group = ctl.score_group(step_group())
    assert [s[0] for s in group.steps] == [5000, 10000, 15000]
    hill = _rows(group)["hill"]
    assert [(r.from_ratio, r.to_ratio) for r in hill.recovery] == [(0.1, 0.7), (0.7, 0.1), (0.1, 0.7)]
    # New best after 0.1 -> 0.7: fixed 4N's 120 ops/s; hill is at 50 for two windows, then 120.
    assert [r.new_best_ops_per_s for r in hill.recovery] == [120.0, 100.0, 120.0]
    assert [r.recovery_ms for r in hill.recovery] == [500.0, 500.0, 500.0]
    assert all(r.runs_reached == 3 and r.reason is None for r in hill.recovery)


def test_recovery_is_null_when_never_reached_before_the_next_step() -> None:
    slow = [100.0 if (k // 20) % 2 == 0 else 100.0 for k in range(80)]  # never 0.9 x 120 in a 0.7 segment
    hill = _rows(ctl.score_group(step_group(hill_ops=slow)))["hill"]
    assert hill.recovery[0].recovery_ms is None
    assert hill.recovery[0].reason == "did not reach 90% before the next step"
    assert hill.recovery[1].recovery_ms == 0.0  # 100 >= 0.9 x 100 from the step's first window


def test_recovery_median_counts_a_run_that_never_got_there_as_never() -> None:
    points = step_group(reps=3)
    never = [50.0] * 80
    points[2]["runs"][2]["timeline"] = timeline(never)
    first = _rows(ctl.score_group(points))["hill"].recovery[0]
    assert first.recovery_ms == 500.0 and (first.runs_reached, first.runs) == (2, 3)
    points[2]["runs"][1]["timeline"] = timeline(never)
    first = _rows(ctl.score_group(points))["hill"].recovery[0]
    assert first.recovery_ms is None and (first.runs_reached, first.runs) == (1, 3)


def test_settled_size_over_the_last_segment_or_the_window_tail() -> None:
    hill = _rows(ctl.score_group(step_group()))["hill"]
    assert hill.settled_threads == 6.0 and hill.settled_source == "timeline"
    assert _rows(ctl.score_group(step_group()))["4N"].settled_threads == 8.0  # a fixed pool: its size
    # Without a profile: the last quarter of 20 s, windows 60..79, threads 6 there.
    points = step_group()
    for p in points:
        p.pop("blocking_profile")
    group = ctl.score_group(points)
    assert group.steps == [] and _rows(group)["hill"].settled_threads == 6.0
    assert _rows(group)["hill"].recovery_reason == "no blocking profile"


def test_settled_size_falls_back_to_threads_at_end_and_says_when_it_cannot() -> None:
    window = {"threads_at_start": 2, "threads_at_end": 5, "min_threads": 2, "max_threads": 6, "mean_threads": 4.0}
    sizing = {"controller": "stall", "window": window, "timeline_ms_threads": [[0, 2]]}
    points = [make_pool_point("N", 2, [make_run(100.0), make_run(100.0)]),
              make_pool_point("stall:50:4N", 8, [make_run(90.0, sizing=sizing), make_run(90.0, sizing=sizing)])]
    stall = _rows(ctl.score_group(points))["stall:50:4N"]
    assert (stall.settled_threads, stall.settled_source) == (5.0, "threads_at_end")
    points[1]["runs"] = [make_run(90.0), make_run(91.0)]
    stall = _rows(ctl.score_group(points))["stall:50:4N"]
    assert stall.settled_threads is None and "no run has a timeline" in stall.settled_reason


def test_switches_per_completion_and_open_loop_p99() -> None:
    load = {"arrivals": "poisson", "load": 0.5, "rate_ops_per_s": None, "seed": 1, "max_in_flight": None}
    points = [make_pool_point("N", 2, [make_run(100.0, p99_us=400.0, cs_per_kop=1500.0)] * 2, open_loop=load),
              make_pool_point("2N", 4, [make_run(100.0, p99_us=800.0)] * 2, open_loop=load),
              make_pool_point("formula", 8, [make_run(100.0, p99_us=600.0, cs_per_kop=3000.0),
                                             make_run(100.0, p99_us=700.0, cs_per_kop=5000.0)], open_loop=load)]
    rows = _rows(ctl.score_group(points))
    assert rows["formula"].switches_per_completion == pytest.approx(4.0)
    assert rows["N"].switches_per_completion == pytest.approx(1.5)
    assert rows["formula"].p99_us == 650.0
    assert rows["formula"].p99_ratio_to_best_fixed == pytest.approx(650.0 / 400.0)
    closed = _rows(ctl.score_group(step_group()))["hill"]
    assert closed.p99_us is None and closed.p99_reason == "not an open-loop point"


def test_missing_optional_blocks_never_crash() -> None:
    bare = make_pool_point("hill", 8, [make_run(1.0)], profile={"text": "?", "segments": "nonsense"})
    bare["runs"] = [{"repetition": 0}, {"repetition": 1, "timeline": {"windows": "x"}}]
    nonsense = {"text": "?", "segments": "nonsense"}
    points = [make_pool_point("N", 2, [make_run(100.0), make_run(100.0)], profile=nonsense),
              bare]
    hill = _rows(ctl.score_group(points))["hill"]
    assert hill.share.ratio is None and hill.share.reason == "fewer than 2 runs on either side (0 here, 2 for the best)"
    assert hill.switches_per_completion is None and hill.switches_reason
    assert hill.recovery == [] and hill.recovery_reason == "no blocking profile"


def test_a_step_that_holds_has_one_recovery_and_settles_over_the_held_segment() -> None:
    step = {"text": "0.1:5,0.7", "segments": [{"ratio": 0.1, "seconds": 5}, {"ratio": 0.7, "seconds": None}],
            "repeats": False}
    points = step_group()
    for p in points:
        p["blocking_profile"] = step
    group = ctl.score_group(points)
    assert group.steps == [(5000.0, 0.1, 0.7)]
    hill = _rows(group)["hill"]
    # The held 0.7 segment runs 5..20 s and mixes step_group's 0.7 and 0.1 windows: the new best is
    # the best fixed pool's mean there (4N: 120 x 10 s + 80 x 5 s over 15 s = 106.67).
    assert hill.recovery[0].new_best_ops_per_s == pytest.approx(320 / 3)
    assert hill.recovery[0].recovery_ms == 500.0
    # Settled over 5..20 s: 3 threads for 10 s, 6 for 5 s.
    assert hill.settled_threads == pytest.approx(4.0)
