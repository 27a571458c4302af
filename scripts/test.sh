#!/usr/bin/env bash
# Every test: installs what is missing, then the C++ suites (Release), the ThreadSanitizer and
# AddressSanitizer+UBSan builds, the Python analysis tests, and the Windows part
# (scripts/test-windows.sh: MinGW-w64 cross build, tests under Wine; installs both if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
# Each stage's heading says when it starts, so that a slow CI run says where its time went.
stage() { echo "== $* (at $((SECONDS - start)) s)"; }

scripts/setup-deps.sh
scripts/setup-python.sh

stage "C++ (Release): configure, build, test"
cmake --workflow --preset release

stage "ThreadSanitizer"
cmake --workflow --preset tsan

stage "AddressSanitizer + UndefinedBehaviorSanitizer"
cmake --workflow --preset asan

stage "Python: analysis tests, and the CLI driven end to end (sweep, resume, bad input)"
# Two workers (pytest-xdist): most of a test's time is a Python or iocpbench process starting,
# and no test asserts a timing or a quiet machine.
IOCPBENCH_BIN=build/release/harness/iocpbench .venv/bin/python -m pytest -q -n 2 --durations=10 tests/python tests/integration
stage "Windows: MinGW-w64 cross build, every test and each workload under Wine"
scripts/test-windows.sh

echo "== all tests passed in $((SECONDS - start)) s"
