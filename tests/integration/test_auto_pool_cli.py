"""The self-sizing pool (`--pool auto...`) through the real binary: results that validate, a
timeline that stays inside [min, max], the sweep beside fixed pools, an interrupted sweep with
an auto pool resumed, and the resume refusing other auto settings."""
from __future__ import annotations

import json
import signal
import subprocess
import time

from iocpbench_analysis.load import _validator

from binary_runner import run

AUTO_SWEEP = ["sweep", "--workload", "post", "--concurrency", "N", "--pool", "N,auto,auto:1:2N:100:100:20",
              "--blocking", "0,0.75", "--duration", "0.2", "--warmup", "0.05", "--no-probe", "--quiet"]


def test_run_with_an_auto_pool_records_its_sizes_within_its_bounds(binary, tmp_path):
    out = tmp_path / "auto.json"
    proc = run(binary, "run", "--workload", "post", "--pool", "auto:1:4N:100:100:1000", "--blocking", "0.75",
               "--work-us", "20", "--duration", "0.3", "--warmup", "0.1", "--json", str(out), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "threads mean" in proc.stdout
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    point = doc["points"][0]
    cpus = doc["machine"]["logical_cpus"]
    assert point["pool"]["spec"] == "auto:1:4N:100:100:1000"
    assert point["pool"]["value"] == 4 * cpus
    assert point["pool"]["auto"]["min"]["value"] == 1
    sizing = point["runs"][0]["pool_sizing"]
    threads = [t for _, t in sizing["timeline_ms_threads"]]
    assert threads[0] == 1, "starts at its minimum"
    assert all(1 <= t <= 4 * cpus for t in threads)
    assert sizing["grows"] >= 1, "a blocking handler with CPU to spare makes it grow"
    times = [t for t, _ in sizing["timeline_ms_threads"]]
    assert times == sorted(times)
    assert 1 <= sizing["window"]["mean_threads"] <= 4 * cpus
    assert point["summary"]["pool_mean_threads"]["n"] == 1


def test_sweep_puts_auto_beside_fixed_pools_and_resumes_it(binary, tmp_path):
    out = tmp_path / "sweep.json"
    proc = subprocess.Popen([str(binary), *AUTO_SWEEP, "--repetitions", "3", "--json", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode in (0, 130)

    resumed = run(binary, "sweep", "--resume", str(out), "--quiet", timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    assert doc["sweep"]["complete"] is True
    assert doc["sweep"]["pool"] == ["N", "auto", "auto:1:2N:100:100:20"]
    specs = {}
    for point in doc["points"]:
        assert sorted(r["repetition"] for r in point["runs"]) == [0, 1, 2], point["id"]
        specs.setdefault(point["pool"]["spec"], []).append(point)
    assert set(specs) == {"N", "auto", "auto:1:2N:100:100:20"}
    for point in specs["N"]:
        assert all("pool_sizing" not in r for r in point["runs"])
    for point in specs["auto"] + specs["auto:1:2N:100:100:20"]:
        assert all("pool_sizing" in r for r in point["runs"])
        assert "pool_mean_threads" in point["summary"]


def test_a_grid_file_takes_auto_pools_and_refuses_a_malformed_one(binary, tmp_path):
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"workloads": ["post"], "concurrency": ["N"], "pool": ["auto:1:2N"],
                                "blocking": [0.5], "repetitions": 1, "duration_s": 0.1, "warmup_s": 0}))
    out = tmp_path / "grid-out.json"
    ok = run(binary, "sweep", "--grid", str(grid), "--json", str(out), "--no-probe", "--quiet", timeout=60)
    assert ok.returncode == 0, ok.stderr
    doc = json.loads(out.read_text())
    assert [p["pool"]["spec"] for p in doc["points"]] == ["auto:1:2N"]
    assert doc["points"][0]["pool"]["auto"]["max"]["value"] == 2 * doc["machine"]["logical_cpus"]

    grid.write_text(json.dumps({"workloads": ["post"], "pool": ["auto:1:"]}))
    bad_out = tmp_path / "bad.json"
    bad = run(binary, "sweep", "--grid", str(grid), "--json", str(bad_out), timeout=30)
    assert bad.returncode == 2
    assert "--grid" in bad.stderr and "auto:1:" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    assert not bad_out.exists()
