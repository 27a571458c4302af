"""Matching points across machines by spec."""

from __future__ import annotations

import copy
import json

from synthetic import FIXTURES, ROOT, make_point, make_results

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
    base = [make_point(ratio=0.0), make_point(ratio=0.5), make_point(ratio=0.0)]
    new = [make_point(ratio=0.5), make_point(ratio=0.9), make_point(ratio=0.9)]
    m = match_points(base, new)
    assert [p["blocking"]["ratio"] for p, _ in m.pairs] == [0.5]
    assert [p["blocking"]["ratio"] for p in m.only_base] == [0.0]
    assert [p["blocking"]["ratio"] for p in m.only_new] == [0.9]
    # Each side's own, so compare can say which file repeats a point.
    assert [p["blocking"]["ratio"] for p in m.base_duplicates] == [0.0]
    assert [p["blocking"]["ratio"] for p in m.new_duplicates] == [0.9]
    assert len(m.duplicates) == 2


def test_point_label_prefers_the_id() -> None:
    p = make_point(conc="N", pool="2N+2", ratio=0.5)
    assert point_label(p) == p["id"]
    del p["id"]
    assert point_label(p) == "post/emulated/c=N/p=2N+2/b=0.5/w=10/" + '{"in_flight":64,"posters":1}'


def _real_point() -> dict:
    """A point as the harness writes it today (every field of a point's identity)."""
    doc = json.loads((ROOT / "results" / "ablation" / "linux-2cpu-kvm-ablation.json").read_text())
    return doc["points"][0]


def test_every_axis_of_the_harness_point_id_keeps_points_apart() -> None:
    """dispatch and working_set_kib are in the harness's point id: points that differ in them
    never match (a file with shared and per-thread points has no duplicates)."""
    p = _real_point()
    assert p["dispatch"] == "shared" and p["working_set_kib"] == 512
    for field, value in (("dispatch", "per-thread"), ("working_set_kib", 1024), ("metrics", False),
                         ("workload", "file"), ("port", "condvar"), ("work_us", 20)):
        q = {**copy.deepcopy(p), field: value}
        assert spec_key(p) != spec_key(q), field
        assert len(match_points([p, q], [q, p]).pairs) == 2 and not match_points([p, q], [p]).duplicates


def test_an_axis_added_later_keeps_points_apart_by_default() -> None:
    """A field the harness adds to a point's spec (here an open-loop arrival setting) is part of
    the key without compare knowing it: two loads are two points."""
    p = _real_point()
    low = {**copy.deepcopy(p), "open_loop": {"load": 0.5, "arrivals": "poisson", "seed": 1}}
    high = {**copy.deepcopy(p), "open_loop": {"load": 0.9, "arrivals": "poisson", "seed": 1}}
    assert len({spec_key(p), spec_key(low), spec_key(high)}) == 3
    # Its seed randomises the arrivals; it does not make another point.
    assert spec_key(low) == spec_key({**low, "open_loop": {**low["open_loop"], "seed": 7}})
    assert "open_loop=" in point_label({k: v for k, v in low.items() if k != "id"})


def test_what_is_not_identity_does_not_keep_points_apart() -> None:
    p = _real_point()
    q = copy.deepcopy(p)
    q["id"] = "renamed"
    q["runs"] = q["runs"][:1]
    q["summary"] = {}
    q["blocking_fidelity"] = {"within_tolerance": False}
    q["failures"] = [{"repetition": 1, "error": "x"}]
    q["duration_s"], q["warmup_s"] = 5.0, 1.0  # compared file against file, not point by point
    q["concurrency"]["value"], q["pool"]["value"] = 64, 130  # another machine's reading of the specs
    q["workload_params"]["overwrite"] = True  # consent, not the experiment
    assert spec_key(p) == spec_key(q)


def test_older_files_without_the_newer_fields_still_match() -> None:
    """dispatch, metrics and working_set_kib absent read as what the harness wrote before
    them: shared, true, none (0)."""
    old = make_point()
    for absent in ("dispatch", "metrics", "working_set_kib"):
        assert absent not in old
    new = {**copy.deepcopy(old), "dispatch": "shared", "metrics": True, "working_set_kib": 0}
    assert spec_key(old) == spec_key(new)
    assert spec_key(old) != spec_key({**new, "dispatch": "per-thread"})
    assert spec_key(old) != spec_key({**new, "working_set_kib": 512})
    # The real fixtures predate dispatch and metrics; today's files write both.
    older = json.loads((FIXTURES / "run_a.json").read_text())["points"][0]
    assert "dispatch" not in older and spec_key(older) == spec_key({**older, "dispatch": "shared", "metrics": True})


def test_numbers_match_however_a_writer_spells_them() -> None:
    p = _real_point()
    q = copy.deepcopy(p)
    q["working_set_kib"] = 512.0
    q["work_us"] = 100
    q["workload_params"]["in_flight"] = 64.0
    assert spec_key(p) == spec_key(q)
