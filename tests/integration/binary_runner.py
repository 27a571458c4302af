"""What the integration tests share besides fixtures: the repository root and running the
iocpbench binary with a timeout. A module of its own, not conftest.py: pytest imports every
test folder's conftest.py under the one name `conftest`, so `from conftest import ...` would
get whichever folder's was collected last."""
from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(binary: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=timeout)
