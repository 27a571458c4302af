"""Synthetic points of pool controllers (hill, formula, stall, auto) beside fixed pools, with
per-window timelines and a blocking profile, shaped as the harness's contract says. Made-up,
hand-checkable numbers for tests: never measurements, never written outside tmp_path."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from synthetic import make_results, summarize_runs

WINDOW_MS = 250
PROFILE = {"text": "0.1:5,0.7:5",
           "segments": [{"ratio": 0.1, "seconds": 5}, {"ratio": 0.7, "seconds": 5}], "repeats": True}


def timeline(ops: Sequence[float], threads: Sequence[float] | None = None,
             ratios: Sequence[float] | None = None, window_ms: int = WINDOW_MS) -> dict[str, Any]:
    """A run's timeline: window k starts at k * window_ms with ops[k] ops/s and threads[k]."""
    threads = threads if threads is not None else [4.0] * len(ops)
    windows = []
    for k, value in enumerate(ops):
        w: dict[str, Any] = {"t_ms": k * window_ms, "ops_per_s": value, "mean_threads": threads[k]}
        if ratios is not None:
            w["blocking_ratio"] = ratios[k]
        windows.append(w)
    return {"window_ms": window_ms, "windows": windows}


def make_run(tp: float, *, seconds: float = 20.0, cs_per_kop: float = 2000.0, p99_us: float = 500.0,
             tl: dict[str, Any] | None = None, sizing: dict[str, Any] | None = None) -> dict[str, Any]:
    run: dict[str, Any] = {
        "repetition": 0, "seconds": seconds, "ops": int(tp * seconds), "throughput_ops_per_s": tp,
        "context_switches_per_kop": cs_per_kop,
        "latency_us": {"p50": p99_us / 4, "p90": p99_us / 2, "p99": p99_us, "p999": p99_us * 2},
        "errors": 0,
    }
    if tl is not None:
        run["timeline"] = tl
    if sizing is not None:
        run["pool_sizing"] = sizing
    return run


def make_pool_point(pool: str, value: int, runs: list[dict[str, Any]], *, conc: str = "N",
                    profile: dict[str, Any] | None = None, ratio: float = 0.1,
                    open_loop: dict[str, Any] | None = None) -> dict[str, Any]:
    """A post point of `pool` with the given runs (repetitions numbered in order)."""
    for k, r in enumerate(runs):
        r["repetition"] = k
    pid = f"post/emulated/c={conc}/p={pool}/b={ratio:g}/w=100"
    point: dict[str, Any] = {
        "id": pid + (f"/profile={profile['text']}" if profile else ""),
        "workload": "post", "workload_params": {"posters": 1, "in_flight": 64}, "port": "emulated",
        "concurrency": {"spec": conc, "value": 2}, "pool": {"spec": pool, "value": value},
        "blocking": {"ratio": ratio, "kind": "sleep"}, "work_us": 100.0,
        "runs": runs, "summary": summarize_runs(runs),
    }
    if profile is not None:
        point["blocking_profile"] = profile
    if open_loop is not None:
        point["open_loop"] = open_loop
    return point


def results_with(points: list[dict[str, Any]]) -> dict[str, Any]:
    data = make_results(pools=("N",), ratios=(0.1,), conc=("N",), reps=1)
    data["points"] = points
    return data


def step_group(*, hill_ops: Sequence[float] | None = None, reps: int = 3) -> list[dict[str, Any]]:
    """A 20 s profiled group (0.1 for 5 s, 0.7 for 5 s, repeating: steps at 5, 10 and 15 s),
    80 windows of 250 ms. Fixed N: 100 ops/s in 0.1 segments, 40 in 0.7 ones; fixed 4N: 80 and
    120 (the best in the 0.7 segments, and the best fixed pool on the mean: 100 vs 70). hill
    follows `hill_ops` (default: each segment's best from its third window on, so it recovers
    in 500 ms) and settles at 6 threads in the last segment (3 before)."""
    def per_segment(low: float, high: float) -> list[float]:
        return [low if (k // 20) % 2 == 0 else high for k in range(80)]

    n_ops, fourn_ops = per_segment(100.0, 40.0), per_segment(80.0, 120.0)
    if hill_ops is None:
        best = per_segment(100.0, 120.0)
        hill_ops = [50.0 if k % 20 < 2 else best[k] for k in range(80)]
    hill_threads = [6.0 if k >= 60 else 3.0 for k in range(80)]

    def runs(ops: Sequence[float], tp: float, threads: Sequence[float] | None = None) -> list[dict[str, Any]]:
        return [make_run(tp, tl=timeline(ops, threads)) for _ in range(reps)]

    return [
        make_pool_point("N", 2, runs(n_ops, 70.0), profile=PROFILE),
        make_pool_point("4N", 8, runs(fourn_ops, 100.0), profile=PROFILE),
        make_pool_point("hill", 8, runs(hill_ops, 95.0, hill_threads), profile=PROFILE),
    ]
