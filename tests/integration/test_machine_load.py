"""Each run says whether the machine was busy (runs[].machine_load), and run and sweep print one
warning line when it was. The busy case is made, not hoped for: one CPU hog per logical CPU
beside the run. Whether a quiet machine reads quiet is not asserted: the machine running the
tests may itself be busy."""
from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys

from iocpbench_analysis.load import _validator

from binary_runner import run

KEYS = {"busy", "reasons", "steal_share", "others_cpu_share", "preempted_by_others_share"}
TINY = ["--workload", "post", "--pool", "2", "--concurrency", "2", "--warmup", "0"]


@contextlib.contextmanager
def cpu_hogs():
    """One busy process per logical CPU, killed on the way out."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(os.cpu_count() or 1)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait(timeout=30)


def machine_loads(path) -> list[dict]:
    doc = json.loads(path.read_text())
    _validator().validate(doc)
    return [r["machine_load"] for p in doc["points"] for r in p["runs"]]


def test_every_run_records_the_machine_load(binary, tmp_path):
    out = tmp_path / "run.json"
    proc = run(binary, "run", *TINY, "--duration", "0.2", "--repetitions", "2", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    loads = machine_loads(out)
    assert len(loads) == 2
    for load in loads:
        assert set(load) == KEYS
        assert load["busy"] == bool(load["reasons"])
        # Linux counts both from /proc/stat.
        assert load["others_cpu_share"] is not None and 0 <= load["others_cpu_share"] <= 1
        assert load["steal_share"] is not None and 0 <= load["steal_share"] <= 1
        share = load["preempted_by_others_share"]
        assert share is None or 0 <= share <= 1
    warnings = [line for line in proc.stderr.splitlines() if "machine was busy" in line]
    assert len(warnings) == (1 if any(l["busy"] for l in loads) else 0), proc.stderr


def test_a_run_beside_cpu_hogs_is_marked_busy_with_one_warning(binary, tmp_path):
    out = tmp_path / "busy.json"
    with cpu_hogs():
        proc = run(binary, "run", *TINY, "--duration", "0.5", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    [load] = machine_loads(out)
    assert load["busy"] is True, load
    assert any(reason.startswith("other processes used ") for reason in load["reasons"]), load
    warnings = [line for line in proc.stderr.splitlines() if "machine was busy" in line]
    assert len(warnings) == 1, proc.stderr
    assert re.fullmatch(r"iocpbench: warning: the machine was busy during the run \(other processes "
                        r"used \d+% of the CPUs.*\); numbers may be low", warnings[0]), warnings[0]


def test_a_sweep_beside_cpu_hogs_warns_once_counting_the_busy_runs(binary, tmp_path):
    out = tmp_path / "sweep.json"
    with cpu_hogs():
        proc = run(binary, "sweep", *TINY, "--blocking", "0", "--repetitions", "3", "--duration",
                   "0.3", "--no-probe", "--quiet", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    loads = machine_loads(out)
    busy = sum(load["busy"] for load in loads)
    assert busy >= 1, loads
    warnings = [line for line in proc.stderr.splitlines() if "machine was busy" in line]
    assert warnings == [f"iocpbench: warning: the machine was busy during {busy} of {len(loads)} "
                        f"runs ({warnings[0].split('(', 1)[1]}"], proc.stderr


def test_a_tune_beside_cpu_hogs_names_the_settings_with_busy_runs(binary, tmp_path):
    out = tmp_path / "tune.json"
    with cpu_hogs():
        proc = run(binary, "tune", "--workload", "post", "--blocking", "0", "--duration", "0.05",
                   "--warmup", "0", "--screen-repetitions", "1", "--max-repetitions", "40", "--quiet",
                   "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    loads = machine_loads(out)
    busy = sum(load["busy"] for load in loads)
    assert busy >= 1, loads
    warnings = [line for line in proc.stderr.splitlines() if "machine was busy" in line]
    assert len(warnings) == 1, proc.stderr
    match = re.fullmatch(r"iocpbench: warning: the machine was busy during (\d+) of (\d+) runs \(.+\); "
                         r"numbers may be low; settings with a busy run: (.+)", warnings[0])
    assert match, warnings[0]
    assert int(match.group(1)) == busy and int(match.group(2)) == len(loads), (warnings[0], busy, len(loads))
    ids = {p["id"] for p in json.loads(out.read_text())["points"]}
    assert set(match.group(3).split(", ")) <= ids, (match.group(3), sorted(ids)[:3])
