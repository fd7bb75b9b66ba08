// Tests that trainable weights are function arguments marked `ftpipe.param`
// with their Hugging Face state-dict name, in HF's layouts (Linear [out, in],
// Conv1D [in, out]), and that data inputs are i32 arguments without marks.

// RUN: ftpipe-model-gen bert-tiny --quiet | FileCheck %s --check-prefix=BERT
// RUN: ftpipe-model-gen gpt2-tiny --quiet | FileCheck %s --check-prefix=GPT2
// RUN: ftpipe-model-gen t5-tiny --quiet | FileCheck %s --check-prefix=T5

// BERT-LABEL: func.func @BertForQuestionAnswering(
// BERT-SAME: %arg0: tensor<2x16xi32> loc("input_ids"), %arg1: tensor<2x16xi32> loc("attention_mask"), %arg2: tensor<2x16xi32> loc("token_type_ids"),
// BERT-SAME: tensor<512x64xf32> {ftpipe.name = "bert.embeddings.word_embeddings.weight", ftpipe.param}
// BERT-SAME: tensor<2x64xf32> {ftpipe.name = "bert.embeddings.token_type_embeddings.weight", ftpipe.param}
// BERT-SAME: tensor<128x64xf32> {ftpipe.name = "bert.embeddings.position_embeddings.weight", ftpipe.param}
// BERT-SAME: tensor<64xf32> {ftpipe.name = "bert.embeddings.LayerNorm.weight", ftpipe.param}
// BERT-SAME: tensor<64xf32> {ftpipe.name = "bert.embeddings.LayerNorm.bias", ftpipe.param}
// BERT-SAME: tensor<64x64xf32> {ftpipe.name = "bert.encoder.layer.0.attention.self.query.weight", ftpipe.param}
// BERT-SAME: tensor<64xf32> {ftpipe.name = "bert.encoder.layer.0.attention.self.query.bias", ftpipe.param}
// BERT-SAME: tensor<256x64xf32> {ftpipe.name = "bert.encoder.layer.0.intermediate.dense.weight", ftpipe.param}
// BERT-SAME: tensor<64x256xf32> {ftpipe.name = "bert.encoder.layer.0.output.dense.weight", ftpipe.param}
// BERT-SAME: tensor<64xf32> {ftpipe.name = "bert.encoder.layer.1.output.LayerNorm.bias", ftpipe.param}
// BERT-SAME: tensor<2x64xf32> {ftpipe.name = "qa_outputs.weight", ftpipe.param}
// BERT-SAME: tensor<2xf32> {ftpipe.name = "qa_outputs.bias", ftpipe.param}
// BERT-SAME: -> (tensor<2x16xf32>, tensor<2x16xf32>)

// GPT2-LABEL: func.func @GPT2LMHeadModel(
// GPT2-SAME: %arg0: tensor<2x16xi32> loc("input_ids"), %arg1: tensor<2x16xi32> loc("attention_mask"),
// GPT2-SAME: tensor<512x64xf32> {ftpipe.name = "transformer.wte.weight", ftpipe.param}
// GPT2-SAME: tensor<128x64xf32> {ftpipe.name = "transformer.wpe.weight", ftpipe.param}
// GPT2-SAME: tensor<64xf32> {ftpipe.name = "transformer.h.0.ln_1.weight", ftpipe.param}
// GPT2-SAME: tensor<64x192xf32> {ftpipe.name = "transformer.h.0.attn.c_attn.weight", ftpipe.param}
// GPT2-SAME: tensor<192xf32> {ftpipe.name = "transformer.h.0.attn.c_attn.bias", ftpipe.param}
// GPT2-SAME: tensor<64x256xf32> {ftpipe.name = "transformer.h.0.mlp.c_fc.weight", ftpipe.param}
// GPT2-SAME: tensor<256x64xf32> {ftpipe.name = "transformer.h.1.mlp.c_proj.weight", ftpipe.param}
// GPT2-SAME: tensor<64xf32> {ftpipe.name = "transformer.ln_f.bias", ftpipe.param}
// GPT2-SAME: -> tensor<2x16x512xf32>

// T5-LABEL: func.func @T5ForConditionalGeneration(
// T5-SAME: %arg0: tensor<2x16xi32> loc("input_ids"), %arg1: tensor<2x16xi32> loc("attention_mask"), %arg2: tensor<2x8xi32> loc("decoder_input_ids"),
// T5-SAME: tensor<512x64xf32> {ftpipe.name = "shared.weight", ftpipe.param}
// T5-SAME: tensor<64xf32> {ftpipe.name = "encoder.block.0.layer.0.layer_norm.weight", ftpipe.param}
// T5-SAME: tensor<64x64xf32> {ftpipe.name = "encoder.block.0.layer.0.SelfAttention.q.weight", ftpipe.param}
// T5-SAME: tensor<32x4xf32> {ftpipe.name = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", ftpipe.param}
// T5-SAME: tensor<256x64xf32> {ftpipe.name = "encoder.block.0.layer.1.DenseReluDense.wi.weight", ftpipe.param}
// T5-SAME: tensor<64x256xf32> {ftpipe.name = "encoder.block.0.layer.1.DenseReluDense.wo.weight", ftpipe.param}
// T5-SAME: tensor<64xf32> {ftpipe.name = "encoder.final_layer_norm.weight", ftpipe.param}
// T5-SAME: tensor<32x4xf32> {ftpipe.name = "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", ftpipe.param}
// T5-SAME: tensor<64x64xf32> {ftpipe.name = "decoder.block.0.layer.1.EncDecAttention.k.weight", ftpipe.param}
// T5-SAME: tensor<256x64xf32> {ftpipe.name = "decoder.block.1.layer.2.DenseReluDense.wi.weight", ftpipe.param}
// T5-SAME: tensor<64xf32> {ftpipe.name = "decoder.final_layer_norm.weight", ftpipe.param}
// T5-SAME: -> tensor<2x8x512xf32>
