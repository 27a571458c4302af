#!/usr/bin/env bash
# The main job: install what is missing, build, probe this machine's port, run the quick sweep
# and chart it. Everything goes under out/ (override with OUT=DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-out}"
mkdir -p "$out"

scripts/setup-deps.sh
scripts/setup-python.sh
cmake --preset release >/dev/null
cmake --build --preset release

bin=build/release/harness/iocpbench
echo "== iocpbench probe: does this port behave like an IOCP? ($out/probe.json)"
"$bin" probe --json "$out/probe.json"
"$bin" info --json "$out/info.json" >/dev/null

echo "== iocpbench sweep --quick ($out/results.json)"
"$bin" sweep --quick --force --json "$out/results.json"  # --force: the last main job's file

echo "== charts ($out/charts/) and report ($out/report.html)"
.venv/bin/iocpbench-charts "$out/results.json" -o "$out/charts"
.venv/bin/iocpbench-report "$out/results.json" -o "$out/report.html"
echo "== which setting (the report opens with the same; a quick sweep has 2 runs a point, so wide CIs)"
.venv/bin/python -m iocpbench_analysis answer "$out/results.json"
echo "== done: $out/results.json, $out/charts/, $out/report.html"
