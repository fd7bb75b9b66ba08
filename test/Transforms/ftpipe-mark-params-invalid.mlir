// RUN: ftpipe-opt %s --split-input-file --ftpipe-mark-params="inputs=3" --verify-diagnostics

// Tests that an input index past the last argument is an error.
// expected-error @+1 {{input index 3 is out of range: '@two' has 2 arguments}}
func.func @two(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  return
}
