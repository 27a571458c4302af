"""Matching points across machines by spec."""

from __future__ import annotations

import copy

from synthetic import make_point, make_results

from analysis.match import match_points, normalize_spec, point_label, spec_key


def test_normalize_spec() -> None:
    assert normalize_spec("2n + 2") == "2N+2"
    assert normalize_spec(0) == "0"
    assert normalize_spec(" N ") == "N"


def test_same_specs_on_machines_of_different_size_match() -> None:
    small = make_results(n=2)["points"]
    big = make_results(n=64, hostname="big")["points"]
    m = match_points(small, big)
    assert len(m.pairs) == len(small) == 12
    assert not m.only_base and not m.only_new
    for a, b in m.pairs:
        assert a["pool"]["spec"] == b["pool"]["spec"]
        assert a["pool"]["value"] != b["pool"]["value"]  # values differ, specs line up


def test_each_axis_of_the_key_keeps_points_apart() -> None:
    p = make_point()
    variants = {
        "workload": {"workload": "file"},
        "port": {"port": "condvar"},
        "work_us": {"work_us": 20},
    }
    for field, change in variants.items():
        q = {**copy.deepcopy(p), **change}
        assert spec_key(p) != spec_key(q), field
    for path, value in ((("concurrency", "spec"), "2N"), (("pool", "spec"), "N"),
                        (("blocking", "ratio"), 0.9), (("blocking", "kind"), "io")):
        q = copy.deepcopy(p)
        q[path[0]][path[1]] = value
        assert spec_key(p) != spec_key(q), path
    q = copy.deepcopy(p)
    q["workload_params"]["in_flight"] = 8
    assert spec_key(p) != spec_key(q)


def test_machine_local_params_and_spelling_do_not_keep_points_apart() -> None:
    p = make_point()
    p["workload_params"]["path"] = "/tmp/a"
    q = copy.deepcopy(p)
    q["workload_params"]["path"] = "D:\\bench\\b"
    q["pool"]["spec"] = "2n"
    q["blocking"]["ratio"] = 0.0 + 1e-12
    assert spec_key(p) == spec_key(q)


def test_ignore_port_matches_across_backends() -> None:
    a = [make_point(port="emulated")]
    b = [make_point(port="win32")]
    assert len(match_points(a, b).pairs) == 0
    assert len(match_points(a, b, ignore_port=True).pairs) == 1


def test_unmatched_and_duplicate_points_are_reported_not_dropped() -> None:
    base = [make_point(ratio=0.0), make_point(ratio=0.5)]
    new = [make_point(ratio=0.5), make_point(ratio=0.9), make_point(ratio=0.9)]
    m = match_points(base, new)
    assert [p["blocking"]["ratio"] for p, _ in m.pairs] == [0.5]
    assert [p["blocking"]["ratio"] for p in m.only_base] == [0.0]
    assert [p["blocking"]["ratio"] for p in m.only_new] == [0.9]
    assert len(m.duplicates) == 1


def test_point_label_prefers_the_id() -> None:
    p = make_point(conc="N", pool="2N+2", ratio=0.5)
    assert point_label(p) == p["id"]
    del p["id"]
    assert point_label(p) == "post/emulated/c=N/p=2N+2/b=0.5/w=10/" + '{"in_flight":64,"posters":1}'
