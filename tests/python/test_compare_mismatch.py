"""compare explains what did not match: the parameters that differ, a grid mismatch headlined
with its remedy, and concurrency 0 printed with the file's CPU count."""

from __future__ import annotations

from pathlib import Path

from synthetic import make_results, run_tool, write_json

from iocpbench_analysis import mismatch


def _with_posters(posters: int, **kw: object) -> dict:
    data = make_results(**kw)  # type: ignore[arg-type]
    for p in data["points"]:
        p["workload_params"]["posters"] = posters  # the id stays: the label alone cannot tell them apart
    return data


def test_a_grid_mismatch_is_headlined_with_the_parameters_and_the_remedy(tmp_path: Path) -> None:
    base = write_json(tmp_path / "base.json", _with_posters(1))
    new = write_json(tmp_path / "new.json", _with_posters(4))
    proc = run_tool("compare", base, new)
    assert proc.returncode == 1, proc.stderr  # a file that lacks base's points still fails closed
    lines = proc.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("**GRID MISMATCH: new.json"))
    verdict = next(i for i, line in enumerate(lines) if line.startswith("**FAIL"))
    assert head < verdict and "posters 1 vs 4" in lines[head] and "--posters 1" in lines[head]
    assert "not a regression" in lines[verdict] and "regressed" not in lines[verdict]
    only_base = [line for line in lines if line.startswith("- `post/")]
    assert only_base and all("differs in posters 1 vs 4 (base vs new)" in line for line in only_base)
    assert "a grid mismatch, not a regression" in proc.stderr


def test_concurrency_0_is_printed_with_its_value(tmp_path: Path) -> None:
    base = write_json(tmp_path / "base.json", make_results(conc=("0",), ratios=(0.0,)))
    new = write_json(tmp_path / "new.json", make_results(conc=("0",), ratios=(0.0,)))
    proc = run_tool("compare", base, new)
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| `post/")]
    assert rows and all("/c=0 (N=2)/" in line for line in rows)


def test_points_that_differ_each_their_own_way_are_no_grid_mismatch() -> None:
    a = make_results(conc=("N",), pools=("N", "2N"), ratios=(0.0,))["points"]
    b = make_results(conc=("N",), pools=("N", "2N"), ratios=(0.0,))["points"]
    b[0]["work_us"] = 20
    b[1]["workload_params"]["posters"] = 3
    unmatched = mismatch.explain(a, b)
    assert [u.differences for u in unmatched] == [[("work_us", "10", "20")], [("posters", "1", "3")]]
    assert mismatch.grid_difference(unmatched) == []
    assert mismatch.grid_difference(mismatch.explain(a, [])) == []  # no partner at all
