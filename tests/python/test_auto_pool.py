"""The self-sizing (auto) pool: its place on the pool axis, its labels, the pool-size chart,
the report's table and matching, on small hand-built points and on the real fixture
fixtures/auto_pool.json (`iocpbench sweep --pool N,2N,auto`, 2 CPUs)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from synthetic import FIXTURES, make_point, write_json

from iocpbench_analysis import charts, grid
from iocpbench_analysis.compare import compare_results, render_markdown
from iocpbench_analysis.load import Results, load_results
from iocpbench_analysis.metrics import METRICS
from iocpbench_analysis.report import auto_pool_row, auto_pool_table

AUTO_FIXTURE = FIXTURES / "auto_pool.json"
FIXED_FIXTURE = FIXTURES / "run_a.json"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def auto_results() -> Results:
    return load_results(AUTO_FIXTURE)


def _pool_point(spec: str, value: int, auto: tuple[int, int] | None = None) -> dict[str, Any]:
    p = make_point(reps=1)
    p["pool"] = {"spec": spec, "value": value}
    if auto:
        p["pool"]["auto"] = {"min": {"spec": str(auto[0]), "value": auto[0]},
                             "max": {"spec": str(auto[1]), "value": auto[1]}}
    return p


def _sized_run(timeline: list[list[float]], *, seconds: float = 0.3, **sizing: Any) -> dict[str, Any]:
    return {"seconds": seconds, "pool_sizing": {"timeline_ms_threads": timeline, **sizing}}


# ---------------------------------------------------------------- the pool axis and labels


def test_auto_pools_sort_after_fixed_pools_by_text() -> None:
    points = [_pool_point("auto:1:8", 8), _pool_point("2N+2", 6), _pool_point("auto", 8),
              _pool_point("N", 2), _pool_point("auto:1:2", 2), _pool_point("8", 8), _pool_point("12", 12)]
    # An auto pool's value is its ceiling: even one of 2 comes after the fixed 12.
    assert grid.spec_axis(points, "pool") == ["N", "2N+2", "8", "12", "auto", "auto:1:2", "auto:1:8"]
    assert grid.spec_axis(list(reversed(points)), "pool") == grid.spec_axis(points, "pool")


def test_auto_pool_label_is_its_range() -> None:
    points = [_pool_point("auto", 8, (2, 8)), _pool_point("auto:1:8", 8), _pool_point("2N", 4)]
    assert grid.spec_value_label(points, "pool", "auto") == "auto (2..8)"
    assert grid.spec_value_label(points, "pool", "auto:1:8") == "auto:1:8 (max 8)"  # no pool.auto
    assert grid.spec_value_label(points, "pool", "2N") == "2N (4)"
    assert grid.auto_range(points[2]["pool"]) is None


def test_fixture_pool_axis(auto_results: Results) -> None:
    for fam in grid.families(auto_results.points):
        assert grid.spec_axis(fam.points, "pool") == ["N", "2N", "auto"]
        n = auto_results.machine["logical_cpus"]
        assert grid.spec_value_label(fam.points, "pool", "auto") == f"auto ({n}..{4 * n})"


# ---------------------------------------------------------------- the timeline


def test_pool_timeline_runs_to_the_window_end_and_drops_the_stop() -> None:
    run = _sized_run([[-100.0, 2], [-50.0, 4], [120.5, 3], [301.0, 8]], seconds=0.3)
    assert charts.pool_timeline(run) == ([-100.0, -50.0, 120.5, 300.0], [2, 4, 3, 3])


def test_pool_timeline_without_changes_uses_the_window_start() -> None:
    assert charts.pool_timeline(_sized_run([], window={"threads_at_start": 5})) == ([0.0, 300.0], [5, 5])
    assert charts.pool_timeline(_sized_run([["x", 1], [1.0]])) is None  # nothing usable
    assert charts.pool_timeline({"seconds": 1.0}) is None  # a fixed pool's run


# ---------------------------------------------------------------- the chart


@pytest.mark.parametrize("workload", ["post", "file"])
def test_pool_size_chart_draws_every_run_of_every_auto_point(auto_results: Results, workload: str) -> None:
    fam = next(f for f in grid.families(auto_results.points) if f.workload == workload)
    autos = [p for p in fam.points if grid.is_auto_point(p)]
    fig = charts.pool_size(fam.points, "title")
    axes = [ax for ax in fig.axes if ax.has_data()]
    assert len(axes) == len(autos) == 2  # one panel per blocking ratio
    for ax, point in zip(axes, sorted(autos, key=lambda p: p["blocking"]["ratio"])):
        # Each step line ends at the window's end with the size the harness saw there (the
        # file workload's pool changes again while it stops; those changes are not drawn).
        steps = [line for line in ax.lines if line.get_drawstyle() == "steps-post"]
        assert len(steps) == len(point["runs"])
        for line, run in zip(steps, point["runs"]):
            assert line.get_xdata()[-1] == pytest.approx(run["seconds"] * 1000)
            assert line.get_ydata()[-1] == run["pool_sizing"]["window"]["threads_at_end"]
        flat = {line.get_ydata()[0] for line in ax.lines if line.get_drawstyle() != "steps-post"}
        n = auto_results.machine["logical_cpus"]
        assert flat == {n, 2 * n, 4 * n}  # fixed N and 2N, auto min (N) and max (4N)
        assert ax.patches, "no warm-up shading"
        assert ax.get_xlim()[0] < 0
        assert "ms" in ax.get_xlabel()


def test_pool_size_chart_is_not_applicable_without_auto_points() -> None:
    with pytest.raises(charts.NotApplicable):
        charts.pool_size([make_point()], "title")
    broken = _pool_point("auto", 8, (2, 8))  # auto, but a writer that left out pool_sizing
    with pytest.raises(charts.SkipChart) as err:
        charts.pool_size([broken], "title")
    assert not isinstance(err.value, charts.NotApplicable)


def test_pool_size_chart_says_when_the_timeline_was_full() -> None:
    point = _pool_point("auto", 8, (2, 8))
    point["runs"] = [_sized_run([[-10.0, 2], [5.0, 8]], timeline_dropped=5)]
    assert "5 changes not recorded" in charts.pool_size([point], "title").axes[0].get_title()
    point["runs"][0]["pool_sizing"]["timeline_dropped"] = 0
    assert "not recorded" not in charts.pool_size([point], "title").axes[0].get_title()


def _only_pool_size(monkeypatch: pytest.MonkeyPatch) -> None:
    # Only the chart under test: drawing all of them would take most of the time.
    monkeypatch.setattr(charts, "BUILDERS", [b for b in charts.BUILDERS if b[0] == "pool-size"])


def test_pool_size_chart_files_for_auto_points_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    auto_results: Results) -> None:
    _only_pool_size(monkeypatch)
    notes: list[str] = []
    written = charts.write_charts([auto_results, load_results(FIXED_FIXTURE)], tmp_path, notes)
    names = sorted(p.name for p in written)
    assert names == [f"auto_pool-{w}-emulated-w20-sleep-pool-size.{fmt}"
                     for w in ("file", "post") for fmt in ("png", "svg")]
    for path in written:
        head = path.read_bytes()[:100]
        assert head.startswith(PNG_MAGIC) if path.suffix == ".png" else b"<svg" in path.read_bytes()[:2000]
        assert path.stat().st_size > 5_000
    assert notes == []  # a fixed-pool file is not "missing" a pool-size chart


# ---------------------------------------------------------------- the report table


def test_auto_pool_row_summarises_the_runs() -> None:
    point = _pool_point("auto", 8, (2, 8))
    point["runs"] = [
        {"pool_sizing": {"window": {"min_threads": 3, "max_threads": 6, "mean_threads": 4.0}, "grows": 4, "shrinks": 1}},
        {"pool_sizing": {"window": {"min_threads": 2, "max_threads": 5, "mean_threads": 3.0}, "grows": 6, "shrinks": 3}},
    ]
    row = auto_pool_row(point)  # no summary.pool_mean_threads: the median of the runs' means
    assert row["pool"] == "auto (2..8)"
    assert row["mean threads"] == "3.5"
    assert row["threads min..max"] == "2..6"
    assert row["grows / shrinks per run"] == "5 / 2"
    point["summary"]["pool_mean_threads"] = {"median": 4.25, "mean": 4.25, "ci95_low": None,
                                             "ci95_high": None, "cv": None, "n": 2}
    assert auto_pool_row(point)["mean threads"] == "4.25"


def test_report_table_for_the_fixture(auto_results: Results) -> None:
    fam = next(f for f in grid.families(auto_results.points) if f.workload == "file")
    html = auto_pool_table(fam.points)
    autos = [p for p in fam.points if grid.is_auto_point(p)]
    assert html.count("<tr>") == 1 + len(autos) == 3
    for p in autos:
        lo = min(r["pool_sizing"]["window"]["min_threads"] for r in p["runs"])
        hi = max(r["pool_sizing"]["window"]["max_threads"] for r in p["runs"])
        assert p["id"] in html and f"{lo}..{hi}" in html
    assert auto_pool_table([p for p in fam.points if not grid.is_auto_point(p)]) == ""


# ---------------------------------------------------------------- compare


def test_fixture_compares_with_itself_and_with_another_spelling(tmp_path: Path, auto_results: Results) -> None:
    tp = METRICS["throughput_ops_per_s"]
    report = compare_results(auto_results, [auto_results], tp)
    mc = report.machines[0]
    assert len(mc.rows) == len(auto_results.points) == 12
    assert not mc.matching.only_base and not mc.matching.only_new and not mc.matching.duplicates
    assert sum(1 for p, _ in mc.matching.pairs if grid.is_auto_point(p)) == 4
    text = render_markdown(report)
    assert "unmatched" not in text.lower() and "p=auto" in text

    # The same grid from a writer that spelled the defaults out, on a machine 4x the size.
    other = copy.deepcopy(auto_results.data)
    for p in other["points"]:
        if grid.is_auto_point(p):
            p["pool"]["spec"] = "AUTO:n:4n:75:90:100"
            p["pool"]["value"] *= 4
    report = compare_results(auto_results, [load_results(write_json(tmp_path / "big.json", other))], tp)
    assert len(report.machines[0].rows) == 12
    assert "unmatched" not in render_markdown(report).lower()
