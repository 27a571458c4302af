"""iocpbench tune through the real binary: the final phase's evidence in the tune block
(docs/tuning.md). The defaults its --help states: test_help.py."""
from __future__ import annotations

import json
from typing import Any

from conftest import run


def test_final_phase_decides_in_the_fixed_order(binary, tmp_path):
    out = tmp_path / "tune.json"
    # Short runs, enough final rounds (6) for a 90% signed-rank interval, and no more whatever
    # the noise (--max-repetitions 6).
    proc = run(binary, "tune", "--workload", "post", "--blocking", "0", "--duration", "0.05",
               "--warmup", "0.01", "--screen-repetitions", "1", "--repetitions", "6", "--max-repetitions", "6",
               "--quiet", "--json", str(out), timeout=240)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    tune = doc["tune"]
    finalists = tune["finalists"]
    assert 1 <= len(finalists) <= 4
    assert tune["rule"]["final_rounds"] == 6 and tune["rule"]["confidence"] == 0.9
    assert tune["rule"]["final_rounds_max"] == 6 and 1 <= tune["rule"]["final_stages"] <= 3
    order = [(f["pool"]["value"], f["concurrency"]["value"]) for f in finalists]
    assert order == sorted(order)
    floor = 1 - tune["threshold_pct"] / 100
    for f in finalists:
        r = f["ratio_to_best"]
        assert r["pairs"] == 6
        if f["id"] == tune["best"]["id"]:
            assert r["estimate"] == 1 and f["indistinguishable"]
        else:
            assert r["ci90_low"] <= r["estimate"] <= r["ci90_high"]
            assert f["indistinguishable"] == (r["ci90_low"] >= floor)
            assert f["not_shown_worse"] == (r["ci90_high"] >= floor)
    # The recommendation is the first finalist not shown worse in the fixed order, and it says
    # what was shown about it.
    first = next(f for f in finalists if f["not_shown_worse"])
    rec = tune["recommendation"]
    assert rec["id"] == first["id"]
    assert tune["not_shown_worse"][0] == first["id"]
    expected = ("best" if first["id"] == tune["best"]["id"]
                else "shown_within" if first["indistinguishable"] else "not_shown_worse")
    assert rec["shown"] == expected
    for entry in tune["excluded"]:
        assert entry["reason"] and entry["id"] not in tune["indistinguishable"]
    # 6 pairs: every finalist has a CI, so none is "no evidence".
    assert not any(f["no_evidence"] for f in finalists) and rec["shown"] != "no_evidence"
    check_shown_worse_in_earlier_stages(doc, tune)


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
