"""R3: every invalid flag value exits 2 with one line naming the flag, and writes nothing."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from binary_runner import run

RUN = ["run", "--duration", "0.1", "--warmup", "0"]
SWEEP = ["sweep", "--workload", "post", "--duration", "0.1", "--warmup", "0", "--no-probe"]

# (arguments, the flag the message must name)
CASES: list[tuple[list[str], str]] = [
    ([*RUN, "--workload", "disk"], "--workload"),
    ([*RUN, "--workload", ""], "--workload"),
    ([*RUN, "--port", "iocp"], "--port"),
    ([*RUN, "--port", "win32"], "--port"),  # not on Linux
    ([*RUN, "--concurrency", "-1"], "--concurrency"),
    ([*RUN, "--concurrency", "2N+"], "--concurrency"),
    ([*RUN, "--pool", "0"], "--pool"),
    ([*RUN, "--pool", "N2"], "--pool"),
    ([*RUN, "--pool", "99999"], "--pool"),
    ([*RUN, "--pool", "auto:N"], "--pool"),
    ([*RUN, "--pool", "auto:8:4"], "--pool"),
    ([*RUN, "--pool", "auto:9999:9999"], "--pool"),
    ([*RUN, "--pool", "auto:1:4:150:90"], "--pool"),
    ([*RUN, "--pool", "auto:1:4:75:90:0"], "--pool"),
    ([*RUN, "--pool", "auto", "--dispatch", "per-thread"], "--pool"),
    ([*RUN, "--pool", "auto,N"], "--pool"),
    ([*RUN, "--blocking", "1"], "--blocking"),
    ([*RUN, "--blocking", "-0.1"], "--blocking"),
    ([*RUN, "--blocking", "half"], "--blocking"),
    ([*RUN, "--blocking-kind", "spin"], "--blocking-kind"),
    ([*RUN, "--blocking", "0.5", "--work-us", "0"], "--blocking"),  # a ratio of no work (names --work-us too)
    ([*SWEEP, "--blocking", "0,0.5", "--work-us", "0"], "--blocking"),
    ([*RUN, "--blocking-profile", "0.1:5,1.2:5"], "--blocking-profile"),
    ([*RUN, "--blocking-profile", "0.1:0,0.5"], "--blocking-profile"),
    ([*RUN, "--blocking-profile", "0.1,0.5:2"], "--blocking-profile"),
    ([*RUN, "--blocking-profile", "wave"], "--blocking-profile"),
    ([*RUN, "--blocking-profile", "0.1:1,0.5", "--blocking", "0.5"], "--blocking-profile"),
    ([*RUN, "--blocking-profile", "0.1:1,0.5", "--work-us", "0"], "--blocking-profile"),
    ([*SWEEP, "--blocking-profile", "0.1:1,0.5", "--blocking", "0.25,0.5"], "--blocking-profile"),
    ([*SWEEP, "--blocking-profile", "0.1:-1"], "--blocking-profile"),
    ([*RUN, "--timeline-ms", "5"], "--timeline-ms"),
    ([*RUN, "--timeline-ms", "20000"], "--timeline-ms"),
    ([*SWEEP, "--timeline-ms", "fast"], "--timeline-ms"),
    ([*RUN, "--work-us", "-5"], "--work-us"),
    ([*RUN, "--work-us", "lots"], "--work-us"),
    (["run", "--duration", "0"], "--duration"),
    (["run", "--duration", "-1"], "--duration"),
    ([*RUN, "--warmup", "-1"], "--warmup"),
    ([*RUN, "--workload", "post", "--posters", "-1"], "--posters"),
    ([*RUN, "--workload", "post", "--posters", "0", "--in-flight", "0"], "--in-flight"),
    ([*RUN, "--workload", "file", "--block-size", "1000"], "--block-size"),
    ([*RUN, "--workload", "file", "--block-size", "0"], "--block-size"),
    ([*RUN, "--workload", "file", "--outstanding", "0"], "--outstanding"),
    ([*RUN, "--workload", "file", "--pattern", "zigzag"], "--pattern"),
    ([*RUN, "--workload", "file", "--op", "erase"], "--op"),
    ([*RUN, "--workload", "file", "--file-size-mib", "0"], "--file-size-mib"),
    ([*RUN, "--workload", "socket", "--connections", "0"], "--connections"),
    ([*RUN, "--workload", "socket", "--message-size", "0"], "--message-size"),
    ([*RUN, "--workload", "socket", "--messages-in-flight", "0"], "--messages-in-flight"),
    ([*RUN, "--json", "/nonexistent-dir/out.json"], "--json"),
    ([*SWEEP, "--repetitions", "0"], "--repetitions"),
    ([*SWEEP, "--repetitions", "two"], "--repetitions"),
    ([*SWEEP, "--concurrency", "N,,2N"], "--concurrency"),
    ([*SWEEP, "--pool", "2N+2+2"], "--pool"),
    ([*SWEEP, "--pool", "N,autox"], "--pool"),
    ([*SWEEP, "--blocking", "0.5,1.5"], "--blocking"),
    ([*SWEEP, "--workload", "post,disk"], "--workload"),
    ([*SWEEP, "--target-ci", "-3"], "--target-ci"),
    ([*SWEEP, "--seed", "x"], "--seed"),
    ([*SWEEP, "--grid", "/nonexistent-grid.json"], "--grid"),
    (["sweep", "--quick", "--resume", "/nonexistent.json"], "--resume"),
    (["sweep", "--quick"], "--json"),  # a sweep needs somewhere to write
    (["tune", "--blocking", "0.5"], "--workload"),
    (["tune", "--workload", "post"], "--blocking"),
    (["tune", "--workload", "post,file", "--blocking", "0.5"], "--workload"),
    (["tune", "--workload", "post", "--blocking", "0.5", "--threshold", "150"], "--threshold"),
    # a 90% signed-rank CI needs 5 final rounds; with fewer every ratio is [0, inf) (docs/tuning.md)
    (["tune", "--workload", "post", "--blocking", "0.5", "--repetitions", "4"], "--repetitions"),
    (["probe", "--port", "bogus"], "--port"),
    (["probe", "--json", "/nonexistent-dir/p.json"], "--json"),
    # More values of the run flags: other spellings of the same mistakes, each a separate parse.
    ([*RUN, "--port", "nosuch"], "--port"),
    ([*RUN, "--concurrency", "abc"], "--concurrency"),
    ([*RUN, "--pool", "-3"], "--pool"),
    ([*RUN, "--pool", "N,2N"], "--pool"),  # run takes one pool, a list is sweep's
    ([*RUN, "--blocking", "-0.5"], "--blocking"),
    ([*RUN, "--blocking", "nan"], "--blocking"),
    ([*RUN, "--blocking", "x"], "--blocking"),
    ([*RUN, "--work-us", "inf"], "--work-us"),
    ([*RUN, "--repetitions", "0"], "--repetitions"),
    ([*RUN, "--posters", "two"], "--posters"),
    ([*RUN, "--in-flight", "0"], "--in-flight"),
    ([*RUN, "--workload", "file", "--file", "/nonexistent-dir/x.dat"], "--file"),
    ([*RUN, "--workload", "socket", "--messages-in-flight", "-2"], "--messages-in-flight"),
    # Linux (these tests run the Linux build) has no kernel completion port, so no tagged-event
    # I/O: refused, naming the flag.
    ([*RUN, "--workload", "file", "--skip-port-share", "0.5"], "--skip-port-share"),
    ([*RUN, "--workload", "file", "--skip-port-share", "1.5"], "--skip-port-share"),
    # Units: a unit the parser does not know is refused, never guessed.
    ([*RUN, "--duration", "3fortnights"], "--duration"),
    ([*RUN, "--duration", "-1s"], "--duration"),
    ([*RUN, "--duration", "0.5,1"], "--duration"),
    ([*RUN, "--warmup", "5 parsecs"], "--warmup"),
    ([*RUN, "--work-us", "1fortnight"], "--work-us"),
    ([*RUN, "--working-set-kib", "3fortnights"], "--working-set-kib"),
    ([*RUN, "--working-set-kib", "100b"], "--working-set-kib"),  # not a whole KiB
    ([*RUN, "--workload", "file", "--block-size", "3fortnights"], "--block-size"),
    ([*RUN, "--workload", "file", "--block-size", "0.5"], "--block-size"),  # not whole bytes
    ([*RUN, "--workload", "file", "--file-size-mib", "4k"], "--file-size-mib"),  # not a whole MiB
    ([*RUN, "--workload", "socket", "--message-size", "64q"], "--message-size"),
    ([*SWEEP, "--duration", "3fortnights"], "--duration"),
    ([*SWEEP, "--working-set-kib", "1x"], "--working-set-kib"),
    (["tune", "--workload", "post", "--blocking", "0", "--duration", "3fortnights"], "--duration"),
    # --dequeue-batch: 1 to 1024 packets per remove, one value for run, a list for sweep.
    ([*RUN, "--dequeue-batch", "0"], "--dequeue-batch"),
    ([*RUN, "--dequeue-batch", "1025"], "--dequeue-batch"),
    ([*RUN, "--dequeue-batch", "-8"], "--dequeue-batch"),
    ([*RUN, "--dequeue-batch", "many"], "--dequeue-batch"),
    ([*RUN, "--dequeue-batch", "8,16"], "--dequeue-batch"),  # run takes one value
    ([*RUN, "--dequeue-batch", "64N+1000"], "--dequeue-batch"),  # over 1024 on any machine
    ([*SWEEP, "--dequeue-batch", "1,0"], "--dequeue-batch"),
    ([*SWEEP, "--dequeue-batch", "8,2000"], "--dequeue-batch"),
    ([*SWEEP, "--dequeue-batch", "1,,8"], "--dequeue-batch"),
    # --skip-on-success: on or off (or default); on is Windows only; file and socket only.
    ([*RUN, "--workload", "file", "--skip-on-success", "yes"], "--skip-on-success"),
    ([*RUN, "--workload", "file", "--skip-on-success", "on,off"], "--skip-on-success"),
    ([*RUN, "--workload", "file", "--skip-on-success", "on"], "--skip-on-success"),  # Linux
    ([*RUN, "--workload", "socket", "--skip-on-success", "on"], "--skip-on-success"),  # Linux
    ([*RUN, "--workload", "post", "--skip-on-success", "off"], "--skip-on-success"),
    ([*SWEEP, "--skip-on-success", "off"], "--skip-on-success"),  # post alone
    ([*SWEEP, "--skip-on-success", "ON"], "--skip-on-success"),
    (["sweep", "--workload", "file", "--duration", "0.1", "--warmup", "0", "--no-probe",
      "--skip-on-success", "on"], "--skip-on-success"),  # Linux
    (["tune", "--workload", "socket", "--blocking", "0", "--skip-on-success", "on"],
     "--skip-on-success"),  # Linux
    # --affinity / --load-affinity: none, compact, spread or a list of CPUs this process may use.
    ([*RUN, "--affinity", "packed"], "--affinity"),
    ([*RUN, "--affinity", ""], "--affinity"),
    ([*RUN, "--affinity", "0,,1"], "--affinity"),
    ([*RUN, "--affinity", "99999"], "--affinity"),  # no such CPU
    ([*RUN, "--load-affinity", "2-1"], "--load-affinity"),
    ([*SWEEP, "--affinity", "0-99999"], "--affinity"),
    ([*SWEEP, "--load-affinity", "spread,0"], "--load-affinity"),
]


@pytest.mark.parametrize("args,flag", CASES, ids=[" ".join(a[:1] + a[-2:]) for a, _ in CASES])
def test_bad_input_exits_2_naming_the_flag(binary, tmp_path, args, flag):
    out = tmp_path / "out.json"
    full = list(args)
    if "--json" not in full and full[0] in ("run", "sweep", "tune") and flag != "--json":
        full += ["--json", str(out)]
    proc = run(binary, *full, timeout=60)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"iocpbench: {flag}: "), lines[0]
    assert proc.stdout == "", proc.stdout
    assert not out.exists(), "bad input must not create the output file"
    assert list(tmp_path.iterdir()) == [], "nothing else written either"


def test_bad_input_does_not_truncate_an_existing_file(binary, tmp_path):
    out = tmp_path / "keep.json"
    out.write_text('{"precious": true}\n')
    for args in ([*RUN, "--blocking", "2"], [*SWEEP, "--pool", "0"], ["tune", "--workload", "post"]):
        proc = run(binary, *args, "--json", str(out), timeout=60)
        assert proc.returncode == 2
        assert out.read_text() == '{"precious": true}\n'


def test_unknown_subcommand_and_unknown_flag_exit_2(binary):
    assert run(binary, "frobnicate").returncode == 2
    proc = run(binary, "run", "--no-such-flag")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_help_exits_0_and_explains(binary):
    for sub in ("run", "sweep", "tune", "probe", "info"):
        proc = run(binary, sub, "--help")
        assert proc.returncode == 0
        assert "--" in proc.stdout


def one_error_line(proc) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert proc.stdout == ""
    return lines[0]


def test_a_mistyped_option_gets_the_nearest_one(binary):
    line = one_error_line(run(binary, "run", "--wokload", "post"))
    assert line == "iocpbench: unknown option '--wokload' (did you mean --workload?)"
    line = one_error_line(run(binary, "sweep", "--durration=2s"))
    assert line == "iocpbench: unknown option '--durration' (did you mean --duration?)"
    # Nothing near: where to look instead of a wild guess.
    line = one_error_line(run(binary, "run", "--frobnicate-harder"))
    assert line == "iocpbench: unknown option '--frobnicate-harder' (iocpbench run --help lists them)"


def test_a_mistyped_subcommand_lists_the_subcommands(binary):
    line = one_error_line(run(binary, "rnu"))
    assert line == "iocpbench: unknown subcommand 'rnu' (probe, info, run, sweep, tune)"
    line = one_error_line(run(binary, "--verison"))
    assert line == "iocpbench: unknown option '--verison' (did you mean --version?)"


def test_a_bare_iocpbench_shows_the_usage(binary):
    proc = run(binary)
    assert proc.returncode == 2
    assert "Usage: iocpbench" in proc.stderr
    for sub in ("probe", "info", "run", "sweep", "tune"):
        assert f"\n  {sub} " in proc.stderr, sub


def test_durations_and_sizes_take_units(binary, tmp_path):
    out = tmp_path / "units.json"
    proc = run(binary, "run", "-d", "0.2s", "--warmup", "50ms", "--work-us", "0.05ms",
               "--working-set-kib", "1MiB", "-o", str(out), timeout=60)
    assert proc.returncode == 0, proc.stderr
    point = json.loads(out.read_text())["points"][0]
    assert point["duration_s"] == 0.2 and point["warmup_s"] == 0.05
    assert point["work_us"] == 50
    assert point["working_set_kib"] == 1024


def test_a_flag_of_another_workload_is_named_in_one_warning(binary, tmp_path):
    out = tmp_path / "post.json"
    proc = run(binary, *RUN, "--workload", "post", "--op", "write", "--connections", "4",
               "--json", str(out), timeout=60)
    assert proc.returncode == 0, proc.stderr
    warnings = [l for l in proc.stderr.splitlines() if "not apply" in l]
    assert warnings == ["iocpbench: warning: --op, --connections do not apply to the post "
                        "workload and are ignored"], proc.stderr
    # A flag of a workload the sweep runs is not warned about.
    proc = run(binary, "sweep", "--workload", "post,socket", "--connections", "4", "--pool", "2",
               "--concurrency", "2", "--blocking", "0", "--repetitions", "1", "--duration", "0.1",
               "--warmup", "0", "--no-probe", "--quiet", "--json", str(tmp_path / "sweep.json"),
               timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "not apply" not in proc.stderr
    proc = run(binary, "sweep", "--workload", "post", "--messages-in-flight", "2", "--pool", "2",
               "--concurrency", "2", "--blocking", "0", "--repetitions", "1", "--duration", "0.1",
               "--warmup", "0", "--no-probe", "--quiet", "--json", str(tmp_path / "one.json"),
               timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert ("iocpbench: warning: --messages-in-flight does not apply to the post workload and is "
            "ignored") in proc.stderr.splitlines(), proc.stderr
