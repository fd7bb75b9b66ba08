// RUN: ftpipe-opt %s --split-input-file | FileCheck %s
// RUN: ftpipe-opt %s --split-input-file | ftpipe-opt --split-input-file | FileCheck %s
// RUN: ftpipe-opt %s --split-input-file --mlir-print-op-generic | ftpipe-opt --split-input-file | FileCheck %s

// Tests that a stage with two inputs and two results round-trips, keeping
// the bindings of operands to block arguments and its extra attributes.

// CHECK-LABEL: func.func @two_in_two_out
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<2xf32>)
func.func @two_in_two_out(%a: tensor<4xf32>, %b: tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>) {
  // CHECK: %[[R:.*]]:2 = ftpipe.stage 3 on 1 (%[[X:.*]] = %[[A]] : tensor<4xf32>, %[[Y:.*]] = %[[B]] : tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>) attributes {note = "x"} {
  %r:2 = ftpipe.stage 3 on 1 (%x = %a : tensor<4xf32>, %y = %b : tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>) attributes {note = "x"} {
    // CHECK-NEXT: %[[U:.*]] = tosa.abs %[[X]]
    %u = tosa.abs %x : (tensor<4xf32>) -> tensor<4xf32>
    // CHECK-NEXT: ftpipe.yield %[[U]], %[[Y]] : tensor<4xf32>, tensor<2xf32>
    ftpipe.yield %u, %y : tensor<4xf32>, tensor<2xf32>
  }
  // CHECK: return %[[R]]#0, %[[R]]#1
  return %r#0, %r#1 : tensor<4xf32>, tensor<2xf32>
}

// -----

// Tests a stage with no inputs and no results, and two stages on one device.

// CHECK-LABEL: func.func @empty_stages
func.func @empty_stages() {
  // CHECK: ftpipe.stage 0 on 0 () -> () {
  // CHECK-NEXT: ftpipe.yield{{$}}
  ftpipe.stage 0 on 0 () -> () {
    ftpipe.yield
  }
  // CHECK: ftpipe.stage 1 on 0 () -> ()
  ftpipe.stage 1 on 0 () -> () {
    ftpipe.yield
  }
  return
}

// -----

// Tests send and receive inside a per-device function.

// CHECK-LABEL: func.func @device1
func.func @device1(%t: tensor<4x8xf32>, %mb: index) -> tensor<4x8xf32>
    attributes {ftpipe.device = 1 : i64} {
  // CHECK: ftpipe.send %{{.*}} to 0 tag 7 microbatch %{{.*}} : tensor<4x8xf32>
  ftpipe.send %t to 0 tag 7 microbatch %mb : tensor<4x8xf32>
  // CHECK: %{{.*}} = ftpipe.recv from 2 tag 8 microbatch %{{.*}} : tensor<4x8xf32>
  %r = ftpipe.recv from 2 tag 8 microbatch %mb : tensor<4x8xf32>
  // A transfer between two stages of one device is a local hand-off.
  // CHECK: ftpipe.send %{{.*}} to 1 tag 9 microbatch
  ftpipe.send %t to 1 tag 9 microbatch %mb : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Tests send and receive inside a stage, which gives the device.

// CHECK-LABEL: func.func @in_stage
func.func @in_stage(%t: tensor<3xf32>, %mb: index) {
  // CHECK: ftpipe.stage 0 on 2
  ftpipe.stage 0 on 2 (%x = %t : tensor<3xf32>, %i = %mb : index) -> () {
    // CHECK: ftpipe.send %{{.*}} to 1 tag 0 microbatch
    ftpipe.send %x to 1 tag 0 microbatch %i : tensor<3xf32>
    ftpipe.yield
  }
  return
}
