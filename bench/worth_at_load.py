#!/usr/bin/python3
"""Target L5: what IOCP's design (LIFO wake-up, the concurrency cap) is worth in the tail at the
load a server carries. For each workload and blocking ratio, the three ports

    emulated               the completion port's rules (LIFO waiters, the concurrency cap)
    emulated-fifo-wakeup   the same, but the oldest waiter is woken
    emulated-no-cap        the same, but no concurrency cap

run at C = N, pool 2N+2, at common absolute rates of 0.5, 0.7 and 0.9 times the *lowest*
variant's capacity (the median of 3 closed-loop runs each), in one sweep per cell: R rounds,
each visiting every (port, rate) point once in a fresh order, round k with the same arrival
seed for every point (paired). Measure, then analyse (the analysis is
bench/worth_at_load_report.py):

    /usr/bin/python3 bench/worth_at_load.py --out results/worth-at-load            # measure
    .venv/bin/python bench/worth_at_load_report.py results/worth-at-load          # the table

Writes OUT/capacity-WORKLOAD-bB.json and OUT/load-WORKLOAD-bB.json (results files, schema v1).
Standard library only; exit 1 when a sweep fails, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PORTS = "emulated,emulated-fifo-wakeup,emulated-no-cap"
SHARES = (0.5, 0.7, 0.9)
SETTING = ["--concurrency", "N", "--pool", "2N+2", "--work-us", "100"]


def sweep(binary: Path, out: Path, args: list[str], timeout_s: float) -> dict:
    cmd = [str(binary), "sweep", "--port", PORTS, *SETTING, *args, "--no-probe", "--quiet", "--force",
           "--json", str(out)]
    print("+", " ".join(cmd), flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(1)
    return json.loads(out.read_text())


def requests_per_s(run: dict) -> float:
    stats = run.get("workload_stats") or {}
    return float(stats.get("round_trips_per_s", run["throughput_ops_per_s"]))


def lowest_capacity(doc: dict) -> float:
    """The lowest of the ports' median closed-loop capacities (requests/s)."""
    return min(statistics.median(requests_per_s(r) for r in p["runs"]) for p in doc["points"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", type=Path, default=ROOT / "build/release/harness/iocpbench")
    ap.add_argument("--out", type=Path, default=ROOT / "results/worth-at-load")
    ap.add_argument("--workloads", default="post,file")
    ap.add_argument("--blocking", default="0,0.25,0.5")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--duration", default="0.5")
    ap.add_argument("--warmup", default="0.2")
    a = ap.parse_args()
    if a.rounds < 5:
        ap.error("--rounds: at least 5 (a paired interval needs them)")
    a.out.mkdir(parents=True, exist_ok=True)
    timing = ["--duration", a.duration, "--warmup", a.warmup]
    for workload in a.workloads.split(","):
        for b in a.blocking.split(","):
            cell = ["--workload", workload, "--blocking", b, *timing]
            cap = sweep(a.binary, a.out / f"capacity-{workload}-b{b}.json", [*cell, "--repetitions", "3"], 600)
            low = lowest_capacity(cap)
            rates = ",".join(str(round(share * low)) for share in SHARES)
            print(f"  {workload} b={b}: lowest capacity {low:.0f}/s, rates {rates}", flush=True)
            sweep(a.binary, a.out / f"load-{workload}-b{b}.json",
                  [*cell, "--rate", rates, "--repetitions", str(a.rounds), "--seed", "1"], 3600)
    return 0


if __name__ == "__main__":
    sys.exit(main())
