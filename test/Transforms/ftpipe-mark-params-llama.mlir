// REQUIRES: shared-models
// RUN: ftpipe-opt %shared/models/external/llama2-7b-forward.mlir --ftpipe-mark-params | FileCheck %s

// Tests the pass on foreign IR: the LLaMA-2-7B forward written by others.
// Its only non-float argument is the token ids (%arg1, i64).

// CHECK: func.func @subgraph0(%arg0: tensor<32000x4096xf32> {ftpipe.name = "arg0", ftpipe.param}, %arg1: tensor<1x40xi64>, %arg2: tensor<4096xf32> {ftpipe.name = "arg2", ftpipe.param}
