"""--help of run, sweep and tune: numbers show INT or FLOAT (N-relative forms COUNT or POOL) and the
default each command actually uses, so that a user reads the real defaults off the help."""
from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from binary_runner import run


def shown_options(binary, command: str) -> dict[str, tuple[str, str | None]]:
    """{flag: (type name, default or None)} from `iocpbench COMMAND --help`."""
    done = run(binary, command, "--help", timeout=30)
    assert done.returncode == 0, done.stderr
    options = {}
    # CLI11 2.1 writes `--flag TYPE=DEFAULT`, later versions `--flag TYPE [DEFAULT]`.
    # A short name may come first: `-d,--duration SECONDS=0.7`; an option's line starts with two
    # spaces, a wrapped description's lines with more.
    for match in re.finditer(r"^  (?:-\w,)?(--[\w-]+)(?: ([A-Z][A-Z,.]*)(?:=(\S+)| \[(\S+)\])?)?", done.stdout, re.M):
        flag, type_name, default_eq, default_br = match.groups()
        options[flag] = (type_name, default_eq if default_eq is not None else default_br)
    return options


# (command, flag, type name, the default the command uses; None: no default, the flag is off or required)
EXPECTED = [
    ("run", "--work-us", "US", "100"),
    ("run", "--duration", "SECONDS", "0.7"),
    ("run", "--warmup", "SECONDS", "0.15"),
    ("run", "--blocking", "FLOAT", "0"),
    ("run", "--repetitions", "INT", "1"),
    ("run", "--working-set-kib", "KIB", "0"),
    ("run", "--dequeue-batch", "COUNT", "1"),
    ("run", "--concurrency", "COUNT", "N"),
    ("run", "--pool", "POOL", "2N"),
    ("run", "--posters", "INT", "1"),
    ("run", "--in-flight", "INT", "64"),
    ("run", "--latency-sample-every", "INT", "32"),
    ("run", "--file-size-mib", "MIB", "256"),
    ("run", "--block-size", "BYTES", "4096"),
    ("run", "--outstanding", "INT", "32"),
    ("run", "--skip-port-share", "FLOAT", "0"),
    ("run", "--connections", "INT", "16"),
    ("run", "--message-size", "BYTES", "64"),
    ("run", "--messages-in-flight", "INT", "1"),
    ("sweep", "--work-us", "US", "100"),
    ("sweep", "--duration", "SECONDS", "0.7"),
    ("sweep", "--warmup", "SECONDS", "0.15"),
    ("sweep", "--repetitions", "INT", "5"),
    ("sweep", "--seed", "INT", "1"),
    ("sweep", "--max-repetitions", "INT", "15"),
    ("sweep", "--target-ci", "PCT", None),
    ("sweep", "--working-set-kib", "KIB", "0"),
    ("sweep", "--dequeue-batch", "COUNT,...", "1"),
    ("run", "--skip-on-success", "TEXT", "default"),
    ("sweep", "--skip-on-success", "TEXT", "default"),
    ("tune", "--skip-on-success", "TEXT", "default"),
    ("run", "--affinity", "PLACEMENT", "none"),
    ("run", "--load-affinity", "PLACEMENT", "none"),
    ("sweep", "--affinity", "PLACEMENT", "none"),
    ("sweep", "--load-affinity", "PLACEMENT", "none"),
    ("tune", "--affinity", "PLACEMENT", "none"),
    ("sweep", "--blocking", "FLOAT,...", "0,0.25,0.5,0.75"),
    ("sweep", "--concurrency", "COUNT,...", "0,N,2N"),
    ("sweep", "--pool", "POOL,...", "N,2N,2N+2"),
    ("sweep", "--workload", "TEXT,...", "post,file,socket"),
    ("sweep", "--posters", "INT", "1"),
    ("run", "--json", "FILE", None),
    ("sweep", "--json", "FILE", None),
    ("sweep", "--resume", "FILE", None),
    ("sweep", "--grid", "FILE", None),
    ("run", "--file", "FILE", None),
    ("probe", "--json", "FILE", None),
    ("info", "--json", "FILE", None),
    ("tune", "--repetitions", "INT", "20"),
    ("tune", "--max-repetitions", "INT", "400"),
    ("tune", "--duration", "SECONDS", "0.25"),
    ("tune", "--warmup", "SECONDS", "0.1"),
    ("tune", "--threshold", "FLOAT", "5"),
    ("tune", "--screen-repetitions", "INT", "3"),
    ("tune", "--finalists", "INT", "4"),
    ("tune", "--work-us", "US", "100"),
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


def help_text(binary, *args, columns: int | None = 80) -> str:
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    done = subprocess.run([str(binary), *args, "--help"], capture_output=True, text=True,
                          timeout=30, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("command", ["run", "sweep", "tune", "probe", "info", None])
@pytest.mark.parametrize("columns", [80, 100])
def test_help_is_wrapped_to_the_terminal(binary, command, columns):
    text = help_text(binary, *([command] if command else []), columns=columns)
    long = [line for line in text.splitlines() if len(line) > columns]
    assert long == [], long


def test_help_follows_columns_and_defaults_to_80(binary):
    wide = help_text(binary, "run", columns=160)
    assert max(len(line) for line in wide.splitlines()) > 100, "COLUMNS=160 uses the width"
    # Not a terminal and no COLUMNS: 80 columns.
    default = help_text(binary, "run", columns=None)
    assert max(len(line) for line in default.splitlines()) <= 80


def test_run_help_groups_the_options(binary):
    text = help_text(binary, "run")
    headings = [line for line in text.splitlines() if re.fullmatch(r"[A-Z][\w ]*:", line)]
    assert headings[:5] == ["Common:", "Post workload:", "File workload:", "Socket workload:",
                            "Advanced:"], headings

    def section(heading: str) -> str:
        start = text.index("\n" + heading + "\n")
        end = text.find("\n\n", start + 2)
        return text[start:end]

    assert "--workload" in section("Common:") and "--json" in section("Common:")
    assert "--op" in section("File workload:") and "--op" not in section("Common:")
    assert "--posters" in section("Post workload:")
    assert "--connections" in section("Socket workload:")
    assert "--arrivals" in section("Advanced:")


@pytest.mark.parametrize("command", ["run", "sweep", "probe", "info", None])
def test_help_ends_with_examples_that_name_the_command(binary, command):
    text = help_text(binary, *([command] if command else []))
    assert "\nExamples:\n" in text
    examples = text.split("\nExamples:\n", 1)[1].splitlines()
    assert examples and all(line.startswith("  iocpbench ") for line in examples if line.strip())
    if command:
        assert any(line.startswith(f"  iocpbench {command}") for line in examples)


@pytest.mark.parametrize("short,long", [("-w", "--workload"), ("-d", "--duration"),
                                        ("-o", "--json"), ("-c", "--concurrency"),
                                        ("-p", "--pool"), ("-b", "--blocking"),
                                        ("-r", "--repetitions")])
def test_common_options_have_short_names(binary, short, long):
    for command in ("run", "sweep"):
        assert re.search(rf"^\s+{short},{long}\b", help_text(binary, command), re.M), (command, long)


def test_short_names_work(binary, tmp_path):
    out = tmp_path / "short.json"
    done = run(binary, "run", "-w", "post", "-c", "2", "-p", "2", "-b", "0", "-d", "0.1",
               "-r", "1", "-o", str(out), timeout=60)
    assert done.returncode == 0, done.stderr
    point = json.loads(out.read_text())["points"][0]
    assert point["workload"] == "post" and point["pool"]["value"] == 2
    assert point["duration_s"] == 0.1


def workload_ranges(binary) -> dict[str, tuple[str, int, int]]:
    """{flag: (type name, low, high)} of the workload flags whose help ends with a whole range."""
    text = help_text(binary, "run", columns=400)
    ranges = {}
    # A long flag puts its help on the next line.
    for match in re.finditer(r"^  (--[\w-]+) (INT|BYTES|MIB)=\S+\s+.*\((\d+)\.\.(\d+)(?: bytes| MiB)?\)$",
                             text, re.M):
        flag, type_name, low, high = match.groups()
        ranges[flag] = (type_name, int(low), int(high))
    return ranges


def test_the_range_help_shows_is_the_range_run_checks(binary, tmp_path):
    """One row gives both: a value past the shown range is refused naming the flag, before any
    run, and nothing is written."""
    ranges = workload_ranges(binary)
    expected = {"--posters", "--in-flight", "--latency-sample-every", "--file-size-mib",
                "--block-size", "--outstanding", "--connections", "--message-size",
                "--messages-in-flight"}
    assert set(ranges) == expected
    workload_of = {"--posters": "post", "--in-flight": "post", "--latency-sample-every": "post",
                   "--connections": "socket", "--message-size": "socket",
                   "--messages-in-flight": "socket"}
    out = tmp_path / "never.json"
    for flag, (type_name, low, high) in ranges.items():
        workload = workload_of.get(flag, "file")
        for value in ([high + 1] if low == 0 else [low - 1, high + 1]):
            # A size's plain number is in the flag's own unit (MiB for --file-size-mib).
            done = run(binary, "run", "-w", workload, flag, str(value), "--json", str(out), timeout=60)
            assert done.returncode == 2, (flag, value, done.stdout, done.stderr)
            line = done.stderr.strip()
            assert line.startswith(f"iocpbench: {flag}:") and "\n" not in line, line
            assert str(high if value > high else low) in line, line
    assert not out.exists()


def option_helps(binary, command: str) -> dict[str, str]:
    """{flag: its help text, on one line} from `iocpbench COMMAND --help` at 400 columns."""
    text = help_text(binary, command, columns=400)
    helps: dict[str, str] = {}
    flag = None
    for line in text.splitlines():
        match = re.match(r"^  (?:-\w,)?(--[\w-]+)(?: [A-Z][A-Z,.]*(?:=\S+| \[\S+\])?)?(.*)$", line)
        if match:
            flag = match.group(1)
            helps[flag] = match.group(2).strip()
        elif flag and line.startswith("   "):
            helps[flag] = (helps[flag] + " " + line.strip()).strip()
        else:
            flag = None
    return helps


# Flags each command words for itself: what it writes, and tune's rounds of its final phase.
OWN_WORDING = {"--json", "--repetitions"}


def test_a_point_flag_reads_the_same_in_run_sweep_and_tune(binary):
    """The point flags are declared once (cli/point_flags.cpp): one help text in every command
    that takes them (tune adds "(required)" to the two it has no default for)."""
    helps = {command: option_helps(binary, command) for command in ("run", "sweep", "tune")}
    shared = set(helps["run"]) & set(helps["sweep"]) - OWN_WORDING
    for flag in ("--workload", "--concurrency", "--pool", "--blocking", "--duration", "--work-us",
                 "--dispatch", "--affinity", "--rate", "--load"):
        assert flag in shared, flag
    for flag in sorted(shared):
        assert helps["run"][flag] == helps["sweep"][flag], flag
        if flag in helps["tune"] and flag not in ("--rate", "--load"):  # tune's are --slo's
            assert helps["tune"][flag].removesuffix(" (required)") == helps["run"][flag], flag
