#!/usr/bin/env bash
# The benchmark command: builds the benchmark programs, then prints the
# partitioning of BERT-large, GPT2-XL, T5-3B and the external LLaMA-2-7B on
# the default hardware (8 x RTX 2080 Ti) with every method, and Mixed-Pipe's
# scaling on random graphs of 1k to 100k ops with the fitted growth exponent.
#
#   bench/run.sh [HARDWARE]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"

ftpipe_install_deps
ftpipe_build --target ftpipe-bench-models ftpipe-bench-scaling
"$FTPIPE_BUILD_DIR/bin/ftpipe-bench-models" --hardware="${1:-rtx2080ti-pcie-x8}"
echo
"$FTPIPE_BUILD_DIR/bin/ftpipe-bench-scaling" layered
