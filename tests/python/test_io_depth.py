"""The I/O depth (requested and held) and a file point's fio and DiskSpd lines: computed from a
point (io_depth.py), shown in the report (report_io_depth.py), and files without them still
read and render."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from synthetic import make_results, run_tool, write_json

from iocpbench_analysis import io_depth
from iocpbench_analysis.match import identity

FIO = ("fio --name=iocpbench-file --filename=/tmp/iocpbench-256mib.dat --ioengine=io_uring --direct=1 "
       "--rw=randread --bs=4096 --iodepth=32 --numjobs=1 --norandommap --size=256M --time_based "
       "--runtime=1000ms --ramp_time=200ms")
DISKSPD = "diskspd.exe -b4096 -o32 -t1 -d1 -W1 -r -Su -w0 -n -L -c256M /tmp/iocpbench-256mib.dat"


def depth_block(mean: float, maximum: int, full: float) -> dict[str, Any]:
    """A run's inflight_depth of bound 32: `full` of the window at 32, the rest at 0."""
    shares = [{"depth_min": d, "depth_max": d, "time_share": 0.0} for d in range(33)]
    shares[0]["time_share"] = 1 - full
    shares[32]["time_share"] = full
    return {"requested": 32, "requested_by": "--outstanding", "counts": "an I/O", "mean": mean, "max": maximum,
            "time_share_by_depth": shares, "span_s": 0.99, "changes": 1000, "method": "integrated"}


def file_results() -> dict[str, Any]:
    data = make_results(workloads=("file",), ratios=(0.0,), conc=("N",), pools=("N", "2N"), reps=3)
    for point in data["points"]:
        point["peer_commands"] = {"fio": FIO, "diskspd": DISKSPD, "notes": ["the handler's work has no counterpart"]}
        for i, run in enumerate(point["runs"]):
            run["achieved_outstanding"] = 31.5
            run["workload_stats"] = {"inflight_depth": depth_block(10.0 + i, 20 + i, 0.1 * i)}
    return data


def test_point_depth_summarises_the_runs() -> None:
    point = file_results()["points"][0]
    depth = io_depth.point_depth(point)
    assert depth is not None
    assert (depth.requested, depth.requested_by, depth.runs) == (32, "--outstanding", 3)
    assert depth.mean == pytest.approx(11.0)  # the median of 10, 11, 12
    assert depth.max == 22
    assert depth.full_share == pytest.approx(0.1)
    assert depth.littles_law == pytest.approx(31.5)
    assert depth.unavailable_because is None


def test_points_without_the_fields_have_no_depth() -> None:
    point = make_results()["points"][0]
    assert io_depth.point_depth(point) is None
    assert io_depth.peer_commands(point) is None


def test_a_null_depth_keeps_its_reason() -> None:
    point = make_results()["points"][0]
    for run in point["runs"]:
        run["workload_stats"] = {"inflight_depth": None, "inflight_depth_unavailable_because": "no I/O"}
    depth = io_depth.point_depth(point)
    assert depth is not None and depth.mean is None and depth.unavailable_because == "no I/O"


def test_peer_commands_are_not_part_of_a_points_identity() -> None:
    point = file_results()["points"][0]
    bare = copy.deepcopy(point)
    bare.pop("peer_commands")
    assert identity(point) == identity(bare)


def test_report_shows_requested_held_and_the_peer_lines(tmp_path: Path) -> None:
    path = write_json(tmp_path / "file.json", file_results())
    out = tmp_path / "report.html"
    proc = run_tool("report", path, "-o", out)
    assert proc.returncode == 0, proc.stderr
    page = out.read_text(encoding="utf-8")
    table = page[page.index("I/O depth: requested and held"):]
    table = table[:table.index("</table>")]
    assert table.count("<tr>") == 1 + 2  # the head and both points
    assert "32 (--outstanding)" in table
    assert '<td class="num">11</td>' in table
    assert '<td class="num">22</td>' in table
    assert "10.0%" in table
    assert FIO in page and DISKSPD in page
    assert "the handler&#x27;s work has no counterpart" in page


def test_report_of_a_file_without_the_fields(tmp_path: Path) -> None:
    path = write_json(tmp_path / "old.json", make_results(workloads=("post", "file")))
    out = tmp_path / "report.html"
    proc = run_tool("report", path, "-o", out)
    assert proc.returncode == 0, proc.stderr
    page = out.read_text(encoding="utf-8")
    assert "I/O depth" not in page and "fio --name" not in page
