// RUN: ftpipe-opt %s --ftpipe-mark-params="inputs=0" --verify-diagnostics

// Tests that an argument cannot be both a listed input and a parameter.
// expected-error @+1 {{argument 0 is listed as an input but is already marked 'ftpipe.param'}}
func.func @marked(%a: tensor<4xf32> {ftpipe.param}) {
  return
}
