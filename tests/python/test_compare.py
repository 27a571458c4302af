"""iocpbench-compare: ratios, the gate, exit status, whole-run checks, Markdown, unmatched and
left-out points, and how it fails closed (BASE checked as NEW, the inconclusive status, the
blocking ratio lost in NEW, files from other machines refused)."""

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
    proc = run_tool("compare", a, b, c, "--fail-above", "999", "--cross-machine")
    assert proc.returncode == 0, proc.stderr
    notes = proc.stderr.strip().splitlines()
    assert len(notes) == 2 and all("note: the comparison spans machines" in n for n in notes), proc.stderr
    assert "machine.hostname (laptop vs server)" in notes[0] and "machine.logical_cpus (2 vs 64)" in notes[0]
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
    # Nothing judged is no pass: inconclusive.
    assert proc.returncode == 3 and "No points matched" in proc.stdout
    assert "inconclusive:" in proc.stderr and "none matched" in proc.stderr
    proc = run_tool("compare", a, b, "--ignore-port")
    assert proc.returncode == 0 and "Unmatched points" not in proc.stdout


def test_too_few_runs_is_inconclusive_and_descriptive_only(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", make_results(reps=2))
    b = write_json(tmp_path / "b.json", make_results(reps=2, scale=0.5, seed=4))
    proc = run_tool("compare", a, b)
    # 2 runs a side: no verdict whatever the ratio, and so no pass either.
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "**INCONCLUSIVE" in proc.stdout and "descriptive only" in proc.stdout
    assert "No regression" not in proc.stdout
    assert "(0.50x" in proc.stdout  # the ratios are still shown
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("iocpbench-compare: inconclusive: ")
    assert "12 point(s) with fewer than 3 runs a side" in lines[0] and "b.json" in lines[0]


def test_a_file_with_too_few_runs_compared_with_itself_passes_but_one_changed_run_does_not(tmp_path: Path) -> None:
    """Identical runs on both sides are a ratio of exactly 1, certain whatever their number: a
    quick sweep (2 runs a point) compared with itself passes. Change one run's value and the
    same file is inconclusive again (2 runs cannot judge a difference)."""
    data = make_results(reps=2)
    a = write_json(tmp_path / "a.json", data)
    proc = run_tool("compare", a, a)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data["points"][0]["runs"][0]["throughput_ops_per_s"] *= 1.01
    b = write_json(tmp_path / "b.json", data)
    proc = run_tool("compare", a, b)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"1 point(s) with fewer than 3 runs a side, not judged (at {data['points'][0]['id']})" in proc.stderr


def test_one_point_with_too_few_runs_is_inconclusive_and_named(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", make_results(seed=1))
    data = make_results(seed=2)
    short = data["points"][3]
    short["runs"] = short["runs"][:2]
    b = write_json(tmp_path / "b.json", data)
    proc = run_tool("compare", a, b)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"1 point(s) with fewer than 3 runs a side, not judged (at {short['id']})" in proc.stderr


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
    # One line per reason, each naming the file and its status.
    lines = err.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("iocpbench-compare: fail: ") and "b.json" in line for line in lines)
    assert "sweep.complete is false" in lines[0] and "9 base point(s) missing" in lines[1]
    verdict = next(line for line in out.splitlines() if line.startswith("**FAIL"))
    assert "sweep.complete is false" in verdict and "9 base point(s) missing" in verdict


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


FIDELITY_MISSED = {"tolerance": 0.03, "requested": 0.5, "achieved_median": 0.62, "blocked_only_median": 0.55,
                   "within_tolerance": False, "reason": "block below the timer's resolution"}


def _fidelity_files(tmp_path: Path, *, base_missed: bool, new_missed: bool) -> tuple[Path, Path, str]:
    """Two whole files whose point 4 (b = 0.5) missed its blocking ratio on the sides asked,
    its NEW runs at half the throughput; the other points say they met theirs."""
    files = []
    for name, seed, missed in (("a", 1, base_missed), ("b", 2, new_missed)):
        data = make_results(seed=seed)
        for p in data["points"][:4]:  # within tolerance: kept
            p["blocking_fidelity"] = {"tolerance": 0.03, "requested": p["blocking"]["ratio"],
                                      "achieved_median": p["blocking"]["ratio"], "blocked_only_median": None,
                                      "within_tolerance": True, "reason": None}
        off = data["points"][4]
        if name == "b":
            off["runs"] = [dict(r, throughput_ops_per_s=r["throughput_ops_per_s"] * 0.5) for r in off["runs"]]
        if missed:
            off["blocking_fidelity"] = dict(FIDELITY_MISSED)
        files.append(write_json(tmp_path / f"{name}.json", data))
    return files[0], files[1], off["id"]


LEFT_OUT = "### Left out: blocking ratio not within tolerance"


def test_a_blocking_ratio_met_in_base_and_missed_in_new_is_a_regression(tmp_path: Path) -> None:
    a, b, off = _fidelity_files(tmp_path, base_missed=False, new_missed=True)
    proc = run_tool("compare", a, b)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    section = proc.stdout.split(LEFT_OUT, 1)[1]
    assert off in section and "missed in new only (a regression)" in section
    assert "achieved 0.620" in section and "timer's resolution" in section
    assert f"| `{off}` |" not in proc.stdout  # its throughput is of another ratio: not in the table
    assert f"1 point(s) met their blocking ratio in base and missed it in new (at {off})" in proc.stderr
    assert "point regression(s) of the blocking ratio" in proc.stdout


def test_a_blocking_ratio_missed_in_base_is_left_out_and_inconclusive(tmp_path: Path) -> None:
    for new_missed, where in ((True, "both files"), (False, "base only")):
        a, b, off = _fidelity_files(tmp_path, base_missed=True, new_missed=new_missed)
        proc = run_tool("compare", a, b)
        assert proc.returncode == 3, (where, proc.stdout + proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert lines == [f"iocpbench-compare: inconclusive: {b}: 1 point(s) left out, their blocking ratio "
                         f"missed in {where} (at {off})"], proc.stderr
        assert off in proc.stdout.split(LEFT_OUT, 1)[1]
        assert f"| `{off}` |" not in proc.stdout


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
    # The synthetic files name their hosts apart: a comparison across machines.
    return render_markdown(compare_results(load_results(base), [load_results(new)], TP, cross_machine=True))


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


# ---------------------------------------------------------------- fails closed: broken runs


def _pair(tmp_path: Path, *, base: object = None, new: object = None, **kw: object) -> tuple[Path, Path]:
    """A whole pair (same machine, no change) with `base` and `new` applied to each side's data."""
    files = []
    for name, seed, change in (("a", 1, base), ("b", 2, new)):
        data = make_results(seed=seed, **kw)  # type: ignore[arg-type]
        if change is not None:
            change(data)  # type: ignore[operator]
        files.append(write_json(tmp_path / f"{name}.json", data))
    return files[0], files[1]


def _fail_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("iocpbench-compare: fail: ")]


def test_a_clean_pair_passes(tmp_path: Path) -> None:
    proc = run_tool("compare", *_pair(tmp_path))
    assert proc.returncode == 0 and proc.stderr == "", proc.stdout + proc.stderr
    assert "**PASS.** No regression beyond 5%" in proc.stdout


def test_a_run_at_zero_throughput_fails_in_base_as_in_new(tmp_path: Path) -> None:
    def zero(d: dict) -> None:
        d["points"][3]["runs"][1]["throughput_ops_per_s"] = 0.0

    for side in ("base", "new"):
        a, b = _pair(tmp_path, **{side: zero})
        proc = run_tool("compare", a, b)
        assert proc.returncode == 1, (side, proc.stdout + proc.stderr)
        point = make_results()["points"][3]["id"]
        file = a if side == "base" else b
        where = f"{file} (base)" if side == "base" else str(file)
        assert _fail_lines(proc.stderr) == [
            f"iocpbench-compare: fail: {where}: 1 run(s) with zero or null throughput (at {point})"], proc.stderr


def test_a_zero_run_at_every_point_fails_rather_than_having_too_few_runs(tmp_path: Path) -> None:
    def zero_everywhere(d: dict) -> None:
        for p in d["points"]:
            p["runs"][0]["throughput_ops_per_s"] = 0

    proc = run_tool("compare", *_pair(tmp_path, new=zero_everywhere))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "12 run(s) with zero or null throughput" in proc.stderr


def test_null_throughputs_fail_naming_their_points(tmp_path: Path) -> None:
    def nulls(d: dict) -> None:
        for i in (2, 5, 7, 9):
            d["points"][i]["runs"][4]["throughput_ops_per_s"] = None

    proc = run_tool("compare", *_pair(tmp_path, new=nulls))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    ids = [p["id"] for p in make_results()["points"]]
    assert f"4 run(s) with zero or null throughput (at {ids[2]}, {ids[5]}, {ids[7]} and 1 more)" in proc.stderr


def test_a_null_value_of_the_compared_metric_fails(tmp_path: Path) -> None:
    def no_p99(d: dict) -> None:
        d["points"][0]["runs"][0]["latency_us"]["p99"] = None

    a, b = _pair(tmp_path, new=no_p99)
    assert run_tool("compare", a, b).returncode == 0  # not the metric compared
    proc = run_tool("compare", a, b, "--metric", "latency_us.p99")
    assert proc.returncode == 1 and "1 run(s) with a zero or null latency_us.p99" in proc.stderr


def test_base_is_checked_as_new_is(tmp_path: Path) -> None:
    def partial(d: dict) -> None:
        d["sweep"]["complete"] = False

    def errors_undrained(d: dict) -> None:
        for p in d["points"]:
            for r in p["runs"]:
                r["errors"] = 2
                r["accounting"] = {"drained": False, "left_in_port": 3}

    def failed_run(d: dict) -> None:
        d["points"][0]["failures"] = [{"repetition": 2, "error": "worker start failed"}]

    for change, expect in ((partial, ["sweep.complete is false"]),
                           (errors_undrained, ["60 run(s) with errors", "60 run(s) not drained"]),
                           (failed_run, ["1 run(s) failed (points[].failures)"])):
        a, b = _pair(tmp_path, base=change)
        proc = run_tool("compare", a, b)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        lines = _fail_lines(proc.stderr)
        assert len(lines) == len(expect), proc.stderr
        for line, what in zip(lines, expect):
            assert f"{a} (base): " in line and what in line, line
        assert "base (" in proc.stdout and "not a whole run" in proc.stdout


def test_a_base_point_without_runs_fails_unless_allowed(tmp_path: Path) -> None:
    def empty(d: dict) -> None:
        d["points"][6]["runs"] = []

    a, b = _pair(tmp_path, base=empty)
    proc = run_tool("compare", a, b)
    assert proc.returncode == 1 and "(base): 1 point(s) without runs" in proc.stderr
    assert run_tool("compare", a, b, "--allow-missing").returncode == 0


# ---------------------------------------------------------------- fails closed: the point identity


def test_shared_and_per_thread_points_are_different_points(tmp_path: Path) -> None:
    """A file with both dispatches: every point is compared, none is a duplicate."""
    def both_dispatches(d: dict) -> None:
        per_thread = [dict(p, dispatch="per-thread", id=p["id"] + "/d=per-thread") for p in d["points"]]
        for p in d["points"]:
            p["dispatch"] = "shared"
        d["points"] += per_thread

    a, b = _pair(tmp_path, base=both_dispatches, new=both_dispatches)
    proc = run_tool("compare", a, b)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Duplicate" not in proc.stdout and "geometric mean ratio over 24 gated point(s)" in proc.stdout
    report = compare_results(load_results(a), [load_results(b)], TP)
    assert len(report.machines[0].rows) == 24 and not report.machines[0].matching.duplicates


def test_a_duplicate_point_fails_in_either_file(tmp_path: Path) -> None:
    def twice(d: dict) -> None:
        d["points"] += [dict(p) for p in d["points"]]

    for side in ("base", "new"):
        a, b = _pair(tmp_path, **{side: twice})
        proc = run_tool("compare", a, b)
        assert proc.returncode == 1, (side, proc.stdout + proc.stderr)
        assert "12 duplicate point(s), the same point identity twice" in proc.stderr
        assert (" (base): 12 duplicate" in proc.stderr) == (side == "base")
        assert f"Duplicate point in {'base' if side == 'base' else 'host-a'}" in proc.stdout


# ---------------------------------------------------------------- inconclusive


def test_runs_too_noisy_to_show_the_stated_loss_are_inconclusive(tmp_path: Path) -> None:
    import random

    def noisy(seed: int) -> object:
        def change(d: dict) -> None:
            rng = random.Random(seed)
            for p in d["points"]:
                for r in p["runs"]:
                    r["throughput_ops_per_s"] *= rng.uniform(0.5, 1.5)
        return change

    a, b = _pair(tmp_path, base=noisy(1), new=noisy(2))
    proc = run_tool("compare", a, b)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"iocpbench-compare: inconclusive: {b}: the smallest loss the gate could show at ")
    assert "above 30% (--max-detectable-loss)" in line
    assert run_tool("compare", a, b, "--max-detectable-loss", "99").returncode == 0
    # A margin set wider raises the stated size with it.
    assert run_tool("compare", a, b, "--fail-above", "60").returncode == 0


def test_the_detectable_loss_is_where_the_bound_reaches_the_margin() -> None:
    import math

    for higher in (True, False):
        sample = gate.Sample((0.0, 0.01, -0.01, 0.02, -0.02), (0.0, 0.01, -0.01, 0.02, -0.02))
        for pool in (gate.Pooled(0.01, 80), gate.Pooled(0.03, 80)):  # the point's own spread, then the pool's
            v = gate.judge_point(sample, pool, 10, margin_pct=5, higher_is_better=higher)
            assert v.se is not None and v.detectable is not None and v.q is not None
            # A point whose ratio were the detectable one has its bound exactly at the margin.
            shift = math.log(v.detectable)
            moved = gate.Sample(sample.base, tuple(x + shift for x in sample.new))
            bound = gate.judge_point(moved, pool, 10, margin_pct=5, higher_is_better=higher).bound
            assert bound is not None and math.isclose(bound, 0.95 if higher else 1.05, rel_tol=1e-9)
    assert gate.default_max_detectable(5) == gate.MAX_DETECTABLE_LOSS_PCT == 30


def test_a_regression_wins_over_inconclusive(tmp_path: Path) -> None:
    def loss_and_short(d: dict) -> None:
        for p in d["points"]:
            for r in p["runs"]:
                r["throughput_ops_per_s"] *= 0.6
        d["points"][0]["runs"] = d["points"][0]["runs"][:2]

    proc = run_tool("compare", *_pair(tmp_path, new=loss_and_short))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    kinds = [line.split(": ")[1] for line in proc.stderr.strip().splitlines()]
    assert "fail" in kinds and "inconclusive" in kinds and kinds.index("fail") < kinds.index("inconclusive")
    assert "**FAIL" in proc.stdout and "Also inconclusive" in proc.stdout


# ---------------------------------------------------------------- refused: other machines, other settings


SETUP_CHANGES = {
    "machine.hostname": (lambda d: d["machine"].update(hostname="other"), "host-a vs other"),
    "machine.logical_cpus": (lambda d: d["machine"].update(logical_cpus=4), "2 vs 4"),
    "machine.kernel": (lambda d: d["machine"].update(kernel="6.2.0"), "6.1.0 vs 6.2.0"),
    "tool.build_type": (lambda d: d["tool"].update(build_type="Debug"), "Release vs Debug"),
    "sweep.duration_s": (lambda d: d["sweep"].update(duration_s=2.0), "1 vs 2"),
    "sweep.warmup_s": (lambda d: d["sweep"].update(warmup_s=0.5), "0.2 vs 0.5"),
    "points' duration_s": (lambda d: [p.update(duration_s=0.7) for p in d["points"]], "none vs 0.7"),
}


def test_files_from_other_machines_or_settings_are_refused_unless_cross_machine(tmp_path: Path) -> None:
    for name, (change, values) in SETUP_CHANGES.items():
        a, b = _pair(tmp_path, new=change)
        proc = run_tool("compare", a, b)
        assert proc.returncode == 2 and proc.stdout == "", (name, proc.stdout + proc.stderr)
        (line,) = proc.stderr.strip().splitlines()
        assert line.startswith(f"iocpbench-compare: error: base and new differ in {name} ({values})"), line
        assert "--cross-machine" in line
    # Asked for, the comparison runs, with a note that it spans machines.
    proc = run_tool("compare", a, b, "--cross-machine")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr.startswith("iocpbench-compare: note: the comparison spans machines")
    assert "spans machines (--cross-machine)" in proc.stdout


def test_the_same_machine_and_settings_are_not_refused(tmp_path: Path) -> None:
    from iocpbench_analysis.compare import setup_differences

    a, b = _pair(tmp_path)
    assert setup_differences(load_results(a), load_results(b)) == []


def test_generator_bound_runs_make_a_latency_comparison_inconclusive() -> None:
    """An open-loop point whose pacer lagged (runs[].open_loop.generator_bound) has a response
    time that is partly the generator's: a latency gate over it cannot pass, a throughput gate
    is not concerned."""
    path = Path(__file__).parent / "fixtures" / "open_loop.json"
    res = load_results(path)
    bound = [p for p in res.points if any(r["open_loop"]["generator_bound"] for r in p["runs"])]
    assert bound, "the fixture has generator-bound runs"
    latency = compare_results(res, [load_results(path)], METRICS["latency_us.p99"])
    reasons = latency.machines[0].inconclusive
    assert any("generator-bound" in why and f"{len(bound)} point(s)" in why for why in reasons)
    assert latency.status != "pass"
    throughput = compare_results(res, [load_results(path)], METRICS["throughput_ops_per_s"])
    assert not any("generator-bound" in why for why in throughput.machines[0].inconclusive)
