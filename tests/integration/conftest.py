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


# A time bound on every test (R7), beside each subprocess's own timeout: a test that hangs
# anywhere (a pipe read, a wait) fails with this message instead of stalling the suite.
TEST_BOUND_S = 600


@pytest.fixture(autouse=True)
def _time_bound(request):
    import signal

    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def expired(signum, frame):
        raise TimeoutError(f"{request.node.nodeid} ran past its {TEST_BOUND_S} s bound")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(TEST_BOUND_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
