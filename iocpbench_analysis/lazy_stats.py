"""scipy.stats, imported where it is first used: importing it is about two thirds of a
command's start (0.33 s of 0.46 s on the 2-CPU development VM), and `--help`, a bad flag or an
unreadable file never needs it."""
from __future__ import annotations

import importlib
from typing import Any


class _SciPyStats:
    """Stands for the module `scipy.stats`: `sps.t.ppf(...)` imports it on first use."""

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("scipy.stats"), name)


sps = _SciPyStats()
