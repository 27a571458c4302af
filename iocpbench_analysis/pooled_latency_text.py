"""Pooled percentiles as the report, compare and answer print them (pooled_latency.py computes):
`p99 1.19 ms [1.05, 1.40]`, `p99 >= 7.70 ms` where unfinished requests make the value a lower
bound, and the reason where there is no value or no interval."""

from __future__ import annotations

from .pooled_latency import Accounting, PooledInterval, PooledLatency, percentile_name
from .stats import CONFIDENCE


def _unit(us: float) -> tuple[float, str]:
    """The divisor and unit a latency reads best in: us below 1 ms, ms below 1 s, else s."""
    if us >= 1e6:
        return 1e6, "s"
    if us >= 1e3:
        return 1e3, "ms"
    return 1.0, "us"


def _digits(x: float) -> str:
    """Three significant digits, trailing zeros kept (1.40, 12.0, 850)."""
    ax = abs(x)
    if ax >= 100:
        return f"{x:.0f}"
    if ax >= 10:
        return f"{x:.1f}"
    if ax >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def _interval_text(interval: PooledInterval, scale: float) -> str:
    assert interval.low_us is not None and interval.high_us is not None
    high = _digits(interval.high_us / scale)
    if interval.high_lower_bound:
        high = ">= " + high
    return f"[{_digits(interval.low_us / scale)}, {high}]"


def value_text(p: PooledLatency, *, why_no_interval: bool = True) -> str:
    """The value and its interval without the percentile's name: `1.19 ms [1.05, 1.40]`,
    `>= 7.70 ms`, `1.19 ms (4 runs: an interval needs at least 5)` (without the parenthesis
    when not why_no_interval: a table says it once), or `n/a: why`."""
    est, interval = p.estimate, p.interval
    if est.value_us is None:
        return f"n/a: {est.reason}"
    scale, unit = _unit(est.value_us)
    text = f"{_digits(est.value_us / scale)} {unit}"
    if est.lower_bound:
        text = ">= " + text
    if interval.low_us is not None:
        text += " " + _interval_text(interval, scale)
    elif interval.reason and why_no_interval:
        text += f" ({interval.reason})"
    if est.runs_left_out:
        text += f" ({est.runs} of {est.runs + est.runs_left_out} runs)"
    return text


def pooled_text(p: PooledLatency) -> str:
    """`p99 1.19 ms [1.05, 1.40]`, `p99 >= 7.70 ms`, `p99 n/a: no latency histograms (an older file)`."""
    return f"{percentile_name(p.estimate.q)} {value_text(p)}"


def interval_legend(confidence: float = CONFIDENCE) -> str:
    """What a pooled value and its brackets mean, in one sentence."""
    return (f"the percentile over every request due in the point's runs, all runs together, from "
            f"their histograms; in brackets its {confidence * 100:g}% interval, a bootstrap over whole runs "
            "(a run's requests are not independent); >= where requests that never finished, counted at "
            "what they had waited by the end of the drain, may lie above it")


def accounting_text(acc: Accounting | None) -> str:
    """`9,885 / 9,800 / 85` (due / timed / unfinished, summed over runs; failed and runs not
    drained named after it), `n/a` for an older file."""
    if acc is None:
        return "n/a"
    notes = [f"{acc.failed:,} failed"] if acc.failed else []
    if acc.undrained_runs:
        notes.append(f"{acc.undrained_runs} run{'s' if acc.undrained_runs != 1 else ''} not drained")
    text = f"{acc.due:,} / {acc.timed:,} / {acc.unfinished:,}"
    return text + (f" ({'; '.join(notes)})" if notes else "")
