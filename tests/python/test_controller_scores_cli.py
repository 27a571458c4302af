"""iocpbench-controllers: its table, JSON, charts and exit statuses; the controllers chart in
iocpbench-charts and the score table in iocpbench-report."""

from __future__ import annotations

import json
from pathlib import Path

from synthetic import make_results, run_tool, write_json
from synthetic_controllers import make_pool_point, make_run, results_with, step_group

from iocpbench_analysis.charts import build_charts
from iocpbench_analysis.load import load_results
from iocpbench_analysis.report import render_report


def test_scores_a_group_exit_0_with_table_json_and_charts(tmp_path: Path) -> None:
    src = write_json(tmp_path / "sweep.json", results_with(step_group()))
    out, charts = tmp_path / "scores.json", tmp_path / "charts"
    proc = run_tool("controllers", src, "--json", out, "--charts", charts)
    assert proc.returncode == 0, proc.stderr
    assert "best fixed pool: 4N" in proc.stdout
    hill = next(line for line in proc.stdout.splitlines() if line.startswith("hill"))
    assert "0.950" in hill and "500 ms, 500 ms, 500 ms" in hill
    scores = json.loads(out.read_text(encoding="utf-8"))
    group = scores["files"][0]["groups"][0]
    assert group["judged"] and group["best_fixed"] == "4N"
    rows = {r["pool"]: r for r in group["rows"]}
    assert rows["hill"]["controller"] == "hill" and rows["hill"]["settled_threads"] == 6.0
    assert [r["recovery_ms"] for r in rows["hill"]["recovery"]] == [500.0, 500.0, 500.0]
    files = sorted(charts.iterdir())
    assert {f.suffix for f in files} == {".png", ".svg"} and all(f.stat().st_size > 0 for f in files)
    assert all("controllers" in f.name for f in files)


def test_no_controller_or_no_fixed_pool_cannot_judge_exit_3(tmp_path: Path) -> None:
    fixed_only = write_json(tmp_path / "fixed.json", make_results())
    proc = run_tool("controllers", fixed_only)
    assert proc.returncode == 3
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "no controller pool" in lines[0], proc.stderr
    only = [make_pool_point("hill", 8, [make_run(90.0), make_run(95.0)])]
    proc = run_tool("controllers", write_json(tmp_path / "hill.json", results_with(only)))
    assert proc.returncode == 3 and "no fixed pool" in proc.stderr


def test_bad_input_exit_2_one_line_and_no_output_file(tmp_path: Path) -> None:
    out = tmp_path / "scores.json"
    for bad, expect in ((tmp_path / "missing.json", "no such file"),
                        (write_json(tmp_path / "list.json", [1, 2]), "not a results file")):
        proc = run_tool("controllers", bad, "--json", out)
        assert proc.returncode == 2
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and expect in lines[0] and str(bad.name) in lines[0], proc.stderr
        assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_charts_and_report_include_controllers_only_where_there_are_some(tmp_path: Path) -> None:
    with_ctl = load_results(write_json(tmp_path / "ctl.json", results_with(step_group())))
    without = load_results(write_json(tmp_path / "plain.json", make_results()))
    notes: list[str] = []
    names = [c.name for c in build_charts(with_ctl, notes)]
    assert sum("controllers" in n for n in names) == 1, names
    assert not any("controllers" in c.name for c in build_charts(without, notes))
    assert "Pool controllers against the best fixed pool" in render_report([with_ctl], notes)
    assert "Pool controllers" not in render_report([without], notes)


def test_unwritable_json_is_bad_input(tmp_path: Path) -> None:
    src = write_json(tmp_path / "sweep.json", results_with(step_group()))
    out = tmp_path / "no-such-dir" / "scores.json"
    proc = run_tool("controllers", src, "--json", out)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot write" in lines[0] and "no-such-dir" in lines[0], proc.stderr
    assert not out.exists()
