// RUN: ftpipe-opt %s --verify-diagnostics --ftpipe-lower-cpu

// ftpipe-lower-cpu checks first what upstream's tosa-to-linalg-named would
// crash on (ftpipe-check-lowerable): an error at the op, not a crash.
func.func @f(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %p = "tosa.const"() {value = dense<[2147483648, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{tosa.transpose: the permutation is not a permutation of the input's 2 dimensions}}
  %y = tosa.transpose %x, %p : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}
