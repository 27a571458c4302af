"""iocpbench-report: one self-contained page; it renders in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from synthetic import SEMANTICS, make_results, run_tool, write_json

from iocpbench_analysis.answer import answers, fmt_switches
from iocpbench_analysis.compare import fmt_value

CHROMIUM = "/usr/bin/chromium"


def _report(tmp_path: Path) -> tuple[Path, str]:
    a = write_json(tmp_path / "laptop.json", make_results(tune=True))
    server = make_results(hostname="server", n=64)
    server["machine"].pop("probe")
    server["sweep"]["complete"] = False
    b = write_json(tmp_path / "server.json", server)
    out = tmp_path / "report.html"
    proc = run_tool("report", a, b, "-o", out)
    assert proc.returncode == 0, proc.stderr
    return out, out.read_text(encoding="utf-8")


def test_report_content(tmp_path: Path) -> None:
    _, page = _report(tmp_path)
    assert page.startswith("<!DOCTYPE html>")
    for text in ("laptop", "server", "Test CPU @ 2.0GHz", "N=64", "Port semantics probe",
                 "Tuner recommendation", "2N (= 4)", "No probe in this file", "incomplete",
                 "throughput ops/s median [bootstrap 95% CI]", "cs / 1,000 completions", "latency p99 us"):
        assert text in page, text
    for name in SEMANTICS:
        assert f"<code>{name}</code>" in page
    assert len(re.findall(r'src="data:image/png;base64,', page)) == 12  # 6 charts x 2 files
    # Self-contained: nothing is loaded from elsewhere.
    assert not re.search(r'(src|href)="(https?:)?//', page)
    assert "<script" not in page


def test_report_opens_with_the_answer(tmp_path: Path) -> None:
    _, page = _report(tmp_path)
    opening = page.index("<h2>The answer</h2>")
    assert opening < page.index("<h3>Machine</h3>")  # before anything else of either file
    answer = page[opening:page.index("<h3>Machine</h3>")]
    # One row per workload family and blocking ratio: 2 ratios for each of the 2 files.
    assert answer.count("<tr>") == 2 * (1 + 2)
    for text in ("recommended", "indistinguishable from the best", "pool N / best", "pool 2N / best",
                 "pool 2N+2 / best", "c=N (2) pool=N (2)"):
        assert text in answer, text
    # A rule of thumb: its ratio [CI] and what it costs in context switches.
    assert re.search(r"<td class=\"num\">0\.\d\d \[0\.\d\d, [01]\.\d\d\]<br><span class=\"small\">"
                     r"[\d.]+k? cs / 1,000</span></td>", answer)
    # The recommended setting and the best, each with its throughput and context switches.
    assert "<th>best</th>" in answer
    data = make_results(tune=True)
    for a in answers(data["points"]):
        for s in (a.recommended, a.best):
            assert f"{fmt_value(s.median)} ops/s, {fmt_switches(s)} cs / 1,000 completions" in answer


def test_report_escapes_file_content(tmp_path: Path) -> None:
    data = make_results()
    data["machine"]["hostname"] = "<script>alert(1)</script>"
    out = tmp_path / "r.html"
    assert run_tool("report", write_json(tmp_path / "x.json", data), "-o", out).returncode == 0
    page = out.read_text(encoding="utf-8")
    assert "<script>" not in page and "&lt;script&gt;" in page


def _screenshot(html: Path, tmp_path: Path, height: int = 2000) -> bytes:
    """A PNG of the page in headless Chromium (skips where it is not installed)."""
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip(f"{CHROMIUM} not installed: no headless browser to render the report")
    shot = tmp_path / f"{html.stem}.png"
    profile = tmp_path / f"chromium-profile-{html.stem}"
    profile.mkdir()
    proc = subprocess.run(
        [CHROMIUM if Path(CHROMIUM).exists() else "chromium", "--headless", "--no-sandbox",
         "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
         f"--screenshot={shot}", f"--window-size=1280,{height}", html.as_uri()],
        capture_output=True, text=True, timeout=60,
    )
    assert shot.exists(), proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return data


def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    html, _ = _report(tmp_path)
    data = _screenshot(html, tmp_path)
    # A blank or error page compresses to a few KB; tables and a chart make far more.
    assert len(data) > 50_000, len(data)


def test_busy_marks_and_their_legend_render_in_headless_chromium(tmp_path: Path) -> None:
    """A report of a busy file beside a one-point file: the busy mark (purple) is drawn on the
    page's opening, and the legend line that explains it is on the page."""
    from PIL import Image
    from test_whole_answer import busy_fixture

    busy, _ = busy_fixture(tmp_path)
    one = write_json(tmp_path / "one.json", make_results(conc=("N",), pools=("N",), ratios=(0.0,)))
    out = tmp_path / "busy-report.html"
    proc = run_tool("report", busy, one, "-o", out)
    assert proc.returncode == 0, proc.stderr
    page = out.read_text(encoding="utf-8")
    assert "busy.json on vm, one.json on host-a" in page and '<p class="note legend">' in page
    data = _screenshot(out, tmp_path, height=1400)
    shot = tmp_path / "shot.png"
    shot.write_bytes(data)
    with Image.open(shot) as img:
        rgb = img.convert("RGB")
        purple = sum(1 for r, g, b in rgb.getdata() if r > 130 and g < 40 and b > 130)
    assert purple > 50, purple  # the .busy mark's colour (#a000a0) is on screen
