"""machine.topology in the report: the shape, caches and clocks as short lines; the fields the
OS did not tell named; a file without a topology (written before the harness recorded one)
loads and renders as before; the schema checks the block's types; a comparison across machines
names the sockets, cores, SMT and NUMA nodes that differ."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from synthetic import make_results, write_json

from iocpbench_analysis.compare import compare_results, render_markdown, topology_differences
from iocpbench_analysis.load import InputError, Results, load_results
from iocpbench_analysis.metrics import METRICS
from iocpbench_analysis.report import machine_section
from iocpbench_analysis.topology import cache_text, topology_rows

TP = METRICS["throughput_ops_per_s"]

# What iocpbench info writes on a two-socket server (the C++ fake tree's machine).
SERVER: dict[str, Any] = {
    "sockets": 2, "physical_cores": 4, "logical_cpus": 8, "threads_per_core": 2,
    "numa_nodes": 2, "numa_node_cpus": {"0": "0-1,4-5", "1": "2-3,6-7"},
    "caches": [
        {"level": 1, "type": "Data", "size_kib": 32, "shared_by_cpus": 2, "count": 4},
        {"level": 1, "type": "Instruction", "size_kib": 32, "shared_by_cpus": 2, "count": 4},
        {"level": 2, "type": "Unified", "size_kib": 1024, "shared_by_cpus": 2, "count": 4},
        {"level": 3, "type": "Unified", "size_kib": 32768, "shared_by_cpus": 4, "count": 2},
    ],
    "cpu_model": "Fake CPU 9000", "base_mhz": 2100, "max_mhz": 3900, "current_mhz": 1800,
    "unavailable": {},
}

# A small VM: no caches, NUMA or cpufreq described.
VM: dict[str, Any] = {
    "sockets": 1, "physical_cores": 2, "logical_cpus": 2, "threads_per_core": 1,
    "numa_nodes": None, "numa_node_cpus": None, "caches": None, "cpu_model": "Fake vCPU",
    "base_mhz": None, "max_mhz": None, "current_mhz": 2300,
    "unavailable": {
        "numa_nodes": "no /sys/devices/system/node/node*/cpulist (a kernel without NUMA support)",
        "numa_node_cpus": "no /sys/devices/system/node/node*/cpulist (a kernel without NUMA support)",
        "caches": "no /sys/devices/system/cpu/cpu0/cache/index*/ (a VM or an ARM kernel may describe none)",
        "base_mhz": "no /sys/devices/system/cpu/cpu0/cpufreq on this kernel (a VM often has none)",
        "max_mhz": "no /sys/devices/system/cpu/cpu0/cpufreq on this kernel (a VM often has none)",
    },
}


def _rows(topology: dict[str, Any] | None) -> dict[str, str | None]:
    machine = {"hostname": "h"} if topology is None else {"hostname": "h", "topology": topology}
    return dict(topology_rows(machine))


def test_a_server_in_three_lines() -> None:
    rows = _rows(SERVER)
    assert rows["topology"] == "2 sockets, 4 cores, 2 threads per core, 8 logical CPUs, 2 NUMA nodes"
    assert rows["caches"] == ("L1d 32 KiB (x4, 2 CPUs each), L1i 32 KiB (x4, 2 CPUs each), "
                              "L2 1 MiB (x4, 2 CPUs each), L3 32 MiB (x2, 4 CPUs each)")
    assert rows["clock"] == "base 2100 MHz, max 3900 MHz, 1800 MHz when read"
    assert rows["not told by the OS"] is None


def test_a_vm_names_what_the_os_did_not_tell() -> None:
    rows = _rows(VM)
    assert rows["topology"] == "1 socket, 2 cores, 1 thread per core, 2 logical CPUs"
    assert rows["caches"] is None
    assert rows["clock"] == "2300 MHz when read"
    assert rows["not told by the OS"] == "base_mhz, caches, max_mhz, numa_node_cpus, numa_nodes"


def test_one_cache_shared_by_all() -> None:
    assert cache_text({"level": 3, "type": "Unified", "size_kib": 36864, "shared_by_cpus": 16, "count": 1}) == \
        "L3 36 MiB (shared by 16 CPUs)"
    assert cache_text({"level": 2, "type": "Unified", "size_kib": 512, "shared_by_cpus": 1, "count": 1}) == "L2 512 KiB"


def test_no_topology_no_rows() -> None:
    assert _rows(None) == {}


@pytest.mark.parametrize("topology", [SERVER, VM, None], ids=["server", "vm", "none"])
def test_report_machine_section(tmp_path: Path, topology: dict[str, Any] | None) -> None:
    data = make_results()
    if topology is not None:
        data["machine"]["topology"] = copy.deepcopy(topology)
    res = load_results(write_json(tmp_path / "a.json", data))  # the schema accepts it
    page = machine_section(res)
    assert "<th>cores</th><td>2</td>" in page  # the existing rows stay
    if topology is None:
        assert "<th>topology</th>" not in page and "<th>caches</th>" not in page
    else:
        assert f"<th>topology</th><td>{topology['sockets']} socket" in page
        assert ("<th>not told by the OS</th>" in page) == bool(topology["unavailable"])


def test_report_escapes_the_topology() -> None:
    topology = copy.deepcopy(VM)
    topology["unavailable"]["<b>"] = "x"
    page = machine_section(Results(Path("a.json"), {**make_results(), "machine": {"topology": topology}}))
    assert "&lt;b&gt;" in page and "<b>" not in page


def test_schema_checks_the_topology_types(tmp_path: Path) -> None:
    data = make_results()
    data["machine"]["topology"] = {**copy.deepcopy(SERVER), "sockets": "two"}
    with pytest.raises(InputError):
        load_results(write_json(tmp_path / "bad.json", data))


# ---------------------------------------------------------------- compare across machines


def _pair(tmp_path: Path, base_topology: dict[str, Any] | None, new_topology: dict[str, Any] | None,
          *, new_host: str) -> tuple[Results, Results]:
    files = []
    for name, host, topology in (("base", "host-a", base_topology), ("new", new_host, new_topology)):
        data = make_results(hostname=host, seed=1 if name == "base" else 2)
        if topology is not None:
            data["machine"]["topology"] = copy.deepcopy(topology)
        files.append(load_results(write_json(tmp_path / f"{name}.json", data)))
    return files[0], files[1]


def test_cross_machine_names_the_shape_that_differs(tmp_path: Path) -> None:
    base, new = _pair(tmp_path, VM, SERVER, new_host="server")
    report = compare_results(base, [new], TP, cross_machine=True)
    names = [d.text() for d in report.machines[0].setup_differences]
    assert "machine.topology.sockets (1 vs 2)" in names
    assert "machine.topology.threads_per_core (1 vs 2)" in names
    assert "machine.topology.physical_cores (2 vs 4)" in names
    assert not any("numa_nodes" in n for n in names)  # null on the VM: not compared
    assert "machine.topology.sockets (1 vs 2)" in render_markdown(report)


def test_a_file_without_topology_is_not_a_difference(tmp_path: Path) -> None:
    base, new = _pair(tmp_path, None, SERVER, new_host="server")
    assert topology_differences(base, new) == []
    # One machine, an older baseline without topology: the gate is not refused for it.
    base, new = _pair(tmp_path, None, SERVER, new_host="host-a")
    assert compare_results(base, [new], TP).machines[0].setup_differences == []
