#!/usr/bin/env bash
# Every test: installs what is missing, then the C++ suites (Release), the ThreadSanitizer,
# Windows (scripts/test-windows.sh: MinGW-w64 cross build, tests under Wine) and
# AddressSanitizer+UBSan parts, and last the Python analysis tests and the CLI end to end.
# The C++ tests leave about half of the CPUs idle (they wait on timers, sockets and settle
# windows), so once the Release build is done the other three builds run in the background at
# the lowest CPU priority (SCHED_IDLE: they get a CPU only when no test wants it) while the
# tests of each variant already built run in the foreground, in order. pytest, which keeps
# both CPUs busy and needs only the Release build, runs last, when the builds are over.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
# Each stage's heading says when it starts, so that a slow CI run says where its time went.
stage() { echo "== $* (at $((SECONDS - start)) s)"; }

scripts/setup-deps.sh --windows --sanitizers   # MinGW-w64, Wine and clang too: built below
scripts/setup-python.sh

stage "C++ (Release): configure, build"
cmake --preset release
cmake --build --preset release

stage "ThreadSanitizer, MinGW-w64 and AddressSanitizer + UBSan builds start in the background (logs: build/logs/)"
rm -f build/logs/*.rc
# Its own process group (setsid), so that an early exit stops its compilers too. In the order
# their tests run below.
setsid chrt --idle 0 scripts/build-variants.sh tsan mingw asan &
builds=$!
trap 'kill -- -"$builds" 2>/dev/null || true' EXIT

# Waits until the background build of $1 is over; on failure prints the end of its log.
wait_for_build() {
  local preset=$1
  while [[ ! -f build/logs/$preset.rc ]] && kill -0 "$builds" 2>/dev/null; do sleep 1; done
  if [[ "$(cat "build/logs/$preset.rc" 2>/dev/null)" != 0 ]]; then
    echo "== the $preset build failed (build/logs/$preset.log):" >&2
    tail -n 60 "build/logs/$preset.log" >&2
    exit 1
  fi
}

stage "C++ (Release): test"
ctest --preset release

stage "ThreadSanitizer: test"
wait_for_build tsan
ctest --preset tsan

stage "Windows: every test and each workload under Wine"
wait_for_build mingw
scripts/test-windows.sh   # configures and builds again: nothing left to do

stage "AddressSanitizer + UndefinedBehaviorSanitizer: test"
wait_for_build asan
ctest --preset asan

stage "Python: analysis tests, and the CLI driven end to end (sweep, resume, bad input)"
# Two workers (pytest-xdist): most of a test's time is a Python or iocpbench process starting,
# and no test asserts a timing or a quiet machine.
IOCPBENCH_BIN=build/release/harness/iocpbench .venv/bin/python -m pytest -q -n 2 --durations=10 tests/python tests/integration

echo "== all tests passed in $((SECONDS - start)) s"
