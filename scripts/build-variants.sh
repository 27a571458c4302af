#!/usr/bin/env bash
# Configures and builds the given presets one after another (scripts/test.sh runs it in the
# background at the lowest CPU priority while tests run). Each preset's output goes to
# build/logs/PRESET.log and its exit status to build/logs/PRESET.rc, written last, so a reader
# that sees the .rc file knows the build is over. Stops at the first failure.
# Usage: scripts/build-variants.sh PRESET...
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/logs
for preset in "$@"; do
  { cmake --preset "$preset" && cmake --build --preset "$preset"; } > "build/logs/$preset.log" 2>&1
  rc=$?
  echo "$rc" > "build/logs/$preset.rc"
  ((rc == 0)) || exit "$rc"
done
