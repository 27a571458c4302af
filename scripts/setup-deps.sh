#!/usr/bin/env bash
# Installs the Debian packages iocpbench needs, only those missing. Idempotent, non-interactive.
# Usage: scripts/setup-deps.sh [--windows]   (--windows adds MinGW-w64 and Wine)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libbenchmark-dev libgtest-dev nlohmann-json3-dev libcli11-dev liburing-dev libboost-dev
  fio
  python3 python3-venv python3-setuptools python3-pip python3-matplotlib python3-numpy
  python3-scipy python3-pytest python3-jsonschema python3-yaml
  chromium
)
if [[ "${1:-}" == "--windows" ]]; then
  packages+=(g++-mingw-w64-x86-64-posix wine wine64)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "setup-deps: installing ${missing[*]}" >&2
sudo_cmd=()
[[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
