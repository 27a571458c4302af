"""sweep and tune through the real binary: schema, interruption and resume, the tuner's JSON."""
from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from iocpbench_analysis.load import _validator

from binary_runner import ROOT, run

SMALL = ["--workload", "post", "--concurrency", "N", "--pool", "N,2N,2N+2", "--blocking", "0,0.5",
         "--duration", "0.15", "--warmup", "0.02", "--no-probe", "--quiet"]


def validate(doc: dict) -> None:
    """Against results/schema/results.schema.json, with the analysis package's offline resolver."""
    _validator().validate(doc)


def test_quick_sweep_validates_against_the_schema(binary, tmp_path):
    out = tmp_path / "quick.json"
    proc = run(binary, "sweep", "--quick", "--json", str(out), timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    validate(doc)
    assert doc["sweep"]["complete"] is True
    assert {p["workload"] for p in doc["points"]} == {"post", "file", "socket"}
    assert {p["pool"]["spec"] for p in doc["points"]} == {"N", "2N", "2N+2"}
    for point in doc["points"]:
        assert len(point["runs"]) == doc["sweep"]["repetitions"]
        assert point["summary"]["throughput_ops_per_s"]["n"] == len(point["runs"])
    assert all(v["value"] for v in doc["machine"]["probe"]["semantics"].values())


@pytest.mark.parametrize("attempt", range(4))
def test_interrupt_then_resume_keeps_every_run_exactly_once(binary, tmp_path, attempt):
    out = tmp_path / "interrupted.json"
    sig = signal.SIGINT if attempt % 2 == 0 else signal.SIGTERM
    proc = subprocess.Popen([str(binary), "sweep", *SMALL, "--repetitions", "3", "--json", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(random.Random(attempt).uniform(0.05, 1.5))
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    doc = json.loads(out.read_text())  # valid JSON whenever the signal came
    if proc.returncode == 130:
        assert doc["sweep"]["complete"] is False
    else:  # the sweep finished before the signal arrived
        assert proc.returncode == 0 and doc["sweep"]["complete"] is True
    validate(doc)
    done_before = sum(len(p["runs"]) for p in doc["points"])

    resumed = run(binary, "sweep", "--resume", str(out), "--quiet", timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    doc = json.loads(out.read_text())
    assert doc["sweep"]["complete"] is True
    for point in doc["points"]:
        assert sorted(r["repetition"] for r in point["runs"]) == [0, 1, 2], point["id"]
    assert sum(len(p["runs"]) for p in doc["points"]) == 3 * len(doc["points"]) >= done_before


def test_resume_refuses_another_grid_and_leaves_the_file_alone(binary, tmp_path):
    out = tmp_path / "r.json"
    assert run(binary, "sweep", *SMALL, "--repetitions", "1", "--json", str(out)).returncode == 0
    before = out.read_bytes()
    proc = run(binary, "sweep", "--resume", str(out), "--pool", "3N")
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("iocpbench: --resume:")
    assert out.read_bytes() == before


def test_resume_refuses_another_machine(binary, tmp_path):
    out = tmp_path / "r.json"
    assert run(binary, "sweep", *SMALL, "--repetitions", "1", "--json", str(out)).returncode == 0
    doc = json.loads(out.read_text())
    doc["machine"]["logical_cpus"] += 62
    out.write_text(json.dumps(doc))
    proc = run(binary, "sweep", "--resume", str(out))
    assert proc.returncode == 2 and "another machine" in proc.stderr


def test_tune_recommends_one_of_its_evidence_points(binary, tmp_path):
    out = tmp_path / "tune.json"
    # Final rounds bounded (--max-repetitions): by default they grow with the measured noise, up
    # to 400, which on a loaded machine is many minutes.
    proc = run(binary, "tune", "--workload", "post", "--blocking", "0.5", "--duration", "0.1",
               "--warmup", "0.02", "--screen-repetitions", "2", "--repetitions", "6",
               "--max-repetitions", "6", "--quiet", "--json", str(out), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "recommended:" in proc.stdout and "queueing estimate N/(1-b)" in proc.stdout
    doc = json.loads(out.read_text())
    validate(doc)
    tune = doc["tune"]
    ids = {p["id"] for p in doc["points"]}
    assert tune["recommendation"]["id"] in ids and tune["best"]["id"] in ids
    assert set(tune["evidence"]) == ids
    # What was shown about it: within the threshold (then it is among the indistinguishable),
    # the best itself, or only not shown worse.
    shown = tune["recommendation"]["shown"]
    assert shown in ("shown_within", "best", "not_shown_worse")
    assert (tune["recommendation"]["id"] in tune["indistinguishable"]) == (shown != "not_shown_worse")
    n = doc["machine"]["logical_cpus"]
    assert tune["queueing_estimate"]["value"] == 2 * n
    assert [r["rule"] for r in tune["rules_of_thumb"]] == ["pool N", "pool 2N", "pool 2N+2"]
    # The recommendation is a finalist the final rounds did not show worse than the threshold.
    finalist = next(f for f in tune["finalists"] if f["id"] == tune["recommendation"]["id"])
    assert finalist["not_shown_worse"]
