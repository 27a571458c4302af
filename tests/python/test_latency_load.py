"""latency_load: curves over offered load, the knee, flags and the latency answer, on small
hand-made open-loop points; and the open-loop families in grid.py."""

from __future__ import annotations

from typing import Any

import pytest

from iocpbench_analysis import answer, grid
from iocpbench_analysis.charts import BUILDERS, NotApplicable, SkipChart, latency_vs_load, switches_vs_load
from iocpbench_analysis.latency_load import (
    KNEE_FACTOR, answer_text, curves, knee_text, latency_answers, load_point, x_kind, x_of,
)


def run(p99: float, *, p50: float | None = None, cs: float | None = 1500.0, over: bool = False,
        gen: bool = False, offered: float = 1000.0) -> dict[str, Any]:
    return {
        "throughput_ops_per_s": offered,
        "context_switches_per_kop": cs,
        "latency_us": {"p50": p50 if p50 is not None else p99 / 4, "p99": p99, "p999": p99 * 1.5},
        "open_loop": {
            "offered_ops_per_s": offered, "over_capacity": over, "generator_bound": gen,
            "over_capacity_because": "12 of 100 arrivals held" if over else None,
            "generator_bound_because": "lag p99 over 5%" if gen else None,
            "service_time_us": {"p99": p99 / 2}, "generator_lag_us": {"p99": 3.0},
        },
    }


def point(runs: list[dict[str, Any]], *, c: str = "N", pool: str = "N", ratio: float = 0.0,
          load: float | None = 0.5, rate: float | None = None) -> dict[str, Any]:
    values = {"N": 2, "2N": 4, "2N+2": 6}
    return {
        "workload": "post", "port": "emulated", "work_us": 10.0,
        "blocking": {"kind": "sleep", "ratio": ratio},
        "concurrency": {"spec": c, "value": values[c]}, "pool": {"spec": pool, "value": values[pool]},
        "open_loop": {"load": load, "rate_ops_per_s": rate, "arrivals": "poisson", "seed": 1, "max_in_flight": None},
        "runs": runs,
    }


def ladder(p99s: list[float], loads: tuple[float, ...] = (0.2, 0.5, 0.8), **kw: Any) -> list[dict[str, Any]]:
    return [point([run(v), run(v), run(v)], load=x, **kw) for x, v in zip(loads, p99s)]


def test_knee_is_the_lowest_load_over_twice_the_lowest_loads_p99() -> None:
    assert KNEE_FACTOR == 2.0
    (curve,) = curves(ladder([100, 250, 900]))
    assert curve.knee is not None and curve.knee.x == 0.5
    assert curve.knee_base is not None and curve.knee_base.x == 0.2
    assert "knee at load 0.5" in knee_text(curve, "load")


@pytest.mark.parametrize("p99s", [[100, 150, 200], [100, 90, 199]])
def test_no_knee_when_p99_stays_within_the_factor(p99s: list[float]) -> None:
    (curve,) = curves(ladder(p99s))
    assert curve.knee is None  # exactly 2x is not over it
    assert "no knee up to load 0.8" in knee_text(curve, "load")


def test_knee_base_skips_loads_without_p99() -> None:
    pts = ladder([100, 100, 100])
    for r in pts[0]["runs"]:
        r["latency_us"] = None
    (curve,) = curves(pts)
    assert curve.knee_base is not None and curve.knee_base.x == 0.5 and curve.knee is None


def test_medians_over_runs() -> None:
    lp = load_point(point([run(100, p50=10), run(300, p50=30), run(200, p50=20)]), 0.5)
    assert lp.response_us == {"p50": 20, "p99": 200, "p999": 300}
    assert lp.service_p99_us == 100 and lp.generator_lag_p99_us == 3.0
    assert lp.runs == 3
    even = load_point(point([run(100), run(300)]), 0.5)
    assert even.p99 == 200


def test_switches_per_completion_is_null_safe() -> None:
    assert load_point(point([run(100, cs=None), run(100, cs=None)]), 0.5).switches_per_completion is None
    assert load_point(point([run(100, cs=None), run(100, cs=2500.0)]), 0.5).switches_per_completion == 2.5


def test_flags_count_runs_and_keep_reasons() -> None:
    lp = load_point(point([run(100, over=True), run(100, gen=True), run(100, over=True, gen=True)]), 0.9)
    assert (lp.over_capacity_runs, lp.generator_bound_runs) == (2, 2)
    assert lp.over_capacity and lp.generator_bound
    assert lp.over_capacity_because == ("12 of 100 arrivals held",)
    assert lp.server_runs == 1  # only the run that was not generator-bound
    quiet = load_point(point([run(100)]), 0.3)
    assert not quiet.over_capacity and not quiet.generator_bound


def test_rate_based_x_axis() -> None:
    pts = [point([run(v)], load=None, rate=r) for r, v in ((20000.0, 400), (5000.0, 100), (10000.0, 150))]
    assert x_kind(pts) == "rate"
    (curve,) = curves(pts)
    assert [lp.x for lp in curve.points] == [5000.0, 10000.0, 20000.0]
    assert curve.knee is not None and curve.knee.x == 20000.0
    assert "knee at 20,000 ops/s" in knee_text(curve, "rate")
    # Neither a load nor a rate: the runs' offered rate.
    bare = point([run(1, offered=900.0), run(1, offered=1100.0)], load=None, rate=None)
    assert x_of(bare, "rate") == 1000.0


def test_curves_per_setting_and_ratio() -> None:
    pts = (ladder([100, 120, 500]) + ladder([100, 110, 130], pool="2N+2")
           + ladder([100, 120, 150], ratio=0.5))
    cs = curves(pts)
    assert [(c.concurrency, c.pool, c.ratio) for c in cs] == [("N", "N", 0.0), ("N", "2N+2", 0.0), ("N", "N", 0.5)]
    assert cs[0].label == "c=N (2) pool=N (2)"
    assert [c.knee is not None for c in cs] == [True, False, False]


def test_latency_answer_at_the_highest_load_with_no_setting_over_capacity() -> None:
    a = [point([run(100), run(100), run(100)], load=0.3),
         # A's median p99 over all runs would be 60, but two of its runs are generator-bound.
         point([run(50, gen=True), run(60, gen=True), run(400)], load=0.6),
         point([run(900), run(900, over=True)], load=0.9)]
    b = [point([run(120)] * 3, pool="2N", load=0.3), point([run(300)] * 3, pool="2N", load=0.6),
         point([run(500)] * 3, pool="2N", load=0.9)]
    (ans,) = latency_answers(a + b)
    assert ans.x == 0.6  # 0.9 had a run over capacity (setting A)
    assert ans.best is not None and ans.best.pool == "2N"
    assert ans.at is not None and ans.at.server_p99_us == 300
    assert [lp.server_p99_us for _, lp in ans.contenders] == [300, 400]
    text = answer_text(ans, "load")
    assert "at load 0.6" in text and "c=N (2) pool=2N (4)" in text and "300 us" in text
    assert "Generator-bound runs are not counted as the server's latency" in text


def test_latency_answer_none_when_over_capacity_everywhere_or_generator_bound() -> None:
    over = [point([run(100, over=True)], load=x) for x in (0.3, 0.6)]
    (ans,) = latency_answers(over)
    assert ans.best is None and ans.x is None
    assert "every load had a setting with a run over capacity" in answer_text(ans, "load")
    bound = [point([run(100, gen=True)], load=x) for x in (0.3, 0.6)]
    (ans,) = latency_answers(bound)
    assert ans.best is None and ans.x == 0.6
    assert "generator-bound" in answer_text(ans, "load")


def test_open_loop_points_form_their_own_families() -> None:
    closed = {k: v for k, v in point([run(1)]).items() if k != "open_loop"}
    by_load = ladder([1, 2, 3])
    by_rate = [point([run(1)], load=None, rate=1000.0)]
    constant = ladder([1, 2, 3])
    for p in constant:
        p["open_loop"]["arrivals"] = "constant"
    fams = grid.families([closed, *by_load, *by_rate, *constant])
    assert [f.open_loop for f in fams] == [False, True, True, True]
    assert [len(f.points) for f in fams] == [1, 3, 1, 3]
    assert fams[0].key[5] == "" and "open loop" not in fams[0].title
    assert fams[1].title.endswith("; open loop, poisson arrivals")
    assert fams[2].title.endswith("; open loop, poisson arrivals, fixed rates")
    assert fams[3].title.endswith("; open loop, constant arrivals")
    assert len({f.slug for f in fams}) == 4 and fams[1].slug.endswith("-open-poisson")
    # The closed-loop answer leaves open-loop families alone (their throughput is the offered load).
    assert all(not a.family.open_loop for a in answer.answers([closed, *by_load]))


def test_closed_loop_builders_do_not_apply_to_open_loop_families_and_back() -> None:
    pts = ladder([100, 250, 900])
    for name, _, builder in BUILDERS:
        if name in ("latency-vs-load", "switches-vs-load"):
            continue
        with pytest.raises(NotApplicable):
            builder(pts, "t")
    closed = [{k: v for k, v in p.items() if k != "open_loop"} for p in pts[:1]]
    for builder in (latency_vs_load, switches_vs_load):
        with pytest.raises(NotApplicable):
            builder(closed, "t")
    assert latency_vs_load(pts, "t").axes
    no_switches = ladder([100, 250, 900])
    for p in no_switches:
        for r in p["runs"]:
            r["context_switches_per_kop"] = None  # Wine: no counts
    with pytest.raises(SkipChart, match="context switch"):
        switches_vs_load(no_switches, "t")


def test_report_html_of_an_open_loop_family() -> None:
    from iocpbench_analysis.report_open_loop import family_body

    pts = ladder([100, 250, 900]) + ladder([100, 110, 130], pool="2N")
    pts[2]["runs"][0] = run(900, over=True)  # pool N at 0.8
    (fam,) = grid.families(pts)
    page = family_body(fam)
    assert page.count("<tr>") == 1 + 2 * 3
    assert '<td class="off" title="over capacity: 12 of 100 arrivals held">over capacity (1/3)</td>' in page
    assert "c=N (2) pool=N (2), blocking ratio 0: knee at load 0.5: p99 250 us, over 2x its 100 us at load 0.2" in page
    assert "no knee up to load 0.8" in page
    # The answer at 0.5 (0.8 had a run over capacity): pool 2N, 110 us beats pool N's 250 us.
    assert "at load 0.5, the highest load where no setting was over capacity, c=N (2) pool=2N (4)" in page
    assert "110 us (median over 3 of 3 runs; of 2 settings)" in page
