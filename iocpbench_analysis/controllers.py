"""Score pool controllers (auto, hill, formula, stall) against the best fixed pool measured in
the same file. Compute only: controllers_text.py, report_controllers.py and
charts_controllers.py lay the scores out.

Points are grouped by their whole identity but the pool (match.identity: workload and its
parameters, port, concurrency, blocking ratio or blocking profile, dequeue batch, open-loop
load or rate, placements, ...). In each group the best fixed pool is the fixed pool with the
highest mean throughput over its runs, and every pool of the group gets a row:

- share: mean throughput over the best fixed pool's, with Fieller's 95% interval over the runs
  (stats.fieller_ratio_ci); null with fewer than 2 runs on either side;
- settled threads: the median over runs of the time-weighted mean of the timeline windows'
  mean_threads over the profile's last segment in the window (without a profile, the window's
  last quarter); a run without a timeline gives pool_sizing.window.threads_at_end; a fixed pool
  its size;
- recovery per step of the blocking profile: from the step to the start of the first timeline
  window at or after it whose ops/s reach RECOVERED_SHARE of the new best (the highest mean
  ops/s of any fixed pool's windows in the new segment); the median over runs, a run that never
  got there counting as never;
- context switches per completion: context_switches_per_kop / 1000, median over runs;
- open-loop points: p99 response time (median over runs) and its ratio to the lowest fixed p99.

What a file does not have gives null and the reason, never an error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .match import identity, normalize_spec, point_label
from .metrics import dig, run_values
from .stats import fieller_ratio_ci, mean, median

CONTROLLER_KINDS = ("auto", "hill", "formula", "stall")
RECOVERED_SHARE = 0.9  # of the new best: a step is recovered from at 90% of it
SETTLED_TAIL_SHARE = 0.25  # without a profile the settled size is read over the window's last quarter
INTERVALS_MAX = 100_000  # a profile of tiny segments over a long window: stop expanding it there

Point = dict[str, Any]
Interval = tuple[float, float, float]  # (start_ms, end_ms, requested ratio)


# ---------------------------------------------------------------- pools

def pool_text(point: Point) -> str:
    """The pool spec as written, spaces dropped (`pool` is {"spec", "value"}, or a bare spec)."""
    pool = point.get("pool")
    spec = pool.get("spec") if isinstance(pool, dict) else pool
    return "".join(str(spec).split())


def controller_kind(spec: str) -> str | None:
    """"hill" for "hill:1:8": the controller a spec names, None for a fixed pool."""
    lowered = spec.lower()
    return next((k for k in CONTROLLER_KINDS if lowered.startswith(k)), None)


def pool_label(point: Point) -> str:
    """A pool spelled one way: fixed sizes with a capital N ("2N+2"), a controller's keyword
    lower-case with its counts' N capital ("stall:50:4N")."""
    text = pool_text(point)
    if controller_kind(text) is None or text.lower().startswith("auto"):
        return normalize_spec(text)
    keyword, sep, rest = text.partition(":")
    return keyword.lower() + sep + rest.upper()


def pool_value(point: Point) -> int | None:
    """Threads on this machine (a controller's maximum): pool_value, else pool.value."""
    for value in (point.get("pool_value"), dig(point, "pool.value")):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def is_controller(point: Point) -> bool:
    return controller_kind(pool_text(point)) is not None


# ---------------------------------------------------------------- groups

def group_key(point: Point) -> str:
    """Everything a point is but its pool (fields named pool*), as canonical JSON."""
    ident = {k: v for k, v in identity(point).items() if not k.startswith("pool")}
    return json.dumps(ident, sort_keys=True, separators=(",", ":"))


def group_label(point: Point) -> str:
    """The point's id (or label) without its pool part: "post/emulated/c=N/b=0.1/w=100"."""
    return re.sub(r"/p=[^/]*", "", point_label(point))


def group_points(points: Sequence[Point]) -> list[list[Point]]:
    """Points grouped by group_key, groups and points in first-seen order."""
    grouped: dict[str, list[Point]] = {}
    for p in points:
        grouped.setdefault(group_key(p), []).append(p)
    return list(grouped.values())


# ---------------------------------------------------------------- the blocking profile

def profile_segments(point: Point) -> tuple[list[tuple[float, float | None]], bool] | None:
    """[(ratio, seconds or None: holds)], repeats; None without a usable blocking_profile."""
    profile = point.get("blocking_profile")
    raw = profile.get("segments") if isinstance(profile, dict) else None
    if not isinstance(raw, list) or not raw:
        return None
    segments: list[tuple[float, float | None]] = []
    for s in raw:
        ratio, seconds = dig(s, "ratio"), dig(s, "seconds")
        if not _number(ratio) or not (seconds is None or _number(seconds)):
            return None
        segments.append((float(ratio), None if seconds is None else float(seconds)))
    return segments, bool(profile.get("repeats"))


def profile_text(point: Point) -> str | None:
    text = dig(point, "blocking_profile.text")
    return str(text) if text is not None else None


def profile_intervals(segments: Sequence[tuple[float, float | None]], repeats: bool, end_ms: float) -> list[Interval]:
    """The requested ratio over [0, end_ms) (the profile's clock starts with the measured
    window), consecutive pieces of one ratio merged. A segment without seconds holds to the
    end; a profile that does not repeat holds its last ratio."""
    out: list[Interval] = []
    t, i = 0.0, 0
    while t < end_ms and len(out) < INTERVALS_MAX:
        ratio, seconds = segments[i]
        stop = end_ms if seconds is None or seconds <= 0 else min(end_ms, t + seconds * 1000)
        _append_merged(out, (t, stop, ratio))
        t, i = stop, i + 1
        if i == len(segments):
            if not repeats:
                if t < end_ms:
                    _append_merged(out, (t, end_ms, ratio))
                break
            i = 0
    return out


def _append_merged(out: list[Interval], piece: Interval) -> None:
    if out and out[-1][2] == piece[2] and out[-1][1] == piece[0]:
        out[-1] = (out[-1][0], piece[1], piece[2])
    elif piece[1] > piece[0]:
        out.append(piece)


# ---------------------------------------------------------------- timelines

@dataclass(frozen=True)
class Window:
    start_ms: float
    end_ms: float
    ops_per_s: float | None
    mean_threads: float | None
    blocking_ratio: float | None


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _num_or_none(x: Any) -> float | None:
    return float(x) if _number(x) else None


def run_windows(run: dict[str, Any]) -> list[Window]:
    """A run's timeline windows in time order; [] without a timeline."""
    timeline = run.get("timeline")
    raw = timeline.get("windows") if isinstance(timeline, dict) else None
    if not isinstance(raw, list):
        return []
    width = timeline.get("window_ms")
    starts = sorted((float(w["t_ms"]), w) for w in raw if isinstance(w, dict) and _number(w.get("t_ms")))
    out: list[Window] = []
    for k, (start, w) in enumerate(starts):
        end = start + float(width) if _number(width) and width > 0 else (
            starts[k + 1][0] if k + 1 < len(starts) else start)
        out.append(Window(start, end, _num_or_none(w.get("ops_per_s")), _num_or_none(w.get("mean_threads")),
                          _num_or_none(w.get("blocking_ratio"))))
    return out


def window_end_ms(run: dict[str, Any]) -> float | None:
    """The measured window's length: the run's seconds, else its timeline's extent."""
    if _number(run.get("seconds")) and run["seconds"] > 0:
        return float(run["seconds"]) * 1000
    windows = run_windows(run)
    return max(w.end_ms for w in windows) if windows else None


def time_weighted(windows: Sequence[Window], attr: str, start_ms: float, end_ms: float) -> float | None:
    """Mean of a window field over [start_ms, end_ms), each window weighted by its overlap."""
    total = weight = 0.0
    for w in windows:
        value = getattr(w, attr)
        overlap = min(w.end_ms, end_ms) - max(w.start_ms, start_ms)
        if value is None or overlap <= 0:
            continue
        total, weight = total + value * overlap, weight + overlap
    return total / weight if weight > 0 else None


def _runs(point: Point) -> list[dict[str, Any]]:
    return [r for r in point.get("runs") or [] if isinstance(r, dict)]


# ---------------------------------------------------------------- scores

@dataclass(frozen=True)
class Share:
    """mean throughput / the best fixed pool's; null with the reason."""

    ratio: float | None
    ci95_low: float | None = None
    ci95_high: float | None = None
    reason: str | None = None  # why the ratio or its interval is null


@dataclass(frozen=True)
class Recovery:
    """One step of the blocking profile and how long a pool took to reach 90% of the new best."""

    t_ms: float
    from_ratio: float
    to_ratio: float
    new_best_ops_per_s: float | None
    recovery_ms: float | None
    runs_reached: int
    runs: int
    reason: str | None = None


@dataclass(frozen=True)
class Row:
    pool: str
    controller: str | None  # its kind, None for a fixed pool
    pool_value: int | None
    runs: int
    mean_ops_per_s: float | None
    share: Share
    settled_threads: float | None
    settled_source: str | None  # "timeline", "threads_at_end" or "fixed"
    settled_reason: str | None
    recovery: list[Recovery]
    recovery_reason: str | None
    switches_per_completion: float | None
    switches_reason: str | None
    p99_us: float | None = None
    p99_ratio_to_best_fixed: float | None = None
    p99_reason: str | None = None
    best: bool = False


@dataclass(frozen=True)
class GroupScore:
    label: str
    profile: str | None
    blocking_ratio: float | None
    open_loop: bool
    best_fixed: str | None
    judged: bool
    reason: str | None  # why the group cannot be judged
    steps: list[tuple[float, float, float]]  # (t_ms, from ratio, to ratio) inside the window
    rows: list[Row] = field(default_factory=list)
    points: list[Point] = field(default_factory=list, repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        # Field by field: asdict would deep-copy every point (runs, timelines) only to drop it.
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("points", "rows")}
        out["rows"] = [asdict(r) for r in self.rows]
        out["steps"] = [{"t_ms": t, "from_ratio": a, "to_ratio": b} for t, a, b in self.steps]
        return out


def throughputs(point: Point) -> list[float]:
    return run_values(point, "throughput_ops_per_s")


def best_fixed(points: Sequence[Point]) -> Point | None:
    """The fixed pool with the highest mean throughput over its runs (None: no fixed pool
    with a run that measured throughput)."""
    scored = [(m, p) for p in points if not is_controller(p) and (m := mean(throughputs(p))) is not None]
    return max(scored, key=lambda mp: mp[0])[1] if scored else None


def share_of_best(point: Point, best: Point) -> Share:
    if point is best:
        return Share(1.0, reason="the best fixed pool itself")
    a, b = throughputs(point), throughputs(best)
    if len(a) < 2 or len(b) < 2:
        # A ratio of one run is no share worth a number: both means stay in mean_ops_per_s.
        return Share(None, reason=f"fewer than 2 runs on either side ({len(a)} here, {len(b)} for the best)")
    result = fieller_ratio_ci(b, a)
    if result is None:
        return Share(None, reason="the best's mean throughput is not positive")
    ratio, ci = result
    if ci is None:
        return Share(ratio, reason="no interval: the best's mean is not distinguishable from zero")
    return Share(ratio, ci[0], ci[1])


def settled_threads(point: Point, interval: tuple[float, float] | None) -> tuple[float | None, str | None, str | None]:
    """(threads, source, reason): the median over runs of the time-weighted mean threads over
    `interval` (ms), or of pool_sizing.window.threads_at_end where a run has no timeline."""
    if not is_controller(point):
        value = pool_value(point)
        return (float(value), "fixed", None) if value is not None else (None, None, "no pool size recorded")
    values, sources = [], set()
    for run in _runs(point):
        tw = time_weighted(run_windows(run), "mean_threads", *interval) if interval else None
        if tw is not None:
            values.append(tw)
            sources.add("timeline")
        elif _number(at_end := dig(run, "pool_sizing.window.threads_at_end")):
            values.append(float(at_end))
            sources.add("threads_at_end")
    if not values:
        return None, None, "no run has a timeline or pool_sizing.window.threads_at_end"
    return median(values), "+".join(sorted(sources)), None


def switches_per_completion(point: Point) -> tuple[float | None, str | None]:
    values = run_values(point, "context_switches_per_kop")
    if not values:
        return None, "no run measured context switches"
    value = median(values)
    return (value / 1000 if value is not None else None), None


def p99_us(point: Point) -> float | None:
    return median(run_values(point, "latency_us.p99"))


# ---------------------------------------------------------------- steps and recovery

NEVER_REACHED = f"did not reach {RECOVERED_SHARE:.0%} before the next step"


def group_end_ms(points: Sequence[Point]) -> float | None:
    """The shortest measured window of the group's runs: every step inside it is in all runs."""
    ends = [e for p in points for r in _runs(p) if (e := window_end_ms(r)) is not None]
    return min(ends) if ends else None


def group_intervals(points: Sequence[Point]) -> list[Interval] | None:
    """The requested ratio over the group's measured window; None without a profile."""
    parsed = profile_segments(points[0])
    end = group_end_ms(points)
    if parsed is None or end is None:
        return None
    intervals = profile_intervals(parsed[0], parsed[1], end)
    # A last piece shorter than a timeline window (the window ran a few ms past a step) holds no
    # window of its own: it is no step to recover from.
    window_ms = group_window_ms(points)
    while len(intervals) > 1 and intervals[-1][1] - intervals[-1][0] < window_ms:
        intervals.pop()
    return intervals


def group_window_ms(points: Sequence[Point]) -> float:
    """The longest timeline window of the group's runs (0 without a timeline)."""
    sizes = [float(t["window_ms"]) for p in points for r in _runs(p)
             if isinstance(t := r.get("timeline"), dict) and _number(t.get("window_ms"))]
    return max(sizes, default=0.0)


def _windows_in(run: dict[str, Any], start_ms: float, end_ms: float) -> list[Window]:
    """A run's windows inside [start_ms, end_ms); those that start in it where none fits whole
    (a segment shorter than a window)."""
    starting = [w for w in run_windows(run) if start_ms <= w.start_ms < end_ms]
    whole = [w for w in starting if w.end_ms <= end_ms + 1e-6]
    return whole or starting


def segment_best_ops_per_s(fixed: Sequence[Point], start_ms: float, end_ms: float) -> float | None:
    """The highest, over fixed pools, of the mean ops/s of their windows in the segment."""
    means = []
    for p in fixed:
        ops = [w.ops_per_s for r in _runs(p) for w in _windows_in(r, start_ms, end_ms) if w.ops_per_s is not None]
        if ops:
            means.append(sum(ops) / len(ops))
    return max(means) if means else None


def run_recovery_ms(run: dict[str, Any], start_ms: float, end_ms: float, target: float) -> float | None:
    """From the step to the start of the run's first window in the segment at or above target;
    None when none is (the run never got there before the next step)."""
    for w in run_windows(run):
        if start_ms <= w.start_ms < end_ms and w.ops_per_s is not None and w.ops_per_s >= target:
            return w.start_ms - start_ms
    return None


def step_recovery(point: Point, fixed: Sequence[Point], prev: Interval, seg: Interval) -> Recovery:
    start, end, to_ratio = seg
    best = segment_best_ops_per_s(fixed, start, end)
    base = Recovery(start, prev[2], to_ratio, best, None, 0, 0)
    if best is None:
        return _replace(base, reason="no fixed pool has timeline windows in this segment")
    timed = [r for r in _runs(point) if any(start <= w.start_ms < end for w in run_windows(r))]
    if not timed:
        return _replace(base, reason="no run of this pool has timeline windows in this segment")
    times = [run_recovery_ms(r, start, end, RECOVERED_SHARE * best) for r in timed]
    reached = [t for t in times if t is not None]
    # A run that never got there counts as never (after every finite time) in the median.
    ordered = sorted(reached) + [float("inf")] * (len(times) - len(reached))
    mid = median(ordered)
    if mid is None or mid == float("inf"):
        return _replace(base, runs_reached=len(reached), runs=len(times), reason=NEVER_REACHED)
    return _replace(base, recovery_ms=mid, runs_reached=len(reached), runs=len(times))


def _replace(r: Recovery, **changes: Any) -> Recovery:
    return Recovery(**{**asdict(r), **changes})


def recoveries(point: Point, fixed: Sequence[Point],
               intervals: list[Interval] | None) -> tuple[list[Recovery], str | None]:
    if intervals is None:
        return [], "no blocking profile"
    if len(intervals) < 2:
        return [], "no step of the profile inside the measured window"
    return [step_recovery(point, fixed, intervals[k - 1], intervals[k]) for k in range(1, len(intervals))], None


# ---------------------------------------------------------------- groups scored

def settle_interval(points: Sequence[Point], intervals: list[Interval] | None) -> tuple[float, float] | None:
    """Where the settled size is read: the profile's last segment in the window, else the
    window's last quarter."""
    if intervals:
        return intervals[-1][0], intervals[-1][1]
    end = group_end_ms(points)
    return ((1 - SETTLED_TAIL_SHARE) * end, end) if end is not None else None


def p99_scores(point: Point, fixed: Sequence[Point]) -> tuple[float | None, float | None, str | None]:
    """(p99 us, its ratio to the lowest fixed p99 at the same load, reason) for an open-loop point."""
    if not isinstance(point.get("open_loop"), dict):
        return None, None, "not an open-loop point"
    own = p99_us(point)
    if own is None:
        return None, None, "no run measured latency_us.p99"
    fixed_p99 = [v for p in fixed if (v := p99_us(p)) is not None]
    if not fixed_p99 or min(fixed_p99) <= 0:
        return own, None, "no fixed pool measured a positive p99 at this load"
    return own, own / min(fixed_p99), None


def score_row(point: Point, best: Point, fixed: Sequence[Point], intervals: list[Interval] | None,
              settle: tuple[float, float] | None) -> Row:
    settled, source, settled_reason = settled_threads(point, settle)
    steps, steps_reason = recoveries(point, fixed, intervals)
    switches, switches_reason = switches_per_completion(point)
    p99, p99_ratio, p99_reason = p99_scores(point, fixed)
    return Row(
        pool=pool_label(point), controller=controller_kind(pool_text(point)), pool_value=pool_value(point),
        runs=len(_runs(point)), mean_ops_per_s=mean(throughputs(point)), share=share_of_best(point, best),
        settled_threads=settled, settled_source=source, settled_reason=settled_reason,
        recovery=steps, recovery_reason=steps_reason,
        switches_per_completion=switches, switches_reason=switches_reason,
        p99_us=p99, p99_ratio_to_best_fixed=p99_ratio, p99_reason=p99_reason, best=point is best,
    )


def unjudged_reason(points: Sequence[Point], best: Point | None) -> str | None:
    if not any(is_controller(p) for p in points):
        return "no controller pool (auto, hill, formula, stall) in this group"
    if not any(not is_controller(p) for p in points):
        return "no fixed pool in this group to compare with"
    if best is None:
        return "no fixed pool has a run that measured throughput"
    return None


def score_group(points: Sequence[Point]) -> GroupScore:
    """Every pool of one group against the group's best fixed pool: fixed pools first (by
    size), then controllers (in the file's order)."""
    best = best_fixed(points)
    reason = unjudged_reason(points, best)
    intervals = group_intervals(points)
    steps = [(intervals[k][0], intervals[k - 1][2], intervals[k][2]) for k in range(1, len(intervals or []))]
    ratio = dig(points[0], "blocking.ratio")
    group = GroupScore(label=group_label(points[0]), profile=profile_text(points[0]),
                       blocking_ratio=float(ratio) if _number(ratio) else None,
                       open_loop=isinstance(points[0].get("open_loop"), dict), best_fixed=None,
                       judged=reason is None, reason=reason, steps=steps, points=list(points))
    if reason is not None or best is None:
        return group
    fixed = [p for p in points if not is_controller(p)]
    settle = settle_interval(points, intervals)
    ordered = sorted(fixed, key=lambda p: (pool_value(p) or 0, pool_label(p))) + [p for p in points if is_controller(p)]
    rows = [score_row(p, best, fixed, intervals, settle) for p in ordered]
    return GroupScore(**{**group.__dict__, "best_fixed": pool_label(best), "rows": rows})


def score_points(points: Sequence[Point]) -> list[GroupScore]:
    return [score_group(g) for g in group_points(points)]


def has_controllers(points: Sequence[Point]) -> bool:
    return any(is_controller(p) for p in points)



def median_series(point: Point, attr: str) -> list[tuple[float, float]]:
    """(window start ms, the median over runs of the windows' `attr` there), in time order: a
    point's timeline as one line (runs share window starts, the harness's fixed grid)."""
    by_start: dict[float, list[float]] = {}
    for run in _runs(point):
        for w in run_windows(run):
            value = getattr(w, attr)
            if value is not None:
                by_start.setdefault(w.start_ms, []).append(value)
    return [(t, float(median(v) or 0.0)) for t, v in sorted(by_start.items())]
