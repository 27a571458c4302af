"""Real results files made by the harness, dropped into tests/python/fixtures/ by hand.

Each *.json there must load and validate, chart without a crash, compare with itself
without a regression, and make a report. With no files there the test skips.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from synthetic import FIXTURES, run_tool

from iocpbench_analysis.grid import is_auto_point
from iocpbench_analysis.load import load_results

FILES = sorted(FIXTURES.glob("*.json"))


@pytest.mark.skipif(not FILES, reason=f"no real results files in {FIXTURES}")
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_real_results_file(path: Path, tmp_path: Path) -> None:
    res = load_results(path)
    assert res.machine["logical_cpus"] >= 1
    has_auto = any(is_auto_point(p) for p in res.points)

    proc = run_tool("charts", path, "-o", tmp_path / "charts")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    if res.points:
        pngs = list((tmp_path / "charts").glob("*.png"))
        assert pngs and all(p.stat().st_size > 0 for p in pngs)
        assert all(p.with_suffix(".svg").stat().st_size > 0 for p in pngs)
    # The pool-size chart exists exactly where there are auto pools, and is never "skipped".
    assert bool(list((tmp_path / "charts").glob("*-pool-size.png"))) == has_auto
    assert "pool-size" not in proc.stderr

    proc = run_tool("compare", path, path)
    # Never a failure; inconclusive (3) where the file's runs are too few or too noisy to show
    # the stated loss (the fixtures are short sweeps: 2 or 3 runs of 0.2-0.3 s), said on stderr.
    assert proc.returncode in (0, 3), proc.stdout + proc.stderr
    assert "REGRESSION" not in proc.stdout and "FAIL" not in proc.stdout
    assert "Unmatched points" not in proc.stdout
    reasons = proc.stderr.strip().splitlines()
    assert bool(reasons) == (proc.returncode == 3)
    assert all(line.startswith("iocpbench-compare: inconclusive: ") for line in reasons), proc.stderr

    proc = run_tool("report", path, "-o", tmp_path / "r.html")
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert ("Self-sizing (auto) pool" in page) == has_auto


@pytest.mark.skipif(len(FILES) < 2, reason="fewer than two real results files to compare")
def test_real_results_compare_each_other(tmp_path: Path) -> None:
    from iocpbench_analysis.compare import setup_differences

    # Files recorded on other kernels or CPUs, or with other run lengths, are refused as a gate...
    base = load_results(FILES[0])
    differ = any(setup_differences(base, load_results(f)) for f in FILES[1:])
    if differ:
        assert run_tool("compare", FILES[0], *FILES[1:]).returncode == 2
    # ...and compared when asked to span machines.
    proc = run_tool("compare", FILES[0], *FILES[1:], "--cross-machine", "--chart", tmp_path / "ratio.png")
    assert proc.returncode in (0, 1, 3), proc.stdout + proc.stderr  # a real difference may regress
    assert proc.stdout.startswith("## iocpbench compare")
    assert ("note: the comparison spans machines" in proc.stderr) == differ
