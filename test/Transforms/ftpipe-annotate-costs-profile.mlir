// RUN: ftpipe-opt %s --verify-diagnostics \
// RUN:   --ftpipe-annotate-costs="hardware=%S/Inputs/slow-pair.json profile=%S/Inputs/profile.json" \
// RUN:   | FileCheck %s

// Tests that a measured profile (Inputs/profile.json) replaces the times of the ops in its scopes,
// shared in proportion to the analytical times, and leaves the others alone.

// expected-warning @+1 {{profile scope 'Model/Missing' matches no op}}
module {
// CHECK-LABEL: func.func @profiled
func.func @profiled(%w: tensor<64x64xf32> {ftpipe.param}, %x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // CHECK: tosa.tanh {{.*}}fwd_ms = 1.0, bwd_ms = 4.0,
  %a = tosa.tanh %w : (tensor<64x64xf32>) -> tensor<64x64xf32> loc("Model/Block[0]")
  // CHECK: tosa.tanh {{.*}}fwd_ms = 1.0, bwd_ms = 4.0,
  %b = tosa.tanh %a : (tensor<64x64xf32>) -> tensor<64x64xf32> loc("Model/Block[0]")
  // CHECK: tosa.add {{.*}}fwd_ms = 0.049152, bwd_ms = 0.032768,
  %c = tosa.add %b, %x : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("Model/Head")
  return %c : tensor<64x64xf32>
}
}
