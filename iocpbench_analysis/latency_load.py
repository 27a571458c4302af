"""Latency against offered load, for one open-loop family (grid.py): per setting (concurrency
spec, pool spec, blocking ratio) the curve over the offered load of the response-time
percentiles, the service time's p99, context switches per completion and the runs' flags; the
knee of each curve; and the latency answer per blocking ratio.

The x axis is point.open_loop.load (a fraction of the point's own capacity) where the points
ask for loads, else the offered rate (point.open_loop.rate_ops_per_s; where a point has
neither, the median of its runs' offered_ops_per_s). Each value is the median over the point's
runs of the per-run value (runs[].latency_us.pX is the response time, from each request's
intended start), so a curve reads like the closed-loop tables.

The knee: the lowest load at which the curve's p99 exceeds KNEE_FACTOR times its p99 at the
curve's lowest load (None when it never does).

The latency answer (per blocking ratio): the setting with the lowest median p99 at the highest
load at which no setting had a run over capacity. Runs that were generator-bound are not
counted in that p99: their latency is partly the load generator's, not the server's.

Pure functions over the points; nothing here draws or writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import grid
from .metrics import dig
from .stats import clean, median

KNEE_FACTOR = 2.0
PERCENTILES = ("p50", "p99", "p999")
PERCENTILE_TEXT = {"p50": "p50", "p90": "p90", "p99": "p99", "p999": "p99.9"}


@dataclass(frozen=True)
class LoadPoint:
    """One point of a curve: the point at one offered load, its medians over runs and flags."""

    x: float
    point: dict[str, Any]
    runs: int
    response_us: dict[str, float | None]  # "p50", "p99", "p999": median over runs of latency_us.pX
    service_p99_us: float | None
    generator_lag_p99_us: float | None
    switches_per_completion: float | None  # context_switches_per_kop / 1000; None where all are null
    offered_ops_per_s: float | None
    achieved_ops_per_s: float | None
    over_capacity_runs: int
    generator_bound_runs: int
    over_capacity_because: tuple[str, ...] = ()
    generator_bound_because: tuple[str, ...] = ()
    server_p99_us: float | None = None  # median p99 of the runs that were not generator-bound
    server_runs: int = 0  # how many runs that is

    @property
    def over_capacity(self) -> bool:
        return self.over_capacity_runs > 0

    @property
    def generator_bound(self) -> bool:
        return self.generator_bound_runs > 0

    @property
    def p99(self) -> float | None:
        return self.response_us.get("p99")


@dataclass(frozen=True)
class Curve:
    """One setting's points in order of offered load, and its knee."""

    concurrency: str  # normalized specs
    pool: str
    ratio: float
    label: str  # "c=N (2) pool=2N+2 (6)"
    points: list[LoadPoint]
    knee: LoadPoint | None = None
    knee_base: LoadPoint | None = None  # the lowest load with a p99: what the knee is measured against

    @property
    def setting(self) -> tuple[str, str, float]:
        return (self.concurrency, self.pool, self.ratio)

    def at(self, x: float) -> LoadPoint | None:
        return next((lp for lp in self.points if lp.x == x), None)


@dataclass(frozen=True)
class LatencyAnswer:
    """The latency answer of one blocking ratio: `best` at load `x`, or `reason` why none."""

    ratio: float
    x: float | None  # the load judged at: the highest with no setting over capacity
    best: Curve | None
    at: LoadPoint | None  # best's point at x
    contenders: list[tuple[Curve, LoadPoint]] = field(default_factory=list)  # judged at x, best first
    reason: str | None = None


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def x_kind(points: list[dict[str, Any]]) -> str:
    """"load" where every point asks for a load, else "rate"."""
    loads = [dig(p, "open_loop.load") for p in points]
    return "load" if loads and all(_num(v) for v in loads) else "rate"


def x_label(kind: str) -> str:
    return "offered load (fraction of capacity)" if kind == "load" else "offered rate (ops/s)"


def _runs(point: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in point.get("runs") or [] if isinstance(r, dict)]


def _median_of(runs: list[dict[str, Any]], path: str) -> float | None:
    return median(clean([dig(r, path) for r in runs]))


def x_of(point: dict[str, Any], kind: str) -> float | None:
    """A point's place on the x axis: its load, or its asked rate, or its runs' offered rate."""
    value = dig(point, "open_loop.load" if kind == "load" else "open_loop.rate_ops_per_s")
    if _num(value):
        return float(value)
    if kind == "rate":
        return _median_of(_runs(point), "open_loop.offered_ops_per_s")
    return None


def _reasons(runs: list[dict[str, Any]], flag: str) -> tuple[str, ...]:
    """The distinct reasons the flagged runs give, in run order."""
    out: list[str] = []
    for r in runs:
        if dig(r, f"open_loop.{flag}") is True:
            why = dig(r, f"open_loop.{flag}_because")
            text = str(why) if why else flag.replace("_", " ")
            if text not in out:
                out.append(text)
    return tuple(out)


def load_point(point: dict[str, Any], x: float) -> LoadPoint:
    runs = _runs(point)
    cs = _median_of(runs, "context_switches_per_kop")
    server = [r for r in runs if dig(r, "open_loop.generator_bound") is not True]
    server_p99 = clean([dig(r, "latency_us.p99") for r in server])
    return LoadPoint(
        x=x,
        point=point,
        runs=len(runs),
        response_us={q: _median_of(runs, f"latency_us.{q}") for q in PERCENTILES},
        service_p99_us=_median_of(runs, "open_loop.service_time_us.p99"),
        generator_lag_p99_us=_median_of(runs, "open_loop.generator_lag_us.p99"),
        switches_per_completion=cs / 1000 if cs is not None else None,
        offered_ops_per_s=_median_of(runs, "open_loop.offered_ops_per_s"),
        achieved_ops_per_s=_median_of(runs, "throughput_ops_per_s"),
        over_capacity_runs=sum(dig(r, "open_loop.over_capacity") is True for r in runs),
        generator_bound_runs=sum(dig(r, "open_loop.generator_bound") is True for r in runs),
        over_capacity_because=_reasons(runs, "over_capacity"),
        generator_bound_because=_reasons(runs, "generator_bound"),
        server_p99_us=median(server_p99),
        server_runs=len(server_p99),
    )


def knee(points: list[LoadPoint], factor: float = KNEE_FACTOR) -> tuple[LoadPoint | None, LoadPoint | None]:
    """(the knee, the base): the base is the lowest-load point with a p99; the knee the
    lowest-load point above it whose p99 exceeds factor x the base's (None when none does)."""
    with_p99 = [lp for lp in sorted(points, key=lambda lp: lp.x) if lp.p99 is not None]
    if not with_p99:
        return None, None
    base = with_p99[0]
    assert base.p99 is not None
    limit = factor * base.p99
    for lp in with_p99[1:]:
        assert lp.p99 is not None
        if lp.p99 > limit:
            return lp, base
    return None, base


def curves(points: list[dict[str, Any]], factor: float = KNEE_FACTOR) -> list[Curve]:
    """One curve per setting of an open-loop family, in blocking ratio, then concurrency, then
    pool order. Closed-loop points, and points without a place on the x axis, are left out;
    where two points share a setting and x (they should not), the first is kept."""
    opened = [p for p in points if grid.is_open_loop(p)]
    kind = x_kind(opened)
    out: list[Curve] = []
    for r in grid.ratios(opened):
        for c in grid.spec_axis(opened, "concurrency"):
            for pool in grid.spec_axis(opened, "pool"):
                cell = grid.select(opened, concurrency=c, pool=pool, ratio=r)
                if not cell:
                    continue
                by_x: dict[float, LoadPoint] = {}
                for p in cell:
                    x = x_of(p, kind)
                    if x is not None and x not in by_x:
                        by_x[x] = load_point(p, x)
                lps = [by_x[x] for x in sorted(by_x)]
                if not lps:
                    continue
                k, base = knee(lps, factor)
                label = (f"c={grid.spec_value_label(cell, 'concurrency', c)} "
                         f"pool={grid.spec_value_label(cell, 'pool', pool)}")
                out.append(Curve(c, pool, r, label, lps, k, base))
    return out


def _cost(curve: Curve) -> tuple[bool, int, int]:
    """Ties in p99 go to the cheaper setting: a fixed pool, fewer threads, lower concurrency."""
    point = curve.points[0].point
    return (grid.is_auto_point(point), int(point["pool"]["value"]), int(point["concurrency"]["value"]))


def latency_answer(ratio_curves: list[Curve], ratio: float) -> LatencyAnswer:
    """The setting with the lowest median p99 (over its runs that were not generator-bound) at
    the highest load where no setting of this blocking ratio had a run over capacity."""
    mine = [c for c in ratio_curves if c.ratio == ratio]
    xs = sorted({lp.x for c in mine for lp in c.points})
    clean_xs = [x for x in xs if not any((lp := c.at(x)) is not None and lp.over_capacity for c in mine)]
    if not clean_xs:
        return LatencyAnswer(ratio, None, None, None,
                             reason="every load had a setting with a run over capacity")
    x = clean_xs[-1]
    judged = [(c, lp) for c in mine if (lp := c.at(x)) is not None and lp.server_p99_us is not None]
    if not judged:
        return LatencyAnswer(ratio, x, None, None,
                             reason="every run there was generator-bound, so none measured the server's latency")
    judged.sort(key=lambda cl: (cl[1].server_p99_us, _cost(cl[0])))
    best, at = judged[0]
    return LatencyAnswer(ratio, x, best, at, judged)


def latency_answers(points: list[dict[str, Any]], factor: float = KNEE_FACTOR) -> list[LatencyAnswer]:
    """The latency answer of each blocking ratio of an open-loop family."""
    cs = curves(points, factor)
    return [latency_answer(cs, r) for r in sorted({c.ratio for c in cs})]


def fmt_x(x: float | None, kind: str) -> str:
    if x is None:
        return "n/a"
    if kind == "load":
        return f"{x:g}"
    return f"{x:,.0f} ops/s"


def fmt_us(us: float | None) -> str:
    """Microseconds as people read them: 850 us, 2.47 ms, 1.2 s."""
    if us is None:
        return "n/a"
    if us >= 1e6:
        return f"{us / 1e6:.3g} s"
    if us >= 1e3:
        return f"{us / 1e3:.3g} ms"
    return f"{us:.3g} us"


def _at(x: float | None, kind: str) -> str:
    return ("load " if kind == "load" else "") + fmt_x(x, kind)


def knee_text(curve: Curve, kind: str, factor: float = KNEE_FACTOR) -> str:
    """One line: where this setting's p99 passes factor x its value at the lowest load."""
    head = f"{curve.label}, blocking ratio {curve.ratio:g}: "
    base = curve.knee_base
    if base is None:
        return head + "no p99, no knee"
    at = f"its {fmt_us(base.p99)} at {_at(base.x, kind)}"
    if curve.knee is None:
        last = curve.points[-1]
        return head + f"no knee up to {_at(last.x, kind)} (p99 stays within {factor:g}x {at})"
    return head + f"knee at {_at(curve.knee.x, kind)}: p99 {fmt_us(curve.knee.p99)}, over {factor:g}x {at}"


def answer_text(answer: LatencyAnswer, kind: str) -> str:
    """The latency answer in words."""
    head = f"Blocking ratio {answer.ratio:g}: "
    if answer.best is None or answer.at is None:
        where = ""
        if answer.x is not None:
            where = f" (at {_at(answer.x, kind)}, the highest load with no setting over capacity)"
        return head + f"no latency answer: {answer.reason}{where}."
    at = answer.at
    left_out = at.generator_bound_runs
    runs = f"median over {at.server_runs} of {at.runs} runs"
    if left_out:
        runs += f"; {left_out} generator-bound run(s) left out"
    others = len(answer.contenders) - 1
    return (head + f"at {_at(answer.x, kind)}, the highest load where no "
            f"setting was over capacity, {answer.best.label} has the lowest p99 response time, "
            f"{fmt_us(at.server_p99_us)} ({runs}"
            + (f"; of {others + 1} settings" if others else "") + "). "
            "Generator-bound runs are not counted as the server's latency.")

