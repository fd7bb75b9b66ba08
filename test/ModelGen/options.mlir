// Tests the tool's options: shapes (micro-batch, sequence and decoder
// lengths), --head=none (the bare backbone, HF names without the head's
// prefix), --element-type=f64, -o, --list-models and the one-line summary
// on stderr.

// RUN: ftpipe-model-gen t5-tiny --micro-batch-size=3 --seq-len=10 --decoder-seq-len=5 --quiet \
// RUN:   | FileCheck %s --check-prefix=SHAPES
// SHAPES-LABEL: func.func @T5ForConditionalGeneration(
// SHAPES-SAME: tensor<3x10xi32> loc("input_ids"), %arg1: tensor<3x10xi32> loc("attention_mask"), %arg2: tensor<3x5xi32> loc("decoder_input_ids")
// SHAPES-SAME: -> tensor<3x5x512xf32>

// A checkpoint directory: its config.json (here the bundled t5-tiny's); a
// directory without one is refused by the file's name.
// RUN: rm -rf %t.ckpt %t.empty && mkdir -p %t.ckpt %t.empty
// RUN: cp %S/../../models/t5-tiny.json %t.ckpt/config.json
// RUN: ftpipe-model-gen %t.ckpt --micro-batch-size=3 --seq-len=10 --decoder-seq-len=5 --quiet \
// RUN:   | FileCheck %s --check-prefix=SHAPES
// RUN: not ftpipe-model-gen %t.empty 2>&1 | FileCheck %s --check-prefix=NOCONFIG
// NOCONFIG: error: {{.*}}empty{{/|\\}}config.json

// RUN: ftpipe-model-gen bert-tiny --head=none --quiet \
// RUN:   | ftpipe-opt --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s --check-prefix=NOHEAD
// NOHEAD-LABEL: func.func @BertModel(
// NOHEAD-SAME: {ftpipe.name = "embeddings.word_embeddings.weight", ftpipe.param}
// NOHEAD-SAME: {ftpipe.name = "encoder.layer.1.output.LayerNorm.bias", ftpipe.param}
// NOHEAD-SAME: -> tensor<2x16x64xf32>
// NOHEAD-NOT: qa_outputs
// NOHEAD: loc("BertModel/BertEncoder[encoder]/ModuleList[layer]/BertLayer[0]/BertAttention[attention]/BertSelfAttention[self]/Linear[query]")

// RUN: ftpipe-model-gen gpt2-tiny --element-type=f64 --quiet | ftpipe-opt | FileCheck %s --check-prefix=F64 --implicit-check-not=f32
// F64-LABEL: func.func @GPT2LMHeadModel(
// F64-SAME: tensor<512x64xf64> {ftpipe.name = "transformer.wte.weight", ftpipe.param}
// F64-SAME: -> tensor<2x16x512xf64>
// F64: "tosa.const"() <{value = dense<-1.7976931348623157E+308> : tensor<1x1x1x1xf64>}>

// RUN: rm -f %t.mlir
// RUN: ftpipe-model-gen gpt2-tiny -o %t.mlir 2>&1 | FileCheck %s --check-prefix=SUMMARY
// RUN: ftpipe-opt %t.mlir | FileCheck %s --check-prefix=FILE
// SUMMARY: ftpipe-model-gen: gpt2-tiny: {{[0-9]+}} ops, 141056 parameters, 564224 parameter bytes, {{[0-9]+}} IR bytes, {{[0-9.]+}} s
// SUMMARY-NOT: func.func
// FILE: func.func @GPT2LMHeadModel(

// RUN: ftpipe-model-gen --list-models | FileCheck %s --check-prefix=LIST
// LIST-DAG: bert-large-uncased
// LIST-DAG: bert-tiny
// LIST-DAG: gpt2-xl
// LIST-DAG: gpt2-tiny
// LIST-DAG: t5-3b
// LIST-DAG: t5-tiny

// A config file is read by path; its "ftpipe" shapes are its defaults.
// RUN: ftpipe-model-gen %ftpipe_src_root/models/gpt2-tiny.json --quiet | FileCheck %s --check-prefix=PATH
// PATH: func.func @GPT2LMHeadModel(%arg0: tensor<2x16xi32>
