"""Synthetic test inputs for the analysis tests (imported by conftest.py and the tests).

Everything here is *synthetic*: results dicts built from a template with made-up, deterministic
per-run values so tests can inject exactly the differences they check for. They are test
inputs, not measurements, and are never written anywhere but pytest's tmp_path. Real results
files made by the harness go in tests/python/fixtures/ (see test_real_fixtures.py).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iocpbench_analysis.stats import summarize

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TOOL_TIMEOUT_S = 120

SEMANTICS = ("fifo_packets", "lifo_wakeup", "concurrency_cap", "blocking_releases_waiter",
             "over_limit_window", "abandon_on_close")


def spec_value(spec: str, n: int) -> int:
    """Expand "0", "N", "2N", "2N+2", "8" against n CPUs (0 is the port default, N)."""
    if spec == "0":
        return n
    m = re.fullmatch(r"(\d*)N(?:\+(\d+))?", spec)
    if m:
        return int(m.group(1) or 1) * n + int(m.group(2) or 0)
    return int(spec)


def make_point(
    *,
    n: int = 2,
    conc: str = "N",
    pool: str = "2N",
    ratio: float = 0.0,
    workload: str = "post",
    port: str = "emulated",
    work_us: float = 10,
    kind: str = "sleep",
    reps: int = 5,
    scale: float = 1.0,
    cs_scale: float = 1.0,
    seed: int = 0,
    shares: bool = True,
) -> dict[str, Any]:
    """One point with `reps` runs whose values depend on the axes plus a little jitter."""
    rng = random.Random(f"{seed}/{conc}/{pool}/{ratio}/{workload}/{port}")
    c, p = spec_value(conc, n), spec_value(pool, n)
    base_tp = 100_000.0 * min(c, p) * (1 - ratio) / (1 + 0.1 * abs(p - c))
    runs = []
    for rep in range(reps):
        jitter = 1 + rng.uniform(-0.02, 0.02)
        tp = base_tp * scale * jitter
        cs = (5.0 + 2.0 * p * ratio) * cs_scale * (1 + rng.uniform(-0.02, 0.02))
        p50 = 10.0 + 40 * ratio + rng.uniform(0, 1)
        raw = [1.0 / (i + 1) for i in range(p)]
        share = [x / sum(raw) for x in raw]
        run: dict[str, Any] = {
            "repetition": rep, "seconds": 1.0, "ops": int(tp), "throughput_ops_per_s": tp,
            "bytes_per_s": 0, "context_switches_per_kop": cs,
            "context_switches": {"voluntary": int(cs * tp / 1000), "involuntary": 3,
                                 "by_role": {"workers": {"voluntary": 1, "involuntary": 0}}},
            "latency_us": {"p50": p50, "p90": p50 * 1.5, "p99": p50 * 3, "p999": p50 * 5, "max": p50 * 9},
            "queue_delay_us": {"p50": p50 / 2, "p99": p50},
            "cpu": {"user_s": 0.5, "sys_s": 0.2, "utilisation": 0.7},
            "port_counters": {"handoffs": 10, "queued": 20, "max_active": c, "over_limit_s": 0.0, "max_depth": 5},
            "achieved_blocking_ratio": ratio * 0.98, "errors": 0,
        }
        if shares:
            run["thread_shares"] = share
        runs.append(run)
    return {
        "id": f"{workload}/{port}/c={conc}/p={pool}/b={ratio:g}/w={work_us:g}",
        "workload": workload, "workload_params": {"posters": 1, "in_flight": 64}, "port": port,
        "concurrency": {"spec": conc, "value": c}, "pool": {"spec": pool, "value": p},
        "blocking": {"ratio": ratio, "kind": kind}, "work_us": work_us,
        "runs": runs, "summary": summarize_runs(runs),
    }


def summarize_runs(runs: list[dict[str, Any]]) -> dict[str, Any]:
    def col(f: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
        return summarize([f(r) for r in runs]).as_dict()

    return {
        "throughput_ops_per_s": col(lambda r: r["throughput_ops_per_s"]),
        "context_switches_per_kop": col(lambda r: r["context_switches_per_kop"]),
        "latency_us": {q: col(lambda r, q=q: r["latency_us"][q]) for q in ("p50", "p90", "p99", "p999")},
    }


def make_results(
    *,
    hostname: str = "host-a",
    n: int = 2,
    conc: tuple[str, ...] = ("0", "N"),
    pools: tuple[str, ...] = ("N", "2N", "2N+2"),
    ratios: tuple[float, ...] = (0.0, 0.5),
    workloads: tuple[str, ...] = ("post",),
    probe: bool = True,
    tune: bool = False,
    **point_kw: Any,
) -> dict[str, Any]:
    points = [make_point(n=n, conc=c, pool=p, ratio=r, workload=w, **point_kw)
              for w in workloads for r in ratios for c in conc for p in pools]
    machine: dict[str, Any] = {
        "hostname": hostname, "os": "Linux", "kernel": "6.1.0", "cpu_model": "Test CPU @ 2.0GHz",
        "logical_cpus": n, "cores": n, "memory_bytes": 8 * 2**30, "backend": "emulated", "wine": False,
    }
    if probe:
        machine["probe"] = {"backend": "emulated", "wine": False,
                            "semantics": {s: {"value": True, "evidence": f"evidence for {s}"} for s in SEMANTICS}}
    data: dict[str, Any] = {
        "schema_version": 1,
        "tool": {"name": "iocpbench", "version": "0.1.0", "git": "abc123", "build_type": "Release",
                 "compiler": "GNU 12.2.0"},
        "machine": machine,
        "sweep": {"workloads": list(workloads), "concurrency": list(conc), "pool": list(pools),
                  "blocking": list(ratios), "repetitions": point_kw.get("reps", 5), "duration_s": 1.0,
                  "warmup_s": 0.2, "seed": 1, "started": "2024-01-01T00:00:00Z",
                  "finished": "2024-01-01T00:01:00Z", "complete": True},
        "points": points,
    }
    if tune:
        data["tune"] = {
            "workload": "post", "blocking": 0.5,
            "recommendation": {"concurrency": {"spec": "N", "value": n}, "pool": {"spec": "2N", "value": 2 * n},
                               "throughput_ops_per_s": {"median": 123456.0, "mean": 123000.0,
                                                        "ci95_low": 120000.0, "ci95_high": 126000.0,
                                                        "cv": 0.02, "n": 3}},
            "rules_of_thumb": [{"name": "pool = 2N", "pool": {"spec": "2N", "value": 2 * n}}, "pool = N"],
            "queueing_estimate": 2 * n,
            "evidence": [p["id"] for p in points[:2]],
        }
    return data


def scale_pool(data: dict[str, Any], pool: str, factor: float) -> None:
    """Multiplies the throughput of every point whose pool spec is `pool` (its runs and its
    summary's median) by `factor`, in place."""
    for p in data["points"]:
        if p["pool"]["spec"] == pool:
            for r in p["runs"]:
                r["throughput_ops_per_s"] *= factor
            p["summary"]["throughput_ops_per_s"]["median"] *= factor


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def tool_command(tool: str) -> list[str]:
    """The installed console script next to this interpreter, else `python -m iocpbench_analysis`."""
    script = Path(sys.executable).parent / f"iocpbench-{tool}"
    return [str(script)] if script.exists() else [sys.executable, "-m", "iocpbench_analysis", tool]


def run_tool(tool: str, *args: Any, timeout: float = TOOL_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*tool_command(tool), *(str(a) for a in args)],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT,
    )


def bad_inputs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Every kind of unusable results file, written under tmp_path:
    name -> (file, a fragment the one-line error message must hold)."""
    good = json.dumps(make_results(), indent=1)
    cases: dict[str, tuple[Path, str]] = {}

    def put(name: str, text: str, expect: str) -> None:
        path = tmp_path / f"{name}.json"
        path.write_text(text, encoding="utf-8")
        cases[name] = (path, expect)

    def mutate(name: str, fn: Any, expect: str) -> None:
        data = make_results()
        fn(data)
        put(name, json.dumps(data), expect)

    put("truncated", good[: len(good) // 2], "truncated JSON")
    put("corrupt", good.replace('"points"', '"points" ::', 1), "corrupt JSON")
    put("empty", "", "empty file")
    put("not_an_object", "[1, 2, 3]", "not a results file")
    mutate("schema_v2", lambda d: d.update(schema_version=2), "newer schema_version 2; this tool reads 1")
    mutate("schema_v0", lambda d: d.update(schema_version=0), "unsupported schema_version 0")
    mutate("no_version", lambda d: d.pop("schema_version"), "no schema_version")
    mutate("missing_points", lambda d: d.pop("points"), "'points' is a required property")
    mutate("missing_summary_metric",
           lambda d: d["points"][3]["summary"].pop("throughput_ops_per_s"),
           "points/3/summary: 'throughput_ops_per_s' is a required property")
    mutate("missing_summary_key",
           lambda d: d["points"][0]["summary"]["latency_us"]["p99"].pop("ci95_high"),
           "'ci95_high' is a required property")
    mutate("missing_summary", lambda d: d["points"][1].pop("summary"), "'summary' is a required property")
    mutate("missing_logical_cpus", lambda d: d["machine"].pop("logical_cpus"), "logical_cpus")
    mutate("bad_ratio", lambda d: d["points"][0]["blocking"].update(ratio=1.5), "points/0/blocking/ratio")
    cases["nonexistent"] = (tmp_path / "does-not-exist.json", "no such file")
    cases["directory"] = (tmp_path, "is a directory")
    (tmp_path / "latin1.json").write_bytes(b'{"schema_version": 1, "x": "\xe9"}')
    cases["not_utf8"] = (tmp_path / "latin1.json", "not UTF-8")
    return cases
