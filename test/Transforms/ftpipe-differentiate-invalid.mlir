// RUN: ftpipe-opt %s --split-input-file --verify-diagnostics --ftpipe-differentiate

// Tests that an active op without a rule is an error at the op that names it.

func.func @no_rule(%w: tensor<4xf32> {ftpipe.name = "w", ftpipe.param}) -> tensor<1xf32> {
  // expected-error @+1 {{no reverse-mode rule for 'tosa.floor': attach a ReverseModeOpInterface model to differentiate it}}
  %f = tosa.floor %w : (tensor<4xf32>) -> tensor<4xf32>
  %s = tosa.reduce_sum %f {axis = 0 : i32} : (tensor<4xf32>) -> tensor<1xf32>
  return %s : tensor<1xf32>
}

// -----

// Tests that an integer op on the way to the loss needs no rule: only the
// float path is differentiated.

func.func @integers(%w: tensor<4xf32> {ftpipe.name = "w", ftpipe.param}, %i: tensor<4xi32>) -> tensor<1xf32> {
  %j = tosa.bitwise_not %i : (tensor<4xi32>) -> tensor<4xi32>
  %c = tosa.cast %j : (tensor<4xi32>) -> tensor<4xf32>
  %m = tosa.mul %w, %c {shift = 0 : i8} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = tosa.reduce_sum %m {axis = 0 : i32} : (tensor<4xf32>) -> tensor<1xf32>
  return %s : tensor<1xf32>
}

// -----

// Tests that a linalg body that combines the output by a product is refused.

func.func @product(%w: tensor<4xf32> {ftpipe.name = "w", ftpipe.param}) -> tensor<f32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%one : f32) outs(%e : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{no reverse-mode rule for 'linalg.generic' whose body combines the output other than by a sum or a maximum}}
  %p = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%w : tensor<4xf32>) outs(%i : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.mulf %acc, %x : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %p : tensor<f32>
}

// -----

// Tests that a recompute mode other than true, false or plan is refused.
// RUN: not ftpipe-opt %s --split-input-file --ftpipe-differentiate=recompute=maybe 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: recompute must be true, false or plan, not 'maybe'
