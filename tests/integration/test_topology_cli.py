"""machine.topology through the real binary: `info` and a results file carry it (each field a
value or null with the reason; `cores` is its physical_cores), and a resumed file keeps the
topology it was written with, or none when it had none (a file from before the field)."""
from __future__ import annotations

import json

from iocpbench_analysis.load import _validator

from binary_runner import run

FIELDS = ("sockets", "physical_cores", "logical_cpus", "threads_per_core", "numa_nodes",
          "numa_node_cpus", "caches", "cpu_model", "base_mhz", "max_mhz", "current_mhz")
# One point, two repetitions: the second is taken out so that --resume has a run to add.
ONE_POINT = ["--workload", "post", "--concurrency", "N", "--pool", "N", "--blocking", "0",
             "--repetitions", "2", "--duration", "0.1", "--warmup", "0.02", "--no-probe", "--quiet"]


def check_topology(machine: dict) -> None:
    topology = machine["topology"]
    for name in FIELDS:
        assert name in topology, name
        assert (topology[name] is None) == (name in topology["unavailable"]), (name, topology)
    assert all(topology["unavailable"].values()), topology
    # A Linux machine tells these (tests/platform checks the reader on /sys itself).
    assert topology["sockets"] >= 1 and topology["logical_cpus"] >= machine["logical_cpus"]
    assert machine["cores"] == topology["physical_cores"] <= topology["logical_cpus"]


def test_info_and_a_results_file_carry_the_topology(binary, tmp_path):
    proc = run(binary, "info", timeout=60)
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)["machine"]
    check_topology(info)
    out = tmp_path / "run.json"
    proc = run(binary, "run", "--workload", "post", "--duration", "0.1", "--warmup", "0.02",
               "--json", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    check_topology(doc["machine"])
    shape = ("sockets", "physical_cores", "logical_cpus", "threads_per_core", "numa_nodes", "caches")
    assert {k: doc["machine"]["topology"][k] for k in shape} == {k: info["topology"][k] for k in shape}


def _resume(binary, path, edit) -> dict:
    """A one-point sweep with its last run taken out and `edit` applied to its machine, resumed."""
    assert run(binary, "sweep", *ONE_POINT, "--json", str(path), timeout=120).returncode == 0
    doc = json.loads(path.read_text())
    doc["points"][0]["runs"].pop()
    doc["sweep"]["complete"] = False
    edit(doc["machine"])
    path.write_text(json.dumps(doc))
    proc = run(binary, "sweep", "--resume", str(path), timeout=120)
    assert proc.returncode == 0, proc.stderr
    resumed = json.loads(path.read_text())
    assert len(resumed["points"][0]["runs"]) == 2 and resumed["sweep"]["complete"] is True
    return resumed["machine"]


def test_resume_keeps_the_files_topology(binary, tmp_path):
    marked = {}

    def mark(machine: dict) -> None:
        machine["topology"]["current_mhz"] = 1  # what this file says, not what is read now
        marked.update(machine["topology"])

    assert _resume(binary, tmp_path / "r.json", mark)["topology"] == marked


def test_resume_of_a_file_without_topology_adds_none(binary, tmp_path):
    machine = _resume(binary, tmp_path / "old.json", lambda m: m.pop("topology"))
    assert "topology" not in machine
