"""Latency percentiles of an open-loop point pooled over its runs, from the histograms each run
stores (runs[].open_loop.histograms), with a distribution-free interval that treats runs as
clusters.

Buckets are the harness's (harness/metrics/histogram.cpp): log-linear over nanoseconds, with
S = 2^sub_bucket_bits sub-buckets. A value v < S has bucket v; above, with h = floor(log2 v)
and shift = h - sub_bucket_bits, bucket = shift * S + (v >> shift). A bucket b >= S holds
[sub << shift, (sub << shift) + 2^shift - 1] with shift = b / S - 1 and sub = b - shift * S,
so it is within 1/S of any value in it (1.6% at 6 bits). A run's histograms are lists of
[bucket, count] pairs.

The pooled percentile of a point is over every request due in its runs' measured windows: the
`response` histogram (timed requests, done - intended) and the `unfinished` one (requests that
never finished, counted at drain end - intended: a lower bound of their response time). Its
value is nearest-rank, as the harness's: the bucket holding rank ceil(q * count), read as the
bucket's midpoint (no exact minimum or maximum is stored per histogram, so the top rank is a
midpoint too). It is a lower bound (the true percentile is at least the value) when an
unfinished request lies in that bucket or below: its true value may be above the rank.

The interval is a cluster bootstrap: the requests of one run share its conditions (its
warm-up, the machine's state then) and are not independent, so whole runs are resampled with
replacement, their histograms merged and the percentile taken, RESAMPLES times from a fixed
seed. The interval is the expanded percentile interval of those values (Hesterberg, "What
teachers should know about the bootstrap", 2015): at confidence 1 - a over R runs it reads
them at Phi(-sqrt(R / (R - 1)) * t(R - 1, 1 - a/2)) and its complement rather than at a/2,
which widens it where runs are few (there the plain percentile interval is too narrow).
Default confidence stats.CONFIDENCE, two-sided. Simulated (lognormal requests, a lognormal
scale per run, 10 runs), a nominal 95% interval covered the true p99 about 90% of the time
where the runs' scales spread by 0.15 on the log scale against 0.5 within a run, and about
83% where they spread by 0.25: the more the runs differ, the less 10 of them say. With fewer
than MIN_RUNS_FOR_INTERVAL runs there is none. Its upper end is a lower bound when an
unfinished request lies at or below it.

Pure functions; a run without histograms (a file written before them) gives a reason, never an
exception. pooled_latency_text.py formats.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from .lazy_stats import sps
from .metrics import dig
from .stats import CONFIDENCE

SCHEME = "log-linear"
UNIT = "ns"
SUB_BUCKET_BITS = 6  # the harness's Histogram::kSubBits
# A resampled percentile falls between about what the lowest and the highest run alone give,
# and the truth is outside that range about 2^(1 - R) of the time (each run's value as likely
# above it as below): an interval over 3 runs covers at most about 75%, over 5 about 94%.
MIN_RUNS_FOR_INTERVAL = 5
RESAMPLES = 2000
SEED = 0
QUANTILES = {"p50": 0.50, "p90": 0.90, "p99": 0.99, "p999": 0.999}
NO_HISTOGRAMS = "no latency histograms (an older file)"

Histogram = dict[int, int]  # bucket -> count


# ---------------------------------------------------------------- buckets


def bucket_of(value_ns: int, sub_bits: int = SUB_BUCKET_BITS) -> int:
    """The bucket of a value, as Histogram::bucket_of."""
    sub = 1 << sub_bits
    if value_ns < sub:
        return value_ns
    shift = value_ns.bit_length() - 1 - sub_bits
    return shift * sub + (value_ns >> shift)


def bucket_low(bucket: int, sub_bits: int = SUB_BUCKET_BITS) -> int:
    """The smallest value in a bucket (Histogram::bucket_low)."""
    sub = 1 << sub_bits
    if bucket < sub:
        return bucket
    shift = bucket // sub - 1
    return (bucket - shift * sub) << shift


def bucket_high(bucket: int, sub_bits: int = SUB_BUCKET_BITS) -> int:
    """The largest value in a bucket (Histogram::bucket_high)."""
    sub = 1 << sub_bits
    if bucket < sub:
        return bucket
    shift = bucket // sub - 1
    return ((bucket - shift * sub) << shift) + (1 << shift) - 1


def bucket_mid_ns(bucket: int, sub_bits: int = SUB_BUCKET_BITS) -> float:
    """A bucket read as one value: the midpoint of its lowest and highest, as the harness reads it."""
    return (bucket_low(bucket, sub_bits) + bucket_high(bucket, sub_bits)) / 2


def buckets_of(values_ns: np.ndarray, sub_bits: int = SUB_BUCKET_BITS) -> np.ndarray:
    """bucket_of over an array of non-negative integer nanoseconds (int64)."""
    v = np.asarray(values_ns, dtype=np.int64)
    sub = 1 << sub_bits
    _, exp = np.frexp(np.maximum(v, 1).astype(np.float64))  # v = m * 2^exp, m in [0.5, 1)
    shift = np.maximum(exp.astype(np.int64) - 1 - sub_bits, 0)
    # float64 rounds values above 2^53 up to the next power of two: step back where it did
    top = v >> shift
    shift = np.where((v >= sub) & (top < sub), shift - 1, shift)
    return np.where(v < sub, v, shift * sub + (v >> shift))


# ---------------------------------------------------------------- decoding


def bucket_count(sub_bits: int = SUB_BUCKET_BITS) -> int:
    """How many buckets cover every 64-bit value (Histogram::kBuckets)."""
    return (64 - sub_bits) * (1 << sub_bits) + (1 << sub_bits)


def decode_pairs(pairs: Any, sub_bits: int = SUB_BUCKET_BITS) -> Histogram | str:
    """[[bucket, count], ...] as a histogram (counts of a bucket given twice add up; zero counts
    are dropped), or a string saying what is wrong with it."""
    if not isinstance(pairs, list):
        return "not a list of [bucket, count] pairs"
    out: Histogram = {}
    for pair in pairs:
        if (not isinstance(pair, (list, tuple)) or len(pair) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in pair)):
            return f"not a [bucket, count] pair of integers: {pair!r}"
        bucket, count = pair
        if bucket < 0 or count < 0:
            return f"a negative bucket or count: {pair!r}"
        if bucket >= bucket_count(sub_bits):
            return f"bucket {bucket} is past the last, {bucket_count(sub_bits) - 1}"
        if count:
            out[bucket] = out.get(bucket, 0) + count
    return out


def merge(histograms: Iterable[Histogram]) -> Histogram:
    """The sum of counts per bucket, in bucket order."""
    out: Histogram = {}
    for h in histograms:
        for bucket, count in h.items():
            out[bucket] = out.get(bucket, 0) + count
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class RunHistograms:
    """One run's decoded histograms (nanosecond buckets)."""

    sub_bucket_bits: int
    response: Histogram  # timed requests due in the window: done - intended
    unfinished: Histogram  # due in the window, never finished: drain end - intended (lower bounds)
    service: Histogram  # done - issue
    lag: Histogram  # issue - intended


def _int(x: Any) -> int | None:
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def decode_run(run: Any) -> RunHistograms | str:
    """A run's histograms, or a string saying why there are none to use."""
    ol = run.get("open_loop") if isinstance(run, dict) else None
    if not isinstance(ol, dict):
        return "not an open-loop run"
    hs = ol.get("histograms")
    if hs is None:
        return NO_HISTOGRAMS
    if not isinstance(hs, dict):
        return "histograms is not an object"
    if hs.get("scheme") != SCHEME or hs.get("unit") != UNIT:
        return f"histograms of scheme {hs.get('scheme')!r} in {hs.get('unit')!r}: only {SCHEME} in {UNIT} is read"
    bits = _int(hs.get("sub_bucket_bits"))
    if bits is None or not 0 < bits < 16:
        return f"sub_bucket_bits {hs.get('sub_bucket_bits')!r} is not a small positive integer"
    decoded: dict[str, Histogram] = {}
    for name in ("response", "unfinished", "service", "lag"):
        if name not in hs:
            decoded[name] = {}
            continue
        h = decode_pairs(hs[name], bits)
        if isinstance(h, str):
            return f"histograms.{name}: {h}"
        decoded[name] = h
    if "response" not in hs:
        return "histograms without a response histogram"
    acc = ol.get("accounting")
    unfinished = _int(acc.get("unfinished")) if isinstance(acc, dict) else None
    if "unfinished" not in hs and unfinished:
        return f"accounting has {unfinished} unfinished requests and histograms no unfinished histogram"
    return RunHistograms(bits, decoded["response"], decoded["unfinished"], decoded["service"], decoded["lag"])


# ---------------------------------------------------------------- pooling


@dataclass(frozen=True)
class _Pool:
    """The runs that have histograms, as arrays: due and unfinished counts per run and bucket."""

    sub_bits: int
    buckets: np.ndarray  # (B,) sorted bucket indices that any run uses
    due: np.ndarray  # (R, B) response + unfinished counts
    unfinished: np.ndarray  # (R, B)
    runs_left_out: int  # runs of the point without usable histograms


def _pool(runs: Sequence[Any]) -> _Pool | str:
    decoded: list[RunHistograms] = []
    why: list[str] = []
    for run in runs:
        d = decode_run(run)
        if isinstance(d, str):
            if d not in why:
                why.append(d)
        else:
            decoded.append(d)
    if not decoded:
        return why[0] if len(why) == 1 else "; ".join(why) if why else "no runs"
    bits = {d.sub_bucket_bits for d in decoded}
    if len(bits) > 1:
        return f"runs differ in sub_bucket_bits ({', '.join(str(b) for b in sorted(bits))}): not mergeable"
    buckets = np.array(sorted({b for d in decoded for h in (d.response, d.unfinished) for b in h}), dtype=np.int64)
    col = {int(b): i for i, b in enumerate(buckets)}
    due = np.zeros((len(decoded), len(buckets)), dtype=np.int64)
    unfinished = np.zeros_like(due)
    for r, d in enumerate(decoded):
        for b, c in d.response.items():
            due[r, col[b]] += c
        for b, c in d.unfinished.items():
            due[r, col[b]] += c
            unfinished[r, col[b]] += c
    return _Pool(bits.pop(), buckets, due, unfinished, len(runs) - len(decoded))


def rank_columns(counts: np.ndarray, q: float) -> np.ndarray:
    """Per row of a (K, B) count matrix, the column holding nearest rank ceil(q * total) (the
    harness's rank, clamped to 1..total); -1 for a row with no counts."""
    totals = counts.sum(axis=1)
    rank = np.clip(np.ceil(q * totals.astype(np.float64)), 1, np.maximum(totals, 1))
    cols = (np.cumsum(counts, axis=1) < rank[:, None]).sum(axis=1)
    return np.where(totals > 0, cols, -1)


def _mids_us(pool: _Pool) -> np.ndarray:
    return np.array([bucket_mid_ns(int(b), pool.sub_bits) for b in pool.buckets]) / 1e3


def _lowest_unfinished_col(pool: _Pool) -> int | None:
    cols = np.flatnonzero(pool.unfinished.sum(axis=0))
    return int(cols[0]) if cols.size else None


@dataclass(frozen=True)
class PooledPercentile:
    """The q-th percentile over the point's due requests, all runs together; value_us None with
    `reason` where it cannot be had."""

    q: float
    value_us: float | None
    lower_bound: bool = False  # the true percentile is at least value_us (unfinished requests)
    count_due: int = 0  # timed + unfinished: the requests in the histograms (failed ones are in none)
    count_unfinished: int = 0
    runs: int = 0  # runs pooled
    runs_left_out: int = 0  # runs of the point without usable histograms
    reason: str | None = None


@dataclass(frozen=True)
class PooledInterval:
    """The cluster-bootstrap interval of a pooled percentile; low_us/high_us None with `reason`."""

    confidence: float
    low_us: float | None
    high_us: float | None
    high_lower_bound: bool = False  # the upper end is a lower bound (unfinished requests)
    runs: int = 0
    resamples: int = 0
    reason: str | None = None


@dataclass(frozen=True)
class PooledLatency:
    estimate: PooledPercentile
    interval: PooledInterval


def _estimate(pool: _Pool, q: float) -> PooledPercentile:
    merged = pool.due.sum(axis=0)
    due, unfinished = int(merged.sum()), int(pool.unfinished.sum())
    runs = pool.due.shape[0]
    if due == 0:
        return PooledPercentile(q, None, False, 0, 0, runs, pool.runs_left_out,
                                "no requests due in the runs' windows")
    col = int(rank_columns(merged[None, :], q)[0])
    low = _lowest_unfinished_col(pool)
    return PooledPercentile(q, float(_mids_us(pool)[col]), low is not None and low <= col, due, unfinished,
                            runs, pool.runs_left_out)


def expanded_tail(confidence: float, runs: int) -> float:
    """The tail the expanded percentile interval reads the resamples at, each side:
    Phi(-sqrt(R / (R - 1)) * t(R - 1, 1 - a/2)) for R runs at confidence 1 - a."""
    t = float(sps.t.ppf(0.5 + confidence / 2, runs - 1))
    return NormalDist().cdf(-math.sqrt(runs / (runs - 1)) * t)


def _interval(pool: _Pool, q: float, confidence: float, resamples: int, seed: int) -> PooledInterval:
    runs = pool.due.shape[0]
    if runs < MIN_RUNS_FOR_INTERVAL:
        return PooledInterval(confidence, None, None, runs=runs,
                              reason=f"{runs} run{'s' if runs != 1 else ''}: an interval needs at least "
                                     f"{MIN_RUNS_FOR_INTERVAL}")
    rng = np.random.default_rng(seed)
    # How many times each run is drawn in each resample of `runs` runs with replacement.
    weights = rng.multinomial(runs, np.full(runs, 1.0 / runs), size=resamples)
    # In float64 (BLAS; counts stay exact below 2^53) rather than int64 (numpy's own loops).
    cols = rank_columns(weights.astype(np.float64) @ pool.due.astype(np.float64), q)
    cols = cols[cols >= 0]  # resamples of runs with nothing due have no percentile
    if cols.size == 0:
        return PooledInterval(confidence, None, None, runs=runs, resamples=resamples,
                              reason="no requests due in the runs' windows")
    tail = expanded_tail(confidence, runs)
    lo, hi = (int(c) for c in np.quantile(cols, [tail, 1 - tail], method="inverted_cdf"))
    mids = _mids_us(pool)
    low_unfinished = _lowest_unfinished_col(pool)
    return PooledInterval(confidence, float(mids[lo]), float(mids[hi]),
                          low_unfinished is not None and low_unfinished <= hi, runs, resamples)


def pooled_latency(runs: Sequence[Any], q: float, *, confidence: float = CONFIDENCE,
                   resamples: int = RESAMPLES, seed: int = SEED) -> PooledLatency:
    """The pooled percentile of a point's runs and its cluster-bootstrap interval."""
    pool = _pool(runs)
    if isinstance(pool, str):
        return PooledLatency(PooledPercentile(q, None, reason=pool),
                             PooledInterval(confidence, None, None, reason=pool))
    estimate = _estimate(pool, q)
    if estimate.value_us is None:
        return PooledLatency(estimate, PooledInterval(confidence, None, None, runs=estimate.runs,
                                                      reason=estimate.reason))
    return PooledLatency(estimate, _interval(pool, q, confidence, resamples, seed))


def pooled_percentile(runs: Sequence[Any], q: float) -> PooledPercentile:
    """The q-th percentile (0..1) over the due requests of the runs that have histograms."""
    pool = _pool(runs)
    return PooledPercentile(q, None, reason=pool) if isinstance(pool, str) else _estimate(pool, q)


def pooled_interval(runs: Sequence[Any], q: float, *, confidence: float = CONFIDENCE,
                    resamples: int = RESAMPLES, seed: int = SEED) -> PooledInterval:
    """The cluster-bootstrap interval of pooled_percentile(runs, q)."""
    return pooled_latency(runs, q, confidence=confidence, resamples=resamples, seed=seed).interval


def point_pooled(point: dict[str, Any], q: float, **kw: Any) -> PooledLatency:
    """pooled_latency over a point's runs."""
    runs = point.get("runs") if isinstance(point, dict) else None
    return pooled_latency([r for r in runs or [] if isinstance(r, dict)], q, **kw)


def has_histograms(points: Iterable[dict[str, Any]]) -> bool:
    """Whether any run of these points stores histograms (a file written since they were added)."""
    return any(isinstance(dig(r, "open_loop.histograms"), dict)
               for p in points if isinstance(p, dict) for r in p.get("runs") or [])


# ---------------------------------------------------------------- accounting


@dataclass(frozen=True)
class Accounting:
    """The requests due in the runs' measured windows, summed over the runs that account for them."""

    due: int  # timed + unfinished + failed
    timed: int
    unfinished: int
    runs: int  # runs with an accounting
    undrained_runs: int  # runs whose drain ended at its bound with requests still out
    failed: int = 0  # requests whose I/O failed: in no histogram


def accounting(runs: Sequence[Any]) -> Accounting | None:
    """Sums of runs[].open_loop.accounting (None where no run has one: an older file)."""
    due = timed = unfinished = failed = counted = undrained = 0
    for run in runs:
        acc = dig(run, "open_loop.accounting")
        if not isinstance(acc, dict):
            continue
        d, t, u = (_int(acc.get(k)) for k in ("due", "timed", "unfinished"))
        if d is None or t is None or u is None:
            continue
        due, timed, unfinished, counted = due + d, timed + t, unfinished + u, counted + 1
        failed += _int(acc.get("failed")) or 0
        drained = acc.get("drained")
        if not isinstance(drained, bool):  # else from the drain's time against its bound
            spent, bound = acc.get("drain_s"), acc.get("drain_bound_s")
            drained = not (_number(spent) and _number(bound) and spent >= bound)
        undrained += not drained
    return Accounting(due, timed, unfinished, counted, undrained, failed) if counted else None


def quantile_of(name: str) -> float | None:
    """0.99 for "p99", "latency_us.p99" or "p99.9"-style names the package uses; None otherwise."""
    key = name.rsplit(".", 1)[-1] if name.startswith("latency_us.") else name
    if key in QUANTILES:
        return QUANTILES[key]
    return 0.999 if key == "p99.9" else None


def percentile_name(q: float) -> str:
    """"p99" for 0.99, "p99.9" for 0.999."""
    return f"p{round(q * 100, 6):g}"
