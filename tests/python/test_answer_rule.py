"""answer's rule is tune's (docs/tuning.md): runs paired by round, the best chosen on rounds other
than those it is judged on, the Wilcoxon signed-rank CI against the indifference zone 0.93..0.95,
and the smaller setting where the truth sits inside the zone."""

from __future__ import annotations

import math
from typing import Any

from synthetic import make_results

from iocpbench_analysis import answer, grid


def _with_rounds(levels: dict[str, list[float]]) -> dict[str, Any]:
    """A results file at b = 0, concurrency N, one point per pool in `levels`, whose run r has
    throughput levels[pool][r] (its repetition r: the round)."""
    data = make_results(conc=("N",), pools=tuple(levels), ratios=(0.0,), reps=len(next(iter(levels.values()))))
    for p in data["points"]:
        values = levels[p["pool"]["spec"]]
        for r, run in enumerate(p["runs"]):
            run["repetition"] = r
            run["throughput_ops_per_s"] = values[r]
        p["summary"]["throughput_ops_per_s"]["median"] = sorted(values)[len(values) // 2]
    return data


def _answer(data: dict[str, Any]) -> answer.Answer:
    a = answer.answer_for(grid.families(data["points"])[0], 0.0)
    assert a is not None
    return a


def test_signed_rank_critical_values_match_the_published_table_and_tune() -> None:
    assert [answer.signed_rank_critical_value(n, 0.05) for n in (4, 5, 6, 8, 10, 15, 20)] == [-1, 0, 2, 5, 10, 30, 60]


def test_runs_are_paired_by_round_so_a_rounds_drift_cancels() -> None:
    # The machine's speed swings by +-30% from round to round, the same for both settings; pool
    # N is 0.97 of pool 2N in every round. Unpaired, the swing would hide it; paired, it is shown
    # within (the CI is 0.97 exactly).
    drift = [1.0, 0.7, 1.3, 0.8, 1.2, 0.75, 1.25, 0.9, 1.1, 1.0]
    data = _with_rounds({"N": [970 * d for d in drift], "2N": [1000 * d for d in drift]})
    a = _answer(data)
    n_pool = next(s for s in a.settings if s.point["pool"]["spec"] == "N")
    assert a.best.point["pool"]["spec"] == "2N"
    assert n_pool.ci is not None and math.isclose(n_pool.ci[0], 0.97) and math.isclose(n_pool.ci[1], 0.97)
    assert n_pool.verdict == "within" and n_pool.indistinguishable and a.recommended is n_pool


def test_a_setting_seven_percent_slower_is_not_indistinguishable() -> None:
    # 0.93 of the best with +-1% noise: shown worse, not recommended (the unpaired rule called
    # settings 6-9% slower indistinguishable).
    wobble = [1.01, 0.99, 1.0, 1.01, 0.99, 1.0, 1.01, 0.99, 1.0, 1.0]
    data = _with_rounds({"N": [930 * w for w in wobble], "2N": [1000.0] * 10})
    a = _answer(data)
    n_pool = next(s for s in a.settings if s.point["pool"]["spec"] == "N")
    assert n_pool.verdict == "worse" and not n_pool.indistinguishable
    assert a.recommended is a.best


def test_inside_the_zone_the_smaller_setting_is_taken_and_the_answer_says_why() -> None:
    # 0.94 of the best, steady: the whole CI is inside 0.93..0.95; either answer is right, the
    # rule takes the smaller, and says both settings and why.
    data = _with_rounds({"N": [940 * (1.002 if r % 2 else 0.998) for r in range(10)], "2N": [1000.0] * 10})
    a = _answer(data)
    assert a.recommended.point["pool"]["spec"] == "N" and a.recommended.verdict == "at_threshold"
    t = a.at_threshold
    assert t is not None and t.picked_smaller and t.smaller is a.recommended and t.larger is a.best
    assert "inside the indifference zone" in t.reason
    assert "at the threshold" in answer.text_table(data["points"])


def test_the_best_is_chosen_on_rounds_it_is_not_judged_on() -> None:
    # 10 rounds: the first 5 choose the best (pool N leads there), the last 5 are judged (pool 2N
    # leads there by 5%): pool N is the best, pool 2N's ratio to it is 1.05 over the judged rounds.
    data = _with_rounds({"N": [1100.0] * 5 + [1000.0] * 5, "2N": [1000.0] * 5 + [1050.0] * 5})
    a = _answer(data)
    assert a.selection_rounds == 5 and a.judged_rounds == 5
    assert a.best.point["pool"]["spec"] == "N"
    two_n = next(s for s in a.settings if s.point["pool"]["spec"] == "2N")
    assert math.isclose(two_n.ratio, 1.05) and two_n.pairs == 5


def test_the_legend_says_what_indistinguishable_means() -> None:
    table = answer.text_table(make_results()["points"])
    assert "indistinguishable: shown within the threshold of the best: the 90% CI" in table
    assert "runs paired by round" in table and "0.93" in table
