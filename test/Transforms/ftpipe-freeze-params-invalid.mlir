// RUN: ftpipe-opt %s --split-input-file --ftpipe-freeze-params="regex=^encoder\." --verify-diagnostics
// RUN: not ftpipe-opt %s --split-input-file --ftpipe-freeze-params="names=layer.0.w,layer.9.w" 2>&1 | FileCheck %s --check-prefix=NAMES
// RUN: not ftpipe-opt %s --split-input-file --ftpipe-freeze-params="regex=(" 2>&1 | FileCheck %s --check-prefix=BAD

// Tests that a regex matching no parameter is an error naming the regex, a
// listed name that is no parameter an error naming it, and a malformed regex
// an error naming it: a typo must not silently train everything.

// expected-error @+1 {{freeze regex '^encoder\.' matches no parameter of '@model'}}
func.func @model(%w0: tensor<4x4xf32> {ftpipe.param, ftpipe.name = "layer.0.w"},
                 %x: tensor<1x4xf32>) {
  return
}
// NAMES: cannot freeze 'layer.9.w': '@model' has no parameter of that name
// BAD: invalid freeze regex '(':

// -----

// Tests that only a parameter can be frozen.

// expected-error @+1 {{'ftpipe.frozen' on argument 0 that is not a 'ftpipe.param'}}
func.func @data(%x: tensor<1x4xf32> {ftpipe.frozen}) {
  return
}
