"""A stand-in for the iocpbench binary, for testing iocpbench-ab without running benchmarks.

Run as `python fake_iocpbench.py --version` or `... sweep [flags] --repetitions 1 --seed S
--json FILE`; test_ab.py wraps it in an executable script. Its sweep writes a synthetic
results file (FAKE_TEMPLATE: a file of synthetic.make_results(reps=1), one run a point; without
it, made here, which imports numpy) whose throughput is scaled by:

- FAKE_DRIFT: per round (the sweep's --seed; iocpbench-ab runs round r with seed + r) a
  comma-separated list of factors, the machine's drift, the same for both builds;
- FAKE_SCALE: this build's factor (a change of the code);
- FAKE_NOISE: the sd of a per-run multiplicative jitter (seeded by seed and build).

FAKE_LOG appends "<FAKE_NAME> <seed>" per sweep (the order the builds ran in); FAKE_EXIT makes
the sweep exit with that status (2: flags refused, before anything is written; 134: a crash
after writing); FAKE_SCHEMA and FAKE_BUILD_TYPE change what --version says; FAKE_SLEEP makes
a sweep take that long (seconds).
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any


def template() -> dict[str, Any]:
    if os.environ.get("FAKE_TEMPLATE"):
        loaded: dict[str, Any] = json.loads(Path(os.environ["FAKE_TEMPLATE"]).read_text(encoding="utf-8"))
        return loaded
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from synthetic import make_results

    return make_results(reps=1)


def main(argv: list[str]) -> int:
    name = os.environ.get("FAKE_NAME", "fake")
    if argv[:1] == ["--version"]:
        print(f"iocpbench 0.1.0 (git {name}, {os.environ.get('FAKE_BUILD_TYPE', 'Release')}, GNU 12.2.0), "
              f"results schema {os.environ.get('FAKE_SCHEMA', '1')}")
        return 0
    if argv[:1] != ["sweep"]:
        print("iocpbench: fake: only --version and sweep", file=sys.stderr)
        return 2
    args = argv[1:]
    seed = int(args[args.index("--seed") + 1])
    out = Path(args[args.index("--json") + 1])
    if "--bogus" in args:
        print("iocpbench: The following argument was not expected: --bogus", file=sys.stderr)
        return 2
    if os.environ.get("FAKE_LOG"):
        with open(os.environ["FAKE_LOG"], "a", encoding="utf-8") as log:
            log.write(f"{name} {seed}\n")
    code = int(os.environ.get("FAKE_EXIT", "0"))
    if code == 2:
        print("iocpbench: --pool: '0': must be at least 1", file=sys.stderr)
        return 2
    time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
    drifts = [float(x) for x in os.environ.get("FAKE_DRIFT", "1").split(",")]
    factor = drifts[(seed - 1) % len(drifts)] * float(os.environ.get("FAKE_SCALE", "1"))
    noise = float(os.environ.get("FAKE_NOISE", "0"))
    rng = random.Random(f"{name}/{seed}")
    data = template()
    data["tool"]["git"] = name
    data["sweep"]["seed"] = seed
    data["sweep"]["repetitions"] = 1
    for point in data["points"]:
        for run in point["runs"]:
            run["throughput_ops_per_s"] *= factor * (1 + rng.gauss(0, noise))
    out.write_text(json.dumps(data), encoding="utf-8")
    if "--warn" in args:
        print("iocpbench: warning: a warning of the sweep", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
