"""The dequeue batch (`--dequeue-batch`) in the analysis: a point without the field (a file
written before batches) reads as batch 1, compare keeps batches apart, and the families the
charts and tables lay out name a batch other than 1."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from synthetic import make_point, make_results, run_tool, write_json

from iocpbench_analysis import grid
from iocpbench_analysis.load import load_results
from iocpbench_analysis.match import dequeue_batch_spec, match_points, point_label, spec_key


def batched(point: dict[str, Any], spec: str, value: int) -> dict[str, Any]:
    """The point as the harness writes it with that batch: the field, and the id naming a
    batch other than 1."""
    q = copy.deepcopy(point)
    q["dequeue_batch"] = {"spec": spec, "value": value}
    if "id" in q and spec != "1":
        q["id"] += f"/batch={spec}"
    return q


def with_batch(results: dict[str, Any], spec: str, value: int) -> dict[str, Any]:
    out = copy.deepcopy(results)
    out["points"] = [batched(p, spec, value) for p in out["points"]]
    return out


def test_a_point_without_the_field_reads_as_batch_1() -> None:
    old = make_point()
    assert "dequeue_batch" not in old
    assert dequeue_batch_spec(old) == "1"
    new = batched(old, "1", 1)
    assert spec_key(old) == spec_key(new)
    assert point_label(old) == point_label(new), "batch 1 is not named"
    assert match_points([old], [new]).pairs


def test_batch_8_does_not_match_batch_1() -> None:
    one, eight = make_point(), batched(make_point(), "8", 8)
    assert dequeue_batch_spec(eight) == "8"
    assert spec_key(one) != spec_key(eight)
    m = match_points([one], [eight])
    assert not m.pairs and m.only_base == [one] and m.only_new == [eight]
    assert point_label(eight).endswith("/batch=8")  # the harness's id
    del eight["id"]
    assert "dequeue_batch=8" in point_label(eight)  # a file without ids: the field


def test_an_n_relative_batch_matches_by_its_spec_across_machines() -> None:
    small, big = batched(make_point(n=2), "N", 2), batched(make_point(n=64), "n", 64)
    assert spec_key(small) == spec_key(big)
    assert spec_key(small) != spec_key(batched(make_point(n=2), "2", 2))


def test_compare_keeps_batches_apart_and_an_old_file_meets_batch_1(tmp_path: Path) -> None:
    base = make_results()
    old = write_json(tmp_path / "old.json", base)
    one = write_json(tmp_path / "one.json", with_batch(base, "1", 1))
    eight = write_json(tmp_path / "eight.json", with_batch(base, "8", 8))
    proc = run_tool("compare", old, one)
    assert proc.returncode == 0, proc.stderr
    proc = run_tool("compare", old, eight, "--allow-missing")
    assert proc.returncode == 3 and "No points matched" in proc.stdout, proc.stdout


def test_families_split_by_batch_and_name_it() -> None:
    points = make_results()["points"]
    mixed = points + [batched(p, "8", 8) for p in points]
    fams = grid.families(mixed)
    assert len(fams) == 2
    assert [f.dequeue_batch for f in fams] == ["1", "8"]
    assert "dequeue batch" not in fams[0].title
    assert fams[1].title.endswith("dequeue batch 8") and fams[1].slug.endswith("-batch8")
    assert len({f.slug for f in fams}) == 2


def test_the_schema_takes_the_batch_fields(tmp_path: Path) -> None:
    data = with_batch(make_results(), "8", 8)
    data["sweep"]["dequeue_batch"] = ["8"]
    for point in data["points"]:
        for run in point["runs"]:
            run["dequeue_batch"] = {
                "requested": 8, "removes": 3, "packets": 20, "mean_packets_per_remove": 20 / 3,
                "histogram": [{"min_packets": k, "max_packets": k, "removes": 2 if k == 8 else int(k == 4)}
                              for k in range(1, 9)],
                "stop_packets_reposted": 0, "scope": "the window"}
    path = write_json(tmp_path / "batched.json", data)
    assert load_results(path).points[0]["dequeue_batch"]["spec"] == "8"
