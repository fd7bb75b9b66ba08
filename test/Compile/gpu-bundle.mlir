// The bundle for a lent GPU (scripts/build-gpu-bundle.sh, docs/GPU.md), cut
// to the tiny BERT without the reference results, and the dry mode of
// scripts/gpu-check.sh on it: the files are there, the size is under 64 MiB,
// and every library the bundle loads, under ldd in a clean environment, is in
// its lib/ or is a system library or cuBLAS 13; the unit tests that need a
// GPU run from the bundle and say they were skipped, not passed. Then a
// bundle that lacks the CUDA runtime is refused. No GPU needed. (The full bundle takes minutes:
// docs/GPU.md; it is not built here.)
// REQUIRES: cuda

// RUN: rm -rf %t %t.out
// RUN: bash %ftpipe_src_root/scripts/build-gpu-bundle.sh -B %ftpipe_obj_root --models bert-tiny --no-bert-large --no-two-devices --no-reference -o %t | FileCheck %s --check-prefix=BUILD
// BUILD: build-gpu-bundle: bert-tiny in {{[0-9]+}} s
// BUILD: build-gpu-bundle: {{.*}}, {{[0-9]+}} bytes, {{[0-9]+}} s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/BUNDLE.json
// MANIFEST: "models": [
// MANIFEST-NEXT: "bert-tiny"
// MANIFEST: "expected": false

// RUN: env OUT=%t.out bash %t/gpu-check.sh --dry | FileCheck %s --check-prefix=DRY
// DRY: gpu-check: bundle {{.*}}: bert-tiny
// DRY-NOT: FAIL
// DRY: gpu-check: bundle size {{[0-9]+}} bytes (limit 67108864)
// DRY: gpu-check: bundle self-contained
// DRY: gpu-check: FTPipeDeviceTests: device optimizers vs PyTorch {{ *}}skipped {{ *}}2 skipped, 0 passed: no CUDA device
// DRY: gpu-check: dry mode: on a GPU this would run
// DRY: tests/FTPipeDeviceTests: the device optimizers
// DRY: run_cuda_artifacts.py models/bert-tiny
// DRY: 10 GPipe / 1F1B training steps: not run (no model has train/
// DRY: gpu-check: dry run ok
// RUN: FileCheck %s --check-prefix=DRY < %t.out/gpu-check.log

// Without its CUDA runtime the bundle is not self-contained.
// RUN: rm %t/lib/libcudart.so.*
// RUN: env OUT=%t.out not bash %t/gpu-check.sh --dry | FileCheck %s --check-prefix=BROKEN
// BROKEN: gpu-check: FAIL: lib/libcudart.so.* is missing
// BROKEN: gpu-check: FAIL: {{.*}}.so needs libcudart.so.13 ({{.*}}), neither in the bundle nor allowed
// BROKEN: gpu-check: dry run: {{[0-9]+}} failures
