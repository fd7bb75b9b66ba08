// RUN: ftpipe-model-gen gpt2-tiny --loss --quiet -o %t.mlir
// RUN: ftpipe-opt %t.mlir --ftpipe-stage-programs-pipeline="devices=2 method=mixed-pipe" | FileCheck %s
// RUN: ftpipe-opt %t.mlir --ftpipe-stage-programs-pipeline="devices=3 method=seq-dp recompute=false" | FileCheck %s --check-prefix=SEQ

// Tests the one-command pipeline from model IR to per-device IR: a plan, a
// forward and a backward entry point per stage, transfers, and the tied
// embedding (wte) held by two stages, owned by one device.

// CHECK: ftpipe.plan = #ftpipe.plan<method = "mixed-pipe"
// CHECK-DAG: func.func @stage0_forward(
// CHECK-DAG: func.func @stage0_backward(
// CHECK-DAG: ftpipe.send
// CHECK-DAG: ftpipe.recv
// CHECK-DAG: {ftpipe.loss}
// CHECK-DAG: {ftpipe.grad = "transformer.wte.weight"}

// SEQ: ftpipe.plan = #ftpipe.plan<method = "seq-dp"
// SEQ-DAG: func.func @stage2_backward(
// SEQ-DAG: ftpipe.recompute = false
