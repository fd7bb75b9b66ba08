#!/usr/bin/env bash
# Sets up the test-only reference environment: a Python virtual environment
# with PyTorch (run on the CPU), Hugging Face transformers, safetensors and
# torch-mlir, pinned in scripts/reference-requirements.txt. The lit tests in
# test/Reference use it; they are reported UNSUPPORTED, with the reason, when
# it is missing. The C++ build never depends on it.
#
#   scripts/setup-reference-env.sh [VENV]    (default: $FTPIPE_BUILD_DIR/.venv-ref)
#
# Never fails the caller: when PyPI cannot be reached (or the install fails)
# it writes the reason to VENV.unavailable, which the tests print. Set
# FTPIPE_REFERENCE_ENV=off to skip it on purpose. A venv whose stamp matches
# the requirements file is reused as it is. The first set-up downloads 3.1 GB
# (PyPI's torch wheel pulls the CUDA libraries) and takes about a minute with
# uv, 5-9 minutes with pip.
set -uo pipefail

FTPIPE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FTPIPE_BUILD_DIR="${FTPIPE_BUILD_DIR:-$FTPIPE_ROOT/build}"
VENV="${1:-$FTPIPE_BUILD_DIR/.venv-ref}"
REQUIREMENTS="$FTPIPE_ROOT/scripts/reference-requirements.txt"
UNAVAILABLE="$VENV.unavailable"
IMPORTS="import torch, transformers, safetensors, numpy"
UV_VERSION=0.13.9

unavailable() {
  echo "== reference environment unavailable: $1"
  mkdir -p "$(dirname "$VENV")"
  echo "$1" >"$UNAVAILABLE"
  exit 0
}

if [[ "${FTPIPE_REFERENCE_ENV:-on}" == "off" ]]; then
  unavailable "FTPIPE_REFERENCE_ENV=off"
fi

stamp="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
if [[ -f "$VENV/ftpipe-stamp" && "$(cat "$VENV/ftpipe-stamp")" == "$stamp" ]] &&
    "$VENV/bin/python" -c "$IMPORTS" 2>/dev/null; then
  echo "== reference environment: $VENV (up to date)"
  rm -f "$UNAVAILABLE"
  exit 0
fi

# Debian's python3 (the one python3-venv is for) when there is one.
base_python=/usr/bin/python3
[[ -x "$base_python" ]] || base_python="$(command -v python3 || true)"
[[ -n "$base_python" ]] || unavailable "no python3"
if ! "$base_python" -c "import ensurepip, venv" 2>/dev/null; then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  echo "== installing python3-venv"
  { $sudo apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
      --no-install-recommends python3-venv; } >/dev/null 2>&1 ||
    unavailable "python3-venv could not be installed"
fi

echo "== setting up the reference environment in $VENV (one-time, 3.1 GB from PyPI)"
start=$SECONDS
rm -rf "$VENV" "$UNAVAILABLE"
mkdir -p "$(dirname "$VENV")"
log="$VENV.log"
# Made in place: a venv's scripts hold its absolute path. No stamp until the
# end, so a half-made venv is made again next time.
if ! "$base_python" -m venv "$VENV" >"$log" 2>&1; then
  rm -rf "$VENV"
  unavailable "python3 -m venv failed (see $log)"
fi
# uv (from PyPI) downloads and unpacks in parallel: 45 s instead of pip's
# 4.5-8.5 min for these 3 GB. pip does it when uv cannot be had.
install() {
  if "$VENV/bin/python" -m pip install --disable-pip-version-check -q \
      --timeout 30 "uv==$UV_VERSION" >>"$log" 2>&1; then
    timeout 1800 "$VENV/bin/python" -m uv pip install --no-cache \
      --python "$VENV/bin/python" -r "$REQUIREMENTS" >>"$log" 2>&1 && return
    echo "uv failed; trying pip" >>"$log"
  fi
  timeout 1800 "$VENV/bin/python" -m pip install --no-cache-dir \
    --progress-bar off --disable-pip-version-check --timeout 30 \
    -r "$REQUIREMENTS" >>"$log" 2>&1
}
if ! install; then
  reason="$(grep -E "^(ERROR|error:|WARNING: Retrying)" "$log" | tail -n 1)"
  rm -rf "$VENV"
  unavailable "installing scripts/reference-requirements.txt failed: ${reason:-see $log}"
fi
if ! "$VENV/bin/python" -c "$IMPORTS" >>"$log" 2>&1; then
  reason="$(tail -n 1 "$log")"
  rm -rf "$VENV"
  unavailable "the installed packages do not import: $reason"
fi
echo "$stamp" >"$VENV/ftpipe-stamp"
echo "== reference environment ready in $((SECONDS - start)) s ($(du -sh "$VENV" | cut -f1))"
