#!/usr/bin/env bash
# The README's main command: installs what is missing, builds, then
# partitions a bundled model (default: T5-3B at FTPipe's shapes) for a
# hardware preset (default: FTPipe's testbed, 8 x RTX 2080 Ti over PCIe) and
# prints the partition report.
#
#   scripts/run-main.sh [MODEL] [HARDWARE]
#
# MODEL is a bundled name (ftpipe-model-gen --list-models) or a config.json;
# HARDWARE a preset name or a cluster JSON file. Outputs go to build/main/.
# SYNC_SCHEDULE=zb-auto (or gpipe, 1f1b, zb-h1) picks, among the candidate
# plans, the one with the shortest simulated step under that synchronous
# schedule (ftpipe-auto-partition's sync-schedule, docs/Partition.md); the
# default, none, keeps FTPipe's choice by the async time.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

model="${1:-t5-3b}"
hardware="${2:-rtx2080ti-pcie-x8}"
# FTPipe's own configs fine-tune T5 with Adafactor and BERT/GPT-2 with Adam(W)
# (docs/FineTuningSetup.md); OPTIMIZER overrides.
case "$(basename "$model")" in
  t5* | flan-t5*) optimizer="${OPTIMIZER:-adafactor}" ;;
  *) optimizer="${OPTIMIZER:-adam}" ;;
esac

ftpipe_install_deps
ftpipe_build --target ftpipe-opt ftpipe-model-gen

out="$FTPIPE_BUILD_DIR/main"
mkdir -p "$out"
name="$(basename "${model%.json}")"
echo "== generating $model"
"$FTPIPE_BUILD_DIR/bin/ftpipe-model-gen" "$model" -o "$out/$name.mlir"
echo "== partitioning for $hardware"
"$FTPIPE_BUILD_DIR/bin/ftpipe-opt" "$out/$name.mlir" \
  --ftpipe-annotate-costs="hardware=$hardware" \
  --ftpipe-auto-partition="optimizer=$optimizer sync-schedule=${SYNC_SCHEDULE:-none}" \
  --ftpipe-report="optimizer=$optimizer json=$out/$name.report.json trace=$out/$name.trace.json dot=$out/$name.stages.dot" \
  --mlir-print-debuginfo -o "$out/$name.partitioned.mlir"
echo "== written: $out/$name.partitioned.mlir (partitioned IR),"
echo "   $name.report.json, $name.trace.json (chrome://tracing or ui.perfetto.dev),"
echo "   $name.stages.dot (dot -Tsvg)"
