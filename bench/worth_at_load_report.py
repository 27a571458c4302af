#!/usr/bin/env python3
"""The table of target L5 from bench/worth_at_load.py's files: per workload, blocking ratio and
load (0.5/0.7/0.9 of the lowest variant's capacity), what FIFO wake-up and no concurrency cap do
to the p99 response time and to the context switches per completion, against the port's rules.

    .venv/bin/python bench/worth_at_load_report.py results/worth-at-load > table.md

It reads load-*.json and load-*.json.gz (results/worth-at-load keeps them gzipped).

Per round (the same arrival seed for all three ports) the ratio variant / emulated of the run's
p99 (over every due request, docs/open-loop.md) and of its context switches per 1,000
completions; per cell the Hodges-Lehmann estimate of those paired log ratios with the Wilcoxon
signed-rank 90% interval (iocpbench_analysis/answer.py's, two one-sided tests at 5% each). The
verdict: "equivalent" when the interval lies within 1/1.1..1.1 (within 10%), "x1.8 [1.4, 2.3]"
when it excludes 1 (the variant's p99 is that many times the rules'), "undecided" otherwise.
Beside them each port's pooled p99 over all its rounds, and the runs flagged over capacity,
generator-bound or with a stall.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

from iocpbench_analysis.answer import paired_ratio_ci
from iocpbench_analysis.pooled_latency import point_pooled
from iocpbench_analysis.pooled_latency_text import value_text

SHARES = (0.5, 0.7, 0.9)
RULES = "emulated"
VARIANTS = {"emulated-fifo-wakeup": "FIFO wake-up", "emulated-no-cap": "no cap"}
EQUIVALENCE = 1.10


def by_round(point: dict[str, Any], get) -> dict[int, float]:
    out: dict[int, float] = {}
    for r in point.get("runs") or []:
        v = get(r)
        if isinstance(v, (int, float)) and v > 0:
            out[r["repetition"]] = float(v)
    return out


def paired(base: dict[int, float], other: dict[int, float]) -> tuple[float, tuple[float, float] | None, int]:
    rounds = sorted(set(base) & set(other))
    logs = [math.log(other[k] / base[k]) for k in rounds]
    if not logs:
        return math.nan, None, 0
    estimate, ci = paired_ratio_ci(logs)
    return estimate, ci, len(logs)


def verdict(estimate: float, ci: tuple[float, float] | None) -> str:
    if ci is None:
        return "too few rounds"
    lo, hi = ci
    if lo >= 1 / EQUIVALENCE and hi <= EQUIVALENCE:
        return f"equivalent (x{estimate:.2f} [{lo:.2f}, {hi:.2f}])"
    if lo > 1 or hi < 1:
        return f"x{estimate:.2f} [{lo:.2f}, {hi:.2f}]"
    return f"undecided (x{estimate:.2f} [{lo:.2f}, {hi:.2f}])"


def flags(point: dict[str, Any]) -> str:
    runs = point.get("runs") or []
    ol = [r.get("open_loop") or {} for r in runs]
    over = sum(1 for o in ol if o.get("over_capacity"))
    lag = sum(1 for o in ol if o.get("generator_bound"))
    stall = sum(1 for o in ol if (o.get("stalls") or {}).get("count", 0) > 0)
    return f"{over}/{lag}/{stall}"


def p99(run: dict[str, Any]) -> float | None:
    return (run.get("latency_us") or {}).get("p99")


def switches(run: dict[str, Any]) -> float | None:
    return run.get("context_switches_per_kop")


def cell_rows(doc: dict[str, Any]) -> list[str]:
    points = doc["points"]
    rates = sorted({p["open_loop"]["rate_ops_per_s"] for p in points})
    workload = points[0]["workload"]
    b = points[0]["blocking"]["ratio"]
    rows = []
    for share, rate in zip(SHARES, rates):
        at = {p["port"]: p for p in points if p["open_loop"]["rate_ops_per_s"] == rate}
        base = at[RULES]
        pooled = value_text(point_pooled(base, 0.99), why_no_interval=False)
        for port, name in VARIANTS.items():
            other = at[port]
            est, ci, n = paired(by_round(base, p99), by_round(other, p99))
            sw_est, sw_ci, _ = paired(by_round(base, switches), by_round(other, switches))
            rows.append(f"| {workload} | {b} | {share:.1f} ({rate:.0f}/s) | {name} | {n} | "
                        f"{verdict(est, ci)} | {verdict(sw_est, sw_ci)} | {pooled} | "
                        f"{value_text(point_pooled(other, 0.99), why_no_interval=False)} | "
                        f"{flags(base)} | {flags(other)} |")
    return rows


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not Path(argv[1]).is_dir():
        sys.stderr.write("usage: worth_at_load_report.py DIR (bench/worth_at_load.py's --out)\n")
        return 2
    def order(f: Path) -> tuple[str, float]:  # by workload, then blocking ratio
        m = re.match(r"load-(\w+)-b([0-9.]+)\.json", f.name)
        return (m.group(1), float(m.group(2))) if m else (f.name, 0.0)

    files = sorted([*Path(argv[1]).glob("load-*.json"), *Path(argv[1]).glob("load-*.json.gz")], key=order)
    if not files:
        sys.stderr.write(f"worth_at_load_report.py: no load-*.json(.gz) in {argv[1]}\n")
        return 2
    print("| workload | b | load (rate) | variant | rounds | p99 variant / rules | cs per completion, "
          "variant / rules | rules' pooled p99 | variant's pooled p99 | rules' runs over/lag/stall | "
          "variant's |")
    print("|" + "---|" * 11)
    for f in files:
        text = gzip.decompress(f.read_bytes()).decode() if f.suffix == ".gz" else f.read_text()
        for row in cell_rows(json.loads(text)):
            print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
