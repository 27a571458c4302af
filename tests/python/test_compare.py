"""iocpbench-compare: ratios, significance, exit status, Markdown, unmatched points."""

from __future__ import annotations

from pathlib import Path

from synthetic import make_point, make_results, run_tool, write_json

from analysis.compare import compare_pair, compare_results, render_markdown
from analysis.load import load_results
from analysis.metrics import METRICS

TP = METRICS["throughput_ops_per_s"]
CS = METRICS["context_switches_per_kop"]


def test_injected_regression_is_found_with_ratio_ci_and_p() -> None:
    base = make_point(seed=1)
    new = make_point(seed=2, scale=0.7)
    row = compare_pair(base, new, TP)
    assert abs(row.ratio - 0.7) < 0.03  # type: ignore[operator]
    assert row.ci is not None and row.ci[0] <= row.ratio <= row.ci[1]
    assert row.p_value is not None and row.p_value < 0.05
    assert row.significant and row.regression and not row.improvement
    assert abs(row.worse_pct - 30) < 3  # type: ignore[operator]


def test_direction_depends_on_the_metric() -> None:
    base = make_point(seed=1)
    more_cs = make_point(seed=2, cs_scale=1.3)
    assert compare_pair(base, more_cs, CS).regression
    assert compare_pair(base, make_point(seed=2, scale=1.3), TP).improvement
    assert not compare_pair(base, make_point(seed=2, cs_scale=0.7), CS).regression


def test_small_significant_change_below_threshold_is_not_a_regression() -> None:
    row = compare_pair(make_point(seed=1), make_point(seed=1, scale=0.97), TP, fail_above=5)
    assert row.significant and not row.regression


def test_missing_runs_fall_back_to_summaries() -> None:
    base, new = make_point(seed=1), make_point(seed=2, scale=0.5)
    base["runs"], new["runs"] = [], []
    row = compare_pair(base, new, TP)
    assert row.p_value is None and not row.regression  # no runs: no significance claim
    assert abs(row.ratio - 0.5) < 0.03 and row.ci is not None  # type: ignore[operator]


def test_file_against_itself_exits_0(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", make_results())
    proc = run_tool("compare", a, a)
    assert proc.returncode == 0, proc.stderr
    assert "| point |" in proc.stdout and "REGRESSION" not in proc.stdout
    assert "No significant regression beyond 5%" in proc.stdout
    assert "Unmatched points" not in proc.stdout


def test_injected_30_percent_regression_exits_1(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", make_results(seed=1))
    b = write_json(tmp_path / "b.json", make_results(seed=2, scale=0.7))
    proc = run_tool("compare", a, b)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "REGRESSION -3" in proc.stdout
    # ...but not when the threshold is above the drop.
    assert run_tool("compare", a, b, "--fail-above", "40").returncode == 0


def test_metric_option(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", make_results(seed=1))
    b = write_json(tmp_path / "b.json", make_results(seed=2, cs_scale=1.3))
    assert run_tool("compare", a, b).returncode == 0
    proc = run_tool("compare", a, b, "--metric", "context_switches_per_kop")
    assert proc.returncode == 1 and "lower is better" in proc.stdout
    assert run_tool("compare", a, b, "--metric", "latency_us.p99").returncode == 0


def test_several_new_files_one_column_each_across_machine_sizes(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", make_results(hostname="laptop", n=2))
    b = write_json(tmp_path / "b.json", make_results(hostname="server", n=64, seed=5))
    c = write_json(tmp_path / "c.json", make_results(hostname="vm", n=4, seed=6))
    proc = run_tool("compare", a, b, c, "--fail-above", "999")
    assert proc.returncode == 0, proc.stderr
    header = next(line for line in proc.stdout.splitlines() if line.startswith("| point"))
    assert "laptop (N=2)" in header and "server (N=64)" in header and "vm (N=4)" in header
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| `")]
    assert len(rows) == 12 and all(line.count(" | ") == 3 for line in rows)


def test_unmatched_points_are_listed(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", make_results(ratios=(0.0, 0.5)))
    b = write_json(tmp_path / "b.json", make_results(ratios=(0.5, 0.9)))
    proc = run_tool("compare", a, b)
    assert proc.returncode == 0, proc.stderr
    section = proc.stdout.split("### Unmatched points", 1)[1]
    assert "Only in base" in section and "/b=0/" in section
    assert "not in base" in section and "/b=0.9/" in section
    # the matched half is in the table
    assert "| `post/emulated/c=N/p=2N/b=0.5/w=10` |" in proc.stdout


def test_no_match_at_all(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", make_results(port="emulated"))
    b = write_json(tmp_path / "b.json", make_results(port="win32"))
    proc = run_tool("compare", a, b)
    assert proc.returncode == 0 and "No points matched" in proc.stdout
    proc = run_tool("compare", a, b, "--ignore-port")
    assert proc.returncode == 0 and "Unmatched points" not in proc.stdout


def test_too_few_runs_note(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", make_results(reps=3))
    b = write_json(tmp_path / "b.json", make_results(reps=3, scale=0.5, seed=4))
    proc = run_tool("compare", a, b)
    assert proc.returncode == 0  # 3 runs a side can never reach p < 0.05
    assert "too few runs" in proc.stdout


def test_ratio_chart(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", make_results(seed=1))
    b = write_json(tmp_path / "b.json", make_results(seed=2, scale=0.7))
    chart = tmp_path / "charts" / "ratio.png"
    proc = run_tool("compare", a, b, a, "--chart", chart)
    assert proc.returncode == 1
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and chart.stat().st_size > 5_000


def test_markdown_escapes_pipes(tmp_path: Path) -> None:
    data = make_results()
    data["points"][0]["id"] = "weird|id"
    a = load_results(write_json(tmp_path / "a.json", data))
    text = render_markdown(compare_results(a, [a], TP))
    assert "weird\\|id" in text
