// RUN: ftpipe-opt %s --ftpipe-free-call-results | FileCheck %s

// The input is upstream's ownership-based deallocation of three calls of a
// layer function that returns only its own allocation (`@layer`) and of one
// that returns one allocation twice (`@twice`), after
// buffer-deallocation-simplification.

// Tests that the results of calls of @layer are freed apart from the
// returned value, without checking them against it.
// CHECK-LABEL: func.func @chain
// CHECK: %[[B0:.*]], %{{.*}}, %{{.*}}, %{{.*}} = memref.extract_strided_metadata
// CHECK: %[[B1:.*]], %{{.*}}, %{{.*}}, %{{.*}} = memref.extract_strided_metadata
// CHECK-NEXT: bufferization.dealloc (%[[B0]] : memref<f32>) if (%{{.*}}){{$}}
// CHECK-NEXT: bufferization.dealloc (%[[B1]] : memref<f32>) if (%{{.*}}){{$}}
// CHECK-NEXT: bufferization.dealloc retain (%{{.*}} : memref<4xf32>)
// CHECK-NEXT: return

// Tests that call results that may be what the caller returns (@twice's
// two results are one buffer) keep the check, as does what is checked
// against them.
// CHECK-LABEL: func.func @maybe_alias
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}} : memref<f32>, memref<f32>) if (%{{.*}}, %{{.*}}) retain (%{{.*}} : memref<4xf32>)
// CHECK-NEXT: return
module {
  func.func private @layer(%arg0: memref<4xf32>) -> memref<4xf32> {
    %alloc = memref.alloc() : memref<4xf32>
    linalg.add ins(%arg0, %arg0 : memref<4xf32>, memref<4xf32>) outs(%alloc : memref<4xf32>)
    return %alloc : memref<4xf32>
  }
  func.func private @twice(%arg0: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
    %alloc = memref.alloc() : memref<4xf32>
    linalg.add ins(%arg0, %arg0 : memref<4xf32>, memref<4xf32>) outs(%alloc : memref<4xf32>)
    return %alloc, %alloc : memref<4xf32>, memref<4xf32>
  }
  func.func @chain(%arg0: memref<4xf32>) -> memref<4xf32> {
    %true = arith.constant true
    %0 = call @layer(%arg0) : (memref<4xf32>) -> memref<4xf32>
    %1 = call @layer(%0) : (memref<4xf32>) -> memref<4xf32>
    %2 = call @layer(%1) : (memref<4xf32>) -> memref<4xf32>
    %base_buffer, %offset, %sizes, %strides = memref.extract_strided_metadata %0 : memref<4xf32> -> memref<f32>, index, index, index
    %base_buffer_0, %offset_1, %sizes_2, %strides_3 = memref.extract_strided_metadata %1 : memref<4xf32> -> memref<f32>, index, index, index
    %3 = bufferization.dealloc (%base_buffer, %base_buffer_0 : memref<f32>, memref<f32>) if (%true, %true) retain (%2 : memref<4xf32>)
    return %2 : memref<4xf32>
  }
  func.func @maybe_alias(%arg0: memref<4xf32>) -> memref<4xf32> {
    %true = arith.constant true
    %0 = call @layer(%arg0) : (memref<4xf32>) -> memref<4xf32>
    %1:2 = call @twice(%0) : (memref<4xf32>) -> (memref<4xf32>, memref<4xf32>)
    %base_buffer, %offset, %sizes, %strides = memref.extract_strided_metadata %0 : memref<4xf32> -> memref<f32>, index, index, index
    %base_buffer_0, %offset_1, %sizes_2, %strides_3 = memref.extract_strided_metadata %1#1 : memref<4xf32> -> memref<f32>, index, index, index
    %2 = bufferization.dealloc (%base_buffer, %base_buffer_0 : memref<f32>, memref<f32>) if (%true, %true) retain (%1#0 : memref<4xf32>)
    return %1#0 : memref<4xf32>
  }
}

