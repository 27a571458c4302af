"""Matching points across machines by spec."""

from __future__ import annotations

import copy

from synthetic import make_point, make_results

from iocpbench_analysis.match import match_points, normalize_spec, point_label, spec_key


def test_normalize_spec() -> None:
    assert normalize_spec("2n + 2") == "2N+2"
    assert normalize_spec(0) == "0"
    assert normalize_spec(" N ") == "N"


def test_normalize_auto_spec_keeps_the_keyword_and_drops_default_groups() -> None:
    assert normalize_spec("auto") == "auto"
    assert normalize_spec("AUTO") == "auto"
    assert normalize_spec("Auto:1:8") == "auto:1:8"
    assert normalize_spec("auto : 1 : 8") == "auto:1:8"
    assert normalize_spec("auto:n:8:75:90:30") == "auto:N:8:75:90:30"
    assert normalize_spec("auto:2n:4n+2") == "auto:2N:4N+2"
    # The defaults, spelled out in whole groups from the right, are what "auto" means.
    assert normalize_spec("auto:n:4n") == "auto"
    assert normalize_spec("auto:N:4N:75:90:100") == "auto"
    assert normalize_spec("auto:N:4N:75.0:90") == "auto"
    # A group with one non-default member is kept whole, and so is everything left of it.
    assert normalize_spec("auto:N:4N:80:90") == "auto:N:4N:80:90"
    assert normalize_spec("auto:N:4N:75:90:50") == "auto:N:4N:75:90:50"
    assert normalize_spec("auto:1:4N") == "auto:1:4N"


def test_auto_pools_match_by_spec_across_spellings_and_machines() -> None:
    p = make_point(pool="2N")
    p["pool"] = {"spec": "auto", "value": 8, "auto": {"min": {"spec": "N", "value": 2}, "max": {"spec": "4N", "value": 8}}}
    q = copy.deepcopy(p)
    q["pool"] = {"spec": "AUTO:n:4n", "value": 256}  # another writer, a 64-CPU machine
    other = copy.deepcopy(p)
    other["pool"]["spec"] = "auto:1:8"
    assert spec_key(p) == spec_key(q)
    assert spec_key(p) != spec_key(other)
    m = match_points([p, other], [q])
    assert [b["pool"]["spec"] for b, _ in m.pairs] == ["auto"]
    assert [b["pool"]["spec"] for b in m.only_base] == ["auto:1:8"]


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


def test_the_latency_sample_does_not_keep_points_apart() -> None:
    # A file from before --latency-sample-every existed meets one that records it.
    p = make_point()
    q = copy.deepcopy(p)
    q["workload_params"]["latency_sample_every"] = 32
    assert spec_key(p) == spec_key(q)
    q["workload_params"]["in_flight"] = 7  # a workload parameter still does
    assert spec_key(p) != spec_key(q)


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
