// RUN: ftpipe-opt --mlir-print-debuginfo=false %s --split-input-file --ftpipe-outline-layers="min-ops=3" | FileCheck %s

// Tests that two layers with the same code become one function, called once
// per layer with that layer's values; constants are cloned in; the function
// is kept from inlining.
// CHECK-LABEL: func.func @two_layers
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[W0:.*]]: tensor<4xf32>, %[[W1:.*]]: tensor<4xf32>)
// CHECK: %[[H:.*]] = call @two_layers_layer0(%[[X]], %[[W0]])
// CHECK: %[[Y:.*]] = call @two_layers_layer0(%[[H]], %[[W1]])
// CHECK: return %[[Y]]
// CHECK: func.func private @two_layers_layer0(%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>) -> tensor<4xf32> attributes {no_inline}
// CHECK: tosa.const
// CHECK: tosa.mul %[[A]], %[[B]]
// CHECK-NOT: func.func private @two_layers_layer1
func.func @two_layers(%x: tensor<4xf32>, %w0: tensor<4xf32>, %w1: tensor<4xf32>) -> tensor<4xf32> {
  %c = "tosa.const"() <{value = dense<2.0> : tensor<4xf32>}> : () -> tensor<4xf32> loc(unknown)
  %0 = tosa.mul %x, %w0 {shift = 0 : i8} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("M/ModuleList[h]/Block[0]/mul")
  %1 = tosa.add %0, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("M/ModuleList[h]/Block[0]/add")
  %2 = tosa.tanh %1 : (tensor<4xf32>) -> tensor<4xf32> loc("M/ModuleList[h]/Block[0]/act")
  %3 = tosa.mul %2, %w1 {shift = 0 : i8} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("M/ModuleList[h]/Block[1]/mul")
  %4 = tosa.add %3, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("M/ModuleList[h]/Block[1]/add")
  %5 = tosa.tanh %4 : (tensor<4xf32>) -> tensor<4xf32> loc("M/ModuleList[h]/Block[1]/act")
  return %5 : tensor<4xf32>
}

// -----

// Tests that different code gets a function each, that a value read after
// its run becomes a result, that an op outside any indexed module joins the
// run it sits in, and that a run shorter than min-ops that computes is
// outlined too.
// CHECK-LABEL: func.func @different
// CHECK: %[[R:.*]]:2 = call @different_layer0(
// CHECK: %[[S:.*]]:2 = call @different_layer1(%[[R]]#1,
// CHECK: call @different_layer2(%[[S]]#1)
// CHECK: func.func private @different_layer0({{.*}}) -> (tensor<4xf32>, tensor<4xf32>) attributes {no_inline}
// CHECK: func.func private @different_layer1({{.*}}) -> (tensor<4xf32>, tensor<4xf32>) attributes {no_inline}
// CHECK: tosa.negate
// CHECK: func.func private @different_layer2(
// CHECK-NEXT: tosa.exp
func.func @different(%x: tensor<4xf32>, %w: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = tosa.mul %x, %w {shift = 0 : i8} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("M/Block[0]/mul")
  %1 = tosa.tanh %0 : (tensor<4xf32>) -> tensor<4xf32> loc("M/Block[0]/act")
  %2 = tosa.exp %1 : (tensor<4xf32>) -> tensor<4xf32> loc("M/Block[0]/exp")
  %3 = tosa.add %2, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("M/Block[1]/add")
  %4 = tosa.tanh %3 : (tensor<4xf32>) -> tensor<4xf32> loc("M/Block[1]/act")
  %5 = tosa.sub %4, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("M/Block[1]/sub")
  %6 = tosa.negate %1 : (tensor<4xf32>) -> tensor<4xf32> loc("M/head")
  %7 = tosa.exp %6 : (tensor<4xf32>) -> tensor<4xf32> loc("M/Block[2]/exp")
  return %5, %6, %7 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// On buffers, after the deallocations are placed (as the CPU lowering runs
// it): a dealloc belongs to the run it sits in, whatever its location (the
// layer that made the buffer), so the second layer frees the first one's
// result; a cast is made again where it is read, so the calls pass and
// return the buffer itself.
// CHECK-LABEL: func.func @buffers
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>)
// CHECK: %[[A:.*]] = call @buffers_layer0(%[[X]]) : (memref<4xf32>) -> memref<4xf32>
// CHECK-NEXT: call @buffers_layer1(%[[A]]) : (memref<4xf32>) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @buffers_layer0(%{{.*}}: memref<4xf32>) -> memref<4xf32>
// CHECK-NOT: memref.cast
// CHECK: return
// CHECK: func.func private @buffers_layer1(%[[A1:.*]]: memref<4xf32>)
// CHECK: %[[U1:.*]] = memref.cast %[[A1]] : memref<4xf32> to memref<*xf32>
// CHECK: call @use(%[[U1]])
// CHECK-NEXT: memref.dealloc %[[A1]]
// CHECK-NOT: @buffers_layer2
func.func private @use(memref<*xf32>)
func.func @buffers(%x: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32> loc("M/Block[0]/a")
  linalg.add ins(%x, %x : memref<4xf32>, memref<4xf32>) outs(%a : memref<4xf32>) loc("M/Block[0]/add")
  %ua = memref.cast %a : memref<4xf32> to memref<*xf32> loc("M/Block[0]/cast")
  %b = memref.alloc() : memref<4xf32> loc("M/Block[1]/b")
  linalg.add ins(%a, %a : memref<4xf32>, memref<4xf32>) outs(%b : memref<4xf32>) loc("M/Block[1]/add")
  func.call @use(%ua) : (memref<*xf32>) -> () loc("M/Block[1]/use")
  memref.dealloc %a : memref<4xf32> loc("M/Block[0]/a")
  linalg.add ins(%b, %b : memref<4xf32>, memref<4xf32>) outs(%b : memref<4xf32>) loc("M/Block[1]/add2")
  memref.dealloc %b : memref<4xf32> loc("M/Block[1]/b")
  return
}

// -----

// Tests that a function of one layer stays whole.
// CHECK-LABEL: func.func @one_layer
// CHECK-NOT: call
// CHECK: return
func.func @one_layer(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.mul %x, %w {shift = 0 : i8} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("M/Block[0]/mul")
  %1 = tosa.tanh %0 : (tensor<4xf32>) -> tensor<4xf32> loc("M/Block[0]/act")
  %2 = tosa.exp %1 : (tensor<4xf32>) -> tensor<4xf32> loc("M/Block[0]/exp")
  return %2 : tensor<4xf32>
}

// -----

// Tests that the ops before the first layer (embeddings, a backward's head)
// make a run of their own, so that the function keeps only calls (and the
// leading constants, which other runs may read).
// CHECK-LABEL: func.func @prologue
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>)
// CHECK-NEXT: tosa.const
// CHECK-NEXT: %[[E:.*]] = call @prologue_layer0(%[[X]])
// CHECK-NEXT: %[[H:.*]] = call @prologue_layer1(%[[E]], %[[W]])
// CHECK-NEXT: return %[[H]]
// CHECK: func.func private @prologue_layer0(
// CHECK: tosa.const
// CHECK: tosa.add
// CHECK: tosa.exp
// CHECK: tosa.negate
// CHECK: func.func private @prologue_layer1(
// CHECK: tosa.mul
func.func @prologue(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %c = "tosa.const"() <{value = dense<2.0> : tensor<4xf32>}> : () -> tensor<4xf32> loc(unknown)
  %0 = tosa.add %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("M/Embedding[wte]")
  %1 = tosa.exp %0 : (tensor<4xf32>) -> tensor<4xf32> loc("M/Embedding[wte]/exp")
  %2 = tosa.negate %1 : (tensor<4xf32>) -> tensor<4xf32> loc("M/drop")
  %3 = tosa.mul %2, %w {shift = 0 : i8} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("M/ModuleList[h]/Block[0]/mul")
  %4 = tosa.tanh %3 : (tensor<4xf32>) -> tensor<4xf32> loc("M/ModuleList[h]/Block[0]/act")
  %5 = tosa.exp %4 : (tensor<4xf32>) -> tensor<4xf32> loc("M/ModuleList[h]/Block[0]/exp")
  return %5 : tensor<4xf32>
}

// -----

// Tests that glue (calls, buffer ops) stays in the function: a run of it
// shorter than min-ops, and the glue after the last op that computes (a
// backward's copies of its results) when at least min-ops long.
// CHECK-LABEL: func.func @glue
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>)
// CHECK-NEXT: %[[A:.*]] = call @glue_layer0(%[[X]])
// CHECK-NEXT: %[[U:.*]] = memref.cast %[[A]]
// CHECK-NEXT: call @use(%[[U]])
// CHECK-NEXT: %[[B:.*]] = call @glue_layer1(%[[A]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: memref.alloc
// CHECK-NEXT: memref.copy %[[X]]
// CHECK-NEXT: memref.alloc
// CHECK-NEXT: memref.copy %[[X]]
// CHECK-NEXT: return %[[B]]
// CHECK: func.func private @glue_layer0(
// CHECK-NEXT: memref.alloc
// CHECK-NEXT: linalg.add
// CHECK-NEXT: return
// CHECK: func.func private @glue_layer1(
// CHECK-NEXT: memref.alloc
// CHECK-NEXT: linalg.mul
// CHECK-NEXT: return
func.func private @use(memref<*xf32>)
func.func @glue(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32> loc("M/Block[0]/a")
  linalg.add ins(%x, %x : memref<4xf32>, memref<4xf32>) outs(%a : memref<4xf32>) loc("M/Block[0]/add")
  %ua = memref.cast %a : memref<4xf32> to memref<*xf32> loc("M/Block[1]/cast")
  func.call @use(%ua) : (memref<*xf32>) -> () loc("M/Block[1]/use")
  %b = memref.alloc() : memref<4xf32> loc("M/Block[2]/b")
  linalg.mul ins(%a, %a : memref<4xf32>, memref<4xf32>) outs(%b : memref<4xf32>) loc("M/Block[2]/mul")
  memref.dealloc %a : memref<4xf32> loc("M/Block[0]/a")
  %c = memref.alloc() : memref<4xf32> loc("M/Block[2]/c")
  memref.copy %x, %c : memref<4xf32> to memref<4xf32> loc("M/Block[2]/c")
  %d = memref.alloc() : memref<4xf32> loc("M/Block[2]/d")
  memref.copy %x, %d : memref<4xf32> to memref<4xf32> loc("M/Block[2]/d")
  return %b, %c, %d : memref<4xf32>, memref<4xf32>, memref<4xf32>
}
