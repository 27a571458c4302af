#!/usr/bin/python3
"""Target F1 (the blocking axis means what it says): for every point of a sweep, the requested
blocking ratio beside what was achieved, what was blocked only (runnable wait excluded) and the
blocks' mean overshoot, then the worst deviations:

  - achieved vs requested, over the points whose pool fits the CPUs (pool <= N);
  - blocked-only vs requested, over every point;
  - the blocks' mean overshoot against max(5% of the target, 2 us);
  - the sleeps the OS woke over 1 ms late (column `late`, runs summed; handler_time.late_wakeups).

    /usr/bin/python3 bench/blocking_fidelity.py                      # runs sweep --quick
    /usr/bin/python3 bench/blocking_fidelity.py --grid default       # the default grid (8 min)
    /usr/bin/python3 bench/blocking_fidelity.py --results full.json  # a results file already made
    /usr/bin/python3 bench/blocking_fidelity.py --table              # post, C = N, pool N, 20/200 us

--table measures the F1 table of docs/performance.md (before the fix: 0.599 / 0.695 / 0.811 at 20 us of work and
0.326 / 0.546 / 0.756 at 200 us, for 0.25 / 0.5 / 0.75): one `iocpbench run` of 1.5 s per cell.

The report is the analysis package's (`iocpbench-fidelity RESULTS`, iocpbench_analysis/fidelity.py
computes, fidelity_text.py writes); this script adds the sweep and --table. Standard library only.
Exit status: 0 done (this reports, it does not gate), 1 the sweep failed, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the analysis package's fidelity report (standard library only)

from iocpbench_analysis.fidelity_text import fidelity_report  # noqa: E402


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def table(binary: Path) -> str:
    """Achieved and blocked-only ratios for the post workload at C = N, pool N."""
    lines = ["work_us  requested  achieved  blocked_only  overshoot_us  target_us"]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        for work in (20, 200):
            for b in (0.25, 0.5, 0.75):
                out.unlink(missing_ok=True)
                cmd = [str(binary), "run", "--workload", "post", "--concurrency", "N", "--pool", "N",
                       "--work-us", str(work), "--blocking", str(b), "--duration", "1.5", "--json", str(out)]
                done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
                if done.returncode != 0:
                    raise RuntimeError(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
                run = json.loads(out.read_text())["points"][0]["runs"][0]
                h = run.get("handler_time") or {}
                lines.append(f"{work:7d}  {b:9.2f}  {run['achieved_blocking_ratio']:8.3f}  "
                             f"{fmt(run.get('blocked_only_ratio')):>12s}  {fmt(h.get('block_overshoot_us_mean'), 1):>12s}  "
                             f"{fmt(h.get('target_block_us_mean'), 1):>9s}")
    return "\n".join(lines)


def run_sweep(binary: Path, grid: str, out: Path) -> None:
    cmd = [str(binary), "sweep", "--json", str(out)] + (["--quick"] if grid == "quick" else [])
    out.unlink(missing_ok=True)  # iocpbench refuses to replace a results file
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr.strip()[-300:]}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, help="read this results file instead of running a sweep")
    parser.add_argument("--grid", choices=("quick", "default"), default="quick", help="the sweep to run (default quick)")
    parser.add_argument("--binary", type=Path, default=ROOT / "build/release/harness/iocpbench")
    parser.add_argument("--table", action="store_true", help="measure docs/performance.md's F1 table instead of a grid")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if (args.table or args.results is None) and not args.binary.is_file():
        print(f"blocking_fidelity: --binary: {args.binary} does not exist (build it first)", file=sys.stderr)
        return 2
    if args.table:
        try:
            print(table(args.binary))
        except RuntimeError as exc:
            print(f"blocking_fidelity: {exc}", file=sys.stderr)
            return 1
        return 0
    if args.results is not None:
        try:
            doc = json.loads(args.results.read_text())
        except (OSError, ValueError) as exc:
            print(f"blocking_fidelity: --results: {exc}", file=sys.stderr)
            return 2
    else:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "sweep.json"
            try:
                run_sweep(args.binary, args.grid, out)
            except RuntimeError as exc:
                print(f"blocking_fidelity: {exc}", file=sys.stderr)
                return 1
            doc = json.loads(out.read_text())
    try:
        sys.stdout.write(fidelity_report(doc))
    except (KeyError, TypeError, ValueError) as exc:
        print(f"blocking_fidelity: --results: not a results file ({exc})", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
