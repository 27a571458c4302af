"""The whole answer: what the recommended setting, the best and the rules of thumb cost in
context switches (answer's table, the report), the recommended cell marked on the heatmap, the
throughput-vs-switches chart; the points measured on a busy machine (runs[].machine_load)
marked in the report and charts and named by answer and compare; and the console script."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from synthetic import FIXTURES, ROOT, make_results, run_tool, scale_pool, write_json

from iocpbench_analysis import answer, charts, grid, machine_load
from iocpbench_analysis.load import load_results

BUSY_LOAD = {"busy": True, "reasons": ["preempted by other processes 97%"], "steal_share": None,
             "others_cpu_share": 0.72, "preempted_by_others_share": 0.97}
QUIET_LOAD = {"busy": False, "reasons": [], "steal_share": 0.0, "others_cpu_share": 0.01,
              "preempted_by_others_share": 0.02}


def _best_apart_from_recommended() -> dict[str, Any]:
    """One blocking ratio where every pool is within the runs' jitter: the best is 2N+2, the
    recommended the cheapest, pool N (the template's throughput is undone by the scales)."""
    data = make_results(conc=("N",), pools=("N", "2N", "2N+2"), ratios=(0.0,))
    scale_pool(data, "2N", 1.2)
    scale_pool(data, "2N+2", 1.45)
    return data


def busy_fixture(tmp_path: Path) -> tuple[Path, set[str]]:
    """A copy of a real results file with runs[].machine_load: one busy run in two points,
    every other run of the first half quiet, the second half without the field (older runs)."""
    data = json.loads((FIXTURES / "run_a.json").read_text(encoding="utf-8"))
    points = data["points"]
    for p in points[: len(points) // 2]:
        for r in p["runs"]:
            r["machine_load"] = dict(QUIET_LOAD)
    busy = {points[1]["id"], points[len(points) - 1]["id"]}
    for p in points:
        if p["id"] in busy:
            p["runs"][0]["machine_load"] = dict(BUSY_LOAD)
    return write_json(tmp_path / "busy.json", data), busy


# ---------------------------------------------------------------- the cost of each setting


def test_answer_table_gives_the_cost_of_the_recommended_the_best_and_the_rules(tmp_path: Path) -> None:
    data = _best_apart_from_recommended()
    (a,) = answer.answers(data["points"])
    assert a.recommended.point is not a.best.point  # what the test is about
    proc = run_tool("answer", write_json(tmp_path / "r.json", data))
    assert proc.returncode == 0, proc.stderr
    head, row = proc.stdout.splitlines()[:2]
    for column in ("cs/1k", "best", "best cs/1k"):
        assert column in head.split("  ") or column in head.split()
    cells = [c.strip() for c in row.split("  ") if c.strip()]
    assert cells[2] == a.recommended.label and cells[4] == answer.fmt_switches(a.recommended)
    assert cells[5] == a.best.label and cells[7] == answer.fmt_switches(a.best)
    for _, s in a.rules:
        assert answer.fmt_rule(s) in row and f"{answer.fmt_switches(s)} cs/1k" in answer.fmt_rule(s)
    assert answer.switches_per_kop(None) is None and answer.fmt_switches(None) == "n/a"


def _stars(ax: Any) -> list[tuple[float, float]]:
    return [(float(line.get_xdata()[0]), float(line.get_ydata()[0])) for line in ax.lines
            if line.get_marker() == charts.RECOMMENDED_STYLE["marker"] and len(line.get_xdata())]


def test_heatmap_marks_the_recommended_cell_not_the_best() -> None:
    data = _best_apart_from_recommended()
    (a,) = answer.answers(data["points"])
    fig = charts.heatmap(data["points"], "t")
    ax = fig.axes[0]
    pools = grid.spec_axis(data["points"], "pool")
    rec_col = pools.index(grid.normalize_spec(a.recommended.point["pool"]["spec"]))
    best_col = pools.index(grid.normalize_spec(a.best.point["pool"]["spec"]))
    assert rec_col != best_col
    stars = _stars(ax)
    assert len(stars) == 1 and round(stars[0][0] + 0.3) == rec_col
    bold = [t for t in ax.texts if t.get_fontweight() == "bold"]
    assert len(bold) == 1 and round(bold[0].get_position()[0]) == rec_col
    legend = " ".join(t.get_text() for t in ax.get_legend().get_texts())
    assert "recommended" in legend and "indistinguishable from the best" in legend


def test_throughput_vs_switches_stars_the_recommended_setting() -> None:
    data = _best_apart_from_recommended()
    (a,) = answer.answers(data["points"])
    fig = charts.throughput_vs_switches(data["points"], "t")
    rec = a.recommended.point
    x = rec["summary"]["context_switches_per_kop"]["median"] / 1000
    y = rec["summary"]["throughput_ops_per_s"]["median"]
    stars = _stars(fig.axes[0])
    assert len(stars) == 1 and abs(stars[0][0] - x) < 1e-9 and abs(stars[0][1] - y) < 1e-6
    assert "context switches per completion" in fig.axes[0].get_xlabel()


# ---------------------------------------------------------------- a busy machine


def test_machine_load_absent_is_unknown_never_busy() -> None:
    point = {"runs": [{}, {"machine_load": None}, {"machine_load": dict(QUIET_LOAD)}]}
    assert not machine_load.is_busy(point) and machine_load.busy_line([point]) is None
    point["runs"].append({"machine_load": dict(BUSY_LOAD)})
    assert machine_load.is_busy(point)
    assert machine_load.reasons(point) == BUSY_LOAD["reasons"]
    assert machine_load.point_text(point, lambda p: "x") == "x (1 of 4 runs: preempted by other processes 97%)"


def test_busy_points_are_named_by_answer_and_compare(tmp_path: Path) -> None:
    path, busy = busy_fixture(tmp_path)
    loaded = load_results(path)  # the field is valid results
    assert {p["id"] for p in machine_load.busy_points(loaded.points)} == busy
    out = run_tool("answer", path)
    assert out.returncode == 0, out.stderr
    last = out.stdout.splitlines()[-1]
    assert last.startswith("warning: measured on a busy machine (2 point(s)): ")
    named = {p["id"] for p in loaded.points if p["id"] in last}
    assert named == busy
    quiet = run_tool("answer", FIXTURES / "run_a.json")
    assert "busy" not in quiet.stdout  # a file without the field: unknown, not busy

    cmp = run_tool("compare", FIXTURES / "run_a.json", path)
    lines = [line for line in cmp.stdout.splitlines() if line.startswith("**Measured on a busy machine**")]
    assert len(lines) == 1
    assert {p["id"] for p in loaded.points if p["id"] in lines[0]} == busy


def test_busy_points_are_marked_in_the_report_and_charts(tmp_path: Path) -> None:
    path, busy = busy_fixture(tmp_path)
    out = tmp_path / "r.html"
    proc = run_tool("report", path, "-o", out)
    assert proc.returncode == 0, proc.stderr
    page = out.read_text(encoding="utf-8")
    marks = page.count(f'<span class="busy" title="{BUSY_LOAD["reasons"][0]}">busy</span>')
    assert marks >= len(busy)  # each in its points table, and wherever the answer names it
    assert page.count('<p class="note legend">') >= 1 and "measured on a busy machine" in page

    loaded = load_results(path)
    notes: list[str] = []
    fam = next(f for f in grid.families(loaded.points) if any(p["id"] in busy for p in f.points))
    by_name = {c.name.rsplit("-", 1)[-1]: c for c in charts.build_family_charts(loaded, fam, notes)}
    heat = by_name["heatmap"].figure
    diamonds = [line for ax in heat.axes for line in ax.lines
                if line.get_marker() == charts.BUSY_STYLE["marker"] and len(line.get_xdata())]
    assert len(diamonds) == sum(p["id"] in busy for p in fam.points)
    assert charts.BUSY_TEXT in [t.get_text() for t in heat.axes[0].get_legend().get_texts()]


# ---------------------------------------------------------------- readable charts


def test_family_titles_read_as_words() -> None:
    fam = grid.families(make_results()["points"])[0]
    assert "{" not in fam.title and "in flight 64, posters 1" in fam.title
    assert grid.params_text('{"block_size":4096,"file_size_mib":64,"buffered":false}') == \
        "block size 4 KiB, file size 64 MiB, buffered no"


def _latency_axes(p99_factor: float) -> Any:
    data = make_results(conc=("N",), ratios=(0.0,))
    for p in data["points"]:
        p["summary"]["latency_us"]["p99"]["median"] *= p99_factor
        for r in p["runs"]:
            r["latency_us"]["p99"] *= p99_factor
    return charts.latency(data["points"], "t").axes[0]


def test_latency_log_axis_only_over_a_decade_and_with_intervals() -> None:
    narrow = _latency_axes(1.0)  # p99 is 3x p50: less than a decade
    assert narrow.get_yscale() == "linear" and narrow.get_ylim()[0] == 0
    assert narrow.containers, "error bars (the CI of each median)"
    wide = _latency_axes(20.0)  # 60x
    assert wide.get_yscale() == "log"


def test_a_one_point_heatmap_is_not_clipped_and_lifo_has_a_caption() -> None:
    data = make_results(conc=("N",), pools=("N",), ratios=(0.0,))
    fig = charts.heatmap(data["points"], grid.families(data["points"])[0].title)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    box = fig.get_tightbbox(canvas.get_renderer())
    width, height = fig.get_size_inches()
    assert box.x0 >= -0.05 and box.y0 >= -0.05 and box.x1 <= width + 0.05 and box.y1 <= height + 0.05
    lifo = charts.lifo_signature(make_results()["points"], "t")
    assert "LIFO" in lifo._supxlabel.get_text()  # type: ignore[attr-defined]


def test_two_file_report_names_each_side(tmp_path: Path) -> None:
    a = write_json(tmp_path / "one.json", make_results(hostname="vm", ratios=(0.0,)))
    b = write_json(tmp_path / "two.json", make_results(hostname="vm", ratios=(0.0,)))
    out = tmp_path / "r.html"
    assert run_tool("report", a, b, "-o", out).returncode == 0
    page = out.read_text(encoding="utf-8")
    assert "<title>iocpbench report: one.json on vm, two.json on vm</title>" in page
    assert "<h3>Which setting: one.json on vm</h3>" in page and "<h3>Which setting: two.json on vm</h3>" in page


# ---------------------------------------------------------------- the console script


def test_iocpbench_answer_is_a_console_script() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["iocpbench-answer"] == "iocpbench_analysis.cli:answer_main"
    proc = run_tool("answer", "--help")
    assert proc.returncode == 0 and proc.stdout.startswith("usage: iocpbench-answer ")
    assert "example: iocpbench-answer " in proc.stdout

