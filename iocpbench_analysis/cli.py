"""Console scripts: iocpbench-charts, iocpbench-report, iocpbench-compare.

Exit status follows the harness's contract: 0 success, 1 a regression or a new file that is not
a whole run (compare only), 2 bad input, 130 interrupted. Bad input is reported as one line on stderr, never a
traceback (set IOCPBENCH_DEBUG=1 to get one for an unexpected error).
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path

from . import __version__
from .load import InputError, load_all, load_results
from .metrics import DEFAULT_METRIC, METRICS

EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130

Main = Callable[[argparse.Namespace], int]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _guarded(prog: str, parser: argparse.ArgumentParser, body: Main, argv: Sequence[str] | None) -> int:
    args = parser.parse_args(argv)  # argparse itself exits 2 with usage on a bad flag
    try:
        return body(args)
    except InputError as err:
        print(f"{prog}: error: {_one_line(str(err))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `iocpbench-compare ... | head`: the reader left; not an error of ours. Point stdout
        # at devnull so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except OSError as err:  # output paths: unwritable directory, full disk
        where = f" {err.filename}" if err.filename else ""
        print(f"{prog}: error: cannot write{where}: {err.strerror or err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as err:
        if os.environ.get("IOCPBENCH_DEBUG"):
            raise
        print(f"{prog}: error: unexpected {type(err).__name__}: {_one_line(str(err))} "
              "(set IOCPBENCH_DEBUG=1 for a traceback)", file=sys.stderr)
        return EXIT_BAD_INPUT


def _parser(prog: str, description: str, epilog: str) -> argparse.ArgumentParser:
    # The description is wrapped here, the epilog kept as written (it holds examples).
    p = argparse.ArgumentParser(prog=prog, description=textwrap.fill(description, 88), epilog=epilog,
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
        "switches per 1,000 completions vs pool size, latency percentiles, the LIFO "
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


def compare_parser() -> argparse.ArgumentParser:
    from .compare import DEFAULT_ALPHA, DEFAULT_FAIL_ABOVE

    p = _parser(
        "iocpbench-compare",
        "Compare iocpbench results and gate on them: points of BASE and each NEW file are matched "
        "by their specs (workload and its parameters, port, concurrency and pool specs such as 2N+2, "
        "blocking ratio and kind, work per completion), so machines with different CPU counts line "
        "up. Per point: the NEW/BASE ratio of geometric means with its 95% CI and an exact "
        "permutation p-value. The gate (docs/verdicts.md): a point regresses when its simultaneous "
        "bound (Bonferroni over the points, family false-alarm rate --alpha) is beyond --fail-above; "
        "the comparison regresses when the geometric mean ratio's 95% CI is. A NEW file must be a "
        "whole run: complete, no run with errors or undrained, every BASE point present. Points whose "
        "blocking ratio missed its tolerance are left out and named. Prints a Markdown table (one "
        "column per NEW file), ready for $GITHUB_STEP_SUMMARY.",
        "Exit status: 0 no regression; 1 a regression, or a NEW file that is incomplete, has runs\n"
        "with errors or undrained runs, or lacks points of BASE (one line on stderr says why); 2 bad\n"
        "input. Fewer than 3 runs a side at every point: a descriptive table, no verdict, exit 0.\n\n"
        "example: iocpbench-compare base.json new.json --fail-above 10 >> \"$GITHUB_STEP_SUMMARY\"",
    )
    p.add_argument("base", metavar="BASE", help="the reference results file")
    p.add_argument("new", nargs="+", metavar="NEW", help="results files to compare with BASE")
    p.add_argument("--fail-above", type=_percent, default=DEFAULT_FAIL_ABOVE, metavar="PCT",
                   help=f"the margin: a loss beyond PCT percent is a regression (default {DEFAULT_FAIL_ABOVE:g})")
    p.add_argument("--metric", choices=sorted(METRICS), default=DEFAULT_METRIC, metavar="M",
                   help=f"metric to compare (default {DEFAULT_METRIC}; higher is better for throughput, "
                        f"lower for the others): {', '.join(sorted(METRICS))}")
    p.add_argument("--alpha", type=_alpha, default=DEFAULT_ALPHA,
                   help=f"false-alarm rate of a whole comparison (default {DEFAULT_ALPHA:g})")
    p.add_argument("--allow-missing", action="store_true",
                   help="a NEW file may lack points of BASE (an intended subset); they are still listed")
    p.add_argument("--ignore-port", action="store_true",
                   help="match points across port backends (e.g. win32 on Windows vs emulated on Linux)")
    p.add_argument("--chart", type=_chart_path, metavar="FILE.png",
                   help="also draw the ratios with their CIs (format from the extension: png, svg, pdf)")
    return p


def _compare(args: argparse.Namespace) -> int:
    from .compare import compare_results, failure_lines, render_markdown

    base = load_results(args.base)
    news = load_all(args.new)
    report = compare_results(base, news, METRICS[args.metric], fail_above=args.fail_above,
                             alpha=args.alpha, ignore_port=args.ignore_port, allow_missing=args.allow_missing)
    if args.chart:
        from .charts import ratio_chart

        args.chart.parent.mkdir(parents=True, exist_ok=True)
        ratio_chart(report).savefig(args.chart, dpi=110)
    sys.stdout.write(render_markdown(report))
    sys.stdout.flush()
    for line in failure_lines(report):
        print(f"iocpbench-compare: fail: {_one_line(line)}", file=sys.stderr)
    if any(mc.rows for mc in report.machines) and not any(mc.gated_points for mc in report.machines):
        from .gate import MIN_RUNS, RECOMMENDED_RUNS

        _notes([f"too few runs a side for the gate to reach a verdict (it needs {MIN_RUNS}, its stated error "
                f"rates {RECOMMENDED_RUNS}): the table is descriptive only"], "iocpbench-compare")
    return EXIT_REGRESSION if report.has_failure else EXIT_OK


def compare_main(argv: Sequence[str] | None = None) -> int:
    return _guarded("iocpbench-compare", compare_parser(), _compare, argv)


# ---------------------------------------------------------------- python -m iocpbench_analysis answer

def answer_parser() -> argparse.ArgumentParser:
    p = _parser(
        "iocpbench-answer",
        "Print which setting to use, per workload and blocking ratio of a results file: the "
        "recommended setting (the cheapest of those indistinguishable from the best), its median "
        "throughput, how many settings are indistinguishable from the best, and the rules of thumb "
        "(pool N, 2N, 2N+2) as a ratio of the best with a 95% CI. The report opens with the same.",
        "Exit status: 0 success, 2 bad input.\n\nexample: python -m iocpbench_analysis answer out/results.json",
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


TOOLS: dict[str, Callable[[Sequence[str] | None], int]] = {
    "charts": charts_main,
    "report": report_main,
    "compare": compare_main,
    "answer": answer_main,
}
