#!/usr/bin/env bash
# The README's test command: installs what is missing, builds everything and
# runs every test (lit + GoogleTest) through CTest. Exits non-zero on failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ftpipe_install_deps
ftpipe_build
# Test-only: PyTorch + HF transformers for test/Reference (skipped, with the
# reason, when PyPI cannot be reached); the build above never needs it.
bash "$FTPIPE_ROOT/scripts/setup-reference-env.sh" "$FTPIPE_BUILD_DIR/.venv-ref"
echo "== running the tests"
ctest --test-dir "$FTPIPE_BUILD_DIR" --output-on-failure -j "$(nproc)"
