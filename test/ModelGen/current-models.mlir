// Tests the models people fine-tune today at their bundled shapes: Flan-T5-XL
// (4 x 512 -> 4) and Llama-2-7B (1 x 2048). Parameter counts in the summary
// are transformers' num_parameters() for the same configs; each parses and
// verifies with ftpipe-opt, passes tosa-validate and lowers through
// TOSA-to-linalg with no TOSA op left; parameters keep HF's names.

// RUN: ftpipe-model-gen flan-t5-xl -o %t.flan.mlir 2>&1 | FileCheck %s --check-prefix=FLAN
// FLAN: ftpipe-model-gen: flan-t5-xl: {{[0-9]+}} ops, 2849757184 parameters, 11399028736 parameter bytes
// RUN: ftpipe-model-gen llama-2-7b -o %t.llama.mlir 2>&1 | FileCheck %s --check-prefix=LLAMA
// LLAMA: ftpipe-model-gen: llama-2-7b: {{[0-9]+}} ops, 6738415616 parameters, 26953662464 parameter bytes

// RUN: ftpipe-opt %t.flan.mlir | FileCheck %s --check-prefix=VERIFY-FLAN
// VERIFY-FLAN: func.func @T5ForConditionalGeneration(%arg0: tensor<4x512xi32>{{.*}}, %arg2: tensor<4x4xi32>
// RUN: ftpipe-opt %t.llama.mlir | FileCheck %s --check-prefix=VERIFY-LLAMA
// VERIFY-LLAMA: func.func @LlamaForCausalLM(%arg0: tensor<1x2048xi32>{{.*}}, %arg1: tensor<1x2048xi32>

// RUN: mlir-opt %t.flan.mlir --pass-pipeline="builtin.module(tosa-validate{profile=mi level=8k strict-op-spec-alignment},func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor))" \
// RUN:   | FileCheck %s --check-prefix=LINALG --implicit-check-not=tosa.
// RUN: mlir-opt %t.llama.mlir --pass-pipeline="builtin.module(tosa-validate{profile=mi level=8k strict-op-spec-alignment},func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor))" \
// RUN:   | FileCheck %s --check-prefix=LINALG --implicit-check-not=tosa.
// LINALG: func.func
// LINALG: linalg.batch_matmul
// LINALG: return

// RUN: FileCheck %s --check-prefix=FLAN-SCOPE --input-file=%t.flan.mlir
// FLAN-SCOPE: {ftpipe.name = "encoder.block.23.layer.1.DenseReluDense.wi_0.weight", ftpipe.param} loc("T5ForConditionalGeneration/T5Stack[encoder]/ModuleList[block]/T5Block[23]/T5LayerFF[1]/T5DenseGatedActDense[DenseReluDense]/Linear[wi_0]")
// FLAN-SCOPE: {ftpipe.name = "lm_head.weight", ftpipe.param} loc("T5ForConditionalGeneration/Linear[lm_head]")
// RUN: FileCheck %s --check-prefix=LLAMA-SCOPE --input-file=%t.llama.mlir
// LLAMA-SCOPE: {ftpipe.name = "model.layers.31.self_attn.q_proj.weight", ftpipe.param} loc("LlamaForCausalLM/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[31]/LlamaAttention[self_attn]/Linear[q_proj]")
// LLAMA-SCOPE: {ftpipe.name = "lm_head.weight", ftpipe.param} loc("LlamaForCausalLM/Linear[lm_head]")
