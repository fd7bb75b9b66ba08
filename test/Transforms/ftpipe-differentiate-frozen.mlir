// Tests that a frozen prefix has no backward: tiny BERT with its embeddings
// and first layer frozen, tiny LLaMA with its token embedding and first
// decoder layer frozen. No op of the adjoint comes from the frozen prefix
// (its ops carry their module scope as location), the rest of the model still
// has its adjoints, and only the parameters that are not frozen get a
// gradient (39 parameters of BERT, 21 frozen; 21 of LLaMA, 10
// frozen). The runs without freezing show that the checks can fail.

// RUN: ftpipe-model-gen bert-tiny --loss --quiet -o %t.bert.mlir
// RUN: ftpipe-opt %t.bert.mlir --pass-pipeline='builtin.module(func.func(ftpipe-freeze-params{regex=^bert\.(embeddings|encoder\.layer\.0)\.}),ftpipe-differentiate{recompute=false})' --mlir-print-debuginfo --mlir-print-local-scope -o %t.bert.frozen.mlir
// RUN: FileCheck %s --check-prefix=BERT < %t.bert.frozen.mlir
// RUN: grep -o 'ftpipe.grad_of' %t.bert.frozen.mlir | count 18
// RUN: ftpipe-opt %t.bert.mlir --ftpipe-differentiate=recompute=false --mlir-print-debuginfo --mlir-print-local-scope -o %t.bert.all.mlir
// RUN: FileCheck %s --check-prefix=BERT-ALL < %t.bert.all.mlir
// RUN: grep -o 'ftpipe.grad_of' %t.bert.all.mlir | count 39

// BERT-LABEL: func.func @BertForQuestionAnswering_adjoint
// BERT: loc("BertForQuestionAnswering/BertModel[bert]/BertEncoder[encoder]/ModuleList[layer]/BertLayer[1]/
// BERT-NOT: BertLayer[0]
// BERT-NOT: BertEmbeddings
// BERT-ALL-LABEL: func.func @BertForQuestionAnswering_adjoint
// BERT-ALL: BertLayer[0]
// BERT-ALL: BertEmbeddings

// RUN: ftpipe-model-gen llama-tiny --loss --quiet -o %t.llama.mlir
// RUN: ftpipe-opt %t.llama.mlir --pass-pipeline='builtin.module(func.func(ftpipe-freeze-params{regex=^model\.(embed_tokens|layers\.0)\.}),ftpipe-differentiate{recompute=false})' --mlir-print-debuginfo --mlir-print-local-scope -o %t.llama.frozen.mlir
// RUN: FileCheck %s --check-prefix=LLAMA < %t.llama.frozen.mlir
// RUN: grep -o 'ftpipe.grad_of' %t.llama.frozen.mlir | count 11
// RUN: ftpipe-opt %t.llama.mlir --ftpipe-differentiate=recompute=false --mlir-print-debuginfo --mlir-print-local-scope -o %t.llama.all.mlir
// RUN: FileCheck %s --check-prefix=LLAMA-ALL < %t.llama.all.mlir

// LLAMA-LABEL: func.func @LlamaForCausalLM_adjoint
// LLAMA: loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[1]/
// LLAMA-NOT: LlamaDecoderLayer[0]
// LLAMA-NOT: Embedding[embed_tokens]
// LLAMA-ALL-LABEL: func.func @LlamaForCausalLM_adjoint
// LLAMA-ALL: LlamaDecoderLayer[0]
