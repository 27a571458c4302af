#!/usr/bin/env bash
# The analysis package in .venv: Debian's matplotlib/numpy/scipy through system site packages,
# installed without PyPI (there is none here). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -x .venv/bin/python ]]; then
  /usr/bin/python3 -m venv --system-site-packages .venv
fi
# pip reinstalls the editable package on every call (never skipped as "already installed"), so
# a .venv made before a package rename (analysis -> iocpbench_analysis) gets the new name mapped.
if [[ -f pyproject.toml ]]; then
  .venv/bin/pip install -q --no-build-isolation --no-index -e . >/dev/null
fi
