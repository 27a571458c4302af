#!/usr/bin/env bash
# Every test: installs what is missing, then the C++ suites (Release), the ThreadSanitizer and
# AddressSanitizer+UBSan builds, and the Python analysis tests.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

scripts/setup-deps.sh
scripts/setup-python.sh

echo "== C++ (Release): configure, build, test"
cmake --workflow --preset release

echo "== ThreadSanitizer"
cmake --workflow --preset tsan

echo "== AddressSanitizer + UndefinedBehaviorSanitizer"
cmake --workflow --preset asan

if [[ -d tests/python ]]; then
  echo "== Python analysis"
  .venv/bin/python -m pytest -q tests/python
fi
echo "== all tests passed in $((SECONDS - start)) s"
