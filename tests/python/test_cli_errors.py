"""Every console script answers bad input with exit 2 and one line on stderr, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from synthetic import bad_inputs, make_results, run_tool, write_json



BRIEF_CASES = ("truncated", "corrupt", "schema_v2", "missing_points", "missing_summary_metric", "nonexistent")


def _argv(tool: str, bad: Path, good: Path, out: Path) -> list[object]:
    if tool == "charts":
        return [good, bad, "-o", out / "charts"]
    if tool == "report":
        return [good, bad, "-o", out / "r.html"]
    return [good, bad]  # compare: a bad NEW among good files; controllers: a bad file after a good one


def _check(proc, expect: str) -> None:  # type: ignore[no-untyped-def]
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert expect in lines[0], lines[0]


@pytest.mark.parametrize("tool", ["compare", "charts", "report", "controllers"])
def test_bad_inputs_exit_2_with_one_line(tool: str, tmp_path: Path) -> None:
    good = write_json(tmp_path / "good.json", make_results())
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    out = tmp_path / "out"
    cases = bad_inputs(bad_dir)
    if tool != "compare":
        # Every case goes through compare; the other tools share its loader and error path,
        # so the brief's list is enough for them (each case costs a process start).
        cases = {k: v for k, v in cases.items() if k in BRIEF_CASES}
    for name, (path, expect) in cases.items():
        proc = run_tool(tool, *_argv(tool, path, good, out))
        _check(proc, expect)
        assert proc.stdout == "", name
    # Nothing half-written: the bad file is found before any output is produced.
    assert not (out / "r.html").exists()
    assert not (out / "charts").exists()


def test_bad_base_for_compare(tmp_path: Path) -> None:
    good = write_json(tmp_path / "good.json", make_results())
    data = make_results()
    data["schema_version"] = 2
    v2 = write_json(tmp_path / "v2.json", data)
    _check(run_tool("compare", v2, good), "newer schema_version 2; this tool reads 1")


def test_bad_flags_exit_2(tmp_path: Path) -> None:
    good = write_json(tmp_path / "good.json", make_results())
    for args in (["--fail-above", "-3"], ["--fail-above", "x"], ["--metric", "nope"], ["--alpha", "2"],
                 ["--chart", "ratio.foo"], ["--max-detectable-loss", "0"], ["--max-detectable-loss", "x"]):
        proc = run_tool("compare", good, good, *args)
        assert proc.returncode == 2, args
        assert "Traceback" not in proc.stderr
    assert run_tool("charts", good).returncode == 2  # -o is required


def test_compare_refuses_another_machine_with_one_line(tmp_path: Path) -> None:
    base = write_json(tmp_path / "base.json", make_results(hostname="ci-runner"))
    other = make_results(hostname="laptop")
    other["machine"]["kernel"] = "6.8.0"
    new = write_json(tmp_path / "new.json", other)
    proc = run_tool("compare", base, new)
    _check(proc, "base and new differ in machine.hostname (ci-runner vs laptop), machine.kernel (6.1.0 vs 6.8.0)")
    assert "pass --cross-machine" in proc.stderr and proc.stdout == ""
    # The same refusal for a second NEW file that differs, after one that does not.
    proc = run_tool("compare", base, base, new)
    _check(proc, f"new {new}")


def test_unwritable_output_exits_2(tmp_path: Path) -> None:
    good = write_json(tmp_path / "good.json", make_results())
    blocker = tmp_path / "file"
    blocker.write_text("x")
    _check(run_tool("charts", good, "-o", blocker / "sub"), "cannot write")
    _check(run_tool("report", good, "-o", blocker / "r.html"), "cannot write")


@pytest.mark.parametrize("tool", ["compare", "charts", "report", "controllers"])
def test_help(tool: str) -> None:
    proc = run_tool(tool, "--help")
    assert proc.returncode == 0
    assert f"iocpbench-{tool}" in proc.stdout and "Exit status" in proc.stdout
    if tool == "compare":
        for status in ("0  PASS", "1  FAIL", "2  bad input", "3  INCONCLUSIVE", "--cross-machine",
                       "--max-detectable-loss"):
            assert status in proc.stdout, status


@pytest.mark.parametrize("tool, argv, expect", [
    ("compare", ["ONE"], "required: NEW"),
    ("compare", ["--bogus", "A", "B"], "unrecognized arguments: --bogus"),
    ("charts", [], "required"),
])
def test_a_flag_problem_is_one_line_not_a_usage_block(tool: str, argv: list[str], expect: str,
                                                       tmp_path: Path) -> None:
    good = write_json(tmp_path / "good.json", make_results())
    proc = run_tool(tool, *[good if a == "ONE" else a for a in argv])
    _check(proc, expect)
    assert "usage:" not in proc.stderr
