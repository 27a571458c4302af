"""`iocpbench tune --slo` through the real binary: bad input is one line naming the flag, exit 2
and no file; a target every setting meets recommends the smallest setting, one none can meet exits
3 with the evidence written, and the file is one the schema accepts."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from iocpbench_analysis.load import _validator

from binary_runner import run

BASE = ["tune", "--workload", "post", "--blocking", "0", "--work-us", "20"]
SHORT = ["--repetitions", "5", "--duration", "0.1", "--warmup", "0.05", "--quiet"]


@pytest.mark.parametrize("args, flag", [
    (["--slo", "p99<="], "--slo"),
    (["--slo", "p101<=5ms", "--rate", "100"], "--slo"),
    (["--slo", "p99<=5", "--rate", "100"], "--slo"),
    (["--slo", "p99<=3fortnights", "--rate", "100"], "--slo"),
    (["--slo", "p99<=5ms"], "--slo"),
    (["--rate", "100"], "--rate"),
    (["--max-rate"], "--max-rate"),
    (["--slo", "p99<=5ms", "--rate", "100", "--load", "0.5"], "--load"),
    (["--slo", "p99<=5ms", "--rate", "-3"], "--rate"),
    (["--slo", "p99<=5ms", "--rate", "5"], "--rate"),
    (["--slo", "p99<=5ms", "--load", "1.5"], "--load"),
    (["--slo", "p99<=5ms", "--rate", "100", "--repetitions", "3"], "--repetitions"),
    (["--slo", "p99<=5ms", "--rate", "100", "--threshold", "3"], "--threshold"),
    (["--slo", "p99<=5ms", "--rate", "100", "--dispatch", "per-thread"], "--dispatch"),
])
def test_bad_slo_input_names_the_flag_and_writes_nothing(binary: Path, tmp_path: Path, args: list[str],
                                                         flag: str) -> None:
    out = tmp_path / "t.json"
    done = run(binary, *BASE, *args, "--json", str(out), timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0], done.stderr
    assert not out.exists()


def test_a_target_every_setting_meets_recommends_the_smallest(binary: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    done = run(binary, *BASE, "--slo", "p99<=2s", "--rate", "300", *SHORT, "--json", str(out), timeout=240)
    assert done.returncode == 0, done.stderr
    assert "recommended: concurrency 1 (1), pool N" in done.stdout, done.stdout
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    block = doc["tune_slo"]
    assert block["slo"] == {"percentile": "p99", "limit_us": 2e6, "text": block["slo"]["text"]}
    assert block["recommendation"]["pool"]["spec"] == "N"
    assert all(t["runs"] == 5 and t["shown_under"] for s in block["settings"] for t in s["trials"])
    assert len(doc["points"]) == len(block["settings"])
    assert all(p["open_loop"]["rate_ops_per_s"] == 300 for p in doc["points"])


def test_a_target_no_setting_meets_exits_3_with_the_evidence(binary: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    done = run(binary, *BASE, "--slo", "p50<=1ns", "--rate", "300", *SHORT, "--json", str(out), timeout=240)
    assert done.returncode == 3, done.stderr
    assert "NO SETTING was shown to meet" in done.stdout
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    assert doc["tune_slo"]["recommendation"] is None
    assert not any(t["shown_under"] for s in doc["tune_slo"]["settings"] for t in s["trials"])
