"""iocpbench-ab with a stand-in binary (fake_iocpbench.py): the rounds' order, the files it
writes, the paired gate it runs, bad input, interruption; and its summaries against the
harness's own. tests/integration/test_ab_cli.py runs it with the real binary."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from synthetic import ROOT, make_results, run_tool, write_json

from iocpbench_analysis import ab
from iocpbench_analysis.compare import compare_results
from iocpbench_analysis.load import InputError, load_results
from iocpbench_analysis.metrics import METRICS

HERE = Path(__file__).resolve().parent
TP = METRICS["throughput_ops_per_s"]


def fake_binary(folder: Path, name: str, **env: str) -> Path:
    """An executable that runs fake_iocpbench.py with FAKE_NAME=name and the given FAKE_* settings
    (its results from a template written once per folder: a sweep then takes milliseconds)."""
    script = folder / name
    tmpl = folder / "fake-template.json.in"
    if not tmpl.exists():
        write_json(tmpl, make_results(reps=1))
    exports = "".join(f"export {k}='{v}'\n" for k, v in {"FAKE_NAME": name, "FAKE_TEMPLATE": str(tmpl), **env}.items())
    script.write_text(f"#!/bin/sh\n{exports}exec '{sys.executable}' '{HERE / 'fake_iocpbench.py'}' \"$@\"\n")
    script.chmod(0o755)
    return script


def run_ab(*args: object, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return run_tool("ab", *args, timeout=timeout)


def ab_args(base: Path, new: Path, out: Path, *extra: str, rounds: int = 3) -> list[str]:
    return ["--base", str(base), "--new", str(new), "--json-base", str(out / "base.json"),
            "--json-new", str(out / "new.json"), "--rounds", str(rounds), *extra]


def one_line(proc: subprocess.CompletedProcess[str], flag: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"iocpbench-ab: error: {flag}"), lines[0]
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    return lines[0]


def test_rounds_alternate_and_both_files_hold_every_round(tmp_path: Path) -> None:
    log = tmp_path / "order.log"
    base = fake_binary(tmp_path, "old", FAKE_LOG=str(log), FAKE_NOISE="0.01")
    new = fake_binary(tmp_path, "new", FAKE_LOG=str(log), FAKE_NOISE="0.01")
    proc = run_ab(*ab_args(base, new, tmp_path, "--", "--seed", "10", rounds=4))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # AB BA AB BA, each round with its own seed, the same for both builds.
    assert log.read_text().split("\n")[:-1] == ["old 10", "new 10", "new 11", "old 11", "old 12", "new 12",
                                                "new 13", "old 13"]
    for k in range(1, 5):
        assert f"iocpbench-ab: round {k} of 4: base" in proc.stderr and f"round {k} of 4: new" in proc.stderr
    docs = {side: load_results(tmp_path / f"{side}.json").data for side in ("base", "new")}  # schema-valid
    for side, doc in docs.items():
        marker = doc["ab"]
        assert marker["side"] == side and marker["rounds"] == marker["rounds_finished"] == 4
        assert marker["order"] == [["base", "new"], ["new", "base"]] * 2 and marker["seed"] == 10
        assert marker["base_version"].startswith("iocpbench 0.1.0 (git old,")
        assert doc["sweep"]["complete"] is True and doc["sweep"]["repetitions"] == 4
        assert doc["tool"]["git"] == ("old" if side == "base" else "new")
        for point in doc["points"]:
            assert [r["repetition"] for r in point["runs"]] == [0, 1, 2, 3]
            assert point["summary"] == ab.summarize_runs(point["runs"]) and point["summary"]["throughput_ops_per_s"]["n"] == 4
    assert docs["base"]["ab"]["session"] == docs["new"]["ab"]["session"]
    assert "paired rounds (A/B session " + docs["base"]["ab"]["session"] + ", 4 rounds)" in proc.stdout


def test_a_drift_common_to_both_builds_cancels_and_a_loss_is_caught(tmp_path: Path) -> None:
    """The machine 20% slower in some rounds than in others, for both builds alike: paired,
    no regression; judged as two separate sweeps, the drift is all the gate sees."""
    drift = {"FAKE_DRIFT": "1,0.8,1.1,0.85,1,0.8,1.1", "FAKE_NOISE": "0.02"}
    same = tmp_path / "same"
    same.mkdir()
    base, new = fake_binary(same, "old", **drift), fake_binary(same, "new", **drift)
    proc = run_ab(*ab_args(base, new, same, rounds=7))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "**PASS.**" in proc.stdout
    b, n = load_results(same / "base.json"), load_results(same / "new.json")
    paired = compare_results(b, [n], TP).machines[0]
    assert paired.paired and paired.session is not None and paired.status == "pass"
    unpaired_new = dict(n.data)
    unpaired_new.pop("ab")
    from iocpbench_analysis.load import Results

    separate = compare_results(b, [Results(n.path, unpaired_new)], TP).machines[0]
    assert not separate.paired
    assert separate.pooled_sd is not None and paired.pooled_sd is not None
    assert separate.pooled_sd > 3 * paired.pooled_sd  # the drift is noise to separate sweeps

    lost = tmp_path / "lost"
    lost.mkdir()
    base, new = fake_binary(lost, "old", **drift), fake_binary(lost, "new", FAKE_SCALE="0.85", **drift)
    proc = run_ab(*ab_args(base, new, lost, rounds=7))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "geometric mean ratio" in proc.stderr and "**FAIL" in proc.stdout


def test_bad_input_is_one_line_naming_the_flag_and_creates_nothing(tmp_path: Path) -> None:
    good = fake_binary(tmp_path, "good")
    plain = tmp_path / "plain"
    plain.write_text("#!/bin/sh\necho iocpbench\n")
    plain.chmod(0o644)
    other = tmp_path / "other"
    other.write_text("#!/bin/sh\necho 'otherbench 1.0'\n")
    other.chmod(0o755)
    out = tmp_path / "out"
    out.mkdir()
    cases = [
        (ab_args(tmp_path / "missing", good, out), "--base: ", "does not exist"),
        (ab_args(good, plain, out), "--new: ", "is not executable"),
        (ab_args(good, other, out), "--new: ", "is not iocpbench: its --version printed 'otherbench 1.0'"),
        (ab_args(good, fake_binary(tmp_path, "v2", FAKE_SCHEMA="2"), out), "--new: ", "results schema 2"),
        (ab_args(fake_binary(tmp_path, "dbg", FAKE_BUILD_TYPE="Debug"), good, out), "--new: ", "build type"),
        (ab_args(good, good, out, rounds=1), "argument --rounds: ", "must be at least 2"),
        (ab_args(good, good, out, "--", "--repetitions", "3"), "sweep flags: ", "--repetitions is set by"),
        (ab_args(good, good, out, "--", "--json=x.json"), "sweep flags: ", "--json is set by"),
        (ab_args(good, good, out, "--", "--bogus"), "--base: ", "its sweep refused the sweep flags"),
        (ab_args(good, fake_binary(tmp_path, "refuses", FAKE_EXIT="2"), out), "--new: ", "refused the sweep flags"),
        (["--base", str(good), "--new", str(good), "--json-base", str(out / "x.json"), "--json-new",
          str(out / "x.json")], "--json-new: ", "is --json-base's file too"),
        (["--base", str(good), "--new", str(good), "--json-base", str(tmp_path / "no" / "x.json"), "--json-new",
          str(out / "y.json")], "--json-base: ", "does not exist"),
    ]
    for args, flag, why in cases:
        proc = run_ab(*args)
        if flag == "--new: " and "refused" in why:  # the base ran its round first: progress lines
            assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1].startswith("iocpbench-ab: error: --new: ")
        else:
            assert why in one_line(proc, flag), (args, proc.stderr)
        assert sorted(p.name for p in out.iterdir()) == [], (args, list(out.iterdir()))
    # An existing output file is never touched, whichever side it is.
    for side in ("base", "new"):
        existing = out / f"{side}.json"
        existing.write_bytes(b"my results\n")
        before = existing.stat().st_mtime_ns
        proc = run_ab(*ab_args(good, good, out))
        assert "exists" in one_line(proc, f"--json-{side}: ")
        assert existing.read_bytes() == b"my results\n" and existing.stat().st_mtime_ns == before
        assert sorted(p.name for p in out.iterdir()) == [existing.name]
        existing.unlink()


def test_a_crashing_build_stops_the_rounds_and_fails(tmp_path: Path) -> None:
    base, new = fake_binary(tmp_path, "old"), fake_binary(tmp_path, "new", FAKE_EXIT="134")
    proc = run_ab(*ab_args(base, new, tmp_path))
    # Round 1's new sweep crashed: nothing finished, nothing written, a failure (not bad input).
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "--new: the sweep of round 1 exited 134" in proc.stderr
    assert not (tmp_path / "base.json").exists() and not (tmp_path / "new.json").exists()


def test_interrupted_keeps_finished_rounds_with_complete_false(tmp_path: Path) -> None:
    base, new = fake_binary(tmp_path, "old", FAKE_SLEEP="0.4"), fake_binary(tmp_path, "new", FAKE_SLEEP="0.4")
    # Ctrl-C's default action first: a test run from a background job (`cmd &` in a script, as
    # CI may start it) inherits SIGINT ignored, which a Python program keeps.
    with_sigint = ("import signal, sys; from iocpbench_analysis.__main__ import main; "
                   "signal.signal(signal.SIGINT, signal.default_int_handler); sys.exit(main(sys.argv[1:]))")
    command = [sys.executable, "-c", with_sigint, "ab", *ab_args(base, new, tmp_path, rounds=20)]
    for sig in (signal.SIGINT, signal.SIGTERM):
        for f in tmp_path.glob("*.json"):
            f.unlink()
        proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not (tmp_path / "new.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, (sig, out, err)
        assert out == "" and "iocpbench-ab: interrupted: " in err
        for side in ("base", "new"):
            doc = load_results(tmp_path / f"{side}.json").data
            done = doc["ab"]["rounds_finished"]
            assert 1 <= done < 20 and doc["sweep"]["complete"] is False and doc["sweep"]["finished"] is None
            assert all([r["repetition"] for r in p["runs"]] == list(range(done)) for p in doc["points"])
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        # compare fails an interrupted session closed: not a whole run.
        gate = run_tool("compare", tmp_path / "base.json", tmp_path / "new.json")
        assert gate.returncode == 1 and "sweep.complete is false" in gate.stderr


def test_sweep_flags_and_seed() -> None:
    assert ab.split_sweep_flags(["--quick", "--seed", "5", "--workload", "post"]) == (["--quick", "--workload", "post"], 5)
    assert ab.split_sweep_flags(["--seed=7"]) == ([], 7)
    assert ab.split_sweep_flags([]) == ([], ab.DEFAULT_SEED)
    for bad in (["--resume", "x"], ["--target-ci", "2"], ["--max-repetitions=3"], ["--seed"], ["--seed", "x"], ["-h"]):
        with pytest.raises(InputError, match="^sweep flags: "):
            ab.split_sweep_flags(bad)


def test_summaries_are_the_harness_s() -> None:
    """summarize_runs and blocking_fidelity give what the harness wrote, for files of today's
    harness: the reference sweep and the open-loop fixture, and the fidelity of a profiled sweep
    (t quantiles agree to 1e-6)."""

    def same(a: object, b: object, where: str) -> None:
        if isinstance(a, dict):
            assert isinstance(b, dict) and a.keys() == b.keys(), where
            for k in a:
                same(a[k], b[k], f"{where}/{k}")
        elif isinstance(a, float) or isinstance(b, float):
            assert isinstance(a, (int, float)) and isinstance(b, (int, float)), where
            assert math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9), (where, a, b)
        else:
            assert a == b, (where, a, b)

    profiled = ROOT / "results/controllers/file-square-wave.json"  # its fidelity judged per level
    for path in (ROOT / "results/reference/linux-2cpu-kvm.json", HERE / "fixtures/open_loop.json", profiled):
        for p in json.loads(path.read_text())["points"]:
            if path != profiled:
                same(p["summary"], ab.summarize_runs(p["runs"]), f"{path.name}:{p['id']}")
            fid = p.get("blocking_fidelity")
            if isinstance(fid, dict) and "tolerance" in fid:
                same(fid, ab.blocking_fidelity(p, fid["tolerance"]), f"{path.name}:{p['id']}:fidelity")


def test_compare_pairs_files_of_one_session_or_with_paired(tmp_path: Path) -> None:
    """Two files with the same ab.session are paired without asking; --paired pairs any two;
    a point with too few rounds on both sides is inconclusive, named as such."""
    a, b = make_results(seed=1), make_results(seed=2)
    pa, pb = write_json(tmp_path / "a.json", a), write_json(tmp_path / "b.json", b)
    proc = run_tool("compare", pa, pb)
    assert proc.returncode == 0 and "Paired rounds" not in proc.stdout
    proc = run_tool("compare", pa, pb, "--paired")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "paired rounds (--paired, 5 rounds)" in proc.stdout
    for d, side in ((a, "base"), (b, "new")):
        d["ab"] = {"session": "s1", "side": side, "rounds": 5}
    d = b["points"][0]
    for i, r in enumerate(d["runs"]):
        r["repetition"] = i + 3  # rounds 3-7: only 3 and 4 on both sides
    pa, pb = write_json(tmp_path / "a.json", a), write_json(tmp_path / "b.json", b)
    proc = run_tool("compare", pa, pb)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "paired rounds (A/B session s1, 5 rounds)" in proc.stdout
    assert "1 point(s) with fewer than 3 rounds with a run on both sides (paired)" in proc.stderr
