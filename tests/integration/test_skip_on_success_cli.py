"""--skip-on-success through the real Linux binary: `off` is accepted and recorded per point and
per run (Linux asks the OS for nothing: every completion is a packet, none handled inline), the
default is recorded as such, and a sweep lays it on its file and socket points only, naming it
in their ids. The refusals (`on` on Linux, post, unknown values) are in test_bad_input.py; the
Windows side runs under Wine in scripts/test-windows.sh."""
from __future__ import annotations

import json

import pytest

from iocpbench_analysis.load import _validator

from binary_runner import run

SHORT = ["--concurrency", "N", "--pool", "N", "--work-us", "5", "--duration", "0.15",
         "--warmup", "0.02"]
FILE = ["--file-size-mib", "16"]


def linux_block(run_json: dict, requested: str) -> dict:
    block = run_json["workload_stats"]["skip_on_success"]
    assert block["requested"] == requested
    assert block["asked"] is False and block["granted"] == 0
    assert block["immediate"] == block["handled_inline"] == block["posted_by_issuer"] == 0
    return block


@pytest.mark.parametrize("workload", ["file", "socket"])
def test_off_is_recorded_per_point_and_per_run(binary, tmp_path, workload):
    out = tmp_path / "run.json"
    proc = run(binary, "run", "--workload", workload, *SHORT, *FILE, "--skip-on-success", "off",
               "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "handled inline" not in proc.stdout
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    point = doc["points"][0]
    assert point["skip_on_success"] == {"requested": "off", "asked": False}
    run_json = point["runs"][0]
    assert run_json["ops"] > 0 and run_json["errors"] == 0
    block = linux_block(run_json, "off")
    assert block["handles"] == (1 if workload == "file" else point["workload_params"]["connections"])
    accounting = run_json["accounting"]
    assert accounting["completions_inline_total"] == 0
    assert accounting["packets_handled_total"] >= accounting["completions_handled_total"] > 0


def test_the_default_is_recorded_as_default(binary, tmp_path):
    out = tmp_path / "run.json"
    proc = run(binary, "run", "--workload", "socket", *SHORT, "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    point = json.loads(out.read_text())["points"][0]
    # Linux asks nothing even where Windows would (the socket's default is on where granted).
    assert point["skip_on_success"] == {"requested": "default", "asked": False}
    linux_block(point["runs"][0], "default")


def test_a_post_point_has_no_such_field(binary, tmp_path):
    out = tmp_path / "run.json"
    proc = run(binary, "run", "--workload", "post", *SHORT, "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    point = json.loads(out.read_text())["points"][0]
    assert "skip_on_success" not in point
    assert point["runs"][0]["accounting"]["completions_inline_total"] == 0


def test_a_sweep_gives_it_to_its_file_and_socket_points(binary, tmp_path):
    out = tmp_path / "sweep.json"
    proc = run(binary, "sweep", "--workload", "post,file,socket", "--concurrency", "N",
               "--pool", "N", "--blocking", "0", "--work-us", "5", "--repetitions", "1",
               "--duration", "0.1", "--warmup", "0.02", *FILE, "--skip-on-success", "off",
               "--no-probe", "--quiet", "--json", str(out), timeout=180)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    assert doc["sweep"]["skip_on_success"] == "off"
    by_workload = {p["workload"]: p for p in doc["points"]}
    assert set(by_workload) == {"post", "file", "socket"}
    assert "skip_on_success" not in by_workload["post"]
    assert "/skip=" not in by_workload["post"]["id"]
    for workload in ("file", "socket"):
        point = by_workload[workload]
        assert point["skip_on_success"]["requested"] == "off"
        assert "/skip=off" in point["id"], point["id"]
        linux_block(point["runs"][0], "off")


def test_a_default_sweep_keeps_its_ids_and_block(binary, tmp_path):
    out = tmp_path / "sweep.json"
    proc = run(binary, "sweep", "--workload", "socket", "--concurrency", "N", "--pool", "N",
               "--blocking", "0", "--work-us", "5", "--repetitions", "1", "--duration", "0.1",
               "--warmup", "0.02", "--no-probe", "--quiet", "--json", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert "skip_on_success" not in doc["sweep"]
    assert all("/skip=" not in p["id"] for p in doc["points"])


def test_on_is_refused_on_linux_with_the_reason(binary, tmp_path):
    out = tmp_path / "run.json"
    proc = run(binary, "run", "--workload", "file", *SHORT, *FILE, "--skip-on-success", "on",
               "--json", str(out))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "iocpbench: --skip-on-success: Linux has no skip-on-success mode (every completion is "
        "queued as a packet); use it with the Windows build")
    assert not out.exists()
