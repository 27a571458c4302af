"""iocpbench-fidelity (iocpbench_analysis/fidelity.py computes, fidelity_text.py writes): the
rows of a file, a profiled point's rows per ratio, the worst deviations, the exit statuses, and
bench/blocking_fidelity.py reporting a results file the same way."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from synthetic import make_results, run_tool, write_json

from iocpbench_analysis.fidelity import FidelityRow, file_rows, point_rows, worst

ROOT = Path(__file__).resolve().parents[2]


def _with_handler_times(doc: dict[str, Any]) -> dict[str, Any]:
    for p in doc["points"]:
        for i, run in enumerate(p["runs"]):
            run["blocked_only_ratio"] = p["blocking"]["ratio"] + 0.001 * i
            run["handler_time"] = {"block_overshoot_us_mean": 1.0 + i, "target_block_us_mean": 100.0,
                                   "late_wakeups": i}
    return doc


def test_a_points_row_is_the_median_over_its_runs() -> None:
    doc = _with_handler_times(make_results())
    point = next(p for p in doc["points"] if p["blocking"]["ratio"] > 0)
    [row] = point_rows(point, logical_cpus=2)
    runs = point["runs"]
    assert row.requested == point["blocking"]["ratio"]
    assert row.achieved == statistics.median(r["achieved_blocking_ratio"] for r in runs)
    assert row.blocked_only == statistics.median(r["blocked_only_ratio"] for r in runs)
    assert row.overshoot_us == statistics.mean(1.0 + i for i in range(len(runs)))
    assert row.late_wakeups == sum(range(len(runs)))
    assert not row.overshoots()  # 1-5 us on 100 us: under max(5 us, 2 us)
    assert len(file_rows(doc)) == len(doc["points"])


def test_a_profiled_point_has_a_row_per_ratio() -> None:
    doc = make_results()
    point = doc["points"][0]
    point["blocking_fidelity"] = {"tolerance": 0.03, "requested": 0.4, "within_tolerance": True,
                                  "levels": [{"requested": 0.1, "achieved_median": 0.2, "blocked_only_median": 0.1},
                                             {"requested": 0.7, "achieved_median": 0.72, "blocked_only_median": 0.69}]}
    rows = point_rows(point, logical_cpus=2)
    assert [r.requested for r in rows] == [0.1, 0.7]
    assert [r.blocked_only for r in rows] == [0.1, 0.69]
    assert rows[0].point_id.endswith("@0.1") and rows[1].point_id.endswith("@0.7")


def _row(point_id: str, requested: float, achieved: float, fits: bool) -> FidelityRow:
    return FidelityRow(point_id, requested, achieved, None, None, None, None, fits)


def test_worst_takes_the_largest_deviation_and_can_keep_to_pools_that_fit() -> None:
    rows = [_row("a", 0.5, 0.51, True), _row("b", 0.5, 0.6, False), _row("c", 0.25, 0.29, True),
            _row("d", 0.0, 0.3, True)]  # b = 0 rows are never judged
    assert worst(rows, "achieved", only_fitting=False).point_id == "b"
    fitting = worst(rows, "achieved", only_fitting=True)
    assert fitting.point_id == "c" and abs(fitting.deviation - 0.04) < 1e-9 and not fitting.met()
    assert worst(rows, "blocked_only", only_fitting=False).point_id == "-"


def test_the_cli_reports_exit_0_and_writes_json(tmp_path: Path) -> None:
    src = write_json(tmp_path / "sweep.json", _with_handler_times(make_results()))
    out = tmp_path / "fidelity.json"
    proc = run_tool("fidelity", src, "--json", out)
    assert proc.returncode == 0, proc.stderr
    assert "worst |blocked-only - requested|, any pool:" in proc.stdout
    [entry] = json.loads(out.read_text(encoding="utf-8"))
    assert len(entry["rows"]) == len(json.loads(src.read_text())["points"])
    assert entry["worst_blocked_only"]["point_id"] != "-"


def test_bad_input_exit_2_one_line_and_no_output(tmp_path: Path) -> None:
    out = tmp_path / "fidelity.json"
    proc = run_tool("fidelity", tmp_path / "missing.json", "--json", out)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "missing.json" in proc.stderr
    assert not out.exists()


def test_the_bench_script_reports_a_results_file_the_same_way(tmp_path: Path) -> None:
    src = write_json(tmp_path / "sweep.json", _with_handler_times(make_results()))
    bench = subprocess.run([sys.executable, str(ROOT / "bench" / "blocking_fidelity.py"), "--results", str(src)],
                           capture_output=True, text=True, timeout=60, check=False)
    assert bench.returncode == 0, bench.stderr
    assert bench.stdout == run_tool("fidelity", src).stdout
