"""--dequeue-batch through the real binary: the point and its runs record the batch and the
removes' histogram, batch 1 (the default) takes one packet per remove, and a sweep lays the
batch out as an axis whose ids name it only above 1."""
from __future__ import annotations

import json

import pytest

from iocpbench_analysis.load import _validator

from binary_runner import run

POST = ["--workload", "post", "--concurrency", "2", "--pool", "4", "--work-us", "5",
        "--duration", "0.2", "--warmup", "0.05"]


def histogram_removes(block: dict) -> int:
    return sum(bucket["removes"] for bucket in block["histogram"])


@pytest.mark.parametrize("port", ["emulated", "condvar", "asio"])
def test_a_batched_run_records_its_batch_and_histogram(binary, tmp_path, port):
    out = tmp_path / "run.json"
    proc = run(binary, "run", *POST, "--port", port, "--dequeue-batch", "8", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert ", batch 8(8)" in proc.stdout, proc.stdout
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    point = doc["points"][0]
    assert point["dequeue_batch"] == {"spec": "8", "value": 8}
    block = point["runs"][0]["dequeue_batch"]
    assert block["requested"] == 8
    assert [(b["min_packets"], b["max_packets"]) for b in block["histogram"]] == [(k, k) for k in range(1, 9)]
    assert histogram_removes(block) == block["removes"] > 0
    assert sum(b["min_packets"] * b["removes"] for b in block["histogram"]) == block["packets"]
    assert block["mean_packets_per_remove"] == pytest.approx(block["packets"] / block["removes"])
    run_record = point["runs"][0]
    assert run_record["accounting"]["stop_packets_taken"] == 4
    assert run_record["accounting"]["left_in_port"] == 0


def test_the_default_takes_one_packet_per_remove(binary, tmp_path):
    out = tmp_path / "run.json"
    proc = run(binary, "run", *POST, "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "batch" not in proc.stdout
    point = json.loads(out.read_text())["points"][0]
    assert point["dequeue_batch"] == {"spec": "1", "value": 1}
    block = point["runs"][0]["dequeue_batch"]
    assert block["histogram"] == [{"min_packets": 1, "max_packets": 1, "removes": block["removes"]}]
    assert block["packets"] == block["removes"] > 0
    assert block["stop_packets_reposted"] == 0


def test_a_sweep_lays_the_batch_out_as_an_axis(binary, tmp_path):
    out = tmp_path / "sweep.json"
    proc = run(binary, "sweep", "--workload", "post", "--concurrency", "N", "--pool", "2N", "--blocking", "0",
               "--dequeue-batch", "1,4,N", "--repetitions", "1", "--duration", "0.1", "--warmup", "0.02",
               "--no-probe", "--quiet", "--json", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    assert doc["sweep"]["dequeue_batch"] == ["1", "4", "N"]
    ids = sorted(p["id"] for p in doc["points"])
    assert len(ids) == 3 and sum("/batch=" in i for i in ids) == 2
    assert any(i.endswith("/batch=4") for i in ids) and any(i.endswith("/batch=N") for i in ids)
    for point in doc["points"]:
        block = point["runs"][0]["dequeue_batch"]
        assert block["requested"] == point["dequeue_batch"]["value"]
        assert histogram_removes(block) == block["removes"]


def test_help_states_the_maximum(binary):
    for command in ("run", "sweep"):
        proc = run(binary, command, "--help")
        assert proc.returncode == 0
        assert "--dequeue-batch" in proc.stdout and "1024" in proc.stdout
