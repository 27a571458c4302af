"""--affinity and --load-affinity through the real binary: a run records the CPU each worker and
load thread was pinned to (read back from the OS), spread puts the workers on different CPUs,
a sweep's file is schema-valid with the placement in its ids and sweep block, and bad values
exit 2 with one line naming the flag and nothing written."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iocpbench_analysis.load import _validator

from binary_runner import run

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the CPUs as Linux tells them")

POST = ["--workload", "post", "--concurrency", "2", "--work-us", "5", "--duration", "0.1", "--warmup", "0.02"]


def allowed() -> list[int]:
    return sorted(os.sched_getaffinity(0))


def online_text() -> str:
    return Path("/sys/devices/system/cpu/online").read_text().strip()


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert proc.stdout == ""
    return lines[0]


def test_a_run_pinned_to_one_cpu_records_it_for_every_worker(binary, tmp_path):
    cpu = allowed()[0]
    out = tmp_path / "run.json"
    proc = run(binary, "run", *POST, "--pool", "3", "--affinity", str(cpu), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f", workers on CPUs {cpu},{cpu},{cpu}" in proc.stdout, proc.stdout
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    affinity = doc["points"][0]["affinity"]
    assert affinity["workers"] == {"spec": str(cpu), "order": "list", "cpus": [cpu, cpu, cpu]}
    assert affinity["load"] == {"spec": "none", "order": None, "cpus": None, "threads": None}


def test_spread_puts_the_workers_on_different_cpus_and_the_load_threads_are_recorded(binary, tmp_path):
    cpus = allowed()
    pool = min(len(cpus), 4)
    out = tmp_path / "run.json"
    proc = run(binary, "run", *POST, "--pool", str(pool), "--posters", "2", "--affinity", "spread",
               "--load-affinity", "compact", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    workers = doc["points"][0]["affinity"]["workers"]
    assert workers["spec"] == "spread"
    assert workers["order"] == "topology" or workers["order"].startswith("cpu number (topology unavailable: ")
    assert len(workers["cpus"]) == pool
    assert set(workers["cpus"]) <= set(cpus)
    assert len(set(workers["cpus"])) == pool, "spread gives each worker its own CPU while CPUs last"
    load = doc["points"][0]["affinity"]["load"]
    assert load["spec"] == "compact"
    assert load["threads"] == ["poster 0", "poster 1"]
    assert len(load["cpus"]) == 2 and set(load["cpus"]) <= set(cpus)


def test_the_open_loop_pacer_is_a_load_thread(binary, tmp_path):
    cpu = allowed()[-1]
    out = tmp_path / "run.json"
    proc = run(binary, "run", *POST, "--pool", "2", "--rate", "2000", "--load-affinity", str(cpu),
               "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    load = json.loads(out.read_text())["points"][0]["affinity"]["load"]
    assert load["threads"] == ["open-loop pacer"] and load["cpus"] == [cpu]


def test_a_sweep_names_the_placement_in_its_ids_and_stays_schema_valid(binary, tmp_path):
    out = tmp_path / "sweep.json"
    proc = run(binary, "sweep", "--workload", "post", "--concurrency", "N", "--pool", "N,2N", "--blocking", "0",
               "--repetitions", "1", "--duration", "0.1", "--warmup", "0.02", "--affinity", "compact",
               "--load-affinity", str(allowed()[0]), "--no-probe", "--quiet", "--json", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    assert doc["sweep"]["affinity"] == "compact"
    assert doc["sweep"]["load_affinity"] == str(allowed()[0])
    assert len(doc["points"]) == 2
    for point in doc["points"]:
        assert point["id"].endswith(f"/affinity=compact/load-affinity={allowed()[0]}"), point["id"]
        workers = point["affinity"]["workers"]
        assert len(workers["cpus"]) == point["pool"]["value"]
        assert set(workers["cpus"]) <= set(allowed())


def test_a_sweep_without_placements_keeps_its_ids(binary, tmp_path):
    out = tmp_path / "sweep.json"
    proc = run(binary, "sweep", "--workload", "post", "--concurrency", "N", "--pool", "N", "--blocking", "0",
               "--repetitions", "1", "--duration", "0.1", "--warmup", "0.02", "--no-probe", "--quiet",
               "--json", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert "affinity" not in doc["sweep"]
    point = doc["points"][0]
    assert "affinity" not in point["id"]
    assert point["affinity"]["workers"] == {"spec": "none", "order": None, "cpus": None}


@pytest.mark.parametrize("args,flag,reason", [
    (["run", "--affinity", "everywhere"], "--affinity", "'everywhere' is not none, compact, spread or a CPU list"),
    (["run", "--affinity", "0,,1"], "--affinity", "'0,,1' is not none, compact, spread or a CPU list"),
    (["run", "--affinity", "3-1"], "--affinity", "'3-1' is not none"),
    (["run", "--load-affinity", "Compact"], "--load-affinity", "'Compact' is not none"),
    (["run", "--affinity", "9999"], "--affinity", "CPU 9999 does not exist (this machine has CPUs {online})"),
    (["sweep", "--workload", "post", "--no-probe", "--affinity", "0-9999"], "--affinity", "CPU "),
    (["tune", "--workload", "post", "--blocking", "0", "--load-affinity", "x"], "--load-affinity", "'x' is not none"),
])
def test_bad_placements_exit_2_naming_the_flag_and_write_nothing(binary, tmp_path, args, flag, reason):
    out = tmp_path / "out.json"
    line = one_error_line(run(binary, *args, "--json", str(out), timeout=60))
    assert line.startswith(f"iocpbench: {flag}: " + reason.format(online=online_text())), line
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_a_cpu_this_process_may_not_use_is_refused(binary, tmp_path):
    cpus = allowed()
    if len(cpus) < 2:
        pytest.skip("needs two CPUs: one to allow, one to refuse")
    out = tmp_path / "out.json"
    # The process's mask narrowed to the first CPU, as taskset or a cgroup's cpuset would.
    proc = subprocess.run([str(binary), "run", *POST, "--affinity", str(cpus[1]), "--json", str(out)],
                          capture_output=True, text=True, timeout=60,
                          preexec_fn=lambda: os.sched_setaffinity(0, {cpus[0]}))
    line = one_error_line(proc)
    assert line == (f"iocpbench: --affinity: CPU {cpus[1]} is not allowed to this process (its affinity "
                    f"mask or cgroup allows CPUs {cpus[0]})"), line
    assert not out.exists()


def test_an_existing_file_is_not_truncated(binary, tmp_path):
    out = tmp_path / "keep.json"
    out.write_text('{"precious": true}\n')
    for args in (["run", "--affinity", "nowhere"], ["sweep", "--workload", "post", "--load-affinity", "1,x"]):
        proc = run(binary, *args, "--json", str(out), timeout=60)
        assert proc.returncode == 2
        assert out.read_text() == '{"precious": true}\n'


def test_help_explains_the_placements(binary):
    for command in ("run", "sweep", "tune"):
        proc = run(binary, command, "--help")
        assert proc.returncode == 0
        for text in ("--affinity", "--load-affinity", "compact", "spread", "0,2-3"):
            assert text in proc.stdout, (command, text)
