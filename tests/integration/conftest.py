"""The integration tests drive the real iocpbench binary (IOCPBENCH_BIN, default the Release build)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def binary() -> Path:
    path = Path(os.environ.get("IOCPBENCH_BIN", ROOT / "build/release/harness/iocpbench"))
    if not path.exists():
        pytest.fail(f"{path} not built: run cmake --workflow --preset release first")
    return path


def run(binary: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=timeout)
