// Guards compile time without measuring it: a GPT-2 of 6 and of 10 layers,
// 2 devices, no recomputation (the CPU default; every activation is saved,
// so the stage functions pass and return the most buffers), lowered for the
// CPU. The code that LLVM optimises (functions not `optimize_none`) must not
// grow with the layers, neither in operations nor in its largest basic
// block: instruction selection and post-RA scheduling grow faster than a
// block's size, and each distinct layer's code is to be compiled once
// (ftpipe-outline-layers). What grows, the descriptors of every layer's
// weights and saved values passed between the entry points, the stage
// functions and the layers, must be glue that LLVM compiles as it is
// (ftpipe-plain-glue). Without that glue marked, the stage functions' blocks
// grew with the layers (docs/Compile.md, "Compile time").

// RUN: sed 's/LAYERS/6/' %S/Inputs/gpt2-layers.json > %t-6.json
// RUN: sed 's/LAYERS/10/' %S/Inputs/gpt2-layers.json > %t-10.json
// RUN: ftpipe-model-gen %t-6.json --loss --quiet -o %t-6.mlir
// RUN: ftpipe-model-gen %t-10.json --loss --quiet -o %t-10.mlir
// RUN: ftpipe-opt %t-6.mlir --ftpipe-stage-programs-pipeline="devices=2 method=seq-greedy recompute=false quiet=true" --ftpipe-lower-cpu -o %t-6.llvm.mlir
// RUN: ftpipe-opt %t-10.mlir --ftpipe-stage-programs-pipeline="devices=2 method=seq-greedy recompute=false quiet=true" --ftpipe-lower-cpu -o %t-10.llvm.mlir
// RUN: %python %S/Inputs/llvm-code-size.py %t-6.llvm.mlir %t-10.llvm.mlir | FileCheck %s

// CHECK: shallow: functions [[N:[0-9]+]], optimised ops [[OPS:[0-9]+]], optimised largest block [[BLOCK:[0-9]+]], plain ops
// CHECK-NEXT: deep: functions [[N]], optimised ops [[OPS]], optimised largest block [[BLOCK]], plain ops
// CHECK-NEXT: optimised code flat in the layers
