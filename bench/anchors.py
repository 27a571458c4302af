#!/usr/bin/python3
"""Targets P1..P7 (docs/targets.md), each measured as a ratio against its anchor in the
same run: the two sides of a pair run alternately (A B A B ..., at least 5 pairs), each run its
own process, and the script prints min / median / max of the per-pair ratios. The machines are
shared and noisy: only ratios of neighbouring runs mean anything, absolute numbers are context.

    /usr/bin/python3 bench/anchors.py                       # every target, 5 pairs
    /usr/bin/python3 bench/anchors.py --targets P1,P2 --pairs 7 --min-time 0.5

P1..P3 use the Google Benchmark binary (bench/port_bench.cpp). P4..P7 need `iocpbench run` /
`sweep`; where a target cannot run here (fio not installed, the Asio echo not built, or a
--program, such as an older build, without the flag it needs) it prints "skipped" and why. Standard library only. Exit status: 0 done (whether or not targets
were met: this reports, it does not gate), 2 bad input, 1 a benchmark failed to run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BACKENDS = ("emulated", "condvar", "asio")
POOLS = ("N", "2N", "2N+2")


class BenchFailed(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Running one benchmark


def regex_exact(name: str) -> str:
    """A --benchmark_filter that matches exactly one benchmark (names hold '+' and '/')."""
    special = set("\\^$.|?*+()[]{}")
    return "^" + "".join("\\" + c if c in special else c for c in name) + "(/real_time|/manual_time)?$"


def run_benchmark(binary: Path, name: str, min_time: float, timeout: float) -> dict:
    """Runs one benchmark in its own process; returns its JSON entry."""
    cmd = [str(binary), "--benchmark_filter=" + regex_exact(name),
           "--benchmark_format=json", f"--benchmark_min_time={min_time}"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise BenchFailed(f"{name}: no result within {timeout:.0f} s") from exc
    if done.returncode != 0:
        raise BenchFailed(f"{name}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
    try:
        entries = json.loads(done.stdout)["benchmarks"]
    except (ValueError, KeyError) as exc:
        raise BenchFailed(f"{name}: unreadable output") from exc
    if len(entries) != 1:
        raise BenchFailed(f"{name}: {len(entries)} benchmarks matched, expected 1")
    entry = entries[0]
    if entry.get("error_occurred"):
        raise BenchFailed(f"{name}: {entry.get('error_message', 'error')}")
    return entry


def value_of(entry: dict, metric: str) -> float:
    if metric not in entry:
        raise BenchFailed(f"{entry.get('name')}: no '{metric}' in its output")
    return float(entry[metric])


# ---------------------------------------------------------------------------------------------
# Rounds and ratios


class Comparison:
    """A ratio numerator/denominator of one metric, with a target and its direction."""

    def __init__(self, target: str, label: str, numerator: str, denominator: str,
                 metric: str = "items_per_second", goal: float | None = None,
                 at_most: bool = False, note: str = ""):
        self.target, self.label = target, label
        self.numerator, self.denominator = numerator, denominator
        self.metric, self.goal, self.at_most, self.note = metric, goal, at_most, note
        self.ratios: list[float] = []


def run_rounds(binary: Path, names: list[str], pairs: int, min_time: float, timeout: float,
               log) -> dict[str, list[dict]]:
    """Runs every name once per round, in the same order each round (A B A B ...)."""
    results: dict[str, list[dict]] = {name: [] for name in names}
    for round_index in range(pairs):
        for name in names:
            results[name].append(run_benchmark(binary, name, min_time, timeout))
        log(f"  round {round_index + 1}/{pairs} done")
    return results


def fmt(x: float) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 0.01:
        return f"{x:.3f}"
    return f"{x:.2e}"


def verdict(c: Comparison, median: float) -> str:
    if c.goal is None:
        return "(finding, no target)"
    met = median <= c.goal if c.at_most else median >= c.goal
    return f"target {'<=' if c.at_most else '>='} {c.goal:g}: {'met' if met else 'NOT met'}"


def print_comparisons(comparisons: list[Comparison], results: dict[str, list[dict]]) -> None:
    for c in comparisons:
        nums = [value_of(e, c.metric) for e in results[c.numerator]]
        dens = [value_of(e, c.metric) for e in results[c.denominator]]
        c.ratios = [n / d if d else float("inf") for n, d in zip(nums, dens)]
        med = statistics.median(c.ratios)
        print(f"{c.target:3} {c.label:44} min {fmt(min(c.ratios)):>8}  median {fmt(med):>8}  "
              f"max {fmt(max(c.ratios)):>8}  n={len(c.ratios)}  {verdict(c, med)}"
              + (f"  [{c.note}]" if c.note else ""))


def print_values(target: str, label: str, entries: list[dict], metric: str,
                 goal: float | None, at_most: bool = True) -> None:
    values = [value_of(e, metric) for e in entries]
    med = statistics.median(values)
    c = Comparison(target, label, "", "", metric, goal, at_most)
    print(f"{target:3} {label:44} min {fmt(min(values)):>8}  median {fmt(med):>8}  "
          f"max {fmt(max(values)):>8}  n={len(values)}  {verdict(c, med)}")


# ---------------------------------------------------------------------------------------------
# P1..P3: the port microbenchmarks


def median_where_present(entries: list[dict], metric: str) -> float:
    """The median of `metric` over the runs that report it (a run with no items has no
    cs_per_item); NaN where none does."""
    values = [float(e[metric]) for e in entries if metric in e]
    return statistics.median(values) if values else float("nan")


def p1_dispatch(binary: Path, args, log) -> None:
    print("P1  port dispatch, post workload, no work (ratio of items/s; M = N)")
    # The P1 targets: closed loop >= 1.0x condvar and >= 1.5x Asio at every pool; streaming
    # >= 2x Asio at every pool and >= 1.5x condvar at 2N and 2N+2 (1.2x at N, targets.md).
    modes = [("stream", "streaming", "", {"asio": 2.0, "condvar": None}),
             ("closed", "closed K=2M", "/K:2M", {"asio": 1.5, "condvar": 1.0}),
             ("closed", "closed K=M-1", "/K:M-1", {"asio": None, "condvar": None})]
    stream_emulated: list[float] = []
    for kind, mode_label, suffix, goals in modes:
        for pool in POOLS:
            names = [f"{kind}/{b}/pool:{pool}{suffix}" for b in BACKENDS]
            log(f"P1 {mode_label} pool {pool}: {', '.join(names)}")
            results = run_rounds(binary, names, args.pairs, args.min_time, args.timeout, log)
            comparisons = []
            for other in ("asio", "condvar"):
                goal = goals[other]
                if kind == "stream" and other == "condvar":
                    goal = 1.2 if pool == "N" else 1.5
                comparisons.append(Comparison(
                    "P1", f"{mode_label:13} pool {pool:5} emulated/{other}",
                    names[0], f"{kind}/{other}/pool:{pool}{suffix}", goal=goal))
            print_comparisons(comparisons, results)
            cs = [median_where_present(results[n], "cs_per_item") for n in names]
            print("    cs/completion (median) " + "  ".join(
                f"{b} {fmt(v)}" for b, v in zip(BACKENDS, cs)))
            if kind == "stream":
                stream_emulated += [value_of(e, "items_per_second") for e in results[names[0]]]
    p1_limits(binary, args, log, stream_emulated)


def p1_limits(binary: Path, args, log, stream_emulated: list[float]) -> None:
    """The physical limits beside P1: the host's character, not targets."""
    names = ["poster_alone/emulated", "poster_alone/condvar", "pingpong/atomic", "handoff/futex",
             "pause"]
    log(f"P1 limits: {', '.join(names)}")
    results = run_rounds(binary, names, args.pairs, args.min_time, args.timeout, log)
    for name in names[:2]:
        print_values("P1", f"limit: {name} (M items/s)", [
            {"v": value_of(e, "items_per_second") / 1e6} for e in results[name]], "v", None)
    print_values("P1", "limit: cache-line round trip (ns)", results["pingpong/atomic"],
                 "ns_per_round_trip", None)
    print_values("P1", "limit: one PAUSE, PortLock's spin unit (ns)", [
        {"v": 1e9 * value_of(e, "seconds_per_pause")} for e in results["pause"]], "v", None)
    print_values("P1", "limit: futex round trip (us)", [
        {"v": 1e6 / value_of(e, "items_per_second")} for e in results["handoff/futex"]], "v", None)
    poster = statistics.median(value_of(e, "items_per_second")
                               for e in results["poster_alone/emulated"])
    if stream_emulated and poster > 0:
        print_values("P1", "streaming emulated / poster_alone (any pool)", [
            {"v": v / poster} for v in stream_emulated], "v", None)


def p2_handoff(binary: Path, args, log) -> None:
    print("P2  handoff round trip (post -> waiting thread -> post back) vs raw futex round trip")
    # (a) Within one process: blocks of 64 port and 64 futex round trips alternate, so both see
    # the same load (the robust number on a noisy machine); one ratio per process run.
    name = "handoff_vs_futex/emulated"
    log(f"P2: {name} x {args.pairs}")
    runs = run_rounds(binary, [name], args.pairs, args.min_time, args.timeout, log)[name]
    print_values("P2", "cost emulated/futex, interleaved blocks", runs, "cost_ratio", 1.05)
    for key in ("port_us_per_round_trip", "futex_us_per_round_trip"):
        values = [value_of(e, key) for e in runs]
        print(f"    {key:28} median {fmt(statistics.median(values))} "
              f"(min {fmt(min(values))}, max {fmt(max(values))})")
    # (b) Separate processes, A B A B.
    names = ["handoff/emulated", "handoff/futex"]
    log(f"P2: {', '.join(names)}")
    results = run_rounds(binary, names, args.pairs, args.min_time, args.timeout, log)
    # Time per round trip = 1 / items_per_second: cost ratio = futex rate / emulated rate.
    c = Comparison("P2", "cost emulated/futex, separate runs A B A B", names[1], names[0],
                   goal=1.05, at_most=True)
    print_comparisons([c], results)


def p3_efficient(binary: Path, args, log) -> None:
    print("P3  the most efficient scenario (packets queued, port at its limit, running threads "
          "drain them): context switches per completion")
    names = [f"efficient/{b}" for b in BACKENDS]
    log(f"P3: {', '.join(names)}")
    results = run_rounds(binary, names, args.pairs, args.min_time, args.timeout, log)
    if "cs_per_item" not in results[names[0]][0]:
        print("P3  not available: this OS gives the benchmark no context-switch count")
        return
    print_values("P3", "emulated cs/completion", results[names[0]], "cs_per_item", 0.01)
    for n in names[1:]:
        print_values("   ", f"{n.split('/')[1]} cs/completion (context)", results[n],
                     "cs_per_item", None)


# ---------------------------------------------------------------------------------------------
# P4..P7: on the `iocpbench` program. Each checks for the subcommand and flags it needs, so an
# older build given as --program is skipped with the reason rather than failing.


def program_help(program: Path, subcommand: str) -> str | None:
    """The --help text of `program subcommand`, or None where the program lacks it."""
    def help_text(*words: str) -> str | None:
        try:
            done = subprocess.run([str(program), *words, "--help"], capture_output=True,
                                  text=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout if done.returncode == 0 else None

    if not program.exists():
        return None
    top = help_text()
    # CLI11 lists subcommands as indented "name  description" lines.
    if top is None or not any(line.split()[:1] == [subcommand] and line.startswith(" ")
                              for line in top.splitlines()):
        return None
    return help_text(subcommand)


def skipped(target: str, what: str, reason: str) -> None:
    print(f"{target:3} {what}: skipped ({reason})")


def make_test_file(directory: Path, mib: int) -> Path:
    """A file of real (incompressible, not sparse) data for both sides of P4."""
    path = directory / "anchors-p4.dat"
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(os.urandom(1 << 20))
        f.flush()
        os.fsync(f.fileno())
    return path


def iocpbench_ops(program: Path, argv: list[str], out: Path, timeout: float) -> float:
    """Runs `iocpbench run ...`; returns the point's median throughput (ops/s)."""
    return point_ops(iocpbench_point(program, argv, out, timeout))


def point_ops(point: dict) -> float:
    try:
        return float(point["summary"]["throughput_ops_per_s"]["median"])
    except (KeyError, TypeError, ValueError) as exc:
        raise BenchFailed("iocpbench run: no throughput in the results file") from exc


def iocpbench_point(program: Path, argv: list[str], out: Path, timeout: float) -> dict:
    """Runs `iocpbench run ...`; returns its results file's one point."""
    cmd = [str(program), "run", *argv, "--json", str(out)]
    out.unlink(missing_ok=True)  # iocpbench refuses to replace a results file (--force; older builds lack it)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise BenchFailed(f"iocpbench run: no result within {timeout:.0f} s") from exc
    if done.returncode != 0:
        raise BenchFailed(f"iocpbench run: exit {done.returncode}: {done.stderr.strip()[-300:]}")
    try:
        return json.loads(out.read_text())["points"][0]
    except (OSError, ValueError, KeyError, IndexError) as exc:
        raise BenchFailed("iocpbench run: unreadable results file") from exc


def fio_argv_of(point: dict) -> list[str]:
    """The fio arguments iocpbench wrote for its file point (points[].peer_commands.fio, from
    harness/results/peer_commands.cpp), so that P4's fio job is the point's own."""
    line = (point.get("peer_commands") or {}).get("fio")
    if not isinstance(line, str):
        raise BenchFailed("iocpbench run: the results file has no peer_commands.fio (an older iocpbench)")
    argv = shlex.split(line)
    if not argv or argv[0] != "fio":
        raise BenchFailed(f"iocpbench run: peer_commands.fio is not a fio command: {line[:120]}")
    return argv[1:]


def fio_iops(argv: list[str], timeout: float) -> float:
    try:
        done = subprocess.run(["fio", *argv, "--output-format=json"], capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise BenchFailed(f"fio: no result within {timeout:.0f} s") from exc
    if done.returncode != 0:
        raise BenchFailed(f"fio: exit {done.returncode}: {done.stderr.strip()[-300:]}")
    try:
        job = json.loads(done.stdout)["jobs"][0]
        if job.get("error"):
            raise BenchFailed(f"fio: job error {job['error']}")
        return float(job["read"]["iops"])
    except (ValueError, KeyError, IndexError) as exc:
        raise BenchFailed("fio: unreadable output") from exc


def p4_file_vs_fio(program: Path, args, log) -> None:
    """P4: `iocpbench run --workload file` (4 KiB random O_DIRECT reads, 32 in flight, no work,
    no blocking) against fio --ioengine=io_uring on the same file, alternating pairs; the shared
    port >= 0.8x fio, the per-thread-port model >= 0.9x. Gate on the median of >= 5 pairs,
    dropping pairs whose fio run is under 0.7x fio's median. The fio job is the one iocpbench
    writes for the shared-port point (points[].peer_commands.fio), not one built here."""
    text = program_help(program, "run")
    if text is None or "--outstanding" not in text or "--file " not in text:
        skipped("P4", "file workload vs fio", "`iocpbench run --workload file` missing")
        return
    if shutil.which("fio") is None:
        skipped("P4", "file workload vs fio", "fio is not installed (apt-get install fio)")
        return
    print("P4  file workload (4 KiB random O_DIRECT reads, 32 in flight, no work) vs fio io_uring "
          "on the same file (ratio of ops/s)")
    seconds, mib = args.p4_seconds, args.p4_file_mib
    scratch = args.scratch or Path(tempfile.gettempdir())
    # The targets (docs/targets.md P4), raised from 0.8 / 0.9 with the completion thread gone.
    models = [("shared port (emulated, C=N, pool 2N) / fio", [], 0.9)]
    if "--dispatch" in text:
        models.append(("per-thread ports (pool N, C=1 each) / fio",
                       ["--dispatch", "per-thread", "--pool", "N"], 0.95))
    with tempfile.TemporaryDirectory(prefix="anchors-", dir=scratch) as tmp:
        path = make_test_file(Path(tmp), mib)
        ours = ["--workload", "file", "--file", str(path), "--block-size", "4096",
                "--pattern", "random", "--op", "read", "--outstanding", "32", "--work-us", "0",
                "--blocking", "0", "--duration", f"{seconds:g}", "--warmup", "0.5"]
        rounds, jobs = p4_rounds(program, args, log, ours, models, Path(tmp) / "run.json")
        # Context: the per-thread model at pool N submits from N threads; its own fio job (N
        # jobs of 32/N each) is the like-for-like reading of "same depth" for it (not gated).
        multi = jobs[1] if len(jobs) > 1 and jobs[1] != jobs[0] else None
        rates = [fio_iops(multi, p4_timeout(seconds)) for _ in range(3)] if multi else []
    print_p4(models, rounds)
    if len(models) == 1:
        skipped("P4", "per-thread-port model / fio", "`iocpbench run` has no --dispatch flag")
    if multi and rates:
        shape = " ".join(a for a in multi if a.startswith(("--numjobs=", "--iodepth=")))
        print(f"    context: the per-thread point's fio job ({shape}, group) median "
              f"{statistics.median(rates):.0f} IOPS (3 runs after the pairs; not gated)")


def p4_timeout(seconds: float) -> float:
    return seconds * 10 + 60


def p4_rounds(program: Path, args, log, ours: list[str], models: list, out: Path
              ) -> tuple[list[tuple[float, list[float]]], list[list[str]]]:
    """A (A' ...) B per round: each model, then fio, so every model has a fio neighbour. fio
    runs the job of the shared-port point's own results file; each model's job is returned."""
    timeout = p4_timeout(args.p4_seconds)
    rounds: list[tuple[float, list[float]]] = []
    jobs: list[list[str]] = []
    for i in range(args.pairs):
        points = [iocpbench_point(program, ours + extra, out, timeout) for _, extra, _ in models]
        jobs = jobs or [fio_argv_of(point) for point in points]
        ours_ops = [point_ops(point) for point in points]
        b = fio_iops(jobs[0], timeout)
        rounds.append((b, ours_ops))
        log(f"  P4 round {i + 1}/{args.pairs}: fio {b:.0f} IOPS, iocpbench "
            + ", ".join(f"{a:.0f}" for a in ours_ops) + " ops/s")
    return rounds, jobs


def print_p4(models: list, rounds: list[tuple[float, list[float]]]) -> None:
    fio_median = statistics.median(b for b, _ in rounds)
    kept = [(b, ours_ops) for b, ours_ops in rounds if b >= 0.7 * fio_median]
    for index, (label, _, goal) in enumerate(models):
        ratios = [ours_ops[index] / b for b, ours_ops in kept]
        med = statistics.median(ratios)
        print(f"P4  {label:44} min {fmt(min(ratios)):>8}  "
              f"median {fmt(med):>8}  max {fmt(max(ratios)):>8}  n={len(ratios)} "
              f"(of {len(rounds)}; fio median {fio_median:.0f} IOPS)  target >= {goal:g}: "
              f"{'met' if med >= goal else 'NOT met'}")


def p5_socket_vs_asio(program: Path, args, log) -> None:
    """P5: `iocpbench run --workload socket` (64-byte echo over loopback, 16 connections)
    against a Boost.Asio echo on the same connections: round trips/s >= 1.2x."""
    text = program_help(program, "run")
    if text is None or "socket" not in text:
        skipped("P5", "socket workload vs asio echo",
                      "`iocpbench run --workload socket` missing")
        return
    echo = args.asio_echo or find_default("bench/asio_echo")
    if not echo.exists():
        skipped("P5", "socket workload vs asio echo", f"{echo} is not built")
        return
    print("P5  socket workload (64-byte echo over loopback, 16 connections, pool 2N, C=N) vs "
          "Boost.Asio echo (bench/asio_echo, io_context on N threads): round trips/s")
    seconds = args.p5_seconds
    timeout = seconds * 10 + 60
    with tempfile.TemporaryDirectory(prefix="anchors-") as tmp:
        out = Path(tmp) / "run.json"
        ours = ["--workload", "socket", "--connections", "16", "--message-size", "64",
                "--work-us", "0", "--blocking", "0", "--duration", f"{seconds:g}",
                "--warmup", "0.5"]
        pairs = []
        for i in range(args.pairs):
            a = iocpbench_ops(program, ours, out, timeout)
            b = asio_echo_rate(echo, ["--connections", "16", "--message-size", "64",
                                      "--duration", f"{seconds:g}", "--warmup", "0.5"], timeout)
            pairs.append((a, b))
            log(f"  P5 pair {i + 1}/{args.pairs}: iocpbench {a:.0f} round trips/s, "
                f"asio {b:.0f}")
    ratios = [a / b for a, b in pairs]
    med = statistics.median(ratios)
    print(f"P5  {'socket workload / asio echo':44} min {fmt(min(ratios)):>8}  "
          f"median {fmt(med):>8}  max {fmt(max(ratios)):>8}  n={len(ratios)}  "
          f"target >= 1.2: {'met' if med >= 1.2 else 'NOT met'}")
    print(f"    round trips/s (median): iocpbench {statistics.median(a for a, _ in pairs):.0f}, "
          f"asio {statistics.median(b for _, b in pairs):.0f}")


def asio_echo_rate(echo: Path, argv: list[str], timeout: float) -> float:
    try:
        done = subprocess.run([str(echo), *argv], capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise BenchFailed(f"asio_echo: no result within {timeout:.0f} s") from exc
    if done.returncode != 0:
        raise BenchFailed(f"asio_echo: exit {done.returncode}: {done.stderr.strip()[-300:]}")
    try:
        return float(json.loads(done.stdout)["round_trips_per_s"])
    except (ValueError, KeyError) as exc:
        raise BenchFailed("asio_echo: unreadable output") from exc


def p6_metrics_overhead(program: Path, args, log) -> None:
    """P6: the post workload with metrics on vs off: throughput cost under 3%."""
    text = program_help(program, "run")
    if text is None or "post" not in text:
        skipped("P6", "metrics on vs off", "`iocpbench run --workload post` missing")
        return
    if "--no-metrics" not in text:
        skipped("P6", "metrics on vs off", "`iocpbench run` has no flag to turn metrics off")
        return
    print("P6  post workload (streaming, pool 2N, C=N, no work) with metrics on vs --no-metrics: "
          "throughput ratio on/off (cost = 1 - ratio)")
    seconds = args.p6_seconds
    timeout = seconds * 10 + 60
    with tempfile.TemporaryDirectory(prefix="anchors-") as tmp:
        out = Path(tmp) / "run.json"
        base = ["--workload", "post", "--work-us", "0", "--blocking", "0",
                "--duration", f"{seconds:g}", "--warmup", "0.3"]
        pairs = []
        for i in range(args.pairs):
            on = iocpbench_ops(program, base, out, timeout)
            off = iocpbench_ops(program, base + ["--no-metrics"], out, timeout)
            pairs.append((on, off))
            log(f"  P6 pair {i + 1}/{args.pairs}: on {on:.0f}, off {off:.0f} ops/s")
    ratios = [on / off for on, off in pairs]
    med = statistics.median(ratios)
    print(f"P6  {'metrics on / off (post workload)':44} min {fmt(min(ratios)):>8}  "
          f"median {fmt(med):>8}  max {fmt(max(ratios)):>8}  n={len(ratios)}  "
          f"target >= 0.97 (cost < 3%): {'met' if med >= 0.97 else 'NOT met'}")
    # Context: the closed loop (no poster thread: K = 8 packets re-posted by the workers, pool
    # N), where the port runs at full speed and the per-completion cost of the metrics (one
    # clock read and two histogram records) is the largest share of a completion.
    with tempfile.TemporaryDirectory(prefix="anchors-") as tmp:
        out = Path(tmp) / "run.json"
        closed = ["--workload", "post", "--posters", "0", "--in-flight", "8", "--pool", "N",
                  "--work-us", "0", "--blocking", "0", "--duration", f"{seconds:g}",
                  "--warmup", "0.3"]
        pairs = []
        for i in range(args.pairs):
            on = iocpbench_ops(program, closed, out, timeout)
            off = iocpbench_ops(program, closed + ["--no-metrics"], out, timeout)
            pairs.append((on, off))
            log(f"  P6 closed-loop pair {i + 1}/{args.pairs}: on {on:.0f}, off {off:.0f} ops/s")
    ratios = [on / off for on, off in pairs]
    print(f"    context, closed loop K=8 pool N: on/off min {fmt(min(ratios))}  median "
          f"{fmt(statistics.median(ratios))}  max {fmt(max(ratios))}  (not gated)")


def p7_quick_sweep(program: Path, args, log) -> None:
    """P7: `iocpbench sweep --quick` finishes in under 60 s on 2 CPUs (wall time, one run)."""
    text = program_help(program, "sweep")
    if text is None or "--quick" not in text:
        skipped("P7", "quick sweep wall time", "`iocpbench sweep --quick` missing")
        return
    with tempfile.TemporaryDirectory(prefix="anchors-") as tmp:
        out = Path(tmp) / "quick.json"
        try:
            seconds, rss_many, rc, err = timed_child(
                [str(program), "sweep", "--quick", "--json", str(out)], 600)
        except subprocess.TimeoutExpired:
            print("P7  quick sweep wall time: over 600 s (killed)  target < 60 s: NOT met")
            return
        if rc != 0:
            print(f"P7  quick sweep: exit {rc}: {err.strip()[-200:]}")
            return
        many = len(json.loads(out.read_text())["points"])
        print(f"P7  {'quick sweep wall time (s), one run':44} {seconds:.1f}  target < 60: "
              f"{'met' if seconds < 60 else 'NOT met'}  ({many} points)")
        # Memory per point: the same quick settings with one point per workload.
        few_out = Path(tmp) / "few.json"
        _, rss_few, rc, err = timed_child(
            [str(program), "sweep", "--quick", "--concurrency", "N", "--pool", "2N+2",
             "--blocking", "0.5", "--json", str(few_out)], 600)
        if rc != 0:
            print(f"P7  small sweep: exit {rc}: {err.strip()[-200:]}")
            return
        few = len(json.loads(few_out.read_text())["points"])
    per_point = (rss_many - rss_few) / max(1, many - few)
    print(f"P7  {'max RSS (MiB): ' + f'{few} points vs {many} points':44} "
          f"{rss_few / 1024:.1f} vs {rss_many / 1024:.1f}: {per_point:+.0f} KiB per extra point  "
          f"target constant: {'met' if per_point < 64 else 'NOT met'} (< 64 KiB per point)")


def timed_child(cmd: list[str], timeout: float) -> tuple[float, int, int, str]:
    """Runs cmd; returns (wall seconds, its own max RSS in KiB (wait4), exit status, stderr)."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.monotonic() > deadline:
                child.kill()
                os.wait4(child.pid, 0)
                raise subprocess.TimeoutExpired(cmd, timeout)
            time.sleep(0.05)
        seconds = time.monotonic() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return seconds, usage.ru_maxrss, child.returncode, err.read().decode(errors="replace")


# ---------------------------------------------------------------------------------------------


def find_default(relative: str) -> Path:
    for build in ("build/release", "build/h6", "build/h4"):
        candidate = ROOT / build / relative
        if candidate.exists():
            return candidate
    return ROOT / "build/release" / relative


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports bad arguments as one line (exit 2), not usage text."""

    def error(self, message: str):  # type: ignore[override]
        print(f"anchors: {message}", file=sys.stderr)
        sys.exit(2)


def argument_problem(args: argparse.Namespace, targets: list[str]) -> str | None:
    """The first bad argument as 'anchors: --flag: reason', or None (a pure check)."""
    for flag, value in (("--min-time", args.min_time), ("--timeout", args.timeout),
                        ("--p4-seconds", args.p4_seconds), ("--p5-seconds", args.p5_seconds),
                        ("--p6-seconds", args.p6_seconds)):
        if not math.isfinite(value) or value <= 0:
            return f"anchors: {flag}: must be a positive number of seconds, not {value:g}"
    if args.p4_file_mib < 1:
        return f"anchors: --p4-file-mib: must be at least 1, not {args.p4_file_mib}"
    needs_program = any(t in targets for t in ("P4", "P5", "P6", "P7"))
    for flag, path in (("--program", args.program), ("--asio-echo", args.asio_echo)):
        if path is not None and needs_program and not path.is_file():
            return f"anchors: {flag}: {path} is not a file"
    if args.scratch is not None and args.scratch.exists() and not args.scratch.is_dir():
        return f"anchors: --scratch: {args.scratch} exists and is not a directory"
    return None


def make_scratch(scratch: Path | None) -> str | None:
    """Creates a missing --scratch folder; the reason it cannot be, or None."""
    if scratch is None:
        return None
    try:
        scratch.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"anchors: --scratch: cannot create {scratch}: {exc.strerror or exc}"
    if not os.access(scratch, os.W_OK | os.X_OK):
        return f"anchors: --scratch: {scratch} is not writable"
    return None


def main(argv: list[str]) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", type=Path, default=None,
                        help="the port_bench binary (default build/release/bench/port_bench)")
    parser.add_argument("--program", type=Path, default=None,
                        help="the iocpbench binary (default build/release/harness/iocpbench)")
    parser.add_argument("--targets", default="P1,P2,P3,P4,P5,P6,P7",
                        help="comma-separated subset of P1..P7")
    parser.add_argument("--pairs", type=int, default=5, help="alternating pairs (>= 5)")
    parser.add_argument("--min-time", type=float, default=0.3,
                        help="--benchmark_min_time of each run, seconds")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds before one benchmark run counts as hung")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--scratch", type=Path, default=None,
                        help="P4: directory for the test file (a real file system: O_DIRECT); "
                             "created when missing")
    parser.add_argument("--p4-seconds", type=float, default=3.0,
                        help="P4: measured seconds of each run")
    parser.add_argument("--p4-file-mib", type=int, default=256, help="P4: test file size, MiB")
    parser.add_argument("--p5-seconds", type=float, default=2.0,
                        help="P5: measured seconds of each run")
    parser.add_argument("--p6-seconds", type=float, default=2.0,
                        help="P6: measured seconds of each run")
    parser.add_argument("--asio-echo", type=Path, default=None,
                        help="P5: the asio_echo binary (default build/release/bench/asio_echo)")
    args = parser.parse_args(argv)

    if args.pairs < 5:
        print("anchors: --pairs: at least 5 pairs are needed", file=sys.stderr)
        return 2
    if args.min_time <= 0:
        print("anchors: --min-time: must be positive", file=sys.stderr)
        return 2
    targets = [t.strip().upper() for t in args.targets.split(",") if t.strip()]
    unknown = [t for t in targets if t not in {f"P{i}" for i in range(1, 8)}]
    if unknown:
        print(f"anchors: --targets: unknown target {unknown[0]} (P1..P7)", file=sys.stderr)
        return 2
    problem = argument_problem(args, targets) or make_scratch(args.scratch)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    bench = args.bench or find_default("bench/port_bench")
    program = args.program or find_default("harness/iocpbench")
    needs_bench = any(t in targets for t in ("P1", "P2", "P3"))
    if needs_bench and not bench.exists():
        print(f"anchors: --bench: {bench} does not exist (build first)", file=sys.stderr)
        return 2

    def log(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    print(f"# anchors: {args.pairs} alternating pairs per target, min_time {args.min_time} s, "
          f"{os.cpu_count()} CPUs; bench {bench}")
    steps = {"P1": lambda: p1_dispatch(bench, args, log), "P2": lambda: p2_handoff(bench, args, log),
             "P3": lambda: p3_efficient(bench, args, log),
             "P4": lambda: p4_file_vs_fio(program, args, log),
             "P5": lambda: p5_socket_vs_asio(program, args, log),
             "P6": lambda: p6_metrics_overhead(program, args, log),
             "P7": lambda: p7_quick_sweep(program, args, log)}
    failed = False
    for target in targets:
        try:
            steps[target]()
        except BenchFailed as exc:
            print(f"{target:3} failed: {exc}")
            failed = True
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
