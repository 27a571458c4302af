"""The controlled pools (`--pool hill|formula|stall...`) through the real binary: a run that
records its controller and its sizes over time, results that validate, the hill climber's
flags, and bad specs and flag values refused with exit 2 and one line naming the flag."""
from __future__ import annotations

import json

import pytest

from iocpbench_analysis.load import _validator

from binary_runner import run

SHORT = ["run", "--workload", "post", "--warmup", "0.1", "--work-us", "20"]
RUN = [*SHORT, "--duration", "1"]


@pytest.mark.parametrize("spec,name", [("hill", "hill"), ("formula:1:2N:100", "formula"),
                                       ("stall:5", "stall")])
def test_a_controlled_run_records_its_controller_and_a_timeline(binary, tmp_path, spec, name):
    out = tmp_path / "ctl.json"
    proc = run(binary, *RUN, "--pool", spec, "--blocking", "0.5", "--json", str(out), timeout=60)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    point = doc["points"][0]
    cpus = doc["machine"]["logical_cpus"]
    assert point["pool"]["spec"] == spec
    assert point["pool"]["controller"]["name"] == name
    sizing = point["runs"][0]["pool_sizing"]
    assert sizing["controller"] == name
    settings = sizing["settings"]
    lo, hi = settings["min_threads"], settings["max_threads"]
    assert "grow_below_cpu_pct" not in settings
    threads = [t for _, t in sizing["timeline_ms_threads"]]
    assert threads and threads[0] == lo, "starts at its minimum"
    assert all(lo <= t <= hi for t in threads)
    times = [t for t, _ in sizing["timeline_ms_threads"]]
    assert times == sorted(times)
    assert lo <= sizing["window"]["mean_threads"] <= hi
    if name == "hill":
        assert settings["wave_period_samples"] == 4
        assert settings["history_samples"] == 8
        assert (settings["sample_low_ms"], settings["sample_high_ms"]) == (10, 200)
        assert settings["max_wave_magnitude_threads"] == 20
        assert settings["max_changes_per_s"] == 4
        assert settings["starvation_ms"] == 500
        assert lo == cpus and hi == 4 * cpus
        assert sizing["grows"] >= 1, "the wave moves the size in a second of samples"
    if name == "formula":
        assert settings["period_ms"] == 100 and settings["logical_cpus"] == cpus
    if name == "stall":
        assert settings["stall_limit_ms"] == 5


def test_the_hill_flags_reach_the_settings(binary, tmp_path):
    out = tmp_path / "hill.json"
    proc = run(binary, *SHORT, "--duration", "0.3", "--pool", "hill:1:8", "--hill-wave-period", "6",
               "--hill-history", "12", "--hill-sample-ms", "20:40", "--hill-wave-magnitude", "3",
               "--hill-max-changes-per-s", "2", "--hill-starvation-ms", "250", "--json", str(out),
               timeout=60)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    s = doc["points"][0]["runs"][0]["pool_sizing"]["settings"]
    assert (s["wave_period_samples"], s["history_samples"]) == (6, 12)
    assert (s["sample_low_ms"], s["sample_high_ms"]) == (20, 40)
    assert (s["max_wave_magnitude_threads"], s["max_changes_per_s"], s["starvation_ms"]) == (3, 2, 250)
    assert (s["min_threads"], s["max_threads"]) == (1, 8)


def test_a_sweep_puts_controllers_beside_fixed_pools(binary, tmp_path):
    out = tmp_path / "sweep.json"
    proc = run(binary, "sweep", "--workload", "post", "--concurrency", "N", "--pool",
               "N,hill,formula:1:2N,stall:10", "--blocking", "0.5", "--duration", "0.2",
               "--warmup", "0.05", "--no-probe", "--quiet", "--json", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    by_spec = {p["pool"]["spec"]: p for p in doc["points"]}
    assert set(by_spec) == {"N", "hill", "formula:1:2N", "stall:10"}
    assert all("pool_sizing" not in r for r in by_spec["N"]["runs"])
    for spec in ("hill", "formula:1:2N", "stall:10"):
        assert by_spec[spec]["runs"][0]["pool_sizing"]["controller"] == spec.split(":")[0]


BAD = [
    ([*RUN, "--pool", "hil"], "--pool"),
    ([*RUN, "--pool", "stall:0:4N"], "--pool"),
    ([*RUN, "--pool", "formula:8:4"], "--pool"),
    ([*RUN, "--pool", "formula:1:4:5"], "--pool"),
    ([*RUN, "--pool", "hill:1"], "--pool"),
    ([*RUN, "--pool", "hill", "--dispatch", "per-thread"], "--pool"),
    ([*RUN, "--pool", "hill", "--hill-history", "0"], "--hill-history"),
    ([*RUN, "--pool", "hill", "--hill-history", "3"], "--hill-history"),  # under the wave period
    ([*RUN, "--pool", "hill", "--hill-wave-period", "1"], "--hill-wave-period"),
    ([*RUN, "--pool", "hill", "--hill-wave-magnitude", "0"], "--hill-wave-magnitude"),
    ([*RUN, "--pool", "hill", "--hill-sample-ms", "200:10"], "--hill-sample-ms"),
    ([*RUN, "--pool", "hill", "--hill-sample-ms", "100"], "--hill-sample-ms"),
    ([*RUN, "--pool", "hill", "--hill-max-changes-per-s", "0"], "--hill-max-changes-per-s"),
    ([*RUN, "--pool", "hill", "--hill-starvation-ms", "x"], "--hill-starvation-ms"),
    ([*RUN, "--pool", "N", "--hill-history", "8"], "--hill-history"),  # no hill pool to apply to
    (["sweep", "--workload", "post", "--pool", "N,hil", "--no-probe"], "--pool"),
    (["sweep", "--workload", "post", "--pool", "hill", "--hill-history", "0", "--no-probe"],
     "--hill-history"),
]


@pytest.mark.parametrize("args,flag", BAD, ids=[" ".join(a[-2:]) for a, _ in BAD])
def test_bad_specs_and_flags_exit_2_naming_the_flag(binary, tmp_path, args, flag):
    out = tmp_path / "out.json"
    proc = run(binary, *args, "--json", str(out), timeout=60)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"iocpbench: {flag}: "), lines[0]
    assert not out.exists()


def test_sweep_resume_keeps_the_hill_flags(binary, tmp_path):
    out = tmp_path / "hill-sweep.json"
    proc = run(binary, "sweep", "--workload", "post", "--concurrency", "N", "--pool", "hill:1:4",
               "--blocking", "0.5", "--work-us", "20", "--duration", "0.3", "--warmup", "0.05",
               "--repetitions", "2", "--no-probe", "--quiet", "--hill-wave-period", "6",
               "--hill-history", "12", "--json", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    _validator().validate(doc)
    assert doc["sweep"]["hill"]["wave_period_samples"] == 6
    assert doc["sweep"]["hill"]["history_samples"] == 12
    # As if interrupted after the first run: the resume runs the second with the file's flags.
    point = doc["points"][0]
    point["runs"] = [r for r in point["runs"] if r["repetition"] == 0]
    doc["sweep"]["complete"] = False
    out.write_text(json.dumps(doc))
    resumed = run(binary, "sweep", "--resume", str(out), "--quiet", timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    doc = json.loads(out.read_text())
    assert doc["sweep"]["complete"] is True
    runs = doc["points"][0]["runs"]
    assert sorted(r["repetition"] for r in runs) == [0, 1]
    for r in runs:
        settings = r["pool_sizing"]["settings"]
        assert settings["wave_period_samples"] == 6 and settings["history_samples"] == 12


def test_a_sweep_with_default_hill_flags_writes_no_hill_block(binary, tmp_path):
    out = tmp_path / "hill-default.json"
    proc = run(binary, "sweep", "--workload", "post", "--concurrency", "N", "--pool", "hill:1:4,2",
               "--blocking", "0.5", "--work-us", "20", "--duration", "0.2", "--warmup", "0.05",
               "--repetitions", "1", "--no-probe", "--quiet", "--json", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "hill" not in json.loads(out.read_text())["sweep"]
