"""iocpbench-compare: ratios, the gate, exit status, whole-run checks, Markdown, unmatched and
left-out points."""

from __future__ import annotations

from pathlib import Path

from synthetic import make_point, make_results, run_tool, write_json

from iocpbench_analysis import gate
from iocpbench_analysis.compare import compare_pair, compare_results, render_markdown
from iocpbench_analysis.load import load_results
from iocpbench_analysis.metrics import METRICS

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
    # The runs differ beyond doubt (the same jitter, shifted: complete separation)...
    assert row.p_value is not None and row.p_value < 0.05
    # ...but the gate asks whether the loss is beyond the 5% margin, and it is not.
    assert row.verdict == "ok" and not row.regression


def test_missing_runs_fall_back_to_summaries() -> None:
    base, new = make_point(seed=1), make_point(seed=2, scale=0.5)
    base["runs"], new["runs"] = [], []
    row = compare_pair(base, new, TP)
    assert row.p_value is None and not row.regression  # no runs: no verdict
    assert row.verdict == "no verdict"
    assert abs(row.ratio - 0.5) < 0.03 and row.ci is not None  # type: ignore[operator]


def test_file_against_itself_exits_0(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", make_results())
    proc = run_tool("compare", a, a)
    assert proc.returncode == 0, proc.stderr
    assert "| point |" in proc.stdout and "REGRESSION" not in proc.stdout
    assert "No regression beyond 5%" in proc.stdout and proc.stderr == ""
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
    assert run_tool("compare", a, b).returncode == 1  # b lacks a's b=0 points
    proc = run_tool("compare", a, b, "--allow-missing")
    assert proc.returncode == 0, proc.stderr
    section = proc.stdout.split("### Unmatched points", 1)[1]
    assert "Only in base" in section and "/b=0/" in section
    assert "not in base" in section and "/b=0.9/" in section
    # the matched half is in the table
    assert "| `post/emulated/c=N/p=2N/b=0.5/w=10` |" in proc.stdout


def test_no_match_at_all(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", make_results(port="emulated"))
    b = write_json(tmp_path / "b.json", make_results(port="win32"))
    proc = run_tool("compare", a, b, "--allow-missing")
    assert proc.returncode == 0 and "No points matched" in proc.stdout
    proc = run_tool("compare", a, b, "--ignore-port")
    assert proc.returncode == 0 and "Unmatched points" not in proc.stdout


def test_too_few_runs_is_descriptive_only(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", make_results(reps=2))
    b = write_json(tmp_path / "b.json", make_results(reps=2, scale=0.5, seed=4))
    proc = run_tool("compare", a, b)
    assert proc.returncode == 0, proc.stdout  # 2 runs a side: no verdict, whatever the ratio
    assert "No verdict: too few runs" in proc.stdout and "descriptive only" in proc.stdout
    assert "(0.50x" in proc.stdout  # the ratios are still shown
    assert "too few runs a side for the gate" in proc.stderr


def test_fewer_than_recommended_runs_warns(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", make_results(reps=3))
    b = write_json(tmp_path / "b.json", make_results(reps=3, scale=0.5, seed=4))
    proc = run_tool("compare", a, b)
    assert proc.returncode == 1  # 3 a side is gated, and a 50% loss is beyond doubt
    assert f"fewer than {gate.RECOMMENDED_RUNS} runs a side" in proc.stdout


def test_one_run_a_side_has_no_ci(tmp_path: Path) -> None:
    # The harness may write one run's summary CI as [x, x]: compare must not print "CI 1.03-1.03".
    base, new = make_point(seed=1, reps=1), make_point(seed=2, reps=1)
    for p in (base, new):
        stat = p["summary"]["throughput_ops_per_s"]
        stat.update(ci95_low=stat["median"], ci95_high=stat["median"], cv=0.0)
    row = compare_pair(base, new, TP)
    assert row.ci is None and row.verdict == "no verdict" and row.ratio is not None


def _whole_run_failure(tmp_path: Path, change: object, *extra: str) -> tuple[int, str, str]:
    a = write_json(tmp_path / "a.json", make_results(seed=1))
    data = make_results(seed=2)
    change(data)  # type: ignore[operator]
    b = write_json(tmp_path / "b.json", data)
    proc = run_tool("compare", a, b, *extra)
    return proc.returncode, proc.stdout, proc.stderr


def test_incomplete_sweep_fails_with_one_line(tmp_path: Path) -> None:
    def cut(d: dict) -> None:
        d["sweep"]["complete"] = False
        d["points"] = d["points"][:3]

    rc, out, err = _whole_run_failure(tmp_path, cut)
    assert rc == 1 and "FAIL" in out and "No regression" not in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "b.json" in lines[0]
    assert "sweep.complete is false" in lines[0] and "9 base point(s) missing" in lines[0]


def test_runs_with_errors_or_undrained_fail(tmp_path: Path) -> None:
    def errors(d: dict) -> None:
        d["points"][2]["runs"][0]["errors"] = 3

    rc, _, err = _whole_run_failure(tmp_path, errors)
    assert rc == 1 and "1 run(s) with errors" in err

    def undrained(d: dict) -> None:
        d["points"][1]["runs"][4]["accounting"] = {"drained": False, "left_in_port": 7}

    rc, _, err = _whole_run_failure(tmp_path, undrained)
    assert rc == 1 and "1 run(s) not drained" in err


def test_missing_points_fail_unless_allowed(tmp_path: Path) -> None:
    def drop(d: dict) -> None:
        d["points"] = d["points"][1:]

    rc, _, err = _whole_run_failure(tmp_path, drop)
    assert rc == 1 and "1 base point(s) missing" in err and "--allow-missing" in err
    rc, out, err = _whole_run_failure(tmp_path, drop, "--allow-missing")
    assert rc == 0 and err == "" and "Only in base" in out


def test_points_off_their_blocking_ratio_are_left_out_and_named(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", make_results(seed=1))
    data = make_results(seed=2)
    off = data["points"][4]
    off["runs"] = [dict(r, throughput_ops_per_s=r["throughput_ops_per_s"] * 0.5) for r in off["runs"]]
    off["blocking_fidelity"] = {"tolerance": 0.03, "requested": 0.5, "achieved_median": 0.62,
                                "blocked_only_median": 0.55, "within_tolerance": False,
                                "reason": "block below the timer's resolution"}
    for p in data["points"][:4]:  # within tolerance: kept
        p["blocking_fidelity"] = {"tolerance": 0.03, "requested": p["blocking"]["ratio"],
                                  "achieved_median": p["blocking"]["ratio"], "blocked_only_median": None,
                                  "within_tolerance": True, "reason": None}
    b = write_json(tmp_path / "b.json", data)
    proc = run_tool("compare", a, b)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # its 50% loss is not judged
    section = proc.stdout.split("### Left out: blocking ratio not within tolerance", 1)[1]
    assert off["id"] in section and "achieved 0.620" in section and "timer's resolution" in section
    assert f"| `{off['id']}` |" not in proc.stdout


def test_a_loss_on_every_point_fails_on_the_geometric_mean(tmp_path: Path) -> None:
    # 8% on every point: no single point is beyond doubt, together they are.
    a = write_json(tmp_path / "a.json", make_results(seed=1, ratios=(0.0, 0.25, 0.5, 0.75)))
    b = write_json(tmp_path / "b.json", make_results(seed=2, scale=0.92, ratios=(0.0, 0.25, 0.5, 0.75)))
    proc = run_tool("compare", a, b)
    assert proc.returncode == 1, proc.stdout
    assert "REGRESSION: the whole CI is below 0.95" in proc.stdout
    assert "geometric mean ratio 0.9" in proc.stderr


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


def test_noisy_runs_are_said(tmp_path: Path) -> None:
    import random

    def noisy(seed: int) -> dict:
        data = make_results(seed=seed)
        rng = random.Random(seed)
        for p in data["points"]:
            for r in p["runs"]:
                r["throughput_ops_per_s"] *= rng.uniform(0.6, 1.4)  # a busy machine: about 23% CV
        return data

    a = write_json(tmp_path / "a.json", noisy(1))
    b = write_json(tmp_path / "b.json", noisy(2))
    proc = run_tool("compare", a, b)
    assert "**noisy runs**" in proc.stdout and "(log sd)" in proc.stdout
    quiet = write_json(tmp_path / "q.json", make_results(seed=3))
    assert "noisy runs" not in run_tool("compare", quiet, quiet).stdout


def _io_results(tmp_path: Path, name: str, path: str | None, *, os_name: str = "Linux",
                dispatch: str | None = None) -> Path:
    """A synthetic file of file and socket points that record `path` (None: none, as files
    written before the path was recorded: read as thread), on `os_name`, of `dispatch`."""
    data = make_results(hostname=name, workloads=("file", "socket"))
    data["machine"]["os"] = os_name
    for point in data["points"]:
        if path is not None:
            point["workload_params"]["completion_path"] = path
        if dispatch is not None:
            point["dispatch"] = dispatch
    return write_json(tmp_path / f"{name}.json", data)


CROSSING = "compare one completion path with the other"


def _markdown(base: Path, new: Path) -> str:
    return render_markdown(compare_results(load_results(base), [load_results(new)], TP))


def test_a_change_of_completion_path_is_a_crossing_on_linux_shared_ports(tmp_path: Path) -> None:
    text = _markdown(_io_results(tmp_path, "old", None), _io_results(tmp_path, "new", "port"))
    assert f"24 matched point(s) {CROSSING}" in text, text
    assert "thread (24 points)" in text and "port (24 points)" in text, text


def test_windows_and_per_thread_points_never_cross_completion_paths(tmp_path: Path) -> None:
    # Windows ignores the path: an older Windows file (none recorded) against a newer one (port).
    old_win = _io_results(tmp_path, "old-win", None, os_name="Windows")
    new_win = _io_results(tmp_path, "new-win", "port", os_name="Windows")
    assert CROSSING not in _markdown(old_win, new_win)
    # Either side on Windows: the Linux side's path is not compared with another path.
    linux_thread = _io_results(tmp_path, "linux", "thread")
    assert CROSSING not in _markdown(linux_thread, new_win)
    assert CROSSING not in _markdown(old_win, linux_thread)
    # Per-thread dispatch: each worker reaps its own ring, whatever the path says.
    old_pt = _io_results(tmp_path, "old-pt", None, dispatch="per-thread")
    new_pt = _io_results(tmp_path, "new-pt", "port", dispatch="per-thread")
    assert CROSSING not in _markdown(old_pt, new_pt)
    # One side per-thread, the other shared: only one path was taken, no crossing either.
    assert CROSSING not in _markdown(old_pt, _io_results(tmp_path, "new-shared", "port"))
