// RUN: ftpipe-opt %s --ftpipe-trap-computed-indices | FileCheck %s

// Index guards (ftpipe.index_guard, from ftpipe-clamp-gather-indices) on
// indices the model computes get a check that calls the runtime; guards on
// an entry point's arguments (data, checked by ftpipe-run) or constants,
// and clamps that are not guards, stay as they are.

// CHECK-LABEL: func.func private @ftpipe_rt_index_error(memref<*xi8>, i64, i64)

// CHECK-LABEL: func.func @computed(
// CHECK-SAME: %[[IDS:.*]]: tensor<2x4xi32>
// CHECK: %[[SUM:.*]] = tosa.add %[[IDS]]
// CHECK: %[[MIN0:.*]] = tosa.reduce_min %[[SUM]] {axis = 0 : i32} : (tensor<2x4xi32>) -> tensor<1x4xi32>
// CHECK: %[[MIN1:.*]] = tosa.reduce_min %[[MIN0]] {axis = 1 : i32} : (tensor<1x4xi32>) -> tensor<1x1xi32>
// CHECK: %[[MINS:.*]] = tensor.extract %[[MIN1]]
// CHECK: %[[MIN:.*]] = arith.extsi %[[MINS]] : i32 to i64
// CHECK: tosa.reduce_max %[[SUM]] {axis = 0 : i32}
// CHECK: %[[MAX:.*]] = arith.extsi
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[ROWS:.*]] = arith.constant 512 : i64
// CHECK: %[[BELOW:.*]] = arith.cmpi slt, %[[MIN]], %[[ZERO]]
// CHECK: %[[ABOVE:.*]] = arith.cmpi sge, %[[MAX]], %[[ROWS]]
// CHECK: %[[OUT:.*]] = arith.ori %[[BELOW]], %[[ABOVE]]
// CHECK: %[[VALUE:.*]] = arith.select %[[BELOW]], %[[MIN]], %[[MAX]]
// CHECK: scf.if %[[OUT]] {
// CHECK:   %[[TEXT:.*]] = memref.get_global @[[SITE:ftpipe_index_site[_0-9]*]] : memref<{{[0-9]+}}xi8>
// CHECK:   %[[SITEU:.*]] = memref.cast %[[TEXT]] : memref<{{[0-9]+}}xi8> to memref<*xi8>
// CHECK:   func.call @ftpipe_rt_index_error(%[[SITEU]], %[[VALUE]], %[[ROWS]])
// CHECK: }
// CHECK: tosa.clamp %[[SUM]] {ftpipe.index_guard
// CHECK: tosa.gather
func.func @computed(%ids: tensor<2x4xi32>, %table: tensor<2x512x8xf32>) -> tensor<2x4x8xf32> {
  %one = "tosa.const"() {value = dense<1> : tensor<2x4xi32>} : () -> tensor<2x4xi32>
  %sum = tosa.add %ids, %one : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
  %safe = tosa.clamp %sum {ftpipe.index_guard, max_fp = 0.0 : f32, max_int = 511 : i64, min_fp = 0.0 : f32, min_int = 0 : i64} : (tensor<2x4xi32>) -> tensor<2x4xi32>
  %rows = tosa.gather %table, %safe : (tensor<2x512x8xf32>, tensor<2x4xi32>) -> tensor<2x4x8xf32>
  return %rows : tensor<2x4x8xf32>
}

// The entry point's own argument, reshaped: data, no check.
// CHECK-LABEL: func.func @from_data(
// CHECK-NOT: scf.if
// CHECK: tosa.gather
func.func @from_data(%ids: tensor<8xi32>, %table: tensor<1x512x8xf32>) -> tensor<1x8x8xf32> {
  %shaped = tosa.reshape %ids {new_shape = array<i64: 1, 8>} : (tensor<8xi32>) -> tensor<1x8xi32>
  %safe = tosa.clamp %shaped {ftpipe.index_guard, max_fp = 0.0 : f32, max_int = 511 : i64, min_fp = 0.0 : f32, min_int = 0 : i64} : (tensor<1x8xi32>) -> tensor<1x8xi32>
  %rows = tosa.gather %table, %safe : (tensor<1x512x8xf32>, tensor<1x8xi32>) -> tensor<1x8x8xf32>
  return %rows : tensor<1x8x8xf32>
}

// Constants and a clamp of the model's own (no guard): no check.
// CHECK-LABEL: func.func @constant_and_own_clamp(
// CHECK-NOT: scf.if
// CHECK: return
func.func @constant_and_own_clamp(%ids: tensor<1x8xi32>, %table: tensor<1x512x8xf32>) -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>) {
  %c = "tosa.const"() {value = dense<3> : tensor<1x8xi32>} : () -> tensor<1x8xi32>
  %safe = tosa.clamp %c {ftpipe.index_guard, max_fp = 0.0 : f32, max_int = 511 : i64, min_fp = 0.0 : f32, min_int = 0 : i64} : (tensor<1x8xi32>) -> tensor<1x8xi32>
  %rows = tosa.gather %table, %safe : (tensor<1x512x8xf32>, tensor<1x8xi32>) -> tensor<1x8x8xf32>
  %doubled = tosa.add %ids, %ids : (tensor<1x8xi32>, tensor<1x8xi32>) -> tensor<1x8xi32>
  %own = tosa.clamp %doubled {max_fp = 0.0 : f32, max_int = 511 : i64, min_fp = 0.0 : f32, min_int = 0 : i64} : (tensor<1x8xi32>) -> tensor<1x8xi32>
  %more = tosa.gather %table, %own : (tensor<1x512x8xf32>, tensor<1x8xi32>) -> tensor<1x8x8xf32>
  return %rows, %more : tensor<1x8x8xf32>, tensor<1x8x8xf32>
}

// A stage body called by entry points: checked when one of its callers
// passes a computed value, not when all pass their arguments.
// CHECK-LABEL: func.func private @body_of_data(
// CHECK-NOT: scf.if
// CHECK: tosa.gather
func.func private @body_of_data(%ids: tensor<1x8xi32>, %table: tensor<1x512x8xf32>) -> tensor<1x8x8xf32> {
  %safe = tosa.clamp %ids {ftpipe.index_guard, max_fp = 0.0 : f32, max_int = 511 : i64, min_fp = 0.0 : f32, min_int = 0 : i64} : (tensor<1x8xi32>) -> tensor<1x8xi32>
  %rows = tosa.gather %table, %safe : (tensor<1x512x8xf32>, tensor<1x8xi32>) -> tensor<1x8x8xf32>
  return %rows : tensor<1x8x8xf32>
}
// CHECK-LABEL: func.func private @body_of_computed(
// CHECK: scf.if
// CHECK: tosa.gather
func.func private @body_of_computed(%ids: tensor<1x8xi32>, %table: tensor<1x512x8xf32>) -> tensor<1x8x8xf32> {
  %safe = tosa.clamp %ids {ftpipe.index_guard, max_fp = 0.0 : f32, max_int = 511 : i64, min_fp = 0.0 : f32, min_int = 0 : i64} : (tensor<1x8xi32>) -> tensor<1x8xi32>
  %rows = tosa.gather %table, %safe : (tensor<1x512x8xf32>, tensor<1x8xi32>) -> tensor<1x8x8xf32>
  return %rows : tensor<1x8x8xf32>
}
func.func @callers(%ids: tensor<1x8xi32>, %table: tensor<1x512x8xf32>) -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) {
  %a = func.call @body_of_data(%ids, %table) : (tensor<1x8xi32>, tensor<1x512x8xf32>) -> tensor<1x8x8xf32>
  %b = func.call @body_of_computed(%ids, %table) : (tensor<1x8xi32>, tensor<1x512x8xf32>) -> tensor<1x8x8xf32>
  %neg = tosa.negate %ids : (tensor<1x8xi32>) -> tensor<1x8xi32>
  %c = func.call @body_of_computed(%neg, %table) : (tensor<1x8xi32>, tensor<1x512x8xf32>) -> tensor<1x8x8xf32>
  return %a, %b, %c : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>
}

// Each site's description names the gather's location.
// CHECK: memref.global "private" constant @ftpipe_index_site : memref<{{[0-9]+}}xi8>
