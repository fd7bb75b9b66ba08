// Tests that the word embedding of BERT (pad_token_id, 0 when absent, as
// HF's BertConfig) and of LLaMA (pad_token_id when set) reads its table with
// a gather marked `ftpipe.padding_row`: nn.Embedding's padding_idx, the row
// that gets no gradient. GPT-2's and T5's embeddings have none, nor do
// BERT's token type and position embeddings; null means none; a row outside
// the vocabulary is refused.

// RUN: split-file %s %t
// RUN: ftpipe-model-gen bert-tiny --quiet | FileCheck %s --check-prefix=BERT
// BERT: tosa.gather {{.*}} {ftpipe.padding_row = 0 : i64} : (tensor<1x512x64xf32>
// BERT-NOT: padding_row
// RUN: ftpipe-model-gen %t/bert-pad-5.json --quiet | FileCheck %s --check-prefix=BERT5
// BERT5: tosa.gather {{.*}} {ftpipe.padding_row = 5 : i64} : (tensor<1x512x64xf32>
// RUN: ftpipe-model-gen %t/bert-pad-null.json --quiet | FileCheck %s --check-prefix=NONE
// RUN: ftpipe-model-gen gpt2-tiny --quiet | FileCheck %s --check-prefix=NONE
// RUN: ftpipe-model-gen t5-tiny --quiet | FileCheck %s --check-prefix=NONE
// RUN: ftpipe-model-gen llama-tiny --quiet | FileCheck %s --check-prefix=NONE
// NONE-NOT: padding_row
// RUN: ftpipe-model-gen %t/llama-pad-2.json --quiet | FileCheck %s --check-prefix=LLAMA
// LLAMA: tosa.gather {{.*}} {ftpipe.padding_row = 2 : i64}
// RUN: not ftpipe-model-gen %t/bert-pad-big.json 2>&1 | FileCheck %s --check-prefix=BIG
// BIG: ftpipe-model-gen: error: {{.*}}bert-pad-big.json: field 'pad_token_id' must be null or an id below 'vocab_size' (512), got 512{{$}}

//--- bert-pad-5.json
{"model_type": "bert", "hidden_size": 64, "intermediate_size": 256, "layer_norm_eps": 1e-12, "max_position_embeddings": 128, "num_attention_heads": 4, "num_hidden_layers": 2, "type_vocab_size": 2, "vocab_size": 512, "ftpipe": {"micro_batch_size": 2, "seq_len": 16}, "pad_token_id": 5}
//--- bert-pad-null.json
{"model_type": "bert", "hidden_size": 64, "intermediate_size": 256, "layer_norm_eps": 1e-12, "max_position_embeddings": 128, "num_attention_heads": 4, "num_hidden_layers": 2, "type_vocab_size": 2, "vocab_size": 512, "ftpipe": {"micro_batch_size": 2, "seq_len": 16}, "pad_token_id": null}
//--- bert-pad-big.json
{"model_type": "bert", "hidden_size": 64, "intermediate_size": 256, "layer_norm_eps": 1e-12, "max_position_embeddings": 128, "num_attention_heads": 4, "num_hidden_layers": 2, "type_vocab_size": 2, "vocab_size": 512, "ftpipe": {"micro_batch_size": 2, "seq_len": 16}, "pad_token_id": 512}
//--- llama-pad-2.json
{"hidden_act": "silu", "hidden_size": 64, "intermediate_size": 176, "max_position_embeddings": 128, "model_type": "llama", "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings": false, "vocab_size": 512, "ftpipe": {"micro_batch_size": 2, "seq_len": 16}, "pad_token_id": 2}
