// RUN: ftpipe-opt %s --ftpipe-mark-params | FileCheck %s

// A declaration has no body and no block arguments: --ftpipe-mark-params
// leaves it alone (it used to crash on it), also when a function with a body
// calls it.

// CHECK-LABEL: func.func private @decl(tensor<4xf32>)
// CHECK-LABEL: func.func @f(
// CHECK-SAME: %{{.*}}: tensor<4xf32> {ftpipe.name = "arg0", ftpipe.param}
module {
  func.func private @decl(tensor<4xf32>)
  func.func @f(%w: tensor<4xf32>) {
    func.call @decl(%w) : (tensor<4xf32>) -> ()
    return
  }
}
