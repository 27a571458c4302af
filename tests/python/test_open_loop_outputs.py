"""Open-loop charts and report on a real open-loop file (fixtures/open_loop.json: post, c=N,
pools N and 2N+2, b=0 and 0.5, loads 0.3/0.6/0.9, 3 runs; measured on a busy machine, so
the tests read its shape, not its numbers)."""

from __future__ import annotations

import re
from pathlib import Path

from synthetic import FIXTURES, make_results, run_tool, write_json

from iocpbench_analysis import grid
from iocpbench_analysis.load import load_results

OPEN_LOOP = FIXTURES / "open_loop.json"
CLOSED_LOOP = FIXTURES / "run_a.json"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
KINDS = ("latency-vs-load", "switches-vs-load")


def test_charts_of_an_open_loop_file(tmp_path: Path) -> None:
    out = tmp_path / "charts"
    proc = run_tool("charts", OPEN_LOOP, CLOSED_LOOP, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    (fam,) = grid.families(load_results(OPEN_LOOP).points)
    assert fam.open_loop and fam.slug == "post-emulated-w100-sleep-open-poisson"
    # Only the open-loop charts: the closed-loop ones do not apply (and say nothing).
    assert sorted(p.name for p in out.glob("open_loop-*")) == sorted(
        f"open_loop-{fam.slug}-{kind}.{fmt}" for kind in KINDS for fmt in ("png", "svg"))
    for kind in KINDS:
        png = out / f"open_loop-{fam.slug}-{kind}.png"
        assert png.read_bytes()[:8] == PNG_MAGIC and png.stat().st_size > 5_000
        svg = (out / f"open_loop-{fam.slug}-{kind}.svg").read_text(encoding="utf-8")
        assert "<svg" in svg
    assert "open_loop" not in proc.stderr
    # A closed-loop file gets none of them.
    run_a = list(out.glob("run_a-*"))
    assert run_a and not [p for p in run_a if any(k in p.name for k in KINDS)]


def test_report_of_an_open_loop_file(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    proc = run_tool("report", OPEN_LOOP, "-o", out)
    assert proc.returncode == 0, proc.stderr
    page = out.read_text(encoding="utf-8")
    assert len(re.findall(r'src="data:image/png;base64,', page)) == 2
    opening = page[page.index("<h2>The answer</h2>"):page.index("<h3>Machine</h3>")]
    assert "Which setting at the load it carries (open loop)" in opening
    assert "<tr><th>load</th><td>0.3, 0.6, 0.9</td></tr><tr><th>arrivals</th><td>poisson</td></tr>" in page
    assert opening.count("<li>Blocking ratio ") == 2
    assert "Generator-bound runs are left out of that median" in opening
    # The table: one row per setting and load (2 settings x 2 ratios x 3 loads), with flags.
    table = page[page.index("<h4>Open loop: latency at offered load</h4>"):]
    for head in ("offered ops/s", "achieved ops/s", "response p50 us", "response p99 us", "response p99.9 us",
                 "service p99 us", "generator lag p99 us", "cs / completion", "flags"):
        assert f"<th>{head}</th>" in table, head
    assert table.count("<tr>") == 1 + 2 * 2 * 3
    assert re.search(r'<td class="off" title="over capacity: [^"]+">over capacity \(\d/3\)', table)
    assert re.search(r'title="[^"]*generator-bound: [^"]+">[^<]*generator-bound \(\d/3\)', table)
    knees = re.findall(r"<li>(c=N \(2\) pool=[^<]+)</li>", table)
    assert len(knees) == 4 and all("knee at load" in k or "no knee up to load" in k for k in knees)
    assert "The latency answer:" in table
    # The closed-loop table and answer are not drawn for open-loop points.
    assert "throughput ops/s median [bootstrap 95% CI]" not in page
    assert "<h3>Which setting: " not in page


def test_closed_loop_report_has_no_open_loop_parts(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert run_tool("report", write_json(tmp_path / "c.json", make_results()), "-o", out).returncode == 0
    page = out.read_text(encoding="utf-8")
    assert "open loop" not in page.lower() and "<h3>Which setting: c.json on host-a</h3>" in page
