"""--blocking-profile and --timeline-ms through the real binary: a run whose blocking ratio
changes in the window records the profile and its mean, judges each of its ratios on its own
handlers, and cuts its window into a
timeline whose windows carry the ratio in force; controlled pools get a timeline too, fixed pools
without a profile do not."""
from __future__ import annotations

import json

import pytest

from iocpbench_analysis.load import _validator

from binary_runner import run

SHORT = ["run", "--workload", "post", "--warmup", "0.1", "--work-us", "20"]


def _run_doc(binary, tmp_path, *args: str, name: str = "out.json") -> dict:
    out = tmp_path / name
    proc = run(binary, *SHORT, *args, "--json", str(out), timeout=60)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    return doc


def test_a_square_wave_profile_is_recorded_and_its_timeline_takes_both_ratios(binary, tmp_path):
    doc = _run_doc(binary, tmp_path, "--blocking-profile", "0.1:0.5,0.6:0.5", "--duration", "2")
    point = doc["points"][0]
    assert point["blocking_profile"] == {
        "text": "0.1:0.5,0.6:0.5",
        "segments": [{"ratio": 0.1, "seconds": 0.5}, {"ratio": 0.6, "seconds": 0.5}],
        "repeats": True,
    }
    # Two whole periods in the 2 s window: the time-weighted mean is the two ratios' mean.
    assert point["blocking"]["ratio"] == pytest.approx(0.35)
    timeline = point["runs"][0]["timeline"]
    assert timeline["window_ms"] == 250
    windows = timeline["windows"]
    assert len(windows) >= 6, windows
    ratios = {w["blocking_ratio"] for w in windows}
    assert ratios == {0.1, 0.6}
    starts = [w["t_ms"] for w in windows]
    assert starts == sorted(starts) and starts[0] == 0
    for w in windows:
        # The profile's clock: the ratio in force at the window's start.
        phase = (w["t_ms"] / 1000) % 1.0
        if min(abs(phase - 0.5), phase, 1 - phase) < 0.001:
            continue  # t_ms is rounded to the microsecond: an edge this close reads either way
        assert w["blocking_ratio"] == (0.1 if phase < 0.5 else 0.6)
        assert w["ops_per_s"] > 0
        assert w["mean_threads"] == point["pool"]["value"]  # a fixed pool's size
    # Each ratio judged on its own handlers, in the run and in the point's verdict.
    levels = point["runs"][0]["handler_time"]["profile_levels"]
    assert [lv["requested_ratio"] for lv in levels] == [0.1, 0.6]
    assert all(lv["blocking_handlers"] > 0 for lv in levels)
    assert sum(lv["blocking_handlers"] for lv in levels) == point["runs"][0]["handler_time"]["blocking_handlers"]
    assert [lv["requested"] for lv in point["blocking_fidelity"]["levels"]] == [0.1, 0.6]


def test_a_step_profile_holds_its_last_ratio(binary, tmp_path):
    doc = _run_doc(binary, tmp_path, "--blocking-profile", "0.2:0.4,0.5", "--duration", "1",
                   "--timeline-ms", "100")
    point = doc["points"][0]
    assert point["blocking_profile"]["repeats"] is False
    assert point["blocking_profile"]["segments"][-1] == {"ratio": 0.5, "seconds": None}
    assert point["blocking"]["ratio"] == pytest.approx(0.2 * 0.4 + 0.5 * 0.6)
    windows = point["runs"][0]["timeline"]["windows"]
    assert point["runs"][0]["timeline"]["window_ms"] == 100
    assert windows[0]["blocking_ratio"] == 0.2
    assert windows[-1]["blocking_ratio"] == 0.5


def test_a_controlled_pool_has_a_timeline_and_a_fixed_pool_without_a_profile_none(binary, tmp_path):
    doc = _run_doc(binary, tmp_path, "--pool", "formula:1:2N:50", "--blocking", "0.5",
                   "--duration", "0.6")
    run0 = doc["points"][0]["runs"][0]
    windows = run0["timeline"]["windows"]
    assert windows and all(w["blocking_ratio"] == 0.5 for w in windows)
    lo = run0["pool_sizing"]["settings"]["min_threads"]
    hi = run0["pool_sizing"]["settings"]["max_threads"]
    assert all(lo <= w["mean_threads"] <= hi for w in windows)
    assert "blocking_profile" not in doc["points"][0]
    fixed = _run_doc(binary, tmp_path, "--pool", "2", "--duration", "0.3", name="fixed.json")
    assert "timeline" not in fixed["points"][0]["runs"][0]


def test_a_sweep_takes_the_profile_for_its_blocking_axis(binary, tmp_path):
    out = tmp_path / "sweep.json"
    proc = run(binary, "sweep", "--workload", "post", "--concurrency", "N", "--pool", "2",
               "--work-us", "20", "--duration", "0.5", "--warmup", "0.05", "--repetitions", "1",
               "--no-probe", "--blocking-profile", "0.1:0.25,0.4", "--timeline-ms", "50",
               "--json", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    assert len(doc["points"]) == 1
    point = doc["points"][0]
    assert point["id"].endswith("/profile=0.1:0.25,0.4")
    assert point["blocking"]["ratio"] == pytest.approx(0.1 * 0.5 + 0.4 * 0.5)
    assert doc["sweep"]["blocking_profile"] == "0.1:0.25,0.4"
    assert doc["sweep"]["timeline_ms"] == 50
    assert point["runs"][0]["timeline"]["window_ms"] == 50
