"""Thread placements (`--affinity`, `--load-affinity`) in the analysis: a point without the field
(a file written before placements) reads as none and matches a point that pinned nothing,
points are matched by their placement specs and never by the CPUs those gave on one machine, a
pinned point's label names its placements, and the schema takes the fields."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from synthetic import make_point, make_results, write_json

from iocpbench_analysis.load import load_results
from iocpbench_analysis.match import affinity_specs, match_points, point_label, spec_key

NONE = {"spec": "none", "order": None, "cpus": None}


def placed(point: dict[str, Any], workers: str, load: str = "none",
           cpus: list[int] | None = None) -> dict[str, Any]:
    """The point as the harness writes it with those placements: the field, and the id naming
    a placement that pins."""
    q = copy.deepcopy(point)
    q["affinity"] = {
        "workers": NONE if workers == "none" else {"spec": workers, "order": "topology", "cpus": cpus or [0, 1]},
        "load": {**NONE, "threads": None} if load == "none" else
        {"spec": load, "order": "list", "cpus": [0], "threads": ["poster 0"]},
    }
    if "id" in q:
        q["id"] += "".join(f"/{name}={spec}" for name, spec in (("affinity", workers), ("load-affinity", load))
                           if spec != "none")
    return q


def test_a_point_without_the_field_reads_as_none_and_matches_an_unpinned_one() -> None:
    old = make_point()
    assert "affinity" not in old
    assert affinity_specs(old) == {"workers": "none", "load": "none"}
    new = placed(old, "none")
    assert spec_key(old) == spec_key(new)
    assert point_label(old) == point_label(new)
    assert match_points([old], [new]).pairs


def test_placements_keep_points_apart() -> None:
    none, compact, spread = make_point(), placed(make_point(), "compact"), placed(make_point(), "spread")
    loaded = placed(make_point(), "compact", "0")
    keys = {spec_key(p) for p in (none, compact, spread, loaded)}
    assert len(keys) == 4
    m = match_points([none], [compact])
    assert not m.pairs and m.only_base == [none] and m.only_new == [compact]
    assert point_label(loaded).endswith("/affinity=compact/load-affinity=0")  # the harness's id
    del loaded["id"]
    assert "/affinity=compact/load-affinity=0" in point_label(loaded)  # a file without ids: the field


def test_the_cpus_a_placement_gave_are_not_identity() -> None:
    """compact on a 2-CPU laptop and on a 64-CPU server are the same experiment."""
    small = placed(make_point(n=2), "compact", cpus=[0, 1])
    big = placed(make_point(n=64), "compact", cpus=list(range(8)))
    big["affinity"]["workers"]["order"] = "cpu number (topology unavailable: no /sys)"
    assert spec_key(small) == spec_key(big)
    assert match_points([small], [big]).pairs


def test_the_schema_takes_the_placement_fields(tmp_path: Path) -> None:
    data = copy.deepcopy(make_results())
    data["points"] = [placed(p, "spread", "0-1") for p in data["points"]]
    data["sweep"]["affinity"] = "spread"
    data["sweep"]["load_affinity"] = "0-1"
    path = write_json(tmp_path / "placed.json", data)
    point = load_results(path).points[0]
    assert point["affinity"]["workers"]["spec"] == "spread"
    assert point["affinity"]["load"]["threads"] == ["poster 0"]
