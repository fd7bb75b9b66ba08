// RUN: ftpipe-opt %s --ftpipe-lower-transfers --split-input-file -verify-diagnostics | FileCheck %s

// Tests ftpipe-lower-transfers (lib/Conversion/LowerTransfers.cpp): a send
// passes the tensor's buffer to ftpipe_rt_send_T, a receive fills a new
// buffer through ftpipe_rt_recv_T; peer, tag and micro-batch as i64.

// CHECK-DAG: func.func private @ftpipe_rt_send_f32(i64, i64, i64, memref<*xf32>)
// CHECK-DAG: func.func private @ftpipe_rt_recv_f32(i64, i64, i64, memref<*xf32>)
// CHECK-LABEL: func.func @stage1_forward(
// CHECK-SAME: %[[MB:.*]]: index, %[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[XB:.*]] = bufferization.to_memref %[[X]] : memref<2x8xf32>
// CHECK: %[[XU:.*]] = memref.cast %[[XB]] : memref<2x8xf32> to memref<*xf32>
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3 : i64
// CHECK-DAG: %[[MBI:.*]] = arith.index_cast %[[MB]] : index to i64
// CHECK: call @ftpipe_rt_send_f32(%[[ONE]], %[[THREE]], %[[MBI]], %[[XU]])
// CHECK: %[[BUF:.*]] = memref.alloc() : memref<2x8xf32>
// CHECK: %[[BU:.*]] = memref.cast %[[BUF]] : memref<2x8xf32> to memref<*xf32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[FOUR:.*]] = arith.constant 4 : i64
// CHECK: call @ftpipe_rt_recv_f32(%[[ZERO]], %[[FOUR]], %{{.*}}, %[[BU]])
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[BUF]] restrict writable : memref<2x8xf32>
// CHECK: return %[[T]]
// CHECK-NOT: ftpipe.send
// CHECK-NOT: ftpipe.recv
func.func @stage1_forward(%mb: index, %x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  ftpipe.send %x to 1 tag 3 microbatch %mb : tensor<2x8xf32>
  %t = ftpipe.recv from 0 tag 4 microbatch %mb : tensor<2x8xf32>
  return %t : tensor<2x8xf32>
}

// -----

// An element type without a runtime transfer is an error at the op.
func.func @complex(%mb: index, %x: tensor<2xcomplex<f32>>) {
  // expected-error @below {{no runtime transfer for element type}}
  ftpipe.send %x to 1 tag 0 microbatch %mb : tensor<2xcomplex<f32>>
  return
}
