"""Open-loop arrivals through the real binary: bad input is one line naming the flag, exit 2 and
no file; a run and a sweep write results the schema accepts, with the open-loop blocks and ids."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from iocpbench_analysis.load import _validator

from binary_runner import run

QUICK = ["--concurrency", "N", "--pool", "N", "--blocking", "0", "--work-us", "20",
         "--duration", "0.2", "--warmup", "0.05"]


@pytest.mark.parametrize("args, flag", [
    (["run", "--rate", "0"], "--rate"),
    (["run", "--rate", "-5"], "--rate"),
    (["run", "--rate", "5"], "--rate"),
    (["run", "--rate", "fast"], "--rate"),
    (["run", "--rate", "100,200"], "--rate"),
    (["run", "--load", "1.5"], "--load"),
    (["run", "--load", "0"], "--load"),
    (["run", "--rate", "100", "--load", "0.5"], "--load"),
    (["run", "--rate", "100", "--arrivals", "uniform"], "--arrivals"),
    (["run", "--rate", "100", "--workload", "socket", "--dispatch", "per-thread"], "--dispatch"),
    (["run", "--load", "0.5", "--dispatch", "per-thread"], "--dispatch"),
    (["run", "--rate", "100", "--no-metrics"], "--no-metrics"),
    (["sweep", "--quick", "--load", "0.5,1.2"], "--load"),
    (["sweep", "--quick", "--load", "0,0.5"], "--load"),
    (["sweep", "--quick", "--rate", "abc"], "--rate"),
    (["sweep", "--quick", "--load", "0.5", "--arrivals", "bursty"], "--arrivals"),
    (["sweep", "--quick", "--load", "0.5", "--rate", "100"], "--load"),
])
def test_bad_open_loop_input_names_the_flag_and_writes_nothing(binary: Path, tmp_path: Path,
                                                                args: list[str], flag: str) -> None:
    out = tmp_path / "r.json"
    done = run(binary, *args, "--json", str(out), timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0], done.stderr
    assert not out.exists()


@pytest.mark.parametrize("workload", ["post", "socket"])
def test_an_open_loop_run_records_what_it_offered_and_achieved(binary: Path, tmp_path: Path,
                                                                workload: str) -> None:
    out = tmp_path / "r.json"
    done = run(binary, "run", "--workload", workload, *QUICK, "--rate", "1500", "--arrivals", "constant",
               "--repetitions", "2", "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert "offered 1500/s" in done.stdout and "generator lag p99" in done.stdout
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    point = doc["points"][0]
    assert point["open_loop"]["rate_ops_per_s"] == 1500 and point["open_loop"]["arrivals"] == "constant"
    for r in point["runs"]:
        o = r["open_loop"]
        assert o["issued"] + o["unissued"] == o["arrivals_in_window"]
        assert o["service_time_us"]["p50"] <= r["latency_us"]["p50"]
        assert r["latency_source"].startswith("intended arrival")
        assert r["errors"] == 0
        assert o["generator_bound"] == (o["generator_bound_because"] is not None)
    assert "p999" in point["summary"]["latency_us"] and "open_loop" in point["summary"]


def load_sweep(binary: Path, tmp_path: Path, loads: str, repetitions: int) -> dict:
    """A quick post sweep at `loads`, its results file checked against the schema."""
    out = tmp_path / "s.json"
    done = run(binary, "sweep", "--workload", "post", *QUICK, "--load", loads, "--repetitions",
               str(repetitions), "--no-probe", "--quiet", "--json", str(out))
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    return doc


def test_a_load_sweep_has_a_point_per_load_with_its_own_id(binary: Path, tmp_path: Path) -> None:
    doc = load_sweep(binary, tmp_path, "0.4,0.8", 1)
    ids = [p["id"] for p in doc["points"]]
    assert [i.rsplit("/", 1)[-1] for i in ids] == ["load=0.4", "load=0.8"]
    assert doc["sweep"]["load"] == [0.4, 0.8]
    for p in doc["points"]:
        o = p["runs"][0]["open_loop"]
        assert o["capacity_ops_per_s"] > 0
        assert o["offered_ops_per_s"] == pytest.approx(p["open_loop"]["load"] * o["capacity_ops_per_s"])


def test_every_due_request_is_accounted_and_its_histograms_stored(binary: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = run(binary, "run", "--workload", "post", *QUICK, "--rate", "2000", "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert "due " in done.stdout and "unfinished" in done.stdout
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    o = doc["points"][0]["runs"][0]["open_loop"]
    a = o["accounting"]
    assert a["due"] == o["arrivals_in_window"]
    h = o["histograms"]
    assert sum(c for _, c in h["response"]) == a["timed"]
    assert sum(c for _, c in h["unfinished"]) == a["unfinished"]
    assert o["response_time_us"]["count"] == a["timed"] + a["unfinished"]
    assert set(o["response_time_us"]["lower_bound"]) <= {"p50", "p90", "p99", "p999", "max", "mean"}
    assert o["stalls"]["count"] >= 0 and o["stalls"]["threshold_ms"] > 0
    assert o["pacer_priority"] and o["meter_priority"]
    assert set(o["self_checks"]) == {"arrivals", "stationarity"}


def test_a_loads_capacity_is_found_once_and_every_repetition_offers_the_same_rate(
        binary: Path, tmp_path: Path) -> None:
    runs = load_sweep(binary, tmp_path, "0.5", 3)["points"][0]["runs"]
    assert len({r["open_loop"]["offered_ops_per_s"] for r in runs}) == 1
    sources = sorted(r["open_loop"]["capacity_source"] for r in runs)
    assert sources == ["an earlier run of the point"] * 2 + ["this run"]


def test_a_pacer_priority_that_is_not_known_is_refused(binary: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = run(binary, "run", "--rate", "100", "--pacer-priority", "high", "--json", str(out), timeout=60)
    assert done.returncode == 2
    assert "--pacer-priority" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_a_refused_real_time_priority_is_recorded_and_the_run_goes_on(binary: Path, tmp_path: Path) -> None:
    setpriv = shutil.which("setpriv")
    if setpriv is None or os.geteuid() != 0:
        pytest.skip("needs setpriv and root, to run the binary without CAP_SYS_NICE")
    out = tmp_path / "r.json"
    done = subprocess.run([setpriv, "--inh-caps=-sys_nice", "--bounding-set=-sys_nice", "--", str(binary),
                           "run", "--workload", "post", *QUICK, "--rate", "500", "--json", str(out)],
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0 and done.stderr.startswith("setpriv"):
        pytest.skip(f"setpriv could not drop the capability here: {done.stderr.strip()[:200]}")
    assert done.returncode == 0, done.stderr
    assert "the pacer ran at normal priority" in done.stderr
    o = json.loads(out.read_text())["points"][0]["runs"][0]["open_loop"]
    assert o["pacer_priority"] == "normal" and o["meter_priority"] == "normal"
    assert "SCHED_FIFO refused" in o["realtime_refused_because"]
