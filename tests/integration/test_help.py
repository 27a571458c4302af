"""--help of run, sweep and tune: numbers show INT or FLOAT (N-relative forms COUNT or POOL) and the
default each command actually uses, so that a user reads the real defaults off the help."""
from __future__ import annotations

import json
import re

import pytest

from conftest import run


def shown_options(binary, command: str) -> dict[str, tuple[str, str | None]]:
    """{flag: (type name, default or None)} from `iocpbench COMMAND --help`."""
    done = run(binary, command, "--help", timeout=30)
    assert done.returncode == 0, done.stderr
    options = {}
    # CLI11 2.1 writes `--flag TYPE=DEFAULT`, later versions `--flag TYPE [DEFAULT]`.
    for match in re.finditer(r"^\s+(--[\w-]+)(?: ([A-Z][A-Z,.]*)(?:=(\S+)| \[(\S+)\])?)?", done.stdout, re.M):
        flag, type_name, default_eq, default_br = match.groups()
        options[flag] = (type_name, default_eq if default_eq is not None else default_br)
    return options


# (command, flag, type name, the default the command uses; None: no default, the flag is off or required)
EXPECTED = [
    ("run", "--work-us", "FLOAT", "100"),
    ("run", "--duration", "FLOAT", "0.7"),
    ("run", "--warmup", "FLOAT", "0.15"),
    ("run", "--blocking", "FLOAT", "0"),
    ("run", "--repetitions", "INT", "1"),
    ("run", "--working-set-kib", "INT", "0"),
    ("run", "--concurrency", "COUNT", "N"),
    ("run", "--pool", "POOL", "2N"),
    ("run", "--posters", "INT", "1"),
    ("run", "--in-flight", "INT", "64"),
    ("run", "--latency-sample-every", "INT", "32"),
    ("run", "--file-size-mib", "INT", "256"),
    ("run", "--block-size", "INT", "4096"),
    ("run", "--outstanding", "INT", "32"),
    ("run", "--skip-port-share", "FLOAT", "0"),
    ("run", "--connections", "INT", "16"),
    ("run", "--message-size", "INT", "64"),
    ("run", "--messages-in-flight", "INT", "1"),
    ("sweep", "--work-us", "FLOAT", "100"),
    ("sweep", "--duration", "FLOAT", "0.7"),
    ("sweep", "--warmup", "FLOAT", "0.15"),
    ("sweep", "--repetitions", "INT", "5"),
    ("sweep", "--seed", "INT", "1"),
    ("sweep", "--max-repetitions", "INT", "15"),
    ("sweep", "--target-ci", "FLOAT", None),
    ("sweep", "--working-set-kib", "INT", "0"),
    ("sweep", "--blocking", "FLOAT,...", "0,0.25,0.5,0.75"),
    ("sweep", "--concurrency", "COUNT,...", "0,N,2N"),
    ("sweep", "--pool", "POOL,...", "N,2N,2N+2"),
    ("sweep", "--workload", "TEXT,...", "post,file,socket"),
    ("sweep", "--posters", "INT", "1"),
    ("tune", "--repetitions", "INT", "20"),
    ("tune", "--max-repetitions", "INT", "400"),
    ("tune", "--duration", "FLOAT", "0.25"),
    ("tune", "--warmup", "FLOAT", "0.1"),
    ("tune", "--threshold", "FLOAT", "5"),
    ("tune", "--screen-repetitions", "INT", "3"),
    ("tune", "--finalists", "INT", "4"),
    ("tune", "--work-us", "FLOAT", "100"),
    ("tune", "--blocking", "FLOAT", None),
    ("tune", "--seed", "INT", "1"),
]


@pytest.mark.parametrize("command,flag,type_name,default", EXPECTED,
                         ids=[f"{c} {f}" for c, f, _, _ in EXPECTED])
def test_help_shows_the_type_and_the_default(binary, command, flag, type_name, default):
    options = shown_options(binary, command)
    assert flag in options, f"{command} --help lacks {flag}"
    assert options[flag] == (type_name, default)


def test_run_uses_the_defaults_its_help_shows(binary, tmp_path):
    options = shown_options(binary, "run")
    out = tmp_path / "run.json"
    done = run(binary, "run", "--workload", "post", "--duration", "0.1", "--warmup", "0.05",
               "--json", str(out), timeout=120)
    assert done.returncode == 0, done.stderr
    point = json.loads(out.read_text())["points"][0]
    assert point["work_us"] == float(options["--work-us"][1])
    assert point["concurrency"]["spec"] == options["--concurrency"][1]
    assert point["pool"]["spec"] == options["--pool"][1]
    assert point["workload_params"]["posters"] == int(options["--posters"][1])
    assert point["workload_params"]["in_flight"] == int(options["--in-flight"][1])
