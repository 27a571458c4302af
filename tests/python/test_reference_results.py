"""The files in results/reference/ still load, chart, report and compare with today's tools
(they predate blocking_fidelity and blocked_only_ratio: read as within tolerance)."""

from __future__ import annotations

import json

from pathlib import Path

import pytest
from synthetic import ROOT, run_tool

from iocpbench_analysis.answer import answers, zone
from iocpbench_analysis.charts import build_charts
from iocpbench_analysis.load import load_results

REFERENCE = sorted((ROOT / "results" / "reference").glob("*.json"))


@pytest.mark.parametrize("path", REFERENCE, ids=[p.name for p in REFERENCE])
def test_reference_file_charts_and_answers(path: Path) -> None:
    res = load_results(path)
    notes: list[str] = []
    charts = build_charts(res, notes)
    assert charts and not [n for n in notes if "Error" in n or "Exception" in n], notes
    kinds = {c.name.rsplit("-", 1)[-1] for c in charts}
    assert {"heatmap", "blocking", "latency"} <= kinds
    rows = answers(res.points)
    # One answer per workload and blocking ratio, each with its best inside its own set.
    assert len(rows) == len({(p["workload"], p["blocking"]["ratio"]) for p in res.points})
    # The recommended setting is shown within, or (the one-look rule, docs/tuning.md) undecided
    # with its estimate in the upper half of the indifference zone.
    middle = zone()[2]
    assert all(a.best in a.indistinguishable for a in rows)
    assert all(a.recommended.indistinguishable
               or (a.recommended.verdict == "undecided" and a.recommended.ratio >= middle)
               for a in rows)


def test_reference_file_against_itself_exits_0(tmp_path: Path) -> None:
    path = ROOT / "results" / "reference" / "linux-2cpu-kvm.json"
    proc = run_tool("compare", path, path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # compare keeps to points whose blocking ratio was honoured, and names the others.
    doc = json.loads(path.read_text())
    kept = [p for p in doc["points"] if p.get("blocking_fidelity", {}).get("within_tolerance", True)]
    assert kept, "no point within tolerance"
    assert "No regression beyond 5%" in proc.stdout
    assert f"geometric mean ratio over {len(kept)}" in proc.stdout, proc.stdout
