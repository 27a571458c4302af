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

echo "== Python: analysis tests, and the CLI driven end to end (sweep, resume, bad input)"
IOCPBENCH_BIN=build/release/harness/iocpbench .venv/bin/python -m pytest -q tests/python tests/integration
echo "== all tests passed in $((SECONDS - start)) s"
