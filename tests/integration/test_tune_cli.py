"""iocpbench tune through the real binary: the final phase's evidence in the tune block
(docs/tuning.md). The defaults its --help states: test_help.py."""
from __future__ import annotations

import json
from typing import Any

from binary_runner import run


def test_final_phase_decides_in_the_fixed_order(binary, tmp_path):
    out = tmp_path / "tune.json"
    # Short runs and 6 final rounds a stage, no more whatever the noise (--max-repetitions 6):
    # the first chooses the best, the other 5 are judged (enough for a 90% signed-rank interval
    # at the one look).
    proc = run(binary, "tune", "--workload", "post", "--blocking", "0", "--duration", "0.05",
               "--warmup", "0.01", "--screen-repetitions", "1", "--repetitions", "6", "--max-repetitions", "6",
               "--quiet", "--json", str(out), timeout=240)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    tune = doc["tune"]
    rule = tune["rule"]
    finalists = tune["finalists"]
    assert 1 <= len(finalists) <= 4
    assert rule["selection_rounds"] == 1 and rule["final_rounds"] == 5
    assert rule["looks"] == rule["looks_planned"] == 1 and rule["look_alpha"] == rule["error_rate"] == 0.05
    assert rule["confidence"] == 0.9
    assert rule["final_rounds_max"] == 6 and 1 <= rule["final_stages"] <= 3
    lower, upper, middle = rule["zone_lower"], rule["zone_upper"], rule["zone_middle"]
    assert lower < middle < upper == 1 - tune["threshold_pct"] / 100
    order = [(f["pool"]["value"], f["concurrency"]["value"]) for f in finalists]
    assert order == sorted(order)
    for f in finalists:
        r = f["ratio_to_best"]
        assert r["pairs"] == 5
        if f["id"] == tune["best"]["id"]:
            assert r["estimate"] == 1 and f["indistinguishable"] and f["verdict"] == "best"
            continue
        assert r["ci90_low"] <= r["estimate"] <= r["ci90_high"]
        within, worse = r["ci90_low"] >= lower, r["ci90_high"] < upper
        expected = ("at_threshold" if within and worse else "within" if within else "worse" if worse
                    else "undecided")
        assert f["verdict"] == expected, f
        assert f["indistinguishable"] == within
        assert f["not_shown_worse"] == (expected != "worse")
    # The recommendation is the first finalist in the fixed order the rule takes: within the
    # threshold or inside the zone, or (this one look is the last) undecided with its estimate
    # at least the zone's middle; else the best. It says what was shown about it.
    def taken(f: dict[str, Any]) -> bool:
        return f["verdict"] in ("best", "within", "at_threshold") or (
            f["verdict"] == "undecided" and f["ratio_to_best"]["estimate"] >= middle)
    first = next(f for f in finalists if taken(f))
    rec = tune["recommendation"]
    assert rec["id"] == first["id"] and rec["verdict"] == first["verdict"]
    expected_shown = {"best": "best", "within": "shown_within", "at_threshold": "shown_within",
                      "undecided": "not_shown_worse"}[first["verdict"]]
    assert rec["shown"] == expected_shown
    # Context switches per 1,000 completions beside throughput, for the answer and the best.
    for entry in (rec, tune["best"]):
        assert entry["context_switches_per_1000_completions"] == entry["context_switches_per_kop"] >= 0
    assert "context switches per 1,000 completions" in proc.stdout
    check_at_threshold(tune, proc.stdout)
    for entry in tune["excluded"]:
        assert entry["reason"] and entry["id"] not in tune["indistinguishable"]
    # 5 pairs: every finalist has a CI, so none is "no evidence".
    assert not any(f["no_evidence"] for f in finalists) and rec["shown"] != "no_evidence"
    check_shown_worse_in_earlier_stages(doc, tune)


def check_at_threshold(tune: dict[str, Any], stdout: str) -> None:
    """tune.at_threshold names two settings straddling the threshold, the one the rule takes (the
    recommendation) and why; the text says the same. Null when no finalist's CI meets the zone."""
    near = [f for f in tune["finalists"] if f["verdict"] != "best"
            and f["ratio_to_best"]["ci90_low"] < tune["rule"]["zone_upper"]
            and f["ratio_to_best"]["ci90_high"] > tune["rule"]["zone_lower"]]
    at = tune["at_threshold"]
    if at is None:
        assert "AT THE THRESHOLD" not in stdout
        rec = tune["recommendation"]["id"]
        before = [f["id"] for f in tune["finalists"]][:[f["id"] for f in tune["finalists"]].index(rec)]
        assert not any(f["id"] == rec or f["id"] in before for f in near)
        return
    assert "AT THE THRESHOLD" in stdout and at["reason"] in stdout
    assert at["smaller"]["id"] in {f["id"] for f in near}
    picked = at["smaller"] if at["picked"] == "smaller" else at["larger"]
    assert picked["id"] == tune["recommendation"]["id"]
    assert (at["smaller"]["pool"]["value"], at["smaller"]["concurrency"]["value"]) < (
        at["larger"]["pool"]["value"], at["larger"]["concurrency"]["value"])


def _setting(point: dict[str, Any], logical_cpus: int) -> tuple[int, int]:
    """(pool, concurrency) values of a results point, the tuner's fixed order (0 = N)."""
    concurrency = point["concurrency"]["value"] or logical_cpus
    return (point["pool"]["value"], concurrency)


def check_shown_worse_in_earlier_stages(doc: dict[str, Any], tune: dict[str, Any]) -> None:
    """tune.rule.shown_worse_in_earlier_stages names only the earlier stages' finalists that were
    smaller than their stage's best (which goes on, as the reference, to the last finalist of the
    next stage) and shown worse than it: measured, not excluded, never a later stage's finalist."""
    earlier = tune["rule"]["shown_worse_in_earlier_stages"]
    assert len(earlier) == len(set(earlier))
    if tune["rule"]["final_stages"] == 1:
        assert earlier == []
        return
    points = {p["id"]: p for p in doc["points"]}
    excluded = {e["id"] for e in tune["excluded"]}
    finalists = tune["finalists"]
    reference = (finalists[-1]["pool"]["value"], finalists[-1]["concurrency"]["value"])
    n = doc["machine"]["logical_cpus"]
    for point_id in earlier:
        assert point_id in points and point_id not in excluded
        assert point_id not in {f["id"] for f in finalists}
        assert _setting(points[point_id], n) < reference, (point_id, reference)
    # At most the smaller finalists of each earlier stage.
    assert len(earlier) <= (tune["rule"]["final_stages"] - 1) * (tune["rule"]["max_finalists"] - 1)
