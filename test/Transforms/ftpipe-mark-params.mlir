// RUN: ftpipe-opt %s --split-input-file --ftpipe-mark-params | FileCheck %s
// RUN: ftpipe-opt %s --split-input-file --ftpipe-mark-params="inputs=1" | FileCheck %s --check-prefix=INPUTS

// Tests that float tensor arguments become named parameters while integer
// and scalar arguments stay data, and that listed inputs are skipped.

// CHECK-LABEL: func.func @mixed
// CHECK-SAME: %{{.*}}: tensor<4x4xf32> {ftpipe.name = "arg0", ftpipe.param}
// CHECK-SAME: %{{.*}}: tensor<1x4xf32> {ftpipe.name = "arg1", ftpipe.param}
// CHECK-SAME: %{{.*}}: tensor<1x40xi64>,
// CHECK-SAME: %{{.*}}: f32)
// INPUTS-LABEL: func.func @mixed
// INPUTS-SAME: %{{.*}}: tensor<4x4xf32> {ftpipe.name = "arg0", ftpipe.param}
// INPUTS-SAME: %{{.*}}: tensor<1x4xf32>,
func.func @mixed(%w: tensor<4x4xf32>, %x: tensor<1x4xf32>, %ids: tensor<1x40xi64>, %s: f32) {
  return
}

// -----

// Tests that existing marks and names are kept.

// CHECK-LABEL: func.func @partly_marked
// CHECK-SAME: %{{.*}}: tensor<4xf64> {ftpipe.name = "embed.weight", ftpipe.param}
// CHECK-SAME: %{{.*}}: tensor<4xbf16> {ftpipe.name = "arg1", ftpipe.param}
func.func @partly_marked(%a: tensor<4xf64> {ftpipe.param, ftpipe.name = "embed.weight"}, %b: tensor<4xbf16>) {
  return
}
