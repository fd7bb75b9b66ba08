// Tests that bad configs and options fail with one clear error line and a
// non-zero exit, never a crash.

// RUN: split-file %s %t

// RUN: not ftpipe-model-gen %t/missing.json 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: ftpipe-model-gen: error: {{.*}}missing.json: field 'num_attention_heads' is missing{{$}}
// MISSING-NOT: {{.}}
// RUN: not ftpipe-model-gen %t/zero-heads.json 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: ftpipe-model-gen: error: {{.*}}zero-heads.json: field 'n_head' must be positive, got 0{{$}}
// ZERO-NOT: {{.}}
// RUN: not ftpipe-model-gen %t/indivisible.json 2>&1 | FileCheck %s --check-prefix=INDIVISIBLE
// INDIVISIBLE: ftpipe-model-gen: error: {{.*}}indivisible.json: 'n_embd' (64) is not divisible by 'n_head' (3){{$}}
// INDIVISIBLE-NOT: {{.}}
// RUN: not ftpipe-model-gen %t/unreadable.json 2>&1 | FileCheck %s --check-prefix=JSON
// JSON: ftpipe-model-gen: error: {{.*}}unreadable.json: invalid JSON: {{.+}}
// JSON-NOT: {{.}}
// RUN: not ftpipe-model-gen %t/unknown-type.json 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: ftpipe-model-gen: error: {{.*}}unknown-type.json: model_type 'falcon' is not supported (expected "bert", "gpt2", "t5", "llama" or "mistral"){{$}}
// RUN: not ftpipe-model-gen %t/wrong-type.json 2>&1 | FileCheck %s --check-prefix=WRONG
// WRONG: ftpipe-model-gen: error: {{.*}}wrong-type.json: field 'hidden_size' must be an integer{{$}}
// RUN: not ftpipe-model-gen %t/gated.json 2>&1 | FileCheck %s --check-prefix=GATED
// GATED: ftpipe-model-gen: error: {{.*}}gated.json: feed_forward_proj 'gated-tanh' is not supported (expected 'relu', 'gelu', 'gelu_new' or 'silu', optionally with 'gated-' in front){{$}}
// RUN: not ftpipe-model-gen %t/llama-gqa.json 2>&1 | FileCheck %s --check-prefix=GQA
// GQA: ftpipe-model-gen: error: {{.*}}llama-gqa.json: 'num_attention_heads' (4) is not divisible by 'num_key_value_heads' (3){{$}}
// RUN: not ftpipe-model-gen %t/llama-rope.json 2>&1 | FileCheck %s --check-prefix=ROPE
// ROPE: ftpipe-model-gen: error: {{.*}}llama-rope.json: field 'rope_scaling' is not supported (only plain rotary embeddings; set it to null){{$}}
// RUN: not ftpipe-model-gen llama-tiny --seq-len=129 2>&1 | FileCheck %s --check-prefix=LLAMAPOS
// LLAMAPOS: ftpipe-model-gen: error: llama-tiny: sequence length 129 exceeds 'max_position_embeddings' (128){{$}}
// RUN: not ftpipe-model-gen llama-tiny --seq-len=1 --loss 2>&1 | FileCheck %s --check-prefix=LLAMALOSS
// LLAMALOSS: ftpipe-model-gen: error: llama-tiny: the language-modelling loss needs at least 2 tokens per sequence{{$}}

// RUN: not ftpipe-model-gen no-such-model 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: ftpipe-model-gen: error: 'no-such-model' is neither a config file nor a bundled model (bundled: {{.*}}t5-3b{{.*}})
// RUN: not ftpipe-model-gen 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: ftpipe-model-gen: error: no model given
// RUN: not ftpipe-model-gen gpt2-tiny --seq-len=129 2>&1 | FileCheck %s --check-prefix=POSITIONS
// POSITIONS: ftpipe-model-gen: error: gpt2-tiny: sequence length 129 exceeds 'n_positions' (128){{$}}
// RUN: not ftpipe-model-gen bert-tiny --decoder-seq-len=4 2>&1 | FileCheck %s --check-prefix=DECODER
// DECODER: ftpipe-model-gen: error: bert-tiny: a decoder sequence length applies to T5 only{{$}}
// RUN: not ftpipe-model-gen t5-tiny --head=none --loss 2>&1 | FileCheck %s --check-prefix=HEADLOSS
// HEADLOSS: ftpipe-model-gen: error: a loss needs a head (--head=none has no labels){{$}}
// RUN: not ftpipe-model-gen t5-tiny --seq-len=100000000 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: ftpipe-model-gen: error: shape 100000000 exceeds the supported maximum 1048576{{$}}
// RUN: not ftpipe-model-gen t5-tiny --micro-batch-size=-2 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: ftpipe-model-gen: error: shape options must be positive{{$}}
// RUN: not ftpipe-model-gen t5-tiny -o %t/no-such-dir/out.mlir 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: ftpipe-model-gen: error: {{.+}}

//--- missing.json
{"model_type": "bert", "hidden_size": 64, "num_hidden_layers": 2,
 "intermediate_size": 256, "vocab_size": 512,
 "max_position_embeddings": 128, "type_vocab_size": 2,
 "layer_norm_eps": 1e-12}
//--- zero-heads.json
{"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 0,
 "vocab_size": 512, "n_positions": 128, "layer_norm_epsilon": 1e-5}
//--- indivisible.json
{"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 3,
 "vocab_size": 512, "n_positions": 128, "layer_norm_epsilon": 1e-5}
//--- unreadable.json
{"model_type": "bert", "hidden_size": 64,
//--- unknown-type.json
{"model_type": "falcon", "hidden_size": 64}
//--- wrong-type.json
{"model_type": "bert", "hidden_size": "64", "num_hidden_layers": 2,
 "num_attention_heads": 4, "intermediate_size": 256, "vocab_size": 512,
 "max_position_embeddings": 128, "type_vocab_size": 2,
 "layer_norm_eps": 1e-12}
//--- gated.json
{"model_type": "t5", "d_model": 64, "d_ff": 256, "d_kv": 16,
 "num_heads": 4, "num_layers": 2, "vocab_size": 512,
 "relative_attention_num_buckets": 32, "layer_norm_epsilon": 1e-6,
 "feed_forward_proj": "gated-tanh"}
//--- llama-gqa.json
{"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
 "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 3,
 "vocab_size": 100, "max_position_embeddings": 64, "rms_norm_eps": 1e-6}
//--- llama-rope.json
{"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
 "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
 "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
 "rope_scaling": {"rope_type": "linear", "factor": 2.0}}
