// Tests --loss: a labels input (without `ftpipe.param`) and a scalar
// cross-entropy result. GPT-2 predicts token t + 1 from token t (shifted
// logits and labels); BERT averages the start and end span losses over
// clamped positions; labels equal to -100 (for BERT's spans, the sequence
// length) are ignored, as HF's CrossEntropyLoss does.

// RUN: ftpipe-model-gen gpt2-tiny --loss --quiet \
// RUN:   | ftpipe-opt --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s --check-prefix=GPT2
// RUN: ftpipe-model-gen bert-tiny --loss --quiet \
// RUN:   | ftpipe-opt --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s --check-prefix=BERT
// RUN: ftpipe-model-gen t5-tiny --loss --quiet \
// RUN:   | ftpipe-opt --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s --check-prefix=T5

// GPT2-LABEL: func.func @GPT2LMHeadModel(
// GPT2-SAME: %[[LABELS:arg2]]: tensor<2x16xi32> loc("labels"),
// GPT2-SAME: -> tensor<f32>
// GPT2: %[[LOGITS:[0-9]+]] = tosa.slice %{{[0-9]+}} {size = array<i64: 2, 15, 512>, start = array<i64: 0, 0, 0>} : (tensor<2x16x512xf32>) -> tensor<2x15x512xf32> loc("GPT2LMHeadModel")
// GPT2: %[[SHIFTED:[0-9]+]] = tosa.slice %[[LABELS]] {size = array<i64: 2, 15>, start = array<i64: 0, 1>} : (tensor<2x16xi32>) -> tensor<2x15xi32> loc("GPT2LMHeadModel")
// GPT2: %[[IGNORE:[0-9]+]] = "tosa.const"() <{value = dense<-100> : tensor<1x1xi32>}>
// GPT2: tosa.gather %{{[0-9]+}}, %{{[0-9]+}} : (tensor<30x512x1xf32>, tensor<30x1xi32>) -> tensor<30x1x1xf32>
// GPT2: %[[LOSS:[0-9]+]] = tosa.reshape %{{[0-9]+}} {new_shape = array<i64>} : (tensor<1x1xf32>) -> tensor<f32> loc("GPT2LMHeadModel")
// GPT2-NEXT: return %[[LOSS]] : tensor<f32> loc("GPT2LMHeadModel")

// BERT-LABEL: func.func @BertForQuestionAnswering(
// BERT-SAME: %[[START:arg3]]: tensor<2xi32> loc("start_positions"), %[[END:arg4]]: tensor<2xi32> loc("end_positions"),
// BERT-SAME: -> tensor<f32>
// BERT: tosa.maximum %[[START]], %{{[0-9]+}} : (tensor<2xi32>, tensor<1xi32>) -> tensor<2xi32>
// BERT: tosa.maximum %[[END]], %{{[0-9]+}}
// BERT: "tosa.const"() <{value = dense<16> : tensor<1x1xi32>}>
// BERT: %[[SUM:[0-9]+]] = tosa.add %{{[0-9]+}}, %{{[0-9]+}} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// BERT-NEXT: %[[HALF:[0-9]+]] = "tosa.const"() <{value = dense<5.000000e-01> : tensor<f32>}>
// BERT-NEXT: %[[LOSS:[0-9]+]] = tosa.mul %[[SUM]], %[[HALF]]
// BERT-NEXT: return %[[LOSS]] : tensor<f32>

// T5-LABEL: func.func @T5ForConditionalGeneration(
// T5-SAME: %arg2: tensor<2x8xi32> loc("decoder_input_ids"), %[[LABELS:arg3]]: tensor<2x8xi32> loc("labels"),
// T5-SAME: -> tensor<f32>
// T5: tosa.reshape %[[LABELS]] {new_shape = array<i64: 16>}
// T5: return {{.*}} : tensor<f32>
