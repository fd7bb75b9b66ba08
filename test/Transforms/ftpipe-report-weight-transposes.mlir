// RUN: ftpipe-opt %s --split-input-file --ftpipe-annotate-costs=hardware=%S/Inputs/slow-pair.json --ftpipe-report="json=-" -o /dev/null | FileCheck %s
// RUN: ftpipe-model-gen t5-tiny --loss --quiet | ftpipe-opt --ftpipe-annotate-costs --ftpipe-mixed-pipe=devices=3 --ftpipe-report="json=-" -o /dev/null | FileCheck %s --check-prefix=T5

// Tests that the partitioners leave no folded transpose apart on t5-tiny's
// Mixed-Pipe plan for 3 devices, where moving every free weight op at once
// (layer norms' weight reshapes too) would simulate slower: the transposes'
// chains then move alone (attachFreeOps).
// T5-NOT: warning:
// T5: "weight_transposes_apart": 0,

// Tests that the report warns about a weight's transpose that the cost model
// counts as folded into its matmul (no kernel) but that the plan puts in
// another stage than that matmul: code generation copies it there, which the
// times leave out. Stage 0 holds the transpose of the 32x64 weight, stage 1
// its reshape and matmul.

// CHECK: warning: 1 weights' transposes (0.01 MiB) sit in another stage than a matmul that reads them; the cost model counts them as folded into that matmul, but code generation copies them, which the times below leave out
// CHECK: "weight_transposes_apart": 1,

module attributes {
  ftpipe.plan = #ftpipe.plan<method = "hand", stage_device = [0, 1], objective_ms = 0.0, memory_bytes = [0, 0]>
} {
  func.func @apart(%w: tensor<32x64xf32> {ftpipe.param}, %x: tensor<1x8x64xf32>) -> tensor<1x8x32xf32> {
    %perm = "tosa.const"() <{value = dense<[1, 0]> : tensor<2xi32>}> {ftpipe.stage = 0} : () -> tensor<2xi32>
    %wt = tosa.transpose %w, %perm {ftpipe.stage = 0} : (tensor<32x64xf32>, tensor<2xi32>) -> tensor<64x32xf32>
    %wt3 = tosa.reshape %wt {ftpipe.stage = 1, new_shape = array<i64: 1, 64, 32>} : (tensor<64x32xf32>) -> tensor<1x64x32xf32>
    %y = tosa.matmul %x, %wt3 {ftpipe.stage = 1} : (tensor<1x8x64xf32>, tensor<1x64x32xf32>) -> tensor<1x8x32xf32>
    return %y : tensor<1x8x32xf32>
  }
}

// -----

// With the transpose in its matmul's stage there is nothing to warn about.

// CHECK-NOT: warning:
// CHECK: "weight_transposes_apart": 0,

module attributes {
  ftpipe.plan = #ftpipe.plan<method = "hand", stage_device = [0, 1], objective_ms = 0.0, memory_bytes = [0, 0]>
} {
  func.func @together(%w: tensor<32x64xf32> {ftpipe.param}, %x: tensor<1x8x64xf32>) -> tensor<1x8x32xf32> {
    %a = tosa.abs %x {ftpipe.stage = 0} : (tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
    %perm = "tosa.const"() <{value = dense<[1, 0]> : tensor<2xi32>}> {ftpipe.stage = 1} : () -> tensor<2xi32>
    %wt = tosa.transpose %w, %perm {ftpipe.stage = 1} : (tensor<32x64xf32>, tensor<2xi32>) -> tensor<64x32xf32>
    %wt3 = tosa.reshape %wt {ftpipe.stage = 1, new_shape = array<i64: 1, 64, 32>} : (tensor<64x32xf32>) -> tensor<1x64x32xf32>
    %y = tosa.matmul %a, %wt3 {ftpipe.stage = 1} : (tensor<1x8x64xf32>, tensor<1x64x32xf32>) -> tensor<1x8x32xf32>
    return %y : tensor<1x8x32xf32>
  }
}
