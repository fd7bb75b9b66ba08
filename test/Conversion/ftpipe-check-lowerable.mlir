// RUN: ftpipe-opt %s --split-input-file --verify-diagnostics --ftpipe-check-lowerable | FileCheck %s

// A real permutation passes unchanged.
// CHECK-LABEL: func.func @valid
// CHECK: tosa.transpose
func.func @valid(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %p = "tosa.const"() {value = dense<[1, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %y = tosa.transpose %x, %p : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// tosa-to-linalg-named crashes on these two (found by the fuzz target).
func.func @huge(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %p = "tosa.const"() {value = dense<[2147483648, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{tosa.transpose: the permutation is not a permutation of the input's 2 dimensions}}
  %y = tosa.transpose %x, %p : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

func.func @negative(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %p = "tosa.const"() {value = dense<[-1, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{tosa.transpose: the permutation is not a permutation of the input's 2 dimensions}}
  %y = tosa.transpose %x, %p : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}
