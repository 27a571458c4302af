"""The port's lists over a run (runs[].port_lists): the medians per point, one run's events as
steps, the two charts, and the report's section; files without the lists skip them silently."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from synthetic import FIXTURES, make_results, write_json

from iocpbench_analysis import port_lists
from iocpbench_analysis.charts import (
    build_charts, lists_vs_blocking_curves, port_lists_over_time, port_lists_panels, port_lists_vs_blocking,
)
from iocpbench_analysis.load import load_results
from iocpbench_analysis.report import render_report

FIXTURE = FIXTURES / "port_lists.json"
SECTION = "The port's lists at the recommended and the best setting"


def _lists(waiting: float = 0.0, active: float = 1.0, paused: float = 0.0, depth: float = 0.0, *,
           window_s: float = 0.5, handoffs: int = 10, total_s: float = 0.01, p50: float = 20.0,
           p99: float = 200.0, qwr: float = 0.0, events: dict[str, Any] | None = None) -> dict[str, Any]:
    shares = [1.0] + [0.0] * 16
    return {
        "concurrency": 2, "window_s": window_s,
        "mean": {"waiting": waiting, "active": active, "paused": paused, "depth": depth},
        "time_share_at_level": {k: list(shares) for k in ("waiting", "active", "paused", "depth")},
        "queued_with_room_s": qwr,
        "wake_delay": {"handoffs": handoffs, "total_s": total_s,
                       "mean_us": total_s * 1e6 / handoffs if handoffs else 0.0,
                       "p50_us": p50, "p90_us": p99 / 2, "p99_us": p99},
        "events": events or {"t_us": [], "waiting": [], "active": [], "paused": [], "depth": [], "cut": False},
    }


def _point(*blocks: dict[str, Any] | None) -> dict[str, Any]:
    runs = []
    for i, b in enumerate(blocks):
        run: dict[str, Any] = {"repetition": i, "port_lists": b}
        if b is None:
            run["port_lists_unavailable_because"] = "the kernel's IOCP does not expose its lists"
        runs.append(run)
    return {"runs": runs}


def _fixture() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


# The medians per point.

def test_point_lists_medians_over_runs() -> None:
    point = _point(
        _lists(waiting=1, active=2, paused=0.5, depth=4, window_s=0.5, total_s=0.05, p50=10, p99=100, qwr=0.005),
        _lists(waiting=2, active=1, paused=1.5, depth=8, window_s=0.5, total_s=0.10, p50=30, p99=300, qwr=0.0),
        _lists(waiting=10, active=1.5, paused=3.0, depth=6, window_s=0.25, total_s=0.5, p50=20, p99=900, qwr=0.05),
    )
    pl = port_lists.point_lists(point)
    assert pl is not None
    assert pl.runs == 3 and pl.concurrency == 2
    assert pl.mean == {"waiting": 2.0, "active": 1.5, "paused": 1.5, "depth": 6.0}
    assert pl.wake_p50_us == 20.0 and pl.wake_p99_us == 300.0
    assert pl.wake_mean_us == pytest.approx(0.1 * 1e6 / 10)
    # Released but not running: total / window per run (0.1, 0.2, 2.0 threads), then the median.
    assert pl.released_not_running == pytest.approx(0.2)
    assert pl.released_not_running_range == pytest.approx((0.1, 2.0))
    # Queued with room: a share of each run's window (0.01, 0, 0.2).
    assert pl.queued_with_room == pytest.approx(0.01)
    assert pl.queued_with_room_range == pytest.approx((0.0, 0.2))


def test_runs_without_a_handoff_have_no_wake_delay_quantile() -> None:
    point = _point(_lists(handoffs=0, total_s=0.0, p50=0.0, p99=0.0),
                   _lists(handoffs=4, total_s=0.002, p50=50.0, p99=400.0))
    pl = port_lists.point_lists(point)
    assert pl is not None
    assert pl.wake_p50_us == 50.0 and pl.wake_p99_us == 400.0  # not the median with the run's 0
    assert pl.handoffs == 2.0
    assert pl.released_not_running == pytest.approx((0.0 + 0.002 / 0.5) / 2)
    none = port_lists.point_lists(_point(_lists(handoffs=0, total_s=0.0, p50=0.0, p99=0.0)))
    assert none is not None and none.wake_p50_us is None and none.wake_p99_us is None
    assert none.released_not_running == 0.0


def test_absent_lists_give_none() -> None:
    old = {"runs": [{"repetition": 0, "throughput_ops_per_s": 1.0}]}  # a file from before the lists
    null = _point(None, None)
    for point in (old, null, {"runs": []}, {}):
        assert port_lists.point_lists(point) is None
        assert port_lists.event_series(point) is None
        assert not port_lists.has_lists(point)
    assert port_lists.unavailable_reason(null) == "the kernel's IOCP does not expose its lists"
    assert port_lists.unavailable_reason(old) is None
    assert not port_lists.any_lists([old, null])
    # A zero-length window has no ratio.
    assert port_lists.released_not_running(_lists(window_s=0.0)) is None
    assert port_lists.queued_with_room(_lists(window_s=0.0)) is None
    # One run with lists among runs without: the medians rest on that run.
    mixed = port_lists.point_lists(_point(None, _lists(waiting=3)))
    assert mixed is not None and mixed.runs == 1 and mixed.mean["waiting"] == 3.0


def test_fixture_medians_match_the_runs() -> None:
    for point in _fixture()["points"]:
        blocks = [r["port_lists"] for r in point["runs"]]
        pl = port_lists.point_lists(point)
        assert pl is not None and pl.runs == len(blocks) == 2
        for name in port_lists.LISTS:
            assert pl.mean[name] == pytest.approx(sum(b["mean"][name] for b in blocks) / 2)
        rnr = [b["wake_delay"]["total_s"] / b["window_s"] for b in blocks]
        assert pl.released_not_running == pytest.approx(sum(rnr) / 2)
        assert pl.concurrency == point["concurrency"]["value"]


# One run's events as steps.

def test_fixture_event_series_columns_of_equal_length() -> None:
    for point in _fixture()["points"]:
        s = port_lists.event_series(point)
        assert s is not None
        assert s.repetition == 0 and s.concurrency == point["concurrency"]["value"]
        assert s.cut and s.recorded == 400 and len(s.t_ms) == 400  # cut: not carried on to the end
        assert all(len(v) == len(s.t_ms) for v in s.levels.values())
        assert set(s.levels) == set(port_lists.LISTS)
        assert s.t_ms[0] == 0.0 and all(a <= b for a, b in zip(s.t_ms, s.t_ms[1:]))
        assert s.window_ms is not None and s.shown_ms < s.window_ms
        assert max(s.levels["waiting"]) + max(s.levels["active"]) <= point["pool"]["value"] + 1


def test_event_series_carries_on_to_the_window_end_and_cuts_ragged_columns() -> None:
    events = {"t_us": [0.0, 1000.0, 2500.0], "waiting": [1, 0, 1], "active": [1, 2, 1, 9],
              "paused": [0, 0, 0], "depth": [0, 3, 0], "cut": False}
    first = _lists(window_s=0.004)
    point = _point(_lists(), first)
    point["runs"][0]["repetition"], point["runs"][1]["repetition"] = 1, 0
    point["runs"][1]["port_lists"]["events"] = events
    s = port_lists.event_series(point)
    assert s is not None and s.repetition == 0 and not s.cut
    assert s.t_ms == [0.0, 1.0, 2.5, 4.0]  # the last step carried on to the window's end
    assert s.levels["active"] == [1.0, 2.0, 1.0, 1.0]  # the extra value (9) left out
    assert s.levels["depth"] == [0.0, 3.0, 0.0, 0.0]
    assert s.recorded == 3


def test_event_series_prefers_repetition_zero() -> None:
    ev = {"t_us": [0.0, 5.0], "waiting": [0, 1], "active": [1, 1], "paused": [0, 0], "depth": [0, 0], "cut": True}
    later = copy.deepcopy(ev) | {"waiting": [7, 7]}
    point = _point(_lists(events=later), _lists(events=ev))
    point["runs"][0]["repetition"], point["runs"][1]["repetition"] = 3, 0
    s = port_lists.event_series(point)
    assert s is not None and s.repetition == 0 and s.levels["waiting"] == [0.0, 1.0]


# Charts.

def test_fixture_draws_both_charts_without_notes(tmp_path: Path) -> None:
    notes: list[str] = []
    charts = {c.name: c for c in build_charts(load_results(FIXTURE), notes)}
    assert notes == []
    slug = "post-emulated-w100-sleep"
    assert {f"{slug}-port-lists", f"{slug}-port-lists-vs-blocking"} <= set(charts)
    fig = charts[f"{slug}-port-lists"].figure
    panels = [ax for ax in fig.axes if ax.get_ylabel() == "threads"]
    assert panels
    for ax in panels:
        # M dashed across each panel, and the three thread lists stepped.
        assert any(line.get_linestyle() == "--" and list(line.get_ydata()) == [2, 2] for line in ax.lines)
        assert sum(line.get_drawstyle() == "steps-post" for line in ax.lines) == 3
    assert any(ax.get_legend() is not None for ax in fig.axes)
    assert "queue depth" in fig._supxlabel.get_text()  # the caption says what each list is


def test_port_lists_panels_are_the_recommended_and_the_best() -> None:
    points = load_results(FIXTURE).points
    panels = port_lists_panels(points)
    roles = [role for _, role in panels]
    assert 2 <= len(panels) <= 4
    assert all(role in ("recommended", "best", "recommended, the best") for role in roles)
    assert roles.count("recommended") + roles.count("recommended, the best") == 2  # one per blocking ratio
    assert len(port_lists_panels(points, limit=1)) == 1


def test_lists_vs_blocking_curves_are_the_point_medians() -> None:
    points = load_results(FIXTURE).points
    curves = lists_vs_blocking_curves(points)
    assert sorted(c.pool for c in curves) == ["2N+2", "N"]
    for c in curves:
        assert len(c.x) == len(c.released_not_running) == len(c.queued_with_room) == 2
        for p, v in zip(sorted((p for p in points if p["pool"]["spec"] == c.pool),
                               key=lambda p: p["blocking"]["ratio"]), c.released_not_running):
            pl = port_lists.point_lists(p)
            assert pl is not None and v is not None
            assert v[0] == pl.released_not_running and v[1] <= v[0] <= v[2]


def test_files_without_lists_skip_the_charts_silently(tmp_path: Path) -> None:
    old = make_results()  # no port_lists key at all
    notes: list[str] = []
    names = [c.name for c in build_charts(load_results(write_json(tmp_path / "old.json", old)), notes)]
    assert not any("port-lists" in n for n in names) and not any("port-lists" in n for n in notes)

    windows = _fixture()
    for p in windows["points"]:
        for r in p["runs"]:
            r["port_lists"] = None
            r["port_lists_unavailable_because"] = "the kernel's IOCP does not expose its lists"
    notes = []
    names = [c.name for c in build_charts(load_results(write_json(tmp_path / "win.json", windows)), notes)]
    assert not any("port-lists" in n for n in names) and not any("port-lists" in n for n in notes)
    from iocpbench_analysis.charts import NotApplicable
    with pytest.raises(NotApplicable):
        port_lists_over_time(windows["points"], "t")
    with pytest.raises(NotApplicable):
        port_lists_vs_blocking(windows["points"], "t")


# The report.

def test_report_section_for_the_fixture_and_not_without_lists(tmp_path: Path) -> None:
    notes: list[str] = []
    page = render_report([load_results(FIXTURE)], notes)
    assert SECTION in page
    section = page[page.index(SECTION):page.index("<h3>Machine</h3>")]
    for text in ("recommended", "best: c=N (2) pool=2N+2 (6)", "wake-up delay p50 / p99 (us)",
                 "released but not running (threads)", "mean active (C), of M = 2", "queued with room"):
        assert text in section, text
    assert section.count("<table>") == 2  # one per blocking ratio
    assert section.count('src="data:image/png;base64,') == 2  # the lists over time of each
    rec_best = port_lists.point_lists(next(p for p in load_results(FIXTURE).points
                                           if p["id"] == "post/emulated/c=N/p=2N+2/b=0.5/sleep/w=100"))
    assert rec_best is not None and rec_best.wake_p99_us is not None
    # The best's wake-up delay p50 / p99, medians of its two runs ((30.72 + 15.36) / 2 and
    # (1179.648 + 491.52) / 2 us).
    assert rec_best.wake_p50_us == pytest.approx(23.04) and rec_best.wake_p99_us == pytest.approx(835.584)
    assert "<td class=\"num\">23 / 836</td>" in section

    old = render_report([load_results(write_json(tmp_path / "old.json", make_results()))], [])
    assert SECTION not in old and "wake-up delay" not in old
