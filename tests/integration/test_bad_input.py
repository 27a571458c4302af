"""R3: every invalid flag value exits 2 with one line naming the flag, and writes nothing."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run

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
