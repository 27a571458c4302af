"""iocpbench-ab: two builds measured in one session, round by round, and gated as paired rounds.

    iocpbench-ab --base OLD_BINARY --new NEW_BINARY --json-base FILE --json-new FILE \\
        [--rounds R] -- [sweep flags]

In round r (0 to R-1) it runs `BIN sweep --repetitions 1 --seed SEED+r --json TMP <sweep
flags>` for both binaries, the base first in even rounds and the new one first in odd rounds
(AB BA AB ...), so a drift of the machine is common to both builds and cancels in each
round's ratio. Each side's results file then holds every point's runs from all rounds (a run's
`repetition` is its round), summaries recomputed as the harness writes them, `sweep.complete`
true only when every round finished, and a top-level `ab` block that marks the two files as
paired rounds of one session; compare (compare.py, gate.py) judges such a pair by round. The
files are written after every round (the first time without replacing anything), so an
interruption keeps the finished rounds.

Exit status: compare's: 0 pass, 1 regression (or a file that is not a whole run: a build whose
sweep crashed, an interrupted round), 3 inconclusive, 2 bad input (one line naming the flag;
nothing created); 130 interrupted (the finished rounds written with complete false, no gate).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Light imports only: numpy and scipy (stats, metrics, compare) load inside main's guard, so
# an early Ctrl-C is "interrupted", not a traceback.
from . import __version__
from .load import SCHEMA_VERSION, InputError, load_results
from .guard import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_REGRESSION, _one_line, guarded_call
from .match import spec_key

PROG = "iocpbench-ab"
DEFAULT_ROUNDS = 7
MIN_ROUNDS = 2
DEFAULT_SEED = 1
# What `iocpbench --version` prints (tests/integration/test_version.py holds it to this).
VERSION_RE = re.compile(r"iocpbench (\S+) \(git (\S+), (\S*), (.+)\), results schema (\d+)")
VERSION_TIMEOUT_S = 30
# After an interruption, how long a sweep may take to write its file and exit.
STOP_TIMEOUT_S = 60
# A build's first sweep checks the sweep flags before it runs anything: the progress lines are
# held this long, so that flags it refuses make one line on stderr and nothing else.
HOLD_S = 1.0
# Sweep flags iocpbench-ab sets itself, per round: a user's would break the pairing.
OWN_FLAGS = {
    "--json": "where each round's results go",
    "--repetitions": "one run a point per round",
    "--resume": "each round is a sweep of its own",
    "--target-ci": "every point runs once a round",
    "--max-repetitions": "every point runs once a round",
    "-h": "help", "--help": "help",
}


class Interrupted(Exception):
    """SIGINT or SIGTERM while the rounds ran."""


@dataclass(frozen=True)
class Build:
    flag: str  # --base or --new
    side: str  # base or new
    path: Path
    version_line: str
    version: str
    git: str
    build_type: str
    schema: int


@dataclass
class Session:
    builds: dict[str, Build]
    outputs: dict[str, Path]
    rounds: int
    seed: int
    sweep_flags: list[str]
    probe: bool
    session_id: str = field(default_factory=lambda: time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
                            + "-" + uuid.uuid4().hex[:8])
    # Per finished round: which side ran first, and each side's results of that round.
    finished: list[tuple[list[str], dict[str, dict[str, Any]]]] = field(default_factory=list)
    written: set[str] = field(default_factory=set)
    options: argparse.Namespace | None = None  # the gate's: --fail-above, --metric, ...


def _quoted(path: Path | str) -> str:
    return f"'{path}'"


# ---------------------------------------------------------------- checking the input


def check_binary(flag: str, side: str, text: str) -> Build:
    """A binary that exists, is executable and is iocpbench (its --version parses)."""
    path = Path(text)
    if not path.exists():
        raise InputError(f"{flag}: {_quoted(path)} does not exist")
    if path.is_dir() or not os.access(path, os.X_OK) or not path.stat().st_mode & 0o111:
        raise InputError(f"{flag}: {_quoted(path)} is not executable")
    binary = str(path if path.is_absolute() or os.sep in text else Path.cwd() / path)
    try:
        proc = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise InputError(f"{flag}: {_quoted(path)} is not iocpbench: its --version did not finish "
                         f"within {VERSION_TIMEOUT_S} s") from None
    except OSError as err:
        raise InputError(f"{flag}: {_quoted(path)} is not iocpbench: it cannot be run ({err.strerror or err})") from None
    first = proc.stdout.strip().splitlines()[0] if proc.stdout.strip() else ""
    match = VERSION_RE.fullmatch(first)
    if proc.returncode != 0 or not match:
        shown = f"printed {first[:80]!r}" if first else "printed nothing"
        raise InputError(f"{flag}: {_quoted(path)} is not iocpbench: its --version {shown}"
                         + (f" and exited {proc.returncode}" if proc.returncode else "")
                         + " (expected 'iocpbench VERSION (git ..., BUILD, COMPILER), results schema N')")
    version, git, build_type, _compiler, schema = match.groups()
    return Build(flag, side, Path(binary), first, version, git, build_type, int(schema))


def check_builds(base: Build, new: Build) -> None:
    """Both builds write the results schema this package reads, and are of one build type
    (compare refuses files whose build types differ)."""
    for build in (base, new):
        if build.schema != SCHEMA_VERSION and base.schema == new.schema:
            raise InputError(f"{build.flag}: {_quoted(build.path)} writes results schema {build.schema}; "
                             f"this tool reads {SCHEMA_VERSION}")
    if base.schema != new.schema:
        raise InputError(f"--new: {_quoted(new.path)} writes results schema {new.schema}, --base "
                         f"{_quoted(base.path)} schema {base.schema}: their results cannot be compared")
    if base.build_type != new.build_type:
        raise InputError(f"--new: {_quoted(new.path)} is a {new.build_type or 'unnamed'} build, --base a "
                         f"{base.build_type or 'unnamed'} one: the gate compares builds of one build type")


def check_output(flag: str, text: str) -> Path:
    """A results file to create: it must not exist (iocpbench-ab never replaces a file), and
    its directory must exist and be writable. Nothing is created here."""
    if not text:
        raise InputError(f"{flag}: empty path")
    path = Path(text)
    if path.exists() or path.is_symlink():
        what = "a directory" if path.is_dir() else "a file"
        raise InputError(f"{flag}: {_quoted(path)} exists ({what}); iocpbench-ab never overwrites it: "
                         "remove it or name another file")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"{flag}: directory {_quoted(parent)} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{flag}: directory {_quoted(parent)} is not writable")
    return path


def _flag_name(arg: str) -> str:
    return arg.split("=", 1)[0]


def split_sweep_flags(flags: Sequence[str]) -> tuple[list[str], int]:
    """The sweep flags without --seed, and the seed (round r runs with seed + r). A flag that
    iocpbench-ab sets itself is bad input."""
    kept: list[str] = []
    seed = DEFAULT_SEED
    i = 0
    while i < len(flags):
        arg = flags[i]
        name = _flag_name(arg)
        if name in OWN_FLAGS:
            raise InputError(f"sweep flags: {name} is set by {PROG} ({OWN_FLAGS[name]}); leave it out")
        if name == "--seed":
            if "=" in arg:
                value = arg.split("=", 1)[1]
            elif i + 1 < len(flags):
                value = flags[i + 1]
                i += 1
            else:
                raise InputError("sweep flags: --seed needs a value")
            try:
                seed = int(value)
            except ValueError:
                raise InputError(f"sweep flags: --seed: not an integer: {value!r}") from None
            if seed < 0:
                raise InputError(f"sweep flags: --seed: must be 0 or more: {value}")
        else:
            kept.append(arg)
        i += 1
    return kept, seed


# ---------------------------------------------------------------- the rounds


def _progress(text: str) -> None:
    print(f"{PROG}: {text}", file=sys.stderr, flush=True)


@dataclass
class SweepRun:
    returncode: int
    stderr: str
    data: dict[str, Any] | None


def run_sweep(session: Session, build: Build, rnd: int, out: Path, held: list[str]) -> SweepRun:
    """One round of one build: a sweep of one repetition into `out`. An interruption stops
    the sweep (it writes its file and exits 130) and raises Interrupted. The progress lines in
    `held` are printed (and emptied) once the sweep has run HOLD_S seconds or did not refuse
    its flags (exit 2)."""
    args = [str(build.path), "sweep", *session.sweep_flags, "--repetitions", "1", "--seed",
            str(session.seed + rnd), "--json", str(out), "--quiet"]
    if not session.probe or rnd > 0:  # the probe once a build: its machine block is round 0's
        args.append("--no-probe")
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        if held:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=HOLD_S)
            if proc.returncode != EXIT_BAD_INPUT:
                for line in held:
                    _progress(line)
                held.clear()
        _, err = proc.communicate()
    except (KeyboardInterrupt, Interrupted):
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=STOP_TIMEOUT_S)
        except (subprocess.TimeoutExpired, KeyboardInterrupt, Interrupted):
            proc.kill()
            proc.communicate()
        raise Interrupted() from None
    data: dict[str, Any] | None = None
    with contextlib.suppress(OSError, ValueError):
        loaded = json.loads(out.read_text(encoding="utf-8"))
        data = loaded if isinstance(loaded, dict) and isinstance(loaded.get("points"), list) else None
    return SweepRun(proc.returncode, err, data)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return _one_line(lines[-1]) if lines else "no message"


def _forward(stderr: str, build: Build) -> None:
    """A sweep's warnings, each marked with its build."""
    for line in stderr.strip().splitlines():
        if line.strip():
            print(f"{PROG}: {build.side}: {line}", file=sys.stderr)


def run_rounds(session: Session, tmp: Path, header: list[str]) -> str | None:
    """Every round, both builds in it (AB, then BA, ...), the results files written after each.
    Returns why the rounds stopped early (a build's sweep crashed), None when they all ran.
    `header` (progress lines) is printed with the first sweep's progress."""
    for rnd in range(session.rounds):
        order = ["base", "new"] if rnd % 2 == 0 else ["new", "base"]
        got: dict[str, dict[str, Any]] = {}
        for side in order:
            build = session.builds[side]
            line = f"round {rnd + 1} of {session.rounds}: {side} ({build.path.name}, git {build.git})"
            held = [*header, line] if rnd == 0 else []
            header = []
            if not held:
                _progress(line)
            out = tmp / f"round{rnd}-{side}.json"
            started = time.monotonic()
            res = run_sweep(session, build, rnd, out, held)
            if res.returncode == EXIT_BAD_INPUT and not session.finished:
                raise InputError(f"{build.flag}: its sweep refused the sweep flags: {_last_line(res.stderr)}")
            for held_line in held:
                _progress(held_line)
            _forward(res.stderr, build)
            if res.returncode == EXIT_INTERRUPTED:  # the sweep was stopped, not us: stop too
                raise Interrupted()
            if res.returncode not in (0, 1) or res.data is None:
                why = (f"exited {res.returncode}" if res.returncode not in (0, 1) else "wrote no readable results")
                return (f"{build.flag}: the sweep of round {rnd + 1} {why}: {_last_line(res.stderr)}; "
                        f"{len(session.finished)} finished round(s) kept")
            # Exit 1: some runs failed; the file says which, and compare fails on it.
            got[side] = res.data
            _progress(f"round {rnd + 1} of {session.rounds}: {side} done in {time.monotonic() - started:.1f} s")
        session.finished.append((order, got))
        write_outputs(session)
    return None


# ---------------------------------------------------------------- the results files


def summarize_runs(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A point's summary as the harness writes it (harness/results/summary.cpp), from
    stats.summarize: one summary per metric over the runs that have it."""
    from . import stats

    def at(*path: str) -> dict[str, Any]:
        values: list[Any] = []
        for run in runs:
            value: Any = run
            for part in path:
                value = value.get(part) if isinstance(value, dict) else None
            values.append(value)
        return stats.summarize(values).as_dict()

    summary: dict[str, Any] = {
        "throughput_ops_per_s": at("throughput_ops_per_s"),
        "bytes_per_s": at("bytes_per_s"),
        "context_switches_per_kop": at("context_switches_per_kop"),
        "latency_us": {"p50": at("latency_us", "p50"), "p99": at("latency_us", "p99")},
        "queue_delay_us": {"p50": at("queue_delay_us", "p50"), "p99": at("queue_delay_us", "p99")},
        "achieved_blocking_ratio": at("achieved_blocking_ratio"),
        "blocked_only_ratio": at("blocked_only_ratio"),
        "cpu_utilisation": at("cpu", "utilisation"),
        "errors": sum(r["errors"] for r in runs
                      if isinstance(r.get("errors"), int) and not isinstance(r.get("errors"), bool)),
    }
    if any(isinstance(r.get("pool_sizing"), dict) and isinstance(r["pool_sizing"].get("window"), dict)
           and "mean_threads" in r["pool_sizing"]["window"] for r in runs):
        summary["pool_mean_threads"] = at("pool_sizing", "window", "mean_threads")
    if any("open_loop" in r for r in runs):
        summary["latency_us"]["p90"] = at("latency_us", "p90")
        summary["latency_us"]["p999"] = at("latency_us", "p999")
        summary["open_loop"] = {
            "offered_ops_per_s": at("open_loop", "offered_ops_per_s"),
            "service_time_us": {"p50": at("open_loop", "service_time_us", "p50"),
                                "p99": at("open_loop", "service_time_us", "p99")},
            "generator_lag_us": {"p99": at("open_loop", "generator_lag_us", "p99")},
            "over_capacity_runs": sum(1 for r in runs if isinstance(r.get("open_loop"), dict)
                                      and r["open_loop"].get("over_capacity") is True),
            "generator_bound_runs": sum(1 for r in runs if isinstance(r.get("open_loop"), dict)
                                        and r["open_loop"].get("generator_bound") is True),
        }
    return summary


def blocking_fidelity(point: dict[str, Any], tolerance: float) -> dict[str, Any]:
    """A point's blocking_fidelity over all its runs, as the harness computes it
    (harness/engine/blocking_judge.cpp), at the tolerance the harness wrote."""
    from .fidelity import judge_point

    return judge_point(point, tolerance)


def _point_key(point: dict[str, Any]) -> str:
    return point["id"] if isinstance(point.get("id"), str) and point["id"] else json.dumps(spec_key(point))


def merge_side(session: Session, side: str) -> dict[str, Any]:
    """One side's results file: round 0's file with every finished round's runs (each run's
    repetition its round), summaries and blocking fidelity recomputed, the sweep block of the
    whole session and the `ab` block."""
    rounds = [(rnd, got[side]) for rnd, (_, got) in enumerate(session.finished)]
    first = rounds[0][1]
    doc = {k: v for k, v in first.items() if k != "points"}
    points: dict[str, dict[str, Any]] = {}
    for rnd, data in rounds:
        for p in data["points"]:
            key = _point_key(p)
            if key not in points:
                points[key] = {k: v for k, v in p.items() if k != "failures"}
                points[key]["runs"] = []
            target = points[key]
            target["runs"].extend({**run, "repetition": rnd} for run in p.get("runs") or [] if isinstance(run, dict))
            if isinstance(p.get("failures"), list):  # failed runs, each under its round
                target.setdefault("failures", []).extend(
                    {**f, "repetition": rnd} if isinstance(f, dict) else f for f in p["failures"])
    for p in points.values():
        p["summary"] = summarize_runs(p["runs"])
        if isinstance(p.get("blocking_fidelity"), dict) and isinstance(p["blocking_fidelity"].get("tolerance"),
                                                                        (int, float)):
            p["blocking_fidelity"] = blocking_fidelity(p, float(p["blocking_fidelity"]["tolerance"]))
    complete = len(rounds) == session.rounds and all(d.get("sweep", {}).get("complete") is True for _, d in rounds)
    sweep = dict(first.get("sweep", {}))
    sweep.update(repetitions=session.rounds, seed=session.seed, complete=complete,
                 finished=rounds[-1][1].get("sweep", {}).get("finished") if complete else None,
                 schedule=f"repetition rounds, points shuffled per round (seed + round); {PROG}: each round "
                          "one sweep per build, the builds alternating which goes first")
    doc["sweep"] = sweep
    doc["points"] = list(points.values())
    base, new = session.builds["base"], session.builds["new"]
    doc["ab"] = {
        "session": session.session_id,
        "side": side,
        "rounds": session.rounds,
        "rounds_finished": len(rounds),
        "order": [order for order, _ in session.finished],
        "seed": session.seed,
        "base_version": base.version_line,
        "new_version": new.version_line,
        "base_binary": str(base.path),
        "new_binary": str(new.path),
        "tool": f"{PROG} {__version__}",
    }
    return doc


def _write_new(path: Path, text: str, *, first: bool) -> None:
    """Write `text` to `path` through a temporary file in its directory: the first time
    without replacing anything (a file that appeared meanwhile is refused), then atomically."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent if str(path.parent) else ".")
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)  # as a file the harness writes, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        if first:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise InputError(f"{path}: appeared while {PROG} ran; not overwritten") from None
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_outputs(session: Session) -> None:
    if not session.finished:
        return
    for side in ("base", "new"):
        text = json.dumps(merge_side(session, side), indent=2) + "\n"
        _write_new(session.outputs[side], text, first=side not in session.written)
        session.written.add(side)


# ---------------------------------------------------------------- the command


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, no usage block: the flag and the reason
        raise InputError(message)


def _rounds(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < MIN_ROUNDS:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_ROUNDS} (the paired gate needs the spread "
                                         f"of rounds): {text}")
    return value


def parser() -> argparse.ArgumentParser:
    from .cli import _alpha, _loss_percent, _percent
    from .gate import DEFAULT_MARGIN_PCT, FAMILY_ALPHA, MAX_DETECTABLE_LOSS_PCT, MIN_RUNS
    from .metrics import DEFAULT_METRIC, METRICS

    p = _Parser(
        prog=PROG,
        usage=f"{PROG} --base OLD_BINARY --new NEW_BINARY --json-base FILE --json-new FILE "
              "[--rounds R] [gate options] -- [sweep flags]",
        description=textwrap.fill("Measure two builds of iocpbench on this machine in one session and gate on the "
                    "change: round by round over the same grid, each round one sweep of one repetition per "
                    "build (`BIN sweep --repetitions 1 --seed SEED+round --json TMP <sweep flags>`), the "
                    "builds alternating which goes first (AB BA AB ...), so a drift of the machine is common "
                    "to both and cancels. Writes each build's results (every point's runs from all rounds, "
                    "a run's repetition its round, and an `ab` block pairing the two files) and judges them "
                    "as paired rounds with iocpbench-compare's gate (docs/verdicts.md, \"Paired A/B in one "
                    "run\"): its Markdown on stdout, one line per reason on stderr, progress on stderr.", 88),
        epilog="Exit status (compare's):\n"
               "  0  PASS: no regression, every point judged\n"
               "  1  FAIL: a regression, or a file that is not a whole run (a round that did not finish,\n"
               "     a build whose sweep crashed, runs with errors)\n"
               "  2  bad input: a binary missing, not executable or not iocpbench; builds of other results\n"
               "     schemas or build types; an output file that exists (never overwritten) or a\n"
               f"     directory that does not; --rounds below {MIN_ROUNDS}; sweep flags iocpbench-ab sets itself\n"
               "     (--json, --repetitions, --resume, --target-ci) or that the sweep refuses. Nothing is created.\n"
               f"  3  INCONCLUSIVE: nothing failed, but a point has fewer than {MIN_RUNS} rounds or could not\n"
               "     show a loss of --max-detectable-loss\n"
               "  130 interrupted (Ctrl-C, SIGTERM): the finished rounds are written, complete false; no gate\n\n"
               f"example: {PROG} --base old/iocpbench --new build/release/harness/iocpbench \\\n"
               "           --json-base ab-old.json --json-new ab-new.json -- --quick",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("--base", required=True, metavar="OLD_BINARY", help="the reference build's iocpbench binary")
    p.add_argument("--new", required=True, metavar="NEW_BINARY", help="the build to judge")
    p.add_argument("--json-base", required=True, metavar="FILE", help="results file for the base build (created)")
    p.add_argument("--json-new", required=True, metavar="FILE", help="results file for the new build (created)")
    p.add_argument("--rounds", type=_rounds, default=DEFAULT_ROUNDS, metavar="R",
                   help=f"rounds, each one sweep per build (default {DEFAULT_ROUNDS}; the stated error rates "
                        f"are for 7; at least {MIN_ROUNDS}, and a point needs {MIN_RUNS} to be judged)")
    p.add_argument("--no-probe", action="store_true",
                   help="skip the semantic probe (otherwise it runs once per build, in round 1)")
    p.add_argument("--fail-above", type=_percent, default=DEFAULT_MARGIN_PCT, metavar="PCT",
                   help=f"the margin, as iocpbench-compare's (default {DEFAULT_MARGIN_PCT:g})")
    p.add_argument("--max-detectable-loss", type=_loss_percent, default=None, metavar="PCT",
                   help=f"as iocpbench-compare's (default --fail-above + 25: {MAX_DETECTABLE_LOSS_PCT:g})")
    p.add_argument("--metric", choices=sorted(METRICS), default=DEFAULT_METRIC, metavar="M",
                   help=f"metric to gate on, as iocpbench-compare's (default {DEFAULT_METRIC})")
    p.add_argument("--alpha", type=_alpha, default=FAMILY_ALPHA,
                   help=f"false-alarm rate of the comparison (default {FAMILY_ALPHA:g})")
    return p


def _split_argv(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    args = list(argv)
    if "--" in args:
        at = args.index("--")
        return args[:at], args[at + 1:]
    return args, []


def prepare(argv: Sequence[str]) -> Session:
    """Everything checked before anything runs or is created; InputError names the flag."""
    own, sweep_flags = _split_argv(argv)
    args = parser().parse_args(own)
    kept, seed = split_sweep_flags(sweep_flags)
    probe = not args.no_probe and "--no-probe" not in kept
    base = check_binary("--base", "base", args.base)
    new = check_binary("--new", "new", args.new)
    check_builds(base, new)
    out_base = check_output("--json-base", args.json_base)
    out_new = check_output("--json-new", args.json_new)
    if out_base.resolve() == out_new.resolve():
        raise InputError(f"--json-new: {_quoted(out_new)} is --json-base's file too; name two files")
    return Session({"base": base, "new": new}, {"base": out_base, "new": out_new}, args.rounds, seed, kept, probe,
                   options=args)


def gate(session: Session, *, stopped: str | None) -> int:
    """The paired gate over the two files written: compare's Markdown on stdout, its reasons
    on stderr, its exit status."""
    from .cli import EXIT_BY_STATUS
    from .compare import compare_results, note_lines, reason_lines, render_markdown
    from .metrics import METRICS

    args = session.options
    assert args is not None
    base = load_results(session.outputs["base"])
    new = load_results(session.outputs["new"])
    report = compare_results(base, [new], METRICS[args.metric], fail_above=args.fail_above, alpha=args.alpha,
                             max_detectable=args.max_detectable_loss, paired=True)
    sys.stdout.write(render_markdown(report))
    sys.stdout.flush()
    for line in note_lines(report):
        print(f"{PROG}: note: {_one_line(line)}", file=sys.stderr)
    if stopped:
        print(f"{PROG}: fail: {_one_line(stopped)}", file=sys.stderr)
    for line in reason_lines(report):
        print(f"{PROG}: {_one_line(line)}", file=sys.stderr)
    return EXIT_BY_STATUS[report.status]


@contextlib.contextmanager
def _signals() -> Iterator[None]:
    """SIGTERM stops the rounds as SIGINT (Ctrl-C) does."""
    def stop(signum: int, frame: Any) -> None:
        raise Interrupted()

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(argv: Sequence[str]) -> int:
    session = prepare(argv)
    b, n = session.builds["base"], session.builds["new"]
    header = [f"A/B session {session.session_id}: {session.rounds} rounds; base {b.path} ({b.version_line}); "
              f"new {n.path} ({n.version_line})"]
    stopped: str | None = None
    try:
        with tempfile.TemporaryDirectory(prefix="iocpbench-ab-") as tmp:
            stopped = run_rounds(session, Path(tmp), header)
    except (KeyboardInterrupt, Interrupted):
        with contextlib.suppress(KeyboardInterrupt, Interrupted):
            write_outputs(session)
        kept = len(session.finished)
        where = (f"; {session.outputs['base']} and {session.outputs['new']} hold them (complete false)"
                 if kept else "; nothing written")
        print(f"{PROG}: interrupted: {kept} of {session.rounds} round(s) finished{where}", file=sys.stderr)
        return EXIT_INTERRUPTED
    if not session.finished:
        print(f"{PROG}: fail: {_one_line(stopped or 'no round finished')}; nothing written", file=sys.stderr)
        return EXIT_REGRESSION
    _progress(f"{len(session.finished)} of {session.rounds} rounds finished; wrote {session.outputs['base']} "
              f"and {session.outputs['new']}; the paired gate:")
    return gate(session, stopped=stopped)


def main(argv: Sequence[str] | None = None) -> int:
    def body() -> int:
        with _signals():
            return _run(sys.argv[1:] if argv is None else argv)

    return guarded_call(PROG, body, interrupts=(KeyboardInterrupt, Interrupted))


if __name__ == "__main__":
    sys.exit(main())
