"""The layers checker (tests/layers/check_layers.py) names files the same way on every OS.

ctest's `layers` and `layers_self_test` run it on the Windows runners as well as here. Its
messages name each file relative to the checked folder's parent with forward slashes
(`harness/engine/a.cpp:1: ...`); a native Windows path (`C:\\...\\engine\\a.cpp`) would make the
self-test's expectations miss on Windows while passing on Linux. These tests feed the checker
Windows paths (PureWindowsPath) on Linux, so that mistake fails here, and run the checker's own
self-test and the real tree through its command line.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKER = ROOT / "tests" / "layers" / "check_layers.py"


@pytest.fixture(scope="module")
def layers():
    spec = importlib.util.spec_from_file_location("check_layers", CHECKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _found(layers, root) -> list[str]:
    found: list[str] = []
    for name, text in layers.SELF_TEST_CASES.items():
        found += layers.file_violations(root / name, root, text)
    return found


@pytest.mark.parametrize(
    "root",
    [
        PureWindowsPath(r"C:\Users\runneradmin\AppData\Local\Temp\tmpab12cd\harness"),
        PureWindowsPath(r"D:\a\iocpbench\iocpbench\harness"),
        PurePosixPath("/tmp/tmpab12cd/harness"),
    ],
    ids=["windows-temp", "windows-runner", "posix"],
)
def test_layers_messages_name_files_with_forward_slashes_on_every_os(layers, root) -> None:
    found = _found(layers, root)
    missing, extra = layers.compare(found, layers.SELF_TEST_EXPECTED)
    assert not missing and not extra, f"missing {missing}, extra {extra}, found {found}"
    for line in found:
        name = line.split(":", 1)[0]
        assert "\\" not in line and name.startswith("harness/"), line


def test_layers_where_is_relative_and_posix(layers) -> None:
    root = PureWindowsPath(r"C:\src\harness")
    assert layers.where(root / "engine" / "pool.cpp", root) == "harness/engine/pool.cpp"
    assert layers.where(PurePosixPath("/src/harness/io/a.hpp"), PurePosixPath("/src/harness")) == \
        "harness/io/a.hpp"


def test_layers_self_test_and_the_tree_through_the_command_line(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, str(CHECKER), "--self-test"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 of 5 found, 0 wrong" in result.stdout
    # From another working directory, with a relative root: still repository-relative names.
    bad = tmp_path / "harness" / "engine"
    bad.mkdir(parents=True)
    (bad / "x.cpp").write_text('#include "cli/commands.hpp"\n')
    result = subprocess.run([sys.executable, str(CHECKER), "harness"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.startswith("harness/engine/x.cpp:1: engine/ includes cli/"), result.stdout
    result = subprocess.run([sys.executable, str(CHECKER)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
