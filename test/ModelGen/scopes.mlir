// Tests that every op of the tiny models carries its module scope as a
// NameLoc in FTPipe's tracer format ("Type[attr]/Type[attr]/..."), with HF's
// module classes and attribute names, and that no op is left unscoped.

// RUN: ftpipe-model-gen bert-tiny --quiet \
// RUN:   | ftpipe-opt --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s --check-prefix=BERT --implicit-check-not="loc(unknown)"
// RUN: ftpipe-model-gen gpt2-tiny --quiet \
// RUN:   | ftpipe-opt --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s --check-prefix=GPT2 --implicit-check-not="loc(unknown)"
// RUN: ftpipe-model-gen t5-tiny --quiet \
// RUN:   | ftpipe-opt --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s --check-prefix=T5 --implicit-check-not="loc(unknown)"
// RUN: ftpipe-model-gen flan-t5-tiny --quiet \
// RUN:   | ftpipe-opt --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s --check-prefix=FLAN --implicit-check-not="loc(unknown)"
// RUN: ftpipe-model-gen llama-tiny --loss --quiet \
// RUN:   | ftpipe-opt --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s --check-prefix=LLAMA --implicit-check-not="loc(unknown)"

// BERT-LABEL: func.func @BertForQuestionAnswering(
// BERT: tosa.gather {{.*}} loc("BertForQuestionAnswering/BertModel[bert]/BertEmbeddings[embeddings]/Embedding[word_embeddings]")
// BERT: tosa.slice {{.*}} loc("BertForQuestionAnswering/BertModel[bert]/BertEmbeddings[embeddings]/Embedding[position_embeddings]")
// BERT: tosa.rsqrt {{.*}} loc("BertForQuestionAnswering/BertModel[bert]/BertEmbeddings[embeddings]/LayerNorm[LayerNorm]")
// BERT: tosa.matmul {{.*}} loc("BertForQuestionAnswering/BertModel[bert]/BertEncoder[encoder]/ModuleList[layer]/BertLayer[0]/BertAttention[attention]/BertSelfAttention[self]/Linear[query]")
// BERT: tosa.matmul {{.*}} loc("BertForQuestionAnswering/BertModel[bert]/BertEncoder[encoder]/ModuleList[layer]/BertLayer[0]/BertAttention[attention]/BertSelfAttention[self]/Linear[key]")
// BERT: tosa.matmul {{.*}} loc("BertForQuestionAnswering/BertModel[bert]/BertEncoder[encoder]/ModuleList[layer]/BertLayer[0]/BertAttention[attention]/BertSelfAttention[self]/Linear[value]")
// BERT: tosa.exp {{.*}} loc("BertForQuestionAnswering/BertModel[bert]/BertEncoder[encoder]/ModuleList[layer]/BertLayer[0]/BertAttention[attention]/BertSelfAttention[self]")
// BERT: tosa.matmul {{.*}} loc("BertForQuestionAnswering/BertModel[bert]/BertEncoder[encoder]/ModuleList[layer]/BertLayer[0]/BertAttention[attention]/BertSelfOutput[output]/Linear[dense]")
// BERT: tosa.add {{.*}} loc("BertForQuestionAnswering/BertModel[bert]/BertEncoder[encoder]/ModuleList[layer]/BertLayer[0]/BertAttention[attention]/BertSelfOutput[output]")
// BERT: tosa.rsqrt {{.*}} loc("BertForQuestionAnswering/BertModel[bert]/BertEncoder[encoder]/ModuleList[layer]/BertLayer[0]/BertAttention[attention]/BertSelfOutput[output]/LayerNorm[LayerNorm]")
// BERT: tosa.matmul {{.*}} loc("BertForQuestionAnswering/BertModel[bert]/BertEncoder[encoder]/ModuleList[layer]/BertLayer[0]/BertIntermediate[intermediate]/Linear[dense]")
// BERT: tosa.erf {{.*}} loc("BertForQuestionAnswering/BertModel[bert]/BertEncoder[encoder]/ModuleList[layer]/BertLayer[0]/BertIntermediate[intermediate]/GELUActivation[intermediate_act_fn]")
// BERT: tosa.matmul {{.*}} loc("BertForQuestionAnswering/BertModel[bert]/BertEncoder[encoder]/ModuleList[layer]/BertLayer[0]/BertOutput[output]/Linear[dense]")
// BERT: tosa.matmul {{.*}} loc("BertForQuestionAnswering/BertModel[bert]/BertEncoder[encoder]/ModuleList[layer]/BertLayer[1]/BertAttention[attention]/BertSelfAttention[self]/Linear[query]")
// BERT: tosa.rsqrt {{.*}} loc("BertForQuestionAnswering/BertModel[bert]/BertEncoder[encoder]/ModuleList[layer]/BertLayer[1]/BertOutput[output]/LayerNorm[LayerNorm]")
// BERT: tosa.matmul {{.*}} loc("BertForQuestionAnswering/Linear[qa_outputs]")
// BERT: tosa.slice {{.*}} loc("BertForQuestionAnswering")
// BERT: return {{.*}} loc("BertForQuestionAnswering")

// GPT2-LABEL: func.func @GPT2LMHeadModel(
// GPT2: tosa.gather {{.*}} loc("GPT2LMHeadModel/GPT2Model[transformer]/Embedding[wte]")
// GPT2: tosa.slice {{.*}} loc("GPT2LMHeadModel/GPT2Model[transformer]/Embedding[wpe]")
// GPT2: tosa.rsqrt {{.*}} loc("GPT2LMHeadModel/GPT2Model[transformer]/ModuleList[h]/GPT2Block[0]/LayerNorm[ln_1]")
// GPT2: tosa.matmul {{.*}} loc("GPT2LMHeadModel/GPT2Model[transformer]/ModuleList[h]/GPT2Block[0]/GPT2Attention[attn]/Conv1D[c_attn]")
// GPT2: tosa.matmul {{.*}} loc("GPT2LMHeadModel/GPT2Model[transformer]/ModuleList[h]/GPT2Block[0]/GPT2Attention[attn]")
// GPT2: tosa.matmul {{.*}} loc("GPT2LMHeadModel/GPT2Model[transformer]/ModuleList[h]/GPT2Block[0]/GPT2Attention[attn]/Conv1D[c_proj]")
// GPT2: tosa.add {{.*}} loc("GPT2LMHeadModel/GPT2Model[transformer]/ModuleList[h]/GPT2Block[0]")
// GPT2: tosa.rsqrt {{.*}} loc("GPT2LMHeadModel/GPT2Model[transformer]/ModuleList[h]/GPT2Block[0]/LayerNorm[ln_2]")
// GPT2: tosa.matmul {{.*}} loc("GPT2LMHeadModel/GPT2Model[transformer]/ModuleList[h]/GPT2Block[0]/GPT2MLP[mlp]/Conv1D[c_fc]")
// GPT2: tosa.tanh {{.*}} loc("GPT2LMHeadModel/GPT2Model[transformer]/ModuleList[h]/GPT2Block[0]/GPT2MLP[mlp]/NewGELUActivation[act]")
// GPT2: tosa.matmul {{.*}} loc("GPT2LMHeadModel/GPT2Model[transformer]/ModuleList[h]/GPT2Block[0]/GPT2MLP[mlp]/Conv1D[c_proj]")
// GPT2: tosa.matmul {{.*}} loc("GPT2LMHeadModel/GPT2Model[transformer]/ModuleList[h]/GPT2Block[1]/GPT2Attention[attn]/Conv1D[c_attn]")
// GPT2: tosa.rsqrt {{.*}} loc("GPT2LMHeadModel/GPT2Model[transformer]/LayerNorm[ln_f]")
// GPT2: tosa.matmul {{.*}} loc("GPT2LMHeadModel/Linear[lm_head]")
// GPT2: return {{.*}} loc("GPT2LMHeadModel")

// T5-LABEL: func.func @T5ForConditionalGeneration(
// T5: tosa.gather {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/Embedding[embed_tokens]")
// T5: tosa.rsqrt {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[0]/T5LayerSelfAttention[0]/T5LayerNorm[layer_norm]")
// T5: tosa.matmul {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[0]/T5LayerSelfAttention[0]/T5Attention[SelfAttention]/Linear[q]")
// T5: tosa.matmul {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[0]/T5LayerSelfAttention[0]/T5Attention[SelfAttention]/Linear[o]")
// T5: tosa.maximum {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[0]/T5LayerFF[1]/T5DenseActDense[DenseReluDense]/ReLU[act]")
// T5: tosa.matmul {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[1]/T5LayerSelfAttention[0]/T5Attention[SelfAttention]/Linear[q]")
// T5: tosa.matmul {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[1]/T5LayerFF[1]/T5DenseActDense[DenseReluDense]/Linear[wo]")
// T5: tosa.rsqrt {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/T5LayerNorm[final_layer_norm]")
// T5: tosa.gather {{.*}} loc("T5ForConditionalGeneration/T5Stack[decoder]/Embedding[embed_tokens]")
// T5: tosa.matmul {{.*}} loc("T5ForConditionalGeneration/T5Stack[decoder]/ModuleList[block]/T5Block[0]/T5LayerSelfAttention[0]/T5Attention[SelfAttention]/Linear[q]")
// T5: tosa.matmul {{.*}} loc("T5ForConditionalGeneration/T5Stack[decoder]/ModuleList[block]/T5Block[0]/T5LayerCrossAttention[1]/T5Attention[EncDecAttention]/Linear[k]")
// T5: tosa.matmul {{.*}} loc("T5ForConditionalGeneration/T5Stack[decoder]/ModuleList[block]/T5Block[0]/T5LayerFF[2]/T5DenseActDense[DenseReluDense]/Linear[wi]")
// T5: tosa.matmul {{.*}} loc("T5ForConditionalGeneration/T5Stack[decoder]/ModuleList[block]/T5Block[1]/T5LayerCrossAttention[1]/T5Attention[EncDecAttention]/Linear[q]")
// T5: tosa.rsqrt {{.*}} loc("T5ForConditionalGeneration/T5Stack[decoder]/T5LayerNorm[final_layer_norm]")
// T5: tosa.matmul {{.*}} loc("T5ForConditionalGeneration/Linear[lm_head]")
// T5: return {{.*}} loc("T5ForConditionalGeneration")

// FLAN-LABEL: func.func @T5ForConditionalGeneration(
// FLAN: tosa.matmul {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[0]/T5LayerFF[1]/T5DenseGatedActDense[DenseReluDense]/Linear[wi_0]")
// FLAN: tosa.tanh {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[0]/T5LayerFF[1]/T5DenseGatedActDense[DenseReluDense]/NewGELUActivation[act]")
// FLAN: tosa.matmul {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[0]/T5LayerFF[1]/T5DenseGatedActDense[DenseReluDense]/Linear[wi_1]")
// FLAN: tosa.mul {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[0]/T5LayerFF[1]/T5DenseGatedActDense[DenseReluDense]")
// FLAN: tosa.matmul {{.*}} loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[0]/T5LayerFF[1]/T5DenseGatedActDense[DenseReluDense]/Linear[wo]")
// Untied: no d_model^-0.5 scaling before the head's matmul.
// FLAN: tosa.rsqrt {{.*}} loc("T5ForConditionalGeneration/T5Stack[decoder]/T5LayerNorm[final_layer_norm]")
// FLAN-NOT: tosa.mul {{.*}} loc("T5ForConditionalGeneration")
// FLAN: tosa.matmul {{.*}} loc("T5ForConditionalGeneration/Linear[lm_head]")

// LLAMA-LABEL: func.func @LlamaForCausalLM(
// LLAMA: tosa.gather {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/Embedding[embed_tokens]")
// LLAMA: tosa.mul {{.*}} loc("LlamaForCausalLM/LlamaModel[model]")
// LLAMA: "tosa.const"() {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/LlamaRotaryEmbedding[rotary_emb]")
// LLAMA: tosa.rsqrt {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[0]/LlamaRMSNorm[input_layernorm]")
// LLAMA: tosa.matmul {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[0]/LlamaAttention[self_attn]/Linear[q_proj]")
// LLAMA: tosa.matmul {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[0]/LlamaAttention[self_attn]/Linear[k_proj]")
// LLAMA: tosa.matmul {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[0]/LlamaAttention[self_attn]/Linear[v_proj]")
// LLAMA: tosa.concat {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[0]/LlamaAttention[self_attn]")
// LLAMA: tosa.greater_equal {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[0]/LlamaAttention[self_attn]")
// LLAMA: tosa.exp {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[0]/LlamaAttention[self_attn]")
// LLAMA: tosa.matmul {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[0]/LlamaAttention[self_attn]/Linear[o_proj]")
// LLAMA: tosa.add {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[0]")
// LLAMA: tosa.rsqrt {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[0]/LlamaRMSNorm[post_attention_layernorm]")
// LLAMA: tosa.matmul {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[0]/LlamaMLP[mlp]/Linear[gate_proj]")
// LLAMA: tosa.sigmoid {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[0]/LlamaMLP[mlp]/SiLUActivation[act_fn]")
// LLAMA: tosa.matmul {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[0]/LlamaMLP[mlp]/Linear[up_proj]")
// LLAMA: tosa.mul {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[0]/LlamaMLP[mlp]")
// LLAMA: tosa.matmul {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[0]/LlamaMLP[mlp]/Linear[down_proj]")
// LLAMA: tosa.matmul {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[1]/LlamaAttention[self_attn]/Linear[q_proj]")
// LLAMA: tosa.rsqrt {{.*}} loc("LlamaForCausalLM/LlamaModel[model]/LlamaRMSNorm[norm]")
// LLAMA: tosa.matmul {{.*}} loc("LlamaForCausalLM/Linear[lm_head]")
// LLAMA: tosa.gather {{.*}} loc("LlamaForCausalLM")
// LLAMA: return {{.*}} loc("LlamaForCausalLM")
