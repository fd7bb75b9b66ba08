// RUN: ftpipe-opt %s --split-input-file --ftpipe-freeze-params="regex=^layer\.0\." | FileCheck %s
// RUN: ftpipe-opt %s --split-input-file --ftpipe-freeze-params="names=layer.1.w,head.w" | FileCheck %s --check-prefix=NAMES

// Tests that the parameters whose name matches the regex, or is listed, are
// marked frozen, and nothing else (data inputs, other parameters).

// CHECK-LABEL: func.func @model
// CHECK-SAME: {ftpipe.frozen, ftpipe.name = "layer.0.w", ftpipe.param}
// CHECK-SAME: {ftpipe.frozen, ftpipe.name = "layer.0.b", ftpipe.param}
// CHECK-SAME: %{{.*}}: tensor<4x4xf32> {ftpipe.name = "layer.1.w", ftpipe.param}
// CHECK-SAME: %{{.*}}: tensor<4x4xf32> {ftpipe.name = "head.w", ftpipe.param}
// CHECK-SAME: %{{.*}}: tensor<1x4xf32>)
// NAMES-LABEL: func.func @model
// NAMES-SAME: %{{.*}}: tensor<4x4xf32> {ftpipe.name = "layer.0.w", ftpipe.param}
// NAMES-SAME: %{{.*}}: tensor<4xf32> {ftpipe.name = "layer.0.b", ftpipe.param}
// NAMES-SAME: {ftpipe.frozen, ftpipe.name = "layer.1.w", ftpipe.param}
// NAMES-SAME: {ftpipe.frozen, ftpipe.name = "head.w", ftpipe.param}
func.func @model(%w0: tensor<4x4xf32> {ftpipe.param, ftpipe.name = "layer.0.w"},
                 %b0: tensor<4xf32> {ftpipe.param, ftpipe.name = "layer.0.b"},
                 %w1: tensor<4x4xf32> {ftpipe.param, ftpipe.name = "layer.1.w"},
                 %h: tensor<4x4xf32> {ftpipe.param, ftpipe.name = "head.w"},
                 %x: tensor<1x4xf32>) {
  return
}

// -----

// Tests that a function without parameters is left alone.

// CHECK-LABEL: func.func @no_params
// CHECK-NOT: ftpipe.frozen
// NAMES-LABEL: func.func @no_params
// NAMES-NOT: ftpipe.frozen
func.func @no_params(%x: tensor<1x4xf32>) {
  return
}
