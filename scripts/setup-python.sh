#!/usr/bin/env bash
# The analysis package in .venv: Debian's matplotlib/numpy/scipy through system site packages,
# installed without PyPI (there is none here). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -x .venv/bin/python ]]; then
  /usr/bin/python3 -m venv --system-site-packages .venv
fi
if [[ -f pyproject.toml ]]; then
  .venv/bin/pip install -q --no-build-isolation --no-index -e . >/dev/null
fi
