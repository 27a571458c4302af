"""Comparing machines (iocpbench-compare --cross-machine): per point the ratio with its CI, per
group of points that differ only in concurrency and pool whether the machines rank the settings
alike (cross_machine.py), and a comparison that reports without gating: exit 0 for whole runs,
1 only for a file that is not one, never 3."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synthetic import make_point, make_results, run_tool, summarize_runs, write_json

from iocpbench_analysis import cross_machine as xm
from iocpbench_analysis.compare import FAIL, REPORTED, compare_results, render_markdown
from iocpbench_analysis.load import load_results
from iocpbench_analysis.metrics import METRICS

TP = METRICS["throughput_ops_per_s"]
RANK_SECTION = "### Do the machines rank the settings alike?"
SETTINGS = (("N", "N"), ("N", "2N"), ("2N", "2N"), ("2N", "2N+2"))


def _scaled(point: dict[str, Any], factor: float) -> dict[str, Any]:
    """The point with every run's throughput times factor (and its summary recomputed)."""
    out = {**point, "runs": [{**r, "throughput_ops_per_s": r["throughput_ops_per_s"] * factor} for r in point["runs"]]}
    out["summary"] = summarize_runs(out["runs"])
    return out


def _pairs(factors: list[float], *, ratio: float = 0.5) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Base points at SETTINGS (n=4), and new points on a machine of 16 CPUs whose throughput
    is the base's times each factor."""
    pairs = []
    for (conc, pool), factor in zip(SETTINGS, factors):
        base = make_point(n=4, conc=conc, pool=pool, ratio=ratio, seed=1)
        new = _scaled(make_point(n=4, conc=conc, pool=pool, ratio=ratio, seed=2), factor)
        new["concurrency"] = {**new["concurrency"], "value": new["concurrency"]["value"] * 4}
        new["pool"] = {**new["pool"], "value": new["pool"]["value"] * 4}
        pairs.append((base, new))
    return pairs


# ---------------------------------------------------------------- the pure module


def test_machines_that_agree_in_rank() -> None:
    pairs = _pairs([3.0, 3.0, 3.0, 3.0])
    (group,) = xm.rank_groups(pairs)
    assert group.rho is not None and abs(group.rho - 1.0) < 1e-9 and group.reason is None
    assert len(group.settings) == 4 and not group.unranked
    assert group.base_best is not None and group.new_best is not None
    assert group.base_best.label == group.new_best.label == "c=2N/p=2N"
    assert group.best_differs is False
    assert group.group == "post/emulated/b=0.5/w=10/" + '{"in_flight":64,"posters":1}'


def test_machines_that_disagree_in_rank() -> None:
    # The base's best (c=2N/p=2N) is the new machine's worst; its c=N/p=N becomes the best.
    pairs = _pairs([10.0, 1.0, 0.2, 1.0])
    (group,) = xm.rank_groups(pairs)
    assert group.rho is not None and group.rho < 1.0
    assert group.base_best is not None and group.base_best.label == "c=2N/p=2N"
    assert group.new_best is not None and group.new_best.label == "c=N/p=N"
    assert group.best_differs is True


def test_fewer_than_three_settings_has_no_rank_correlation() -> None:
    (group,) = xm.rank_groups(_pairs([1.0, 2.0])[:2])
    assert group.rho is None and group.reason is not None and "fewer than 3" in group.reason
    assert group.base_best is not None and group.best_differs is not None  # a best all the same
    empty = xm.rank_comparison("g", [])
    assert empty.rho is None and empty.base_best is None and empty.best_differs is None


def test_spearman_by_hand() -> None:
    assert xm.spearman([1.0, 2.0, 3.0], [10.0, 20.0, 30.0]) == (1.0, None)
    rho, reason = xm.spearman([1.0, 2.0, 3.0], [30.0, 20.0, 10.0])
    assert rho == -1.0 and reason is None
    rho, reason = xm.spearman([1.0, 2.0], [1.0, 2.0])
    assert rho is None and reason == "2 setting(s), fewer than 3: no rank correlation"
    rho, reason = xm.spearman([5.0, 5.0, 5.0], [1.0, 2.0, 3.0])
    assert rho is None and reason is not None and "same median on base" in reason
    settings = [xm.SettingMedians("N", "N", 1.0, 3.0), xm.SettingMedians("N", "2N", 2.0, 2.0),
                xm.SettingMedians("2N", "2N", 3.0, 1.0)]
    r = xm.rank_comparison("g", settings)
    assert r.rho == -1.0 and r.base_best == settings[2] and r.new_best == settings[0] and r.best_differs


def test_groups_are_the_point_identity_without_concurrency_and_pool() -> None:
    a = make_point(conc="N", pool="N", ratio=0.5)
    b = make_point(conc="2N", pool="2N+2", ratio=0.5)
    assert xm.group_key(a) == xm.group_key(b)
    assert xm.group_key(a) != xm.group_key(make_point(conc="N", pool="N", ratio=0.0))
    assert xm.group_key(a) != xm.group_key({**a, "dispatch": "per-thread"})
    assert xm.group_key(a) != xm.group_key({**a, "work_us": 50})
    win = make_point(conc="N", pool="N", ratio=0.5, port="win32")
    assert xm.group_key(a) != xm.group_key(win)
    assert xm.group_key(a, ignore_port=True) == xm.group_key(win, ignore_port=True)
    spelled = {**a, "concurrency": {"spec": "2n + 2", "value": 6}, "pool": {"spec": "n", "value": 2}}
    assert xm.setting_of(spelled) == ("2N+2", "N")
    # Two blocking ratios: two groups, each ranked apart, in first-seen order.
    groups = xm.rank_groups(_pairs([1.0] * 4, ratio=0.0) + _pairs([1.0] * 4, ratio=0.5))
    assert [g.group.split("/")[2] for g in groups] == ["b=0", "b=0.5"]


def test_a_setting_without_a_median_is_not_ranked() -> None:
    pairs = _pairs([2.0] * 4)
    base, new = pairs[0]
    new = {**new, "runs": [], "summary": {**new["summary"], "throughput_ops_per_s": {
        **new["summary"]["throughput_ops_per_s"], "median": None}}}
    (group,) = xm.rank_groups([(base, new), *pairs[1:]])
    assert group.unranked == ("c=N/p=N",) and len(group.settings) == 3 and group.rho is not None


# ---------------------------------------------------------------- compare --cross-machine


def _files(tmp_path: Path, *, new_change: Any = None, base_change: Any = None, hostname: str = "laptop",
           n: int = 8, **new_kw: Any) -> tuple[Path, Path]:
    base = make_results(hostname="ci-runner", seed=1, conc=("N", "2N"))
    new = make_results(hostname=hostname, n=n, seed=2, conc=("N", "2N"), **new_kw)
    for data, change in ((base, base_change), (new, new_change)):
        if change is not None:
            change(data)
    return write_json(tmp_path / "base.json", base), write_json(tmp_path / "new.json", new)


def test_cli_reports_ratios_and_ranks_and_exits_0(tmp_path: Path) -> None:
    a, b = _files(tmp_path)
    assert run_tool("compare", a, b).returncode == 2  # a gate refuses other machines
    proc = run_tool("compare", a, b, "--cross-machine")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert out.startswith("## iocpbench compare across machines") and "**REPORTED" in out
    assert "does not gate" in out and "PASS" not in out and "REGRESSION" not in out
    assert RANK_SECTION in out
    section = out.split(RANK_SECTION, 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("| post/")]
    assert len(rows) == 2, section  # b=0 and b=0.5, six settings each
    assert all("| 6 |" in row for row in rows)
    # Per point: the new median, the ratio and its CI.
    cell = next(line for line in out.splitlines() if line.startswith("| `post/emulated/c=N/p=2N/b=0/w=10`"))
    assert "x, CI " in cell and "p=" not in cell.split("|")[3]
    assert proc.stderr.startswith("iocpbench-compare: note: the comparison spans machines")
    assert "fail:" not in proc.stderr and "inconclusive:" not in proc.stderr


def test_cli_never_gates_on_a_ratio_or_on_power(tmp_path: Path) -> None:
    # Half the throughput everywhere: a gate's exit 1; compared across machines, reported.
    a, b = _files(tmp_path, n=2, scale=0.5)
    proc = run_tool("compare", a, b, "--cross-machine")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0.50x" in proc.stdout and "REGRESSION" not in proc.stdout
    # Two runs a side: a gate's inconclusive (3); here the ratios are descriptive, exit 0.
    a, b = _files(tmp_path, reps=2)
    proc = run_tool("compare", a, b, "--cross-machine")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "INCONCLUSIVE" not in proc.stdout and "inconclusive:" not in proc.stderr


def test_a_blocking_ratio_missed_in_new_is_reported_not_failed(tmp_path: Path) -> None:
    def missed(data: dict[str, Any]) -> None:
        data["points"][7]["blocking_fidelity"] = {
            "tolerance": 0.03, "requested": 0.5, "achieved_median": 0.3, "blocked_only_median": 0.3,
            "within_tolerance": False, "reason": "block below the timer's resolution"}

    a, b = _files(tmp_path, new_change=missed)
    proc = run_tool("compare", a, b, "--cross-machine")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Left out: blocking ratio" in proc.stdout and "a regression" not in proc.stdout
    section = proc.stdout.split(RANK_SECTION, 1)[1]
    assert "| 5 |" in section  # the left-out setting is not ranked


def test_a_broken_new_run_exits_1(tmp_path: Path) -> None:
    def errors(data: dict[str, Any]) -> None:
        data["points"][3]["runs"][1]["errors"] = 4

    a, b = _files(tmp_path, new_change=errors)
    proc = run_tool("compare", a, b, "--cross-machine")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "**FAIL: 1 of 1 new file(s) are not whole runs" in proc.stdout
    assert RANK_SECTION in proc.stdout  # still reported
    fails = [line for line in proc.stderr.splitlines() if line.startswith("iocpbench-compare: fail: ")]
    assert len(fails) == 1 and "run(s) with errors" in fails[0] and str(b) in fails[0]


def test_a_broken_base_or_an_incomplete_new_exits_1(tmp_path: Path) -> None:
    def zero(data: dict[str, Any]) -> None:
        data["points"][2]["runs"][0]["throughput_ops_per_s"] = 0.0

    def incomplete(data: dict[str, Any]) -> None:
        data["sweep"]["complete"] = False

    a, b = _files(tmp_path, base_change=zero)
    proc = run_tool("compare", a, b, "--cross-machine")
    assert proc.returncode == 1 and "zero or null throughput" in proc.stderr, proc.stdout + proc.stderr
    a, b = _files(tmp_path, new_change=incomplete)
    proc = run_tool("compare", a, b, "--cross-machine")
    assert proc.returncode == 1 and "incomplete" in proc.stderr, proc.stdout + proc.stderr


def test_report_status_and_markdown(tmp_path: Path) -> None:
    a, b = _files(tmp_path, n=2, scale=0.5)
    report = compare_results(load_results(a), [load_results(b)], TP, cross_machine=True)
    assert report.status == REPORTED and report.has_regression  # the gate saw it; no verdict on it
    (mc,) = report.machines
    assert len(mc.ranks) == 2 and all(r.rho is not None for r in mc.ranks)
    text = render_markdown(report)
    assert "the same best setting in 2 of 2 group(s)" in text
    # Without --cross-machine (one machine) it is a gate: the same loss fails, nothing is ranked.
    same = tmp_path / "same"
    same.mkdir()
    a2, b2 = _files(same, hostname="ci-runner", n=2, scale=0.5)
    gate = compare_results(load_results(a2), [load_results(b2)], TP)
    assert gate.status == FAIL and not gate.machines[0].ranks
    assert RANK_SECTION not in render_markdown(gate)
