// Tests the tied LM heads: the token embedding is ONE argument (no
// `lm_head.weight`) used twice, by the embedding lookup and by the LM head's
// matmul; T5 scales the decoder output by d_model^-0.5 before the head.

// RUN: ftpipe-model-gen gpt2-tiny --quiet \
// RUN:   | ftpipe-opt --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s --check-prefix=GPT2 --implicit-check-not=lm_head.weight
// RUN: ftpipe-model-gen t5-tiny --quiet \
// RUN:   | ftpipe-opt --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s --check-prefix=T5 --implicit-check-not=lm_head.weight

// GPT2-LABEL: func.func @GPT2LMHeadModel(
// GPT2-SAME: %[[WTE:arg[0-9]+]]: tensor<512x64xf32> {ftpipe.name = "transformer.wte.weight", ftpipe.param}
// GPT2: tosa.reshape %[[WTE]] {new_shape = array<i64: 1, 512, 64>} {{.*}} loc("GPT2LMHeadModel/GPT2Model[transformer]/Embedding[wte]")
// GPT2-NOT: %[[WTE]]{{[^0-9]}}
// GPT2: %[[T:[0-9]+]] = tosa.transpose %[[WTE]], %{{[0-9]+}} : (tensor<512x64xf32>, tensor<2xi32>) -> tensor<64x512xf32> loc("GPT2LMHeadModel/Linear[lm_head]")
// GPT2-NOT: %[[WTE]]{{[^0-9]}}
// GPT2: return

// T5-LABEL: func.func @T5ForConditionalGeneration(
// T5-SAME: %[[SHARED:arg[0-9]+]]: tensor<512x64xf32> {ftpipe.name = "shared.weight", ftpipe.param}
// T5: tosa.reshape %[[SHARED]] {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/Embedding[embed_tokens]")
// T5-NOT: %[[SHARED]]{{[^0-9]}}
// T5: tosa.reshape %[[SHARED]] {{.*}} loc("T5ForConditionalGeneration/T5Stack[decoder]/Embedding[embed_tokens]")
// T5-NOT: %[[SHARED]]{{[^0-9]}}
// T5: %[[SCALE:[0-9]+]] = "tosa.const"() <{value = dense<1.250000e-01> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32> loc("T5ForConditionalGeneration")
// T5-NEXT: %[[SCALED:[0-9]+]] = tosa.mul %{{[0-9]+}}, %[[SCALE]] {{.*}} loc("T5ForConditionalGeneration")
// T5-NOT: %[[SHARED]]{{[^0-9]}}
// T5: tosa.transpose %[[SHARED]], %{{[0-9]+}} : (tensor<512x64xf32>, tensor<2xi32>) -> tensor<64x512xf32> loc("T5ForConditionalGeneration/Linear[lm_head]")
// T5: tosa.reshape %[[SCALED]] {{.*}} loc("T5ForConditionalGeneration/Linear[lm_head]")
// T5-NOT: %[[SHARED]]{{[^0-9]}}
// T5: return
