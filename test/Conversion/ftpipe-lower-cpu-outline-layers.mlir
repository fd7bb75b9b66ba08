// RUN: ftpipe-opt --mlir-print-debuginfo=false %s --ftpipe-lower-cpu --mlir-print-ir-after=ftpipe-outline-layers -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=bufferization.dealloc --implicit-check-not=dealloc_helper
// RUN: ftpipe-opt --mlir-print-debuginfo=false %s --ftpipe-lower-cpu | FileCheck %s --check-prefix=PEAK
// RUN: ftpipe-opt --mlir-print-debuginfo=false %s --ftpipe-lower-cpu=outline-layers=false | FileCheck %s --check-prefixes=PEAK,WHOLE

// The CPU lowering cuts the layers out of the function after the
// deallocations are placed: four layers of three matmuls each (a residual
// around them) become one function for the first layer (its input is the
// caller's, not freed) and one for the other three (each frees its input,
// the previous layer's result, after its last use, the residual add); the
// reshape of the last one's result to the function's is made in the caller,
// so that the calls pass and return buffers, not views. No deallocation
// checks aliases at run time, in the caller or in a layer, and the recorded
// peak is that of the uncut function: three buffers of 4 x 8 f32 (128
// bytes, charged 192 with the 64 of their alignment).

// CHECK-LABEL: func.func @f(
// CHECK-SAME: %[[X:[^:]*]]: memref<1x4x8xf32>, %[[W0:[^:]*]]: memref<1x8x8xf32>, %[[W1:[^:]*]]: memref<1x8x8xf32>, %[[W2:[^:]*]]: memref<1x8x8xf32>, %[[W3:[^:]*]]: memref<1x8x8xf32>)
// CHECK: %[[H0:.*]] = call @f_layer0(%[[X]], %[[W0]])
// CHECK-NEXT: %[[H1:.*]] = call @f_layer1(%[[W1]], %[[H0]])
// CHECK-NEXT: %[[H2:.*]] = call @f_layer1(%[[W2]], %[[H1]])
// CHECK-NEXT: %[[H3:.*]] = call @f_layer1(%[[W3]], %[[H2]])
// CHECK-NEXT: %[[Y:.*]] = memref.expand_shape %[[H3]]
// CHECK-NEXT: return %[[Y]]
// CHECK: @ftpipe_peak_bytes_f : memref<i64> = dense<576>
// CHECK-LABEL: func.func private @f_layer0(
// CHECK-NOT: memref.dealloc %arg
// CHECK: return
// CHECK-LABEL: func.func private @f_layer1(
// CHECK-SAME: %[[IN:[^:]*]]: memref<4x8xf32>) -> memref<4x8xf32> attributes {no_inline}
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[IN]] :
// CHECK: memref.dealloc %[[IN]]
// CHECK-NEXT: return
// CHECK-NOT: func.func private @f_layer

// PEAK: llvm.mlir.global external constant @ftpipe_peak_bytes_f(576 : i64)
// WHOLE-NOT: f_layer
func.func @f(%x: tensor<1x4x8xf32>, %w0: tensor<1x8x8xf32>, %w1: tensor<1x8x8xf32>, %w2: tensor<1x8x8xf32>, %w3: tensor<1x8x8xf32>) -> tensor<1x4x8xf32> {
  %l0a = tosa.matmul %x, %w0 : (tensor<1x4x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[0]/mm0")
  %l0b = tosa.tanh %l0a : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[0]/act0")
  %l0c = tosa.matmul %l0b, %w0 : (tensor<1x4x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[0]/mm1")
  %l0d = tosa.exp %l0c : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[0]/act1")
  %l0e = tosa.matmul %l0d, %w0 : (tensor<1x4x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[0]/mm2")
  %l0o = tosa.add %l0e, %x : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[0]/residual")
  %l1a = tosa.matmul %l0o, %w1 : (tensor<1x4x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[1]/mm0")
  %l1b = tosa.tanh %l1a : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[1]/act0")
  %l1c = tosa.matmul %l1b, %w1 : (tensor<1x4x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[1]/mm1")
  %l1d = tosa.exp %l1c : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[1]/act1")
  %l1e = tosa.matmul %l1d, %w1 : (tensor<1x4x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[1]/mm2")
  %l1o = tosa.add %l1e, %l0o : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[1]/residual")
  %l2a = tosa.matmul %l1o, %w2 : (tensor<1x4x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[2]/mm0")
  %l2b = tosa.tanh %l2a : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[2]/act0")
  %l2c = tosa.matmul %l2b, %w2 : (tensor<1x4x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[2]/mm1")
  %l2d = tosa.exp %l2c : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[2]/act1")
  %l2e = tosa.matmul %l2d, %w2 : (tensor<1x4x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[2]/mm2")
  %l2o = tosa.add %l2e, %l1o : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[2]/residual")
  %l3a = tosa.matmul %l2o, %w3 : (tensor<1x4x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[3]/mm0")
  %l3b = tosa.tanh %l3a : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[3]/act0")
  %l3c = tosa.matmul %l3b, %w3 : (tensor<1x4x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[3]/mm1")
  %l3d = tosa.exp %l3c : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[3]/act1")
  %l3e = tosa.matmul %l3d, %w3 : (tensor<1x4x8xf32>, tensor<1x8x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[3]/mm2")
  %l3o = tosa.add %l3e, %l2o : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("M/ModuleList[h]/Block[3]/residual")
  return %l3o : tensor<1x4x8xf32>
}
