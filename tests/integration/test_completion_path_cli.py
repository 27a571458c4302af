"""--completion-path across the change of its default (thread -> port), through the
real binary: a results file written before points recorded the path resumes on thread (never
mixing the two paths in one point), refuses another path on the command line, and still meets a
new file's points in iocpbench-compare, which says which path each side used."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from iocpbench_analysis.load import _validator

from binary_runner import ROOT, run

GRID = ["--workload", "file,socket", "--concurrency", "N", "--pool", "N", "--blocking", "0",
        "--work-us", "20", "--duration", "0.15", "--warmup", "0.02", "--file-size-mib", "16",
        "--no-probe", "--quiet"]
THREAD_DESIGN = "completion thread is the only submitter"
PORT_DESIGN = "read by the port itself"


def design(run_json: dict) -> str:
    return run_json["workload_stats"]["completion_source"]["design"]


def as_older_file(doc: dict) -> dict:
    """What a results file of the same thread-path runs looked like before the path was
    recorded: no completion_path anywhere, and ids without /cp=thread."""
    doc["sweep"]["workload_params"].pop("completion_path")
    for point in doc["points"]:
        assert point["workload_params"].pop("completion_path") == "thread"
        assert point["id"].endswith("/cp=thread")
        point["id"] = point["id"][: -len("/cp=thread")]
    return doc


def as_interrupted(doc: dict) -> dict:
    """The file as a sweep of 2 repetitions leaves it when stopped after its first."""
    for point in doc["points"]:
        point["runs"] = [r for r in point["runs"] if r["repetition"] == 0]
    doc["sweep"]["complete"] = False
    doc["sweep"]["finished"] = None
    return doc


def older_interrupted_file(binary: Path, tmp_path: Path) -> tuple[Path, dict]:
    """A thread-path sweep of 2 repetitions, made older and cut to its first repetition."""
    out = tmp_path / "older.json"
    proc = run(binary, "sweep", *GRID, "--repetitions", "2", "--completion-path", "thread",
               "--json", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = as_interrupted(as_older_file(json.loads(out.read_text())))
    out.write_text(json.dumps(doc))
    return out, doc


def assert_finished_on_thread(out: Path) -> dict:
    """The resumed file is complete, every point has both repetitions, and the new one ran on
    the thread path (the older file's)."""
    doc = json.loads(out.read_text())
    assert doc["sweep"]["complete"] is True
    for point in doc["points"]:
        runs = sorted(point["runs"], key=lambda r: r["repetition"])
        assert [r["repetition"] for r in runs] == [0, 1], point["id"]
        assert THREAD_DESIGN in design(runs[1]), "the new run took the file's path: " + design(runs[1])
    return doc


def assert_refused_naming_the_path(proc: subprocess.CompletedProcess[str], out: Path, before: bytes) -> str:
    """Exit 2, one line naming --completion-path, and the file left as it was; the line."""
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("iocpbench: --completion-path:"), proc.stderr
    assert out.read_bytes() == before
    return lines[0]


def test_new_results_record_the_default_port_path(binary, tmp_path):
    out = tmp_path / "new.json"
    proc = run(binary, "sweep", *GRID, "--repetitions", "1", "--json", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    assert doc["sweep"]["workload_params"]["completion_path"] == "port"
    for point in doc["points"]:
        assert point["workload_params"]["completion_path"] == "port"
        assert "/cp=" not in point["id"], "the default is not named in the id"
        assert PORT_DESIGN in design(point["runs"][0]), design(point["runs"][0])


def test_an_older_file_resumes_on_thread_and_keeps_its_runs(binary, tmp_path):
    out, older = older_interrupted_file(binary, tmp_path)
    kept = {p["id"] + "/cp=thread": p["runs"][0] for p in older["points"]}
    proc = run(binary, "sweep", "--resume", str(out), "--quiet", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "--completion-path" in proc.stderr and "'thread'" in proc.stderr, proc.stderr
    doc = assert_finished_on_thread(out)
    _validator().validate(doc)
    assert doc["sweep"]["workload_params"]["completion_path"] == "thread"
    assert sorted(p["id"] for p in doc["points"]) == sorted(kept)
    for point in doc["points"]:
        assert point["workload_params"]["completion_path"] == "thread"
        run0 = next(r for r in point["runs"] if r["repetition"] == 0)
        assert run0 == kept[point["id"]], "the older run is kept as it was"


def test_an_older_file_refuses_the_other_path_and_is_left_alone(binary, tmp_path):
    out, _ = older_interrupted_file(binary, tmp_path)
    before = out.read_bytes()
    proc = run(binary, "sweep", "--resume", str(out), "--completion-path", "port", timeout=60)
    assert "thread" in assert_refused_naming_the_path(proc, out, before)


def test_an_older_file_resumes_with_its_original_grid_flags(binary, tmp_path):
    """The flags the older file was made with, and no --completion-path (thread was the
    default then): the file's path is taken, not today's default, so nothing is refused."""
    out, _ = older_interrupted_file(binary, tmp_path)
    proc = run(binary, "sweep", "--resume", str(out), *GRID, "--repetitions", "2", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert_finished_on_thread(out)


def test_the_files_own_path_alone_resumes_and_a_bad_one_is_refused(binary, tmp_path):
    """--completion-path without grid flags compares the path alone: the file's own resumes
    (not "the file's grid differs"), a name that is no path is exit 2 naming the flag."""
    out, _ = older_interrupted_file(binary, tmp_path)
    before = out.read_bytes()
    proc = run(binary, "sweep", "--resume", str(out), "--completion-path", "sideways", timeout=60)
    assert_refused_naming_the_path(proc, out, before)
    proc = run(binary, "sweep", "--resume", str(out), "--completion-path", "thread", "--quiet", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert_finished_on_thread(out)


def test_an_older_port_file_resumes_every_point_post_included(binary, tmp_path):
    """Before port was the default, every point's id named a path other than thread, post
    included (its spec carries the grid's workload_params): a `--completion-path port` file over
    post, file and socket has post ids ending /cp=port. Resumed, no point loses a run."""
    out = tmp_path / "older-port.json"
    every = ["--workload", "post,file,socket", *GRID[2:]]
    proc = run(binary, "sweep", *every, "--repetitions", "2", "--completion-path", "port",
               "--json", str(out), timeout=180)
    assert proc.returncode == 0, proc.stderr
    doc = as_interrupted(json.loads(out.read_text()))
    for point in doc["points"]:
        assert "/cp=" not in point["id"], point["id"]
        point["id"] += "/cp=port"  # the older point_id, for every workload
    out.write_text(json.dumps(doc))
    kept = {p["id"][: -len("/cp=port")]: p["runs"][0] for p in doc["points"]}
    assert sum(1 for i in kept if i.startswith("post/")) == 1, sorted(kept)
    proc = run(binary, "sweep", "--resume", str(out), "--quiet", timeout=180)
    assert proc.returncode == 0, proc.stderr
    resumed = json.loads(out.read_text())
    _validator().validate(resumed)
    assert resumed["sweep"]["complete"] is True
    assert sorted(p["id"] for p in resumed["points"]) == sorted(kept)
    for point in resumed["points"]:
        runs = sorted(point["runs"], key=lambda r: r["repetition"])
        assert [r["repetition"] for r in runs] == [0, 1], point["id"]
        assert runs[0] == kept[point["id"]], "the older run is kept as it was: " + point["id"]


def compare(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iocpbench_analysis", "compare", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_compare_meets_an_older_file_and_names_each_sides_path(binary, tmp_path):
    base = tmp_path / "base.json"
    assert run(binary, "sweep", *GRID, "--repetitions", "1", "--completion-path", "thread",
               "--json", str(base), timeout=120).returncode == 0
    base.write_text(json.dumps(as_older_file(json.loads(base.read_text()))))
    new = tmp_path / "new.json"
    assert run(binary, "sweep", *GRID, "--repetitions", "1", "--json", str(new), timeout=120).returncode == 0
    proc = compare(str(base), str(new))
    # 1 would be a regression, 3 (inconclusive) is 1 run a side: the status is not what is tested.
    assert proc.returncode in (0, 1, 3), proc.stderr
    text = proc.stdout
    assert "Unmatched points" not in text, text
    assert "missing" not in proc.stderr, proc.stderr
    paths = next(line for line in text.splitlines() if line.startswith("Completion path"))
    assert "thread (2 points)" in paths and "port (2 points)" in paths, paths
    assert "2 matched point(s) compare one completion path with the other" in text, text
    # The same file against itself: no crossing, one path named per side.
    same = compare(str(new), str(new)).stdout
    assert "compare one completion path with the other" not in same
