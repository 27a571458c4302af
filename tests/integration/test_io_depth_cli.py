"""The I/O depth held and a file point's peer command lines, through the real binary: a short
file run records its depth (0 <= mean <= max <= requested, shares summing to 1) and fio and
DiskSpd lines with its block size and depth; a socket run its depth; a post run null with the
reason; every file is schema-valid and renders in the report."""
from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from iocpbench_analysis.load import _validator

from binary_runner import ROOT, run

SHORT = ["-d", "0.3", "--warmup", "0.1"]


def run_json(binary: Path, tmp_path: Path, name: str, *args: str) -> dict:
    out = tmp_path / f"{name}.json"
    proc = run(binary, "run", *args, *SHORT, "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    errors = list(_validator().iter_errors(doc))
    assert not errors, errors[0].message
    return doc


def check_depth(block: dict, requested: int) -> None:
    assert block["requested"] == requested
    assert 0 <= block["mean"] <= block["max"] <= requested
    assert block["span_s"] > 0 and block["changes"] > 0
    assert sum(b["time_share"] for b in block["time_share_by_depth"]) == pytest.approx(1.0, abs=1e-9)


def test_a_file_run_records_its_depth_and_the_peer_lines(binary: Path, tmp_path: Path) -> None:
    doc = run_json(binary, tmp_path, "file", "-w", "file", "--file-size-mib", "16", "--block-size", "8192",
                   "--outstanding", "8")
    point = doc["points"][0]
    check_depth(point["runs"][0]["workload_stats"]["inflight_depth"], 8)
    assert point["summary"]["inflight_depth_mean"]["n"] == 1
    fio = shlex.split(point["peer_commands"]["fio"])
    assert fio[0] == "fio"
    for arg in ("--bs=8192", "--iodepth=8", "--numjobs=1", "--ioengine=io_uring", "--direct=1", "--rw=randread",
                "--size=16M", "--runtime=300ms", "--ramp_time=100ms"):
        assert arg in fio, arg
    diskspd = point["peer_commands"]["diskspd"]
    for arg in ("-b8192", "-o8", "-t1", "-r", "-Su", "-w0"):
        assert arg in diskspd.split(), arg
    assert any("iocpbench-16mib.dat" in a for a in fio)


def test_socket_and_post_runs(binary: Path, tmp_path: Path) -> None:
    socket = run_json(binary, tmp_path, "socket", "-w", "socket", "--connections", "4")["points"][0]
    check_depth(socket["runs"][0]["workload_stats"]["inflight_depth"], 4)
    assert "peer_commands" not in socket
    post = run_json(binary, tmp_path, "post", "-w", "post")["points"][0]
    stats = post["runs"][0]["workload_stats"]
    assert stats["inflight_depth"] is None and "no I/O" in stats["inflight_depth_unavailable_because"]
    assert "inflight_depth_mean" not in post["summary"]


def test_the_report_shows_a_real_runs_depth(binary: Path, tmp_path: Path) -> None:
    run_json(binary, tmp_path, "file", "-w", "file", "--file-size-mib", "16", "--outstanding", "4")
    out = tmp_path / "report.html"
    proc = subprocess.run([sys.executable, "-m", "iocpbench_analysis", "report", str(tmp_path / "file.json"),
                           "-o", str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    page = out.read_text(encoding="utf-8")
    assert "I/O depth: requested and held" in page and "4 (--outstanding)" in page
    assert "--iodepth=4" in page
