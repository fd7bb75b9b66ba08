#!/usr/bin/env bash
# Shared set-up for the README's commands: installs the Debian packages FTPipe
# needs (only those missing), then configures and builds in build/.
# Sourced by run-main.sh and run-tests.sh; honours FTPIPE_BUILD_DIR and
# FTPIPE_CMAKE_ARGS.
set -euo pipefail

FTPIPE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FTPIPE_BUILD_DIR="${FTPIPE_BUILD_DIR:-$FTPIPE_ROOT/build}"

ftpipe_install_deps() {
  local packages=(cmake ninja-build ccache g++ python3 pkg-config
    llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools
    libzstd-dev zlib1g-dev libgtest-dev libopenmpi-dev openmpi-bin libopenblas-dev)
  local missing=()
  for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
        grep -q "install ok installed"; then
      missing+=("$package")
    fi
  done
  if ((${#missing[@]} == 0)); then
    return
  fi
  echo "== installing: ${missing[*]}"
  local sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"
}

ftpipe_build() {
  echo "== configuring in $FTPIPE_BUILD_DIR"
  mkdir -p "$FTPIPE_BUILD_DIR"
  local log="$FTPIPE_BUILD_DIR/configure.log"
  # shellcheck disable=SC2086
  if ! cmake -G Ninja -S "$FTPIPE_ROOT" -B "$FTPIPE_BUILD_DIR" \
      -DCMAKE_BUILD_TYPE=Release ${FTPIPE_CMAKE_ARGS:-} >"$log" 2>&1; then
    cat "$log"
    return 1
  fi
  grep "^-- FTPipe:" "$log" || true
  echo "== building (the first build takes a few minutes on 2 cores)"
  cmake --build "$FTPIPE_BUILD_DIR" "$@"
}
