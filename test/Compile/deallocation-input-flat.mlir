// Guards the deallocation pipeline's time without measuring it: a GPT-2 of
// 6 and of 10 layers, 2 devices, no recomputation (every activation saved:
// the most buffers per stage), lowered for the CPU. Upstream's
// `buffer-deallocation-simplification` takes each result of a call to alias
// each of its operands; an entry point that called its stage function
// passed and returned every layer's weights and saved values, and its
// deallocation's alias queries grew with the cube of the layers (device 1
// of a 16-layer GPT-2: 4.9 s of the lowering's CPU, 8 layers 0.5 s). The
// buffer IR the pipeline starts from must hold no call whose buffers grow
// with the layers (ftpipe-inline-single-calls; docs/Compile.md, "Compile
// time"). Without that pass, the stage functions' calls grow.

// RUN: sed 's/LAYERS/6/' %S/Inputs/gpt2-layers.json > %t-6.json
// RUN: sed 's/LAYERS/10/' %S/Inputs/gpt2-layers.json > %t-10.json
// RUN: ftpipe-model-gen %t-6.json --loss --quiet -o %t-6.mlir
// RUN: ftpipe-model-gen %t-10.json --loss --quiet -o %t-10.mlir
// RUN: ftpipe-opt %t-6.mlir --ftpipe-stage-programs-pipeline="devices=2 method=seq-greedy recompute=false quiet=true" --ftpipe-lower-cpu --mlir-print-ir-after=ftpipe-linalg-to-blas -o /dev/null 2> %t-6.buffers.mlir
// RUN: ftpipe-opt %t-10.mlir --ftpipe-stage-programs-pipeline="devices=2 method=seq-greedy recompute=false quiet=true" --ftpipe-lower-cpu --mlir-print-ir-after=ftpipe-linalg-to-blas -o /dev/null 2> %t-10.buffers.mlir
// RUN: %python %S/Inputs/call-operands.py %t-6.buffers.mlir %t-10.buffers.mlir | FileCheck %s

// CHECK: shallow: calls of defined functions [[N:[0-9]+]], most memref operands [[OPS:[0-9]+]], most memref results [[RES:[0-9]+]]
// CHECK-NEXT: deep: calls of defined functions [[N]], most memref operands [[OPS]], most memref results [[RES]]
// CHECK-NEXT: calls flat in the layers
