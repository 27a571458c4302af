"""The machine's shape (`machine.topology`, written by `iocpbench info` and every results file)
as a few short lines for the report: sockets, cores, SMT and NUMA; the caches; the clocks; and
which parts the OS did not tell. Files from before the harness recorded a topology have none:
every function here then returns nothing.
"""

from __future__ import annotations

from typing import Any

# The report's short names for a cache's type (Linux sysfs's words, Windows' mapped to them).
CACHE_SUFFIX = {"Data": "d", "Instruction": "i", "Unified": "", "Trace": "t"}


def _count(n: Any, one: str, many: str) -> str | None:
    if not isinstance(n, int) or isinstance(n, bool):
        return None
    return f"{n} {one if n == 1 else many}"


def shape_line(topology: dict[str, Any]) -> str | None:
    """ "2 sockets, 32 cores, 2 threads per core, 64 logical CPUs, 2 NUMA nodes" (the parts known)."""
    parts = [
        _count(topology.get("sockets"), "socket", "sockets"),
        _count(topology.get("physical_cores"), "core", "cores"),
        _count(topology.get("threads_per_core"), "thread per core", "threads per core"),
        _count(topology.get("logical_cpus"), "logical CPU", "logical CPUs"),
        _count(topology.get("numa_nodes"), "NUMA node", "NUMA nodes"),
    ]
    known = [p for p in parts if p]
    return ", ".join(known) if known else None


def size_text(kib: int) -> str:
    """32 -> "32 KiB", 32768 -> "32 MiB" (MiB when it is a whole number of them)."""
    return f"{kib // 1024} MiB" if kib >= 1024 and kib % 1024 == 0 else f"{kib} KiB"


def cache_text(cache: dict[str, Any]) -> str:
    """ "L3 32 MiB (x2, 8 CPUs each)": level and type, size, and how many when more than one."""
    name = f"L{cache.get('level')}{CACHE_SUFFIX.get(cache.get('type', ''), '?')}"
    text = f"{name} {size_text(int(cache.get('size_kib', 0)))}"
    count, shared = cache.get("count", 1), cache.get("shared_by_cpus", 1)
    extras = [f"x{count}"] if count != 1 else []
    if shared != 1:
        extras.append(f"{shared} CPUs each" if count != 1 else f"shared by {shared} CPUs")
    return text + (f" ({', '.join(extras)})" if extras else "")


def caches_line(topology: dict[str, Any]) -> str | None:
    caches = topology.get("caches")
    if not isinstance(caches, list) or not caches:
        return None
    return ", ".join(cache_text(c) for c in caches if isinstance(c, dict))


def clock_line(topology: dict[str, Any]) -> str | None:
    """ "base 2100 MHz, max 3900 MHz, 1800 MHz when read" (the clocks known)."""
    parts = [f"{label}{topology[key]} MHz{after}" for key, label, after in
             (("base_mhz", "base ", ""), ("max_mhz", "max ", ""), ("current_mhz", "", " when read"))
             if isinstance(topology.get(key), (int, float))]
    return ", ".join(parts) if parts else None


def topology_rows(machine: dict[str, Any]) -> list[tuple[str, str | None]]:
    """The report's rows for a machine: (label, text); empty when the file has no topology."""
    topology = machine.get("topology")
    if not isinstance(topology, dict):
        return []
    unavailable = topology.get("unavailable")
    missing = ", ".join(sorted(unavailable)) if isinstance(unavailable, dict) and unavailable else None
    return [("topology", shape_line(topology)), ("caches", caches_line(topology)),
            ("clock", clock_line(topology)), ("not told by the OS", missing)]
