"""The metrics the tools know, and how to read each from a point's summary and runs.

A metric name is its path in the results file ("latency_us.p99"), the same under
points[].summary and under points[].runs[], so one getter serves both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .stats import clean, median


@dataclass(frozen=True)
class Metric:
    name: str
    label: str
    unit: str
    higher_is_better: bool


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("throughput_ops_per_s", "throughput", "ops/s", True),
        Metric("context_switches_per_kop", "context switches per 1,000 completions", "cs/kop", False),
        Metric("latency_us.p50", "latency p50", "us", False),
        Metric("latency_us.p90", "latency p90", "us", False),
        Metric("latency_us.p99", "latency p99", "us", False),
        Metric("latency_us.p999", "latency p99.9", "us", False),
        # Open-loop points only (closed-loop ones have no value, and compare fails closed on
        # them): latency_us is then the response time from each request's intended start, and
        # this the part from the actual issue. open_loop.generator_lag_us.p99 is left out on
        # purpose: it is the load generator's, not the server's, and 0 us is a valid lag
        # (an idle generator), which a ratio of geometric means cannot take.
        Metric("open_loop.service_time_us.p99", "service time p99 (open loop)", "us", False),
    )
}
DEFAULT_METRIC = "throughput_ops_per_s"
LATENCY_PERCENTILES = ("p50", "p90", "p99", "p999")


def dig(obj: Any, dotted: str) -> Any:
    """obj["a"]["b"] for "a.b", or None where any step is missing or not an object."""
    for part in dotted.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def summary_stat(point: dict[str, Any], metric: str) -> dict[str, Any] | None:
    stat = dig(point.get("summary"), metric)
    return stat if isinstance(stat, dict) else None


def summary_value(point: dict[str, Any], metric: str, key: str = "median") -> float | None:
    stat = summary_stat(point, metric)
    if stat is None:
        return None
    values = clean([stat.get(key)])
    return values[0] if values else None


def summary_ci(point: dict[str, Any], metric: str) -> tuple[float, float] | None:
    """The summary's 95% CI, or None where it has none or rests on fewer than two runs (a
    writer may give one run the interval [x, x]: that is no interval at all)."""
    stat = summary_stat(point, metric)
    if stat is None:
        return None
    n = stat.get("n")
    if isinstance(n, int) and not isinstance(n, bool) and n < 2:
        return None
    ends = clean([stat.get("ci95_low"), stat.get("ci95_high")])
    if len(ends) != 2 or stat.get("ci95_low") is None or stat.get("ci95_high") is None:
        return None
    return (ends[0], ends[1])


def run_values(point: dict[str, Any], metric: str) -> list[float]:
    """Per-run values of a metric; runs that lack it are left out."""
    runs = point.get("runs") or []
    return clean([dig(r, metric) for r in runs if isinstance(r, dict)])


def central_value(point: dict[str, Any], metric: str) -> float | None:
    """The median the harness wrote, or, where it wrote none (an optional percentile), the
    median of the per-run values."""
    value = summary_value(point, metric)
    if value is not None:
        return value
    xs = run_values(point, metric)
    if not xs:
        return None
    xs.sort()
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


def achieved_ratio(point: dict[str, Any]) -> float | None:
    """The blocking ratio a point got, as its tolerance judges it: the blocked-only
    ratio (the runnable wait after a wake-up left out) where it was measured, else the achieved
    ratio; from blocking_fidelity's medians where the file has them, else the runs' medians.
    None where neither was recorded."""
    fid = point.get("blocking_fidelity")
    if isinstance(fid, dict):
        keys = ("blocked_only_median", "achieved_median")
        if fid.get("judged_on") == "achieved_blocking_ratio":
            keys = ("achieved_median",)
        for key in keys:
            if isinstance(fid.get(key), (int, float)) and not isinstance(fid.get(key), bool):
                return float(fid[key])
    for key in ("blocked_only_ratio", "achieved_blocking_ratio"):
        value = median(run_values(point, key))
        if value is not None:
            return value
    return None


def achieved_total_ratio(point: dict[str, Any]) -> float | None:
    """The achieved ratio with the runnable wait counted as blocked (what a run's
    achieved_blocking_ratio says): beside the judged one in the report's table."""
    fid = point.get("blocking_fidelity")
    if isinstance(fid, dict) and isinstance(fid.get("achieved_median"), (int, float)):
        return float(fid["achieved_median"])
    return median(run_values(point, "achieved_blocking_ratio"))


def within_tolerance(point: dict[str, Any]) -> bool:
    """False only where the file says the blocking ratio was missed (older files: True)."""
    fid = point.get("blocking_fidelity")
    return not (isinstance(fid, dict) and fid.get("within_tolerance") is False)
