#!/usr/bin/env bash
# ctest's emulator for the MinGW build (cmake/mingw-w64-x86_64.cmake): runs one Windows test
# program under Wine. Under load Wine can fail to start a process at all: it exits non-zero in
# ~10 ms having printed nothing, before the program's main() (seen once in CI, on
# InvariantChecker.CatchesAPostOverTheLimit, 0.01 s, no output). That is not a test result, so
# such a start is retried once, and said on stderr. A program that printed anything keeps its
# exit status: a test that fails is never run again.
# Usage: wine-test.sh WINE PROGRAM.exe [ARGS...]
set -u
wine=$1
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for attempt in 1 2; do
  "$wine" "$@" >"$out" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ] || [ -s "$out" ] || [ "$attempt" -eq 2 ]; then
    cat "$out"
    exit "$rc"
  fi
  echo "wine-test.sh: $(basename "$1") exited $rc with no output (Wine did not start it); starting it once more" >&2
done
