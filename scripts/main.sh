#!/usr/bin/env bash
# The main job: install what is missing, build, and run iocpbench on this machine.
# Writes everything under out/ (override with OUT=DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-out}"
mkdir -p "$out"

scripts/setup-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release

bin=build/release/harness/iocpbench
echo "== iocpbench probe: does this port behave like an IOCP? ($out/probe.json)"
"$bin" probe --json "$out/probe.json"
echo "== machine ($out/info.json)"
"$bin" info --json "$out/info.json" >/dev/null
echo "wrote $out/probe.json $out/info.json"
