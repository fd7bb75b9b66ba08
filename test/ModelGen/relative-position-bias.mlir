// Tests T5's relative position bias: only block 0 of each stack owns
// `relative_attention_bias` and computes the bias (bucket table lookup by
// key - query, then the learned [buckets, heads] table), folds the mask into
// it, and every block of the stack adds that same value to its scores. The
// decoder's cross-attention likewise shares block 0's zeros + encoder mask.

// RUN: ftpipe-model-gen t5-tiny --quiet \
// RUN:   | ftpipe-opt --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s
// RUN: ftpipe-model-gen t5-tiny --quiet \
// RUN:   | ftpipe-opt --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s --check-prefix=ONCE

// CHECK-LABEL: func.func @T5ForConditionalGeneration(
// CHECK: %[[ENC_MASK:[0-9]+]] = tosa.mul {{.*}} -> tensor<2x1x1x16xf32> loc("T5ForConditionalGeneration/T5Stack[encoder]")
// Bidirectional buckets of key - query = -15 .. 15 (32 buckets, max distance 128).
// CHECK: "tosa.const"() <{value = dense<{{\[\[\[}}9], [9], [9], [9], [8], [8], [8], [8], [7], [6], [5], [4], [3], [2], [1], [0], [17], [18], [19], [20], [21], [22], [23], [24], [24], [24], [24], [25], [25], [25], [25]]]> : tensor<1x31x1xi32>}> {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[0]/T5LayerSelfAttention[0]/T5Attention[SelfAttention]")
// CHECK: tosa.gather {{.*}} : (tensor<1x32x4xf32>, tensor<1x256xi32>) -> tensor<1x256x4xf32> loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[0]/T5LayerSelfAttention[0]/T5Attention[SelfAttention]/Embedding[relative_attention_bias]")
// CHECK: %[[ENC_BIAS:[0-9]+]] = tosa.add %{{[0-9]+}}, %[[ENC_MASK]] : (tensor<1x4x16x16xf32>, tensor<2x1x1x16xf32>) -> tensor<2x4x16x16xf32> loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[0]/T5LayerSelfAttention[0]/T5Attention[SelfAttention]")
// CHECK: tosa.add %{{[0-9]+}}, %[[ENC_BIAS]] {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[0]/T5LayerSelfAttention[0]/T5Attention[SelfAttention]")
// CHECK: tosa.add %{{[0-9]+}}, %[[ENC_BIAS]] {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[1]/T5LayerSelfAttention[0]/T5Attention[SelfAttention]")

// CHECK: %[[CAUSAL:[0-9]+]] = tosa.mul {{.*}} -> tensor<1x1x8x8xf32> loc("T5ForConditionalGeneration/T5Stack[decoder]")
// CHECK: %[[CROSS_MASK:[0-9]+]] = tosa.mul {{.*}} -> tensor<2x1x1x16xf32> loc("T5ForConditionalGeneration/T5Stack[decoder]")
// Unidirectional buckets of key - query = -7 .. 7: the future (> 0) is bucket 0.
// CHECK: "tosa.const"() <{value = dense<{{\[\[\[}}7], [6], [5], [4], [3], [2], [1], [0], [0], [0], [0], [0], [0], [0], [0]]]> : tensor<1x15x1xi32>}>
// CHECK: tosa.gather {{.*}} loc("T5ForConditionalGeneration/T5Stack[decoder]/ModuleList[block]/T5Block[0]/T5LayerSelfAttention[0]/T5Attention[SelfAttention]/Embedding[relative_attention_bias]")
// CHECK: %[[DEC_BIAS:[0-9]+]] = tosa.add %{{[0-9]+}}, %[[CAUSAL]] : (tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x4x8x8xf32> loc("T5ForConditionalGeneration/T5Stack[decoder]/ModuleList[block]/T5Block[0]/T5LayerSelfAttention[0]/T5Attention[SelfAttention]")
// CHECK: tosa.add %{{[0-9]+}}, %[[DEC_BIAS]] {{.*}} loc("T5ForConditionalGeneration/T5Stack[decoder]/ModuleList[block]/T5Block[0]/T5LayerSelfAttention[0]/T5Attention[SelfAttention]")
// CHECK: %[[ZEROS:[0-9]+]] = "tosa.const"() <{value = dense<0.000000e+00> : tensor<1x4x8x16xf32>}> {{.*}} loc("T5ForConditionalGeneration/T5Stack[decoder]/ModuleList[block]/T5Block[0]/T5LayerCrossAttention[1]/T5Attention[EncDecAttention]")
// CHECK-NEXT: %[[CROSS_BIAS:[0-9]+]] = tosa.add %[[ZEROS]], %[[CROSS_MASK]]
// CHECK: tosa.add %{{[0-9]+}}, %[[CROSS_BIAS]] {{.*}} loc("T5ForConditionalGeneration/T5Stack[decoder]/ModuleList[block]/T5Block[0]/T5LayerCrossAttention[1]/T5Attention[EncDecAttention]")
// CHECK: tosa.add %{{[0-9]+}}, %[[DEC_BIAS]] {{.*}} loc("T5ForConditionalGeneration/T5Stack[decoder]/ModuleList[block]/T5Block[1]/T5LayerSelfAttention[0]/T5Attention[SelfAttention]")
// CHECK: tosa.add %{{[0-9]+}}, %[[CROSS_BIAS]] {{.*}} loc("T5ForConditionalGeneration/T5Stack[decoder]/ModuleList[block]/T5Block[1]/T5LayerCrossAttention[1]/T5Attention[EncDecAttention]")

// One bias table per stack, looked up once per stack.
// ONCE-LABEL: func.func @T5ForConditionalGeneration(
// ONCE-SAME: {ftpipe.name = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", ftpipe.param}
// ONCE-SAME: {ftpipe.name = "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", ftpipe.param}
// ONCE-NOT: relative_attention_bias.weight
// ONCE: tosa.gather {{.*}}T5Block[0]/T5LayerSelfAttention[0]/T5Attention[SelfAttention]/Embedding[relative_attention_bias]
// ONCE: tosa.gather {{.*}}T5Block[0]/T5LayerSelfAttention[0]/T5Attention[SelfAttention]/Embedding[relative_attention_bias]
// ONCE-NOT: Embedding[relative_attention_bias]
