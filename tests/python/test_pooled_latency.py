"""pooled_latency: the harness's histogram buckets, pooled percentiles over response and
unfinished requests with the lower-bound flag, older files without histograms, the cluster
bootstrap interval (its coverage by a seeded simulation) and pooled_latency_text's lines."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
import pytest

from iocpbench_analysis import grid
from iocpbench_analysis import pooled_latency as pl
from iocpbench_analysis.pooled_latency import (
    Accounting, PooledInterval, PooledLatency, PooledPercentile, accounting, bucket_high, bucket_low,
    bucket_of, buckets_of, decode_pairs, decode_run, merge, pooled_latency, pooled_percentile,
)
from iocpbench_analysis.pooled_latency_text import accounting_text, interval_legend, pooled_text

B1US, B1MS = 317, 954  # the buckets of 1,000 ns and 1,000,000 ns (worked out below)


def run(response: list[list[int]], unfinished: list[list[int]] | None = None, *,
        acc: dict[str, Any] | None = None, bits: int = 6) -> dict[str, Any]:
    hs: dict[str, Any] = {"scheme": "log-linear", "unit": "ns", "sub_bucket_bits": bits,
                          "response": response, "unfinished": unfinished or [], "service": [], "lag": []}
    ol: dict[str, Any] = {"offered_ops_per_s": 1000.0, "histograms": hs}
    if acc is not None:
        ol["accounting"] = acc
    return {"open_loop": ol}


def old_run() -> dict[str, Any]:
    """An open-loop run from a file written before histograms."""
    return {"latency_us": {"p99": 900.0}, "open_loop": {"offered_ops_per_s": 1000.0}}


# ---------------------------------------------------------------- buckets


@pytest.mark.parametrize("value, bucket, low, high", [
    (0, 0, 0, 0), (63, 63, 63, 63),  # below 64 each value is its own bucket
    (64, 64, 64, 64),  # high 6, shift 0: 0 * 64 + 64
    (127, 127, 127, 127),
    (128, 128, 128, 129),  # high 7, shift 1: 1 * 64 + 64; bucket 128 is 64 << 1 .. + 1
    (1000, B1US, 1000, 1007),  # high 9, shift 3: 3 * 64 + (1000 >> 3 = 125) = 317; 125 << 3 .. + 7
    (1007, B1US, 1000, 1007),
    (1008, 318, 1008, 1015),
    (10**6, B1MS, 999_424, 1_007_615),  # high 19, shift 13: 13 * 64 + 122; 122 << 13 .. + 8191
])
def test_buckets_follow_the_harness_formula(value: int, bucket: int, low: int, high: int) -> None:
    assert bucket_of(value) == bucket
    assert (bucket_low(bucket), bucket_high(bucket)) == (low, high)
    assert pl.bucket_mid_ns(bucket) == (low + high) / 2


def test_every_value_lies_in_its_bucket_and_the_array_form_agrees() -> None:
    values = list(range(0, 5000)) + [2**k + d for k in range(6, 63) for d in (-1, 0, 1)] + [2**63 - 1]
    for v in values:
        b = bucket_of(v)
        assert bucket_low(b) <= v <= bucket_high(b)
        assert bucket_high(b) - bucket_low(b) + 1 <= max(1, bucket_low(b) // 64)  # within 1/64
    assert buckets_of(np.array(values, dtype=np.int64)).tolist() == [bucket_of(v) for v in values]
    assert bucket_of(2**63 - 1) == 3711 < (64 - 6) * 64 + 64  # inside the harness's kBuckets


def test_decode_and_merge() -> None:
    assert decode_pairs([[B1US, 3], [B1MS, 1], [B1US, 2], [5, 0]]) == {B1US: 5, B1MS: 1}
    for bad in ("x", [[1]], [[1, 2.5]], [[-1, 2]], [[True, 1]], None, [[pl.bucket_count(), 1]]):
        assert isinstance(decode_pairs(bad), str), bad
    assert pl.bucket_count() == 3776 and decode_pairs([[3775, 1]]) == {3775: 1}  # kBuckets at 6 bits
    assert merge([{B1MS: 1, B1US: 2}, {B1US: 3, 7: 1}]) == {7: 1, B1US: 5, B1MS: 1}
    assert list(merge([{B1MS: 1}, {7: 1}])) == [7, B1MS]  # bucket order
    d = decode_run(run([[B1US, 2]], [[B1MS, 1]]))
    assert not isinstance(d, str) and d.response == {B1US: 2} and d.unfinished == {B1MS: 1}


# ---------------------------------------------------------------- the pooled percentile


def test_percentile_without_unfinished_is_exact() -> None:
    runs = [run([[B1US, 50]]), run([[B1US, 49], [B1MS, 1]])]
    p99 = pooled_percentile(runs, 0.99)  # rank ceil(0.99 * 100) = 99: the 1 us bucket
    assert p99 == PooledPercentile(0.99, 1.0035, False, 100, 0, 2, 0)
    top = pooled_percentile(runs, 0.999)  # rank 100: the 1 ms bucket's midpoint
    assert top.value_us == pytest.approx((999_424 + 1_007_615) / 2 / 1e3) and not top.lower_bound
    # Pooling is the sum of the runs' counts: one run with both gives the same.
    assert pooled_percentile([run([[B1US, 99], [B1MS, 1]])], 0.99).value_us == p99.value_us


def test_unfinished_above_the_rank_leaves_it_exact() -> None:
    p = pooled_percentile([run([[B1US, 99]], [[B1MS, 1]])], 0.99)
    assert (p.value_us, p.lower_bound, p.count_due, p.count_unfinished) == (1.0035, False, 100, 1)


@pytest.mark.parametrize("unfinished_bucket", [B1US, 100])  # in the rank's bucket, below it
def test_unfinished_at_or_below_the_rank_makes_it_a_lower_bound(unfinished_bucket: int) -> None:
    p = pooled_percentile([run([[B1US, 98], [B1MS, 1]], [[unfinished_bucket, 1]])], 0.99)
    assert p.value_us == 1.0035 and p.lower_bound and (p.count_due, p.count_unfinished) == (100, 1)


def test_unfinished_requests_count_as_due() -> None:
    """Counted at their lower bound, unfinished requests move the rank: 90 timed at 1 us and 10
    unfinished at 1 ms put the p95 at 1 ms (>=), where the timed ones alone say 1 us."""
    p = pooled_percentile([run([[B1US, 90]], [[B1MS, 10]])], 0.95)
    assert p.value_us == pytest.approx(1003.5195) and p.lower_bound and p.count_due == 100


def test_older_runs_give_a_reason_not_an_exception() -> None:
    for runs, why in (([old_run(), old_run()], pl.NO_HISTOGRAMS),
                      ([{"latency_us": {"p99": 9.0}}], "not an open-loop run"),
                      ([], "no runs"),
                      ([run([[B1US, 1]], bits=6), run([[B1US, 1]], bits=7)], "differ in sub_bucket_bits"),
                      ([run([["x", 1]])], "histograms.response"),
                      ([{"open_loop": {"histograms": {"scheme": "hdr", "unit": "us"}}}], "only log-linear in ns"),
                      ([{"open_loop": {"histograms": {"scheme": "log-linear", "unit": "ns", "sub_bucket_bits": 6,
                                                      "response": [[B1US, 1]]},
                                       "accounting": {"due": 2, "timed": 1, "unfinished": 1}}}],
                       "no unfinished histogram")):
        got = pooled_latency(runs, 0.99)
        assert got.estimate.value_us is None and why in (got.estimate.reason or ""), (runs, got)
        assert got.interval.low_us is None and got.interval.reason
        assert pooled_text(got).startswith("p99 n/a: ")
    assert accounting([old_run(), {"open_loop": []}, "x"]) is None and accounting_text(None) == "n/a"
    assert pooled_percentile([{"open_loop": []}, "x"], 0.99).reason == "not an open-loop run"
    assert not pl.has_histograms([{"runs": [old_run(), {"open_loop": []}]}, {"runs": None}])
    assert pl.has_histograms([{"runs": [run([])]}])


def test_runs_without_histograms_are_left_out_and_counted() -> None:
    p = pooled_percentile([run([[B1US, 99], [B1MS, 1]]), old_run()], 0.99)
    assert (p.value_us, p.runs, p.runs_left_out) == (1.0035, 1, 1)
    assert pooled_percentile([run([])], 0.99).reason == "no requests due in the runs' windows"


def test_accounting_sums_runs() -> None:
    runs = [run([], acc={"due": 9885, "timed": 9800, "unfinished": 85, "drained": True}),
            run([], acc={"due": 100, "timed": 90, "unfinished": 10, "drained": False}), old_run()]
    acc = accounting(runs)
    assert acc == Accounting(9985, 9890, 95, 2, 1)
    assert accounting_text(acc) == "9,985 / 9,890 / 95 (1 run not drained)"
    # The harness's form: failed requests, and the drain's time against its bound.
    runs = [run([], acc={"due": 12, "timed": 9, "unfinished": 1, "failed": 2, "drain_s": 0.01, "drain_bound_s": 5.0}),
            run([], acc={"due": 5, "timed": 4, "unfinished": 1, "failed": 0, "drain_s": 5.0, "drain_bound_s": 5.0})]
    acc = accounting(runs)
    assert acc == Accounting(17, 13, 2, 2, 1, failed=2)
    assert accounting_text(acc) == "17 / 13 / 2 (2 failed; 1 run not drained)"


# ---------------------------------------------------------------- the interval


def hist_run(values_ns: np.ndarray, unfinished_ns: np.ndarray | None = None) -> dict[str, Any]:
    def pairs(v: np.ndarray | None) -> list[list[int]]:
        if v is None or not v.size:
            return []
        b, c = np.unique(buckets_of(v), return_counts=True)
        return [[int(x), int(y)] for x, y in zip(b, c)]
    return run(pairs(values_ns), pairs(unfinished_ns))


def test_too_few_runs_have_no_interval() -> None:
    runs = [run([[B1US, 99], [B1MS, 1]])] * (pl.MIN_RUNS_FOR_INTERVAL - 1)
    got = pooled_latency(runs, 0.99)
    assert got.estimate.value_us == 1.0035
    assert got.interval.low_us is None and got.interval.reason == "4 runs: an interval needs at least 5"
    assert pooled_text(got) == "p99 1.00 us (4 runs: an interval needs at least 5)"


def test_interval_is_seeded_and_brackets_the_estimate() -> None:
    rng = np.random.default_rng(7)
    runs = [hist_run(np.exp(rng.normal(np.log(1e5) + s, 0.5, 2000)).astype(np.int64))
            for s in rng.normal(0, 0.2, 8)]
    a, b = pooled_latency(runs, 0.99), pooled_latency(runs, 0.99)
    assert a == b  # the default seed: the same report every time
    assert a.interval.confidence == pl.CONFIDENCE and a.interval.resamples == pl.RESAMPLES
    assert a.interval.low_us is not None and a.interval.high_us is not None and a.estimate.value_us is not None
    assert a.interval.low_us <= a.estimate.value_us <= a.interval.high_us
    assert not a.estimate.lower_bound and not a.interval.high_lower_bound
    narrower = pooled_latency(runs, 0.99, confidence=0.5).interval
    assert narrower.low_us is not None and narrower.high_us is not None
    assert a.interval.low_us <= narrower.low_us <= narrower.high_us <= a.interval.high_us


def test_unfinished_below_the_upper_end_flags_it() -> None:
    rng = np.random.default_rng(3)
    runs = [hist_run(np.exp(rng.normal(np.log(1e5) + s, 0.5, 2000)).astype(np.int64)) for s in rng.normal(0, 0.2, 6)]
    got = pooled_latency(runs, 0.99)
    assert got.interval.high_us is not None and not got.interval.high_lower_bound
    # One unfinished request far up in the tail: above every resample's p99, nothing changes.
    far = pooled_latency(runs[:-1] + [hist_run(np.zeros(0, np.int64), np.array([10**10]))] + runs[-1:], 0.99)
    assert not far.estimate.lower_bound and not far.interval.high_lower_bound
    # Unfinished requests at about the median: everything from there up is a lower bound.
    mid = hist_run(np.zeros(0, np.int64), np.full(5, 100_000))
    low = pooled_latency(runs + [mid], 0.99)
    assert low.estimate.lower_bound and low.interval.high_lower_bound
    assert pooled_text(low).startswith("p99 >= ") and ", >= " in pooled_text(low)


def _truth_p99_us(mu: float, run_sd: float, within_sd: float) -> float:
    """The generating model's p99: a run's log-latency is mu + run scale + within-run noise,
    both normal, so over all runs it is normal with sd hypot(run_sd, within_sd)."""
    return float(np.exp(mu + NormalDist().inv_cdf(0.99) * np.hypot(run_sd, within_sd))) / 1e3


def test_interval_coverage_by_simulation() -> None:
    """200 simulated points, each of 10 runs of 2,000 lognormal requests whose scale varies run
    to run (the cluster effect: log-scale sd 0.15 between runs, 0.5 within one); the true p99
    is the model's. With this seed the nominal 95% interval covers it at 181 of 200 points
    (90.5%), the nominal 90% one at 171 (85.5%). Tolerance: at least 85% and 80%, 10 points
    short of nominal: a bootstrap over 10 clusters runs a little short of its level, and 200
    points have a binomial standard error of about 2%. Seeded: the counts are the same each run."""
    mu, run_sd, within_sd, points, runs, n = np.log(100_000.0), 0.15, 0.5, 200, 10, 2000
    truth = _truth_p99_us(mu, run_sd, within_sd)
    rng = np.random.default_rng(20240601)
    covered = {pl.CONFIDENCE: 0, 0.90: 0}
    for _ in range(points):
        logs = mu + rng.normal(0, run_sd, (runs, 1)) + rng.normal(0, within_sd, (runs, n))
        sample = [hist_run(row) for row in np.exp(logs).astype(np.int64)]
        for level in covered:
            i = pooled_latency(sample, 0.99, confidence=level).interval
            assert i.low_us is not None and i.high_us is not None
            covered[level] += i.low_us <= truth <= i.high_us
    assert covered[pl.CONFIDENCE] >= 0.85 * points, covered
    assert covered[0.90] >= 0.80 * points, covered


# ---------------------------------------------------------------- text


def latency(value: float, low: float | None, high: float | None, *, lower: bool = False,
            high_lower: bool = False, reason: str | None = None) -> PooledLatency:
    return PooledLatency(PooledPercentile(0.99, value, lower, 1000, 1 if lower else 0, 10),
                         PooledInterval(0.95, low, high, high_lower, 10, 2000, reason))


def test_text() -> None:
    assert pooled_text(latency(1190.0, 1050.0, 1400.0)) == "p99 1.19 ms [1.05, 1.40]"
    assert pooled_text(latency(850.0, 790.0, 1020.0)) == "p99 850 us [790, 1020]"
    assert pooled_text(latency(7700.0, 6900.0, 8100.0, lower=True, high_lower=True)) == "p99 >= 7.70 ms [6.90, >= 8.10]"
    assert pooled_text(latency(7700.0, None, None, lower=True)) == "p99 >= 7.70 ms"
    assert pooled_text(latency(2.5e6, 2.1e6, 3.0e6)) == "p99 2.50 s [2.10, 3.00]"
    worst = latency(1.23456e5, None, None, lower=True, reason="4 runs: an interval needs at least 5")
    lines = [pooled_text(worst), pooled_text(pooled_latency([old_run()], 0.999)),
             pooled_text(pooled_latency([run([["x", 1]])], 0.99)),
             accounting_text(Accounting(10**9, 10**9, 10**9, 9, 9))]
    assert all(len(line) <= 100 for line in lines), lines
    assert "95% interval, a bootstrap over whole runs" in interval_legend()
    assert pl.quantile_of("latency_us.p99") == 0.99 and pl.quantile_of("latency_us.p999") == 0.999
    assert pl.quantile_of("throughput_ops_per_s") is None


# ---------------------------------------------------------------- where a user sees it

OPEN_LOOP = Path(__file__).parent / "fixtures" / "open_loop.json"


def with_histograms(data: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """An older open-loop file as a newer one would be: histograms drawn about each run's own
    p50, and its accounting (one request in a hundred unfinished, far up the tail)."""
    rng = np.random.default_rng(seed)
    out = copy.deepcopy(data)
    for p in out["points"]:
        for r in p["runs"]:
            n = int(r["open_loop"]["arrivals_in_window"])
            timed = np.exp(rng.normal(np.log(r["latency_us"]["p50"] * 1e3), 0.6, n - n // 100)).astype(np.int64)
            r["open_loop"] |= hist_run(timed, np.full(n // 100, 10**10))["open_loop"]
            r["open_loop"]["accounting"] = {"due": n, "timed": n - n // 100, "unfinished": n // 100,
                                            "drain_s": 0.01, "drain_bound_s": 5.0, "drained": True}
    return out


def test_report_shows_the_pooled_p99_and_the_accounting_where_runs_store_them() -> None:
    from iocpbench_analysis.report_open_loop import ACCOUNTING_HEAD, POOLED_HEAD, family_body

    old = json.loads(OPEN_LOOP.read_text(encoding="utf-8"))
    (fam,) = grid.families(with_histograms(old)["points"])
    page = family_body(fam)
    table = page[page.index("<table>"):page.index("</table>")]
    assert f"<th>{POOLED_HEAD}</th>" in table and f"<th>{ACCOUNTING_HEAD}</th>" in table
    assert table.count("<tr>") == 1 + 2 * 2 * 3  # the same rows, two more columns
    # 3 runs a point: a value, no interval; the unfinished requests lie above every p99.
    assert re.search(r'<td class="num" title="no interval: 3 runs: an interval needs at least 5">[\d.]+ (us|ms)</td>',
                     table)
    assert ">= " not in table
    assert re.search(r'<td class="num">[\d,]+ / [\d,]+ / [\d,]+</td>', table)
    # A file written before histograms shows the table it always had.
    (old_fam,) = grid.families(old["points"])
    old_page = family_body(old_fam)
    assert POOLED_HEAD not in old_page and ACCOUNTING_HEAD not in old_page and "Pooled" not in old_page


def test_the_latency_answer_gives_its_pooled_p99() -> None:
    from iocpbench_analysis.report_open_loop import latency_answer_list

    rng = np.random.default_rng(11)

    def ol_point(pool: str, scale_us: float, histograms: bool = True) -> dict[str, Any]:
        runs = []
        for _ in range(5):
            values = np.exp(rng.normal(np.log(scale_us * 1e3), 0.5, 400)).astype(np.int64)
            r = hist_run(values) if histograms else old_run()
            r["latency_us"] = {"p50": scale_us, "p99": scale_us * 3.2, "p999": scale_us * 5}
            r["open_loop"] |= {"over_capacity": False, "generator_bound": False}
            runs.append(r)
        value = {"N": 2, "2N": 4}[pool]
        return {"workload": "post", "port": "emulated", "work_us": 10.0, "blocking": {"kind": "sleep", "ratio": 0.0},
                "concurrency": {"spec": "N", "value": 2}, "pool": {"spec": pool, "value": value},
                "open_loop": {"load": 0.5, "rate_ops_per_s": None, "arrivals": "poisson", "seed": 1,
                              "max_in_flight": None}, "runs": runs}

    (fam,) = grid.families([ol_point("N", 300.0), ol_point("2N", 100.0)])
    items = latency_answer_list(fam)
    assert "c=N (2) pool=2N (4) has the lowest p99 response time" in items
    assert re.search(r"Pooled over all its runs&#x27; requests: p99 [\d.]+ us \[[\d.]+, [\d.]+\] "
                     r"\(95% interval, a bootstrap over runs\)\.</li>", items), items
    (old_fam,) = grid.families([ol_point("N", 300.0, False), ol_point("2N", 100.0, False)])
    assert "Pooled" not in latency_answer_list(old_fam)


def test_report_cells_with_an_interval_and_a_lower_bound() -> None:
    from iocpbench_analysis.report_open_loop import pooled_cell

    rng = np.random.default_rng(5)
    runs = [hist_run(np.exp(rng.normal(np.log(1e5), 0.5, 500)).astype(np.int64), np.full(20, 100_000))
            for _ in range(6)]
    cell = pooled_cell({"runs": runs})
    assert re.fullmatch(r'<td class="num">&gt;= [\d.]+ us \[[\d.]+, &gt;= [\d.]+\]</td>', cell), cell
    assert pooled_cell({"runs": [old_run()]}) == f'<td class="num" title="{pl.NO_HISTOGRAMS}">n/a</td>'


def test_compare_adds_the_pooled_p99_or_says_a_file_has_no_histograms(tmp_path: Path) -> None:
    from iocpbench_analysis.compare import compare_results, render_markdown
    from iocpbench_analysis.load import load_results
    from iocpbench_analysis.metrics import METRICS

    old = load_results(OPEN_LOOP)
    new_path = tmp_path / "new.json"
    new_path.write_text(json.dumps(with_histograms(old.data)), encoding="utf-8")
    new = load_results(new_path)
    both = render_markdown(compare_results(new, [new], METRICS["latency_us.p99"]))
    section = both[both.index("### Pooled p99 (open loop)"):]
    assert "95% interval, a bootstrap over whole runs" in section
    rows = [line for line in section.splitlines() if line.startswith("- ")]
    assert len(rows) == len(old.points) + 1
    assert all(re.fullmatch(r"- `[^`]+`: base [\d.]+ (us|ms); vm \(N=2\) \[new.json\] [\d.]+ (us|ms)", r)
               for r in rows[:-1]), rows
    assert rows[-1] == f"- no interval at {2 * len(old.points)} value(s): 3 runs: an interval needs at least 5"
    one_old = render_markdown(compare_results(old, [new], METRICS["latency_us.p99"]))
    section = one_old[one_old.index("### Pooled p99 (open loop)"):]
    assert "- `open_loop.json` has no latency histograms (an older file): no pooled p99." in section
    assert not [line for line in section.splitlines() if line.startswith("- `c=")]
    # Other metrics, and closed-loop files, get no such section.
    assert "Pooled" not in render_markdown(compare_results(new, [new], METRICS["throughput_ops_per_s"]))
