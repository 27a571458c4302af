"""Which setting (iocpbench_analysis/answer.py): the best, the indistinguishable set, the recommendation,
the rules of thumb; and `python -m iocpbench_analysis answer`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synthetic import make_results, run_tool, scale_pool, write_json

from iocpbench_analysis import answer, grid


def _family(data: dict[str, Any]) -> grid.Family:
    return grid.families(data["points"])[0]


def test_a_clear_best_stands_alone() -> None:
    data = make_results(conc=("N",), pools=("N", "2N", "2N+2"), ratios=(0.0,))
    scale_pool(data, "2N", 1.5)  # 2N is 50% above the rest
    a = answer.answer_for(_family(data), 0.0)
    assert a is not None
    assert a.best.point["pool"]["spec"] == "2N" and a.recommended is a.best
    assert [s.point["pool"]["spec"] for s in a.indistinguishable] == ["2N"]
    rules = dict(a.rules)
    n_rule = rules["pool N (c=N)"]
    assert n_rule is not None and n_rule.ci is not None and n_rule.ci[1] < 0.95


def test_the_cheapest_of_equals_is_recommended() -> None:
    # The template gives pool p at c=N the throughput 200k / (1 + 0.1 |p - 2|): undo that, so
    # that every pool has the same throughput up to the runs' 2% jitter.
    data = make_results(conc=("N",), pools=("N", "2N", "2N+2"), ratios=(0.0,))
    scale_pool(data, "2N", 1.2)
    scale_pool(data, "2N+2", 1.4)
    a = answer.answer_for(_family(data), 0.0)
    assert a is not None
    assert len(a.indistinguishable) == 3
    assert a.recommended.point["pool"]["spec"] == "N"  # the smallest pool of the equals


def test_text_table_and_cli(tmp_path: Path) -> None:
    path = write_json(tmp_path / "r.json", make_results())
    proc = run_tool("answer", path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:3] == ["workload", "b", "recommended"]
    assert len(lines) == 1 + 2 + 1  # header, one line per blocking ratio, the legend
    assert "indistinguishable" in lines[-1]
    few = run_tool("answer", write_json(tmp_path / "few.json", make_results(reps=2)))
    assert few.stdout.splitlines()[-1].startswith("note: few runs: 2 a point")
    assert run_tool("answer", tmp_path / "missing.json").returncode == 2
