// Tests the causal masks: GPT-2's attention keeps score (i, j) where query i
// sees key j (i >= j, an iota comparison, no [S, S] constant), puts the
// lowest float elsewhere with tosa.select after the 1/sqrt(d) scaling (HF's
// torch.where), then adds the padding mask, in every layer's GPT2Attention;
// T5's decoder stack turns the same predicate into one additive mask.

// RUN: ftpipe-model-gen gpt2-tiny --quiet \
// RUN:   | ftpipe-opt --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s --check-prefix=GPT2
// RUN: ftpipe-model-gen t5-tiny --quiet \
// RUN:   | ftpipe-opt --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s --check-prefix=T5

// GPT2-LABEL: func.func @GPT2LMHeadModel(
// GPT2: %[[PAD:[0-9]+]] = tosa.mul {{.*}} -> tensor<2x1x1x16xf32> loc("GPT2LMHeadModel/GPT2Model[transformer]")
// GPT2: %[[IOTA0:[0-9]+]] = "tosa.const"() <{value = dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi32>}> {{.*}} loc("GPT2LMHeadModel/GPT2Model[transformer]/ModuleList[h]/GPT2Block[0]/GPT2Attention[attn]")
// GPT2-NEXT: %[[ROWS0:[0-9]+]] = tosa.reshape %[[IOTA0]] {new_shape = array<i64: 1, 1, 16, 1>}
// GPT2-NEXT: %[[IOTA1:[0-9]+]] = "tosa.const"() <{value = dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi32>}>
// GPT2-NEXT: %[[COLS0:[0-9]+]] = tosa.reshape %[[IOTA1]] {new_shape = array<i64: 1, 1, 1, 16>}
// GPT2-NEXT: %[[CAUSAL0:[0-9]+]] = tosa.greater_equal %[[ROWS0]], %[[COLS0]] : (tensor<1x1x16x1xi32>, tensor<1x1x1x16xi32>) -> tensor<1x1x16x16xi1> loc("GPT2LMHeadModel/GPT2Model[transformer]/ModuleList[h]/GPT2Block[0]/GPT2Attention[attn]")
// GPT2: %[[SCALE0:[0-9]+]] = "tosa.const"() <{value = dense<2.500000e-01> : tensor<1x1x1x1xf32>}>
// GPT2-NEXT: %[[SCALED0:[0-9]+]] = tosa.mul %{{[0-9]+}}, %[[SCALE0]]
// GPT2-NEXT: %[[LOWEST0:[0-9]+]] = "tosa.const"() <{value = dense<-3.40282347E+38> : tensor<1x1x1x1xf32>}>
// GPT2-NEXT: %[[MASKED0:[0-9]+]] = tosa.select %[[CAUSAL0]], %[[SCALED0]], %[[LOWEST0]] : (tensor<1x1x16x16xi1>, tensor<2x4x16x16xf32>, tensor<1x1x1x1xf32>) -> tensor<2x4x16x16xf32> loc("GPT2LMHeadModel/GPT2Model[transformer]/ModuleList[h]/GPT2Block[0]/GPT2Attention[attn]")
// GPT2-NEXT: %[[SCORES0:[0-9]+]] = tosa.add %[[MASKED0]], %[[PAD]]
// GPT2-NEXT: tosa.reduce_max %[[SCORES0]] {axis = 3 : i32}
// GPT2: %[[CAUSAL1:[0-9]+]] = tosa.greater_equal {{.*}} -> tensor<1x1x16x16xi1> loc("GPT2LMHeadModel/GPT2Model[transformer]/ModuleList[h]/GPT2Block[1]/GPT2Attention[attn]")
// GPT2: tosa.select %[[CAUSAL1]], {{.*}} loc("GPT2LMHeadModel/GPT2Model[transformer]/ModuleList[h]/GPT2Block[1]/GPT2Attention[attn]")

// T5-LABEL: func.func @T5ForConditionalGeneration(
// T5: %[[CAUSAL:[0-9]+]] = tosa.greater_equal {{.*}} : (tensor<1x1x8x1xi32>, tensor<1x1x1x8xi32>) -> tensor<1x1x8x8xi1> loc("T5ForConditionalGeneration/T5Stack[decoder]")
// T5-NEXT: %[[KEEP:[0-9]+]] = tosa.cast %[[CAUSAL]] : (tensor<1x1x8x8xi1>) -> tensor<1x1x8x8xf32>
// T5-NEXT: %[[ONE:[0-9]+]] = "tosa.const"() <{value = dense<1.000000e+00> : tensor<1x1x1x1xf32>}>
// T5-NEXT: %[[DROP:[0-9]+]] = tosa.sub %[[ONE]], %[[KEEP]]
// T5-NEXT: %[[LOWEST:[0-9]+]] = "tosa.const"() <{value = dense<-3.40282347E+38> : tensor<1x1x1x1xf32>}>
// T5-NEXT: %[[MASK:[0-9]+]] = tosa.mul %[[DROP]], %[[LOWEST]] {{.*}} -> tensor<1x1x8x8xf32> loc("T5ForConditionalGeneration/T5Stack[decoder]")
// T5: tosa.add %{{[0-9]+}}, %[[MASK]] : (tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x4x8x8xf32> loc("T5ForConditionalGeneration/T5Stack[decoder]/ModuleList[block]/T5Block[0]/T5LayerSelfAttention[0]/T5Attention[SelfAttention]")
