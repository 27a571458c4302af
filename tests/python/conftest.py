"""pytest setup for the analysis tests.

The synthetic test inputs (a template results dict, bad-input files, the console-script
runner) live in synthetic.py beside this file, because pytest advises against importing
conftest.py from tests. Put this folder on sys.path so `import synthetic` works under any
--import-mode.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
