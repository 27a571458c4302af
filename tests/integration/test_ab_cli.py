"""iocpbench-ab through the real binary: the same build as OLD and NEW over a tiny grid, and
bad input (docs/verdicts.md, "Paired A/B in one run").

With 0.1 s runs on a shared machine the gate may pass or be inconclusive (exit 3: too noisy to
show the stated loss); what is certain is checked: both files, the session marker, every
point's runs from every round, the paired judgement in the output, never a bad-input exit.
Every subprocess has a timeout; conftest.py bounds each test as a whole.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from iocpbench_analysis.load import _validator

from binary_runner import ROOT

BOUND = 180  # seconds for one iocpbench-ab session of 3 rounds over 2 points of 0.1 s
GRID = ["--workload", "post", "--concurrency", "N", "--pool", "N,2N", "--blocking", "0",
        "--duration", "0.1", "--warmup", "0.02", "--no-probe"]


def ab_command() -> list[str]:
    """The console script next to this interpreter, else `python -m iocpbench_analysis ab`."""
    script = Path(sys.executable).parent / "iocpbench-ab"
    return [str(script)] if script.exists() else [sys.executable, "-m", "iocpbench_analysis", "ab"]


def run_ab(*args: object, timeout: float = BOUND) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ab_command(), *(str(a) for a in args)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def outputs(tmp_path: Path) -> list[str]:
    return ["--json-base", str(tmp_path / "base.json"), "--json-new", str(tmp_path / "new.json")]


def test_the_same_build_as_old_and_new(binary, tmp_path):
    proc = run_ab("--base", binary, "--new", binary, *outputs(tmp_path), "--rounds", "3", "--", *GRID)
    # A verdict, whichever: the same build twice at 0.1 s a run on a machine that may be busy can
    # read as a regression (the gate's error rates assume 7 rounds on a quiet machine). What the
    # gate concludes from given numbers is tested on scripted runs (tests/python/test_ab.py).
    assert proc.returncode in (0, 1, 3), proc.stdout + proc.stderr
    assert "the paired gate:" in proc.stderr and proc.stdout.startswith("## iocpbench compare")
    docs = {side: json.loads((tmp_path / f"{side}.json").read_text()) for side in ("base", "new")}
    for side, doc in docs.items():
        _validator().validate(doc)
        assert doc["ab"]["side"] == side and doc["ab"]["rounds"] == doc["ab"]["rounds_finished"] == 3
        assert doc["sweep"]["complete"] is True and doc["sweep"]["repetitions"] == 3
        assert len(doc["points"]) == 2
        for point in doc["points"]:
            assert [r["repetition"] for r in point["runs"]] == [0, 1, 2]
            assert point["summary"]["throughput_ops_per_s"]["n"] == 3
    session = docs["base"]["ab"]["session"]
    assert session == docs["new"]["ab"]["session"]
    assert f"paired rounds (A/B session {session}, 3 rounds)" in proc.stdout
    assert "clustered by 3 rounds" in proc.stdout
    for k in (1, 2, 3):
        assert f"iocpbench-ab: round {k} of 3: base" in proc.stderr
    # The harness reads such a file back (--resume of a finished session runs nothing).
    resumed = subprocess.run([str(binary), "sweep", "--resume", str(tmp_path / "base.json"), "--quiet"],
                             capture_output=True, text=True, timeout=BOUND)
    assert resumed.returncode == 0, resumed.stderr
    again = json.loads((tmp_path / "base.json").read_text())
    assert again["ab"] == docs["base"]["ab"]
    assert [len(p["runs"]) for p in again["points"]] == [3, 3]


def _one_line(proc: subprocess.CompletedProcess[str], flag: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"iocpbench-ab: error: {flag}: "), lines[0]
    assert proc.stdout == ""
    return lines[0]


def test_bad_input_exits_2_with_one_line_naming_the_flag(binary, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    plain = tmp_path / "not-executable"
    plain.write_bytes(binary.read_bytes()[:4096])
    plain.chmod(0o644)
    impostor = tmp_path / "impostor"
    impostor.write_text("#!/bin/sh\necho 'somebench 2.0 (not iocpbench)'\n")
    impostor.chmod(0o755)
    cases = [
        (["--base", tmp_path / "missing", "--new", binary], "--base", "does not exist"),
        (["--base", binary, "--new", plain], "--new", "is not executable"),
        (["--base", impostor, "--new", binary], "--base", "is not iocpbench"),
        (["--base", binary, "--new", binary, "--rounds", "1"], "argument --rounds", "at least 2"),
    ]
    for args, flag, why in cases:
        proc = run_ab(*args, *outputs(out), "--", *GRID, timeout=60)
        assert why in _one_line(proc, flag)
        assert list(out.iterdir()) == [], args  # nothing created
    # An existing output file is refused and left as it was, byte for byte.
    existing = out / "new.json"
    existing.write_text('{"mine": true}\n')
    before = existing.read_bytes()
    proc = run_ab("--base", binary, "--new", binary, *outputs(out), "--", *GRID, timeout=60)
    assert "exists" in _one_line(proc, "--json-new")
    assert existing.read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["new.json"]  # and the base file not created
