"""The integration tests drive the real iocpbench binary (IOCPBENCH_BIN, default the Release build)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:  # `import binary_runner` under any --import-mode
    sys.path.insert(0, HERE)

from binary_runner import ROOT  # noqa: E402


@pytest.fixture(scope="session")
def binary() -> Path:
    path = Path(os.environ.get("IOCPBENCH_BIN", ROOT / "build/release/harness/iocpbench"))
    if not path.exists():
        pytest.fail(f"{path} not built: run cmake --workflow --preset release first")
    return path


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
