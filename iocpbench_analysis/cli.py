"""Console scripts: iocpbench-charts, iocpbench-report, iocpbench-compare, iocpbench-answer,
iocpbench-controllers, iocpbench-fidelity (iocpbench-ab is in ab.py).

Exit status follows the harness's contract: 0 success, 2 bad input, 130 interrupted; compare
adds 1 (FAIL: a regression, or a BASE or NEW file that is not a whole run) and 3 (INCONCLUSIVE:
no regression shown, but not everything could be judged; controllers uses 3 likewise for a group
it cannot judge), and refuses files from different
machines or run settings with 2 unless --cross-machine. A --cross-machine comparison reports and
does not gate: 0 when BASE and every NEW file are whole runs, 1 when one is not, never 3. Bad
input is reported as one line on stderr, never a traceback (set IOCPBENCH_DEBUG=1 to get one
for an unexpected error).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import __version__
from .guard import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSION, _one_line, guarded_call
from .load import load_all, load_results
from .metrics import DEFAULT_METRIC, METRICS


Main = Callable[[argparse.Namespace], int]


def _guarded(prog: str, parser: argparse.ArgumentParser, body: Main, argv: Sequence[str] | None) -> int:
    args = parser.parse_args(argv)  # argparse itself exits 2 with usage on a bad flag
    return guarded_call(prog, lambda: body(args))



class _OneLineParser(argparse.ArgumentParser):
    """Bad input is one line naming the problem, exit 2, as the harness's (not argparse's
    usage block above it)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} ({self.prog} --help lists them)\n")


def _parser(prog: str, description: str, epilog: str) -> argparse.ArgumentParser:
    # The description is wrapped here, the epilog kept as written (it holds examples).
    p = _OneLineParser(prog=prog, description=textwrap.fill(description, 88), epilog=epilog,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return p


def _notes(notes: list[str], prog: str) -> None:
    for n in notes:
        print(f"{prog}: note: {n}", file=sys.stderr)


# ---------------------------------------------------------------- iocpbench-charts

def charts_parser() -> argparse.ArgumentParser:
    p = _parser(
        "iocpbench-charts",
        "Draw the charts of iocpbench results files as PNG and SVG: per workload, throughput "
        "heatmaps (concurrency x pool, per blocking ratio), throughput vs blocking ratio, context "
        "switches per 1,000 completions vs pool size, latency percentiles, throughput vs context "
        "switches per completion (the recommended setting starred), the LIFO "
        "signature (each thread's share of completions) and, where the file has self-sizing "
        "(auto) pools, their worker threads over time.",
        "Charts a file lacks the data for are skipped with a note on stderr.\n"
        "Exit status: 0 success, 2 bad input.\n\n"
        "example: iocpbench-charts results/laptop.json -o results/charts",
    )
    p.add_argument("results", nargs="+", metavar="RESULTS", help="results JSON files (schema_version 1)")
    p.add_argument("-o", "--output-dir", required=True, type=Path, metavar="DIR",
                   help="directory for the chart files (created if missing)")
    return p


def _charts(args: argparse.Namespace) -> int:
    results = load_all(args.results)  # bad input fails before matplotlib's slow import
    from .charts import write_charts

    notes: list[str] = []
    written = write_charts(results, args.output_dir, notes)
    _notes(notes, "iocpbench-charts")
    for path in written:
        print(path)
    return EXIT_OK


def charts_main(argv: Sequence[str] | None = None) -> int:
    return _guarded("iocpbench-charts", charts_parser(), _charts, argv)


# ---------------------------------------------------------------- iocpbench-report

def report_parser() -> argparse.ArgumentParser:
    p = _parser(
        "iocpbench-report",
        "Write one self-contained HTML page for iocpbench results files: the machine, the port "
        "semantics probe, the tuner's recommendation (when the file has one) and, per workload, "
        "the charts (embedded) and a table of points (median throughput with 95% CI, context "
        "switches per 1,000 completions, p50/p99 latency), plus a table of the pool sizes of "
        "self-sizing (auto) pools where there are any.",
        "Exit status: 0 success, 2 bad input.\n\n"
        "example: iocpbench-report results/laptop.json results/server.json -o report.html",
    )
    p.add_argument("results", nargs="+", metavar="RESULTS", help="results JSON files (schema_version 1)")
    p.add_argument("-o", "--output", required=True, type=Path, metavar="FILE.html", help="the HTML file to write")
    return p


def _report(args: argparse.Namespace) -> int:
    results = load_all(args.results)
    from .report import render_report

    notes: list[str] = []
    page = render_report(results, notes)
    _notes(notes, "iocpbench-report")
    # Write next to the target and rename: a failed run never leaves half a page behind.
    out: Path = args.output
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)
    print(out)
    return EXIT_OK


def report_main(argv: Sequence[str] | None = None) -> int:
    return _guarded("iocpbench-report", report_parser(), _report, argv)


# ---------------------------------------------------------------- iocpbench-compare

def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value < 1000:
        raise argparse.ArgumentTypeError(f"must be in [0, 1000): {text}")
    return value


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1): {text}")
    return value


CHART_FORMATS = ("png", "svg", "pdf")


def _chart_path(text: str) -> Path:
    path = Path(text)
    if path.suffix.lower().lstrip(".") not in CHART_FORMATS:
        raise argparse.ArgumentTypeError(f"{text}: the extension must be one of {', '.join(CHART_FORMATS)}")
    return path


def _loss_percent(text: str) -> float:
    value = _percent(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"must be above 0: {text}")
    return value


def compare_parser() -> argparse.ArgumentParser:
    from .compare import DEFAULT_ALPHA, DEFAULT_FAIL_ABOVE
    from .gate import DETECTABLE_ABOVE_MARGIN_PCT, MAX_DETECTABLE_LOSS_PCT, MIN_RUNS

    p = _parser(
        "iocpbench-compare",
        "Compare iocpbench results and gate on them: points of BASE and each NEW file are matched "
        "by their whole identity (workload and its parameters, port, dispatch, concurrency and pool "
        "specs such as 2N+2, blocking ratio and kind, work per completion, working set, and any axis "
        "the harness adds), so machines with different CPU counts line up. Per point: the NEW/BASE "
        "ratio of geometric means with its 95% CI and an exact permutation p-value. The gate "
        "(docs/verdicts.md): a point regresses when its simultaneous bound (Bonferroni over the "
        "points, family false-alarm rate --alpha) is beyond --fail-above; the comparison regresses "
        "when the geometric mean ratio's 95% CI (clustered by round: runs of one round share an effect) "
        "is. Two files of one iocpbench-ab session (or any two with --paired) are judged as paired "
        "rounds: per point the mean of the per-round log ratios, so drift between rounds cancels. "
        "It fails closed: BASE and NEW must each be a "
        "whole run (complete; no run with errors, undrained, failed or at zero or null throughput; "
        "no point twice; every point of BASE in NEW with runs), and what cannot be judged makes the "
        "result inconclusive, never a pass. Prints a Markdown table (one column per NEW file), ready "
        "for $GITHUB_STEP_SUMMARY, with the status and why on its verdict line.",
        "Exit status (one line on stderr per reason for 1 and 3):\n"
        "  0  PASS: no regression, every matched point judged\n"
        "  1  FAIL: a point or the geometric mean regressed; a point met its blocking ratio in BASE\n"
        "     and missed it in NEW; or BASE or a NEW file is not a whole run: incomplete, a run with\n"
        "     errors, undrained, interrupted or failed, a run at zero or null throughput, a point\n"
        "     twice, BASE points missing from NEW or without runs (unless --allow-missing)\n"
        "  2  bad input; or BASE and NEW from different machines (hostname, OS, CPU model, logical\n"
        "     CPUs, kernel, build type) or with other run lengths or warm-ups (unless --cross-machine)\n"
        f"  3  INCONCLUSIVE: nothing failed, but a point has fewer than {MIN_RUNS} runs a side, a point\n"
        "     missed its blocking ratio in BASE (it is left out), no point matched, or a point could\n"
        "     not show a loss of --max-detectable-loss\n"
        "FAIL wins over INCONCLUSIVE.\n\n"
        "With --cross-machine (comparing machines, docs/verdicts.md \"Comparing machines\") compare\n"
        "reports and does not gate: per matched point the NEW/BASE ratio and its 95% CI; per group\n"
        "of points that differ only in concurrency and pool, Spearman's rank correlation of the\n"
        "settings' median throughputs (none below 3 settings) and each machine's best setting.\n"
        "Its exit status:\n"
        "  0  BASE and every NEW file are whole runs, whatever the ratios, rankings or power\n"
        "  1  BASE or a NEW file is not a whole run: incomplete, a run with errors, undrained,\n"
        "     interrupted or failed, a run at zero or null throughput, a point twice, BASE points\n"
        "     missing from NEW or without runs (unless --allow-missing); never for a ratio, a\n"
        "     ranking or a blocking ratio missed in NEW\n"
        "  2  bad input\n"
        "It never exits 3.\n\n"
        "example: iocpbench-compare base.json new.json --fail-above 10 >> \"$GITHUB_STEP_SUMMARY\"\n"
        "         iocpbench-compare ci-runner.json mine.json --cross-machine --ignore-port",
    )
    p.add_argument("base", metavar="BASE", help="the reference results file")
    p.add_argument("new", nargs="+", metavar="NEW", help="results files to compare with BASE")
    p.add_argument("--fail-above", type=_percent, default=DEFAULT_FAIL_ABOVE, metavar="PCT",
                   help=f"the margin: a loss beyond PCT percent is a regression (default {DEFAULT_FAIL_ABOVE:g})")
    p.add_argument("--max-detectable-loss", type=_loss_percent, default=None, metavar="PCT",
                   help="inconclusive when a gated point's smallest detectable loss (the loss at which its "
                        "simultaneous bound would just reach the margin, docs/verdicts.md) is above PCT percent "
                        f"(default --fail-above + {DETECTABLE_ABOVE_MARGIN_PCT:g}: {MAX_DETECTABLE_LOSS_PCT:g} "
                        "at the default margin)")
    p.add_argument("--metric", choices=sorted(METRICS), default=DEFAULT_METRIC, metavar="M",
                   help=f"metric to compare (default {DEFAULT_METRIC}; higher is better for throughput, "
                        f"lower for the others): {', '.join(sorted(METRICS))}")
    p.add_argument("--alpha", type=_alpha, default=DEFAULT_ALPHA,
                   help=f"false-alarm rate of a whole comparison (default {DEFAULT_ALPHA:g})")
    p.add_argument("--allow-missing", action="store_true",
                   help="a NEW file may lack points of BASE, and points may have no runs (an intended "
                        "subset); they are still listed")
    p.add_argument("--ignore-port", action="store_true",
                   help="match points across port backends (e.g. win32 on Windows vs emulated on Linux)")
    p.add_argument("--cross-machine", action="store_true",
                   help="compare machines: files from different machines, builds, run lengths or warm-ups "
                        "are compared (refused otherwise) and the comparison reports ratios and whether the "
                        "machines rank the settings alike, without gating (exit status below); a note on "
                        "stderr says when the files' machines or settings differ")
    p.add_argument("--paired", action="store_true",
                   help="judge each NEW file's runs paired with BASE's by round (their `repetition`), as for "
                        "two files of one iocpbench-ab session, which are paired without it")
    p.add_argument("--chart", type=_chart_path, metavar="FILE.png",
                   help="also draw the ratios with their CIs (format from the extension: png, svg, pdf)")
    return p


EXIT_BY_STATUS = {"pass": EXIT_OK, "fail": EXIT_REGRESSION, "inconclusive": EXIT_INCONCLUSIVE,
                  "reported": EXIT_OK}  # reported: a cross-machine comparison of whole runs


def _compare(args: argparse.Namespace) -> int:
    from .compare import compare_results, note_lines, reason_lines, render_markdown

    base = load_results(args.base)
    news = load_all(args.new)
    report = compare_results(base, news, METRICS[args.metric], fail_above=args.fail_above,
                             alpha=args.alpha, ignore_port=args.ignore_port, allow_missing=args.allow_missing,
                             max_detectable=args.max_detectable_loss, cross_machine=args.cross_machine,
                             paired=args.paired)
    if args.chart:
        from .charts import ratio_chart

        args.chart.parent.mkdir(parents=True, exist_ok=True)
        ratio_chart(report).savefig(args.chart, dpi=110)
    sys.stdout.write(render_markdown(report))
    sys.stdout.flush()
    _notes(note_lines(report), "iocpbench-compare")
    for line in reason_lines(report):
        print(f"iocpbench-compare: {_one_line(line)}", file=sys.stderr)
    return EXIT_BY_STATUS[report.status]


def compare_main(argv: Sequence[str] | None = None) -> int:
    return _guarded("iocpbench-compare", compare_parser(), _compare, argv)


# ---------------------------------------------------------------- python -m iocpbench_analysis answer

def answer_parser() -> argparse.ArgumentParser:
    p = _parser(
        "iocpbench-answer",
        "Print which setting to use, per workload and blocking ratio of a results file: the "
        "recommended setting (the cheapest of those indistinguishable from the best) and the best, "
        "each with its median throughput and context switches per 1,000 completions, how many "
        "settings are indistinguishable from the best, and the rules of thumb (pool N, 2N, 2N+2) "
        "as a ratio of the best with a 90% CI and their context switches; a last line names the "
        "points measured on a busy machine. The report opens with the same.",
        "Exit status: 0 success, 2 bad input.\n\n"
        "example: iocpbench-answer out/results.json\n"
        "         python -m iocpbench_analysis answer out/results.json   (the same, without installing)",
    )
    p.add_argument("results", nargs="+", metavar="RESULTS", help="results JSON files (schema_version 1)")
    return p


def _answer(args: argparse.Namespace) -> int:
    from .answer import text_table

    results = load_all(args.results)
    for res in results:
        if len(results) > 1:
            print(f"== {res.path}")
        sys.stdout.write(text_table(res.points))
    return EXIT_OK


def answer_main(argv: Sequence[str] | None = None) -> int:
    return _guarded("iocpbench-answer", answer_parser(), _answer, argv)


# ---------------------------------------------------------------- iocpbench-controllers

def controllers_parser() -> argparse.ArgumentParser:
    p = _parser(
        "iocpbench-controllers",
        "Score pool controllers (auto, hill, formula, stall) against the best fixed pool measured in "
        "the same file: points are grouped by everything but the pool, and per group each pool's share "
        "of the best fixed pool's mean throughput (Fieller's 95% interval over the runs), the size it "
        "settled at (last profile segment, else the window's last quarter), the time to reach 90% of the "
        "new best after each step of the blocking profile, context switches per completion and, for "
        "open-loop points, the p99 response time and its ratio to the best fixed p99.",
        "Exit status:\n"
        "  0  every group was scored\n"
        "  2  bad input (an unreadable file, not a results file, an unwritable output)\n"
        "  3  cannot judge: a group has no fixed pool or no controller (one line on stderr each);\n"
        "     the groups that could be scored are still printed and written\n\n"
        "example: iocpbench-controllers out/results.json --json out/scores.json --charts out/charts",
    )
    p.add_argument("results", nargs="+", metavar="RESULTS", help="results JSON files (schema_version 1)")
    p.add_argument("--json", type=Path, metavar="OUT", help="also write the scores as JSON to OUT")
    p.add_argument("--charts", type=Path, metavar="DIR",
                   help="also draw each group's pool size and throughput over time (PNG + SVG) into DIR")
    return p


def _write_atomically(path: Path, text: str) -> None:
    # Next to the target, then renamed: a failed run never leaves half a file behind.
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _unjudged_lines(path: Path, groups: list[Any]) -> list[str]:
    """One line per group that cannot be judged; one for the file when they all say the same."""
    reasons = [(g.label, g.reason) for g in groups if not g.judged]
    if not groups:
        return [f"cannot judge {path}: no points"]
    if len(reasons) == len(groups) and len({r for _, r in reasons}) == 1:
        return [f"cannot judge {path}: {reasons[0][1]} (every group)"]
    return [f"cannot judge {path}: {label}: {reason}" for label, reason in reasons]


def _controllers(args: argparse.Namespace) -> int:
    import json

    from .controllers import score_points
    from .controllers_text import json_scores, text_report

    results = load_all(args.results)
    scored = [(res, score_points(res.points)) for res in results]
    for res, groups in scored:
        if len(results) > 1:
            print(f"=== {res.path}")
        sys.stdout.write(text_report(groups))
    if args.json:
        _write_atomically(args.json, json.dumps(json_scores([(str(r.path), g) for r, g in scored]), indent=1) + "\n")
    if args.charts:
        from .charts_controllers import write_controller_charts

        for path in write_controller_charts(results, args.charts):
            print(path)
    lines = [line for res, groups in scored for line in _unjudged_lines(res.path, groups)]
    for line in lines:
        print(f"iocpbench-controllers: {_one_line(line)}", file=sys.stderr)
    return EXIT_INCONCLUSIVE if lines else EXIT_OK


def controllers_main(argv: Sequence[str] | None = None) -> int:
    return _guarded("iocpbench-controllers", controllers_parser(), _controllers, argv)


# ---------------------------------------------------------------- iocpbench-fidelity

def fidelity_parser() -> argparse.ArgumentParser:
    p = _parser(
        "iocpbench-fidelity",
        "Whether each point of a results file got the blocking ratio it asked for (docs/targets.md F1): "
        "per point (per ratio of a blocking profile) the requested ratio beside the medians over its runs "
        "of the achieved ratio (runnable wait included) and the blocked-only ratio (excluded), the blocks' "
        "mean overshoot and target, and the sleeps woken over 1 ms late; then the worst |achieved - "
        "requested| over the points whose pool fits the CPUs, the worst |blocked-only - requested| over "
        "every point, each against the 0.03 tolerance, and the points whose blocks overshoot by more than "
        "max(5%, 2 us). It reports; it does not gate.",
        "Exit status:\n"
        "  0  reported (whether the targets were met is in the text and the JSON)\n"
        "  2  bad input (an unreadable file, not a results file, an unwritable output)\n\n"
        "example: iocpbench-fidelity out/results.json --json out/fidelity.json\n"
        "bench/blocking_fidelity.py runs a sweep first and reports it the same way.",
    )
    p.add_argument("results", nargs="+", metavar="RESULTS", help="results JSON files (schema_version 1)")
    p.add_argument("--json", type=Path, metavar="OUT", help="also write the rows and the worst deviations as JSON")
    return p


def _fidelity(args: argparse.Namespace) -> int:
    import dataclasses
    import json

    from .fidelity import file_rows, worst
    from .fidelity_text import fidelity_report

    results = load_all(args.results)
    out = []
    for res in results:
        if len(results) > 1:
            print(f"=== {res.path}")
        sys.stdout.write(fidelity_report(res.data))
        rows = file_rows(res.data)
        out.append({"path": str(res.path), "rows": [dataclasses.asdict(r) for r in rows],
                    "worst_achieved_pool_fits": dataclasses.asdict(worst(rows, "achieved", only_fitting=True)),
                    "worst_blocked_only": dataclasses.asdict(worst(rows, "blocked_only", only_fitting=False)),
                    "overshooting": [r.point_id for r in rows if r.overshoots()]})
    if args.json:
        _write_atomically(args.json, json.dumps(out, indent=1) + "\n")
    return EXIT_OK


def fidelity_main(argv: Sequence[str] | None = None) -> int:
    return _guarded("iocpbench-fidelity", fidelity_parser(), _fidelity, argv)


def ab_main(argv: Sequence[str] | None = None) -> int:
    from .ab import main

    return main(argv)


TOOLS: dict[str, Callable[[Sequence[str] | None], int]] = {
    "charts": charts_main,
    "report": report_main,
    "compare": compare_main,
    "answer": answer_main,
    "ab": ab_main,
    "controllers": controllers_main,
    "fidelity": fidelity_main,
}
