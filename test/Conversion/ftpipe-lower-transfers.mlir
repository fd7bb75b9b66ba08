// RUN: ftpipe-opt %s --ftpipe-lower-transfers --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @stage1_forward
// CHECK-SAME: (%[[MB:.*]]: index, %[[X:.*]]: tensor<2x4xf32>)
// CHECK: %[[BUF:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK: %[[U:.*]] = memref.cast %[[BUF]] : memref<2x4xf32> to memref<*xf32>
// CHECK-DAG: %[[PEER:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[TAG:.*]] = arith.constant 6 : i64
// CHECK: %[[M:.*]] = arith.index_cast %[[MB]] : index to i64
// CHECK: call @ftpipe_rt_recv_f32(%[[PEER]], %[[TAG]], %[[M]], %[[U]])
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[BUF]] restrict writable
// CHECK: %[[SUM:.*]] = tosa.add %[[T]], %[[X]]
// CHECK: %[[S:.*]] = bufferization.to_memref %[[SUM]] : memref<2x4xf32>
// CHECK: %[[SU:.*]] = memref.cast %[[S]] : memref<2x4xf32> to memref<*xf32>
// CHECK-DAG: %[[PEER2:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[TAG2:.*]] = arith.constant 8 : i64
// CHECK: call @ftpipe_rt_send_f32(%[[PEER2]], %[[TAG2]], %{{.*}}, %[[SU]])
// CHECK: %[[I:.*]] = memref.cast %{{.*}} : memref<3xi64> to memref<*xi64>
// CHECK: call @ftpipe_rt_send_i64(
// CHECK: func.func private @ftpipe_rt_recv_f32(i64, i64, i64, memref<*xf32>)
// CHECK: func.func private @ftpipe_rt_send_f32(i64, i64, i64, memref<*xf32>)
// CHECK: func.func private @ftpipe_rt_send_i64(i64, i64, i64, memref<*xi64>)
func.func @stage1_forward(%mb: index, %x: tensor<2x4xf32>)
    attributes {ftpipe.device = 1 : i64, ftpipe.stage = 1 : i64} {
  %r = ftpipe.recv from 0 tag 6 microbatch %mb : tensor<2x4xf32>
  %s = tosa.add %r, %x : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  ftpipe.send %s to 2 tag 8 microbatch %mb : tensor<2x4xf32>
  %ids = arith.constant dense<[1, 2, 3]> : tensor<3xi64>
  ftpipe.send %ids to 2 tag 10 microbatch %mb : tensor<3xi64>
  return
}

// -----

func.func @unsupported(%mb: index, %x: tensor<2xi4>)
    attributes {ftpipe.device = 0 : i64} {
  // expected-error @+1 {{element type 'i4' has no transfer function in the stage ABI}}
  ftpipe.send %x to 1 tag 0 microbatch %mb : tensor<2xi4>
  return
}
