// RUN: ftpipe-opt %s --split-input-file --verify-diagnostics --ftpipe-split-devices

// Tests that a module that was not outlined is refused with what to run.

// expected-error @+1 {{no outlined model function: run --ftpipe-outline-stages and --ftpipe-differentiate first}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
