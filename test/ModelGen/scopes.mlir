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
