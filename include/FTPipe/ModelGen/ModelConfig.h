//===- ModelConfig.h - Transformer configs for ftpipe-model-gen -*- C++ -*-===//
//
// The model descriptions that ftpipe-model-gen builds IR from: one struct per
// family with the fields of its Hugging Face `config.json` (the same names, in
// camel case), read with llvm::json from a file or from the configs bundled
// in `models/`, validated, and the parameter count each config implies.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_MODELGEN_MODELCONFIG_H
#define FTPIPE_MODELGEN_MODELCONFIG_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace mlir {
namespace ftpipe {

/// BERT (`model_type: "bert"`), as HF's `BertConfig`.
struct BertConfig {
  int64_t hiddenSize = 0;
  int64_t numHiddenLayers = 0;
  int64_t numAttentionHeads = 0;
  int64_t intermediateSize = 0;
  int64_t vocabSize = 0;
  int64_t maxPositionEmbeddings = 0;
  int64_t typeVocabSize = 0;
  double layerNormEps = 0.0;
  /// `pad_token_id` (HF's default 0; null: none): the word embedding's
  /// `padding_idx`, a row that gets no gradient.
  std::optional<int64_t> padTokenId = 0;
};

/// GPT-2 (`model_type: "gpt2"`), as HF's `GPT2Config`.
struct GPT2Config {
  int64_t nEmbd = 0;
  int64_t nLayer = 0;
  int64_t nHead = 0;
  /// `n_inner`; HF's null or absent means 4 * n_embd.
  int64_t nInner = 0;
  int64_t vocabSize = 0;
  int64_t nPositions = 0;
  double layerNormEpsilon = 0.0;
  /// `tie_word_embeddings` (default true): the LM head reuses `wte`.
  bool tieWordEmbeddings = true;
};

/// The activation of T5's feed-forward (HF's `dense_act_fn`).
enum class T5Activation {
  /// ReLU (T5 v1.0: `feed_forward_proj` "relu").
  Relu,
  /// GELUActivation, exact (`feed_forward_proj` "gelu"; HF maps
  /// "gated-gelu" to gelu_new instead).
  Gelu,
  /// NewGELUActivation, the tanh approximation (T5 v1.1 and Flan-T5:
  /// "gated-gelu"; also "gelu_new").
  GeluNew,
  /// SiLU ("gated-silu", "silu").
  Silu,
};

/// T5 (`model_type: "t5"`), as HF's `T5Config`: v1.0 (ReLU, tied head) and
/// v1.1 / Flan-T5 (gated GELU, untied head).
struct T5Config {
  int64_t dModel = 0;
  int64_t dFf = 0;
  int64_t dKv = 0;
  int64_t numHeads = 0;
  int64_t numLayers = 0;
  /// `num_decoder_layers`; absent means `num_layers`, as in HF.
  int64_t numDecoderLayers = 0;
  int64_t vocabSize = 0;
  int64_t relativeAttentionNumBuckets = 0;
  /// `relative_attention_max_distance`, default 128 as in HF.
  int64_t relativeAttentionMaxDistance = 128;
  double layerNormEpsilon = 0.0;
  /// `tie_word_embeddings` (default true): the LM head reuses `shared` and
  /// scales its input by d_model^-0.5.
  bool tieWordEmbeddings = true;
  /// From `feed_forward_proj` (default "relu"): "[gated-]ACT".
  T5Activation denseActFn = T5Activation::Relu;
  /// "gated-...": T5DenseGatedActDense, act(wi_0 x) * (wi_1 x).
  bool isGatedAct = false;
};

/// The LLaMA family (`model_type: "llama"` or `"mistral"`), as HF's
/// `LlamaConfig` / `MistralConfig`: RMSNorm, SwiGLU, rotary positions,
/// grouped-query attention.
struct LlamaConfig {
  /// False for `llama`, true for `mistral` (class names, sliding window).
  bool isMistral = false;
  int64_t hiddenSize = 0;
  int64_t intermediateSize = 0;
  int64_t numHiddenLayers = 0;
  int64_t numAttentionHeads = 0;
  /// `num_key_value_heads`; absent or null means `num_attention_heads`.
  int64_t numKeyValueHeads = 0;
  /// `head_dim`; absent or null means hidden_size / num_attention_heads.
  int64_t headDim = 0;
  int64_t vocabSize = 0;
  int64_t maxPositionEmbeddings = 0;
  double rmsNormEps = 0.0;
  /// `rope_theta`, default 10000 as in HF.
  double ropeTheta = 10000.0;
  /// `attention_bias` (llama only, default false): q/k/v/o biases.
  bool attentionBias = false;
  /// `mlp_bias` (llama only, default false): gate/up/down biases.
  bool mlpBias = false;
  /// `tie_word_embeddings` (default false): the LM head reuses
  /// `embed_tokens`.
  bool tieWordEmbeddings = false;
  /// `sliding_window` (mistral only; null or absent: 0, none): a query sees
  /// the keys less than this many positions behind it.
  int64_t slidingWindow = 0;
  /// `pad_token_id` (absent or null: none): the token embedding's
  /// `padding_idx`, a row that gets no gradient.
  std::optional<int64_t> padTokenId;
};

/// Which family a config describes.
enum class ModelFamily { Bert, GPT2, T5, Llama };

/// Input shapes a config suggests; 0 means "the family's default". Read from
/// the optional FTPipe-specific `"ftpipe"` object of a config
/// (`micro_batch_size`, `seq_len`, `decoder_seq_len`), which Hugging Face
/// ignores.
struct ShapeDefaults {
  int64_t microBatchSize = 0;
  int64_t seqLen = 0;
  int64_t decoderSeqLen = 0;
};

/// A validated model description.
struct ModelConfig {
  /// Bundled name or file stem, used in messages and the summary.
  std::string name;
  std::variant<BertConfig, GPT2Config, T5Config, LlamaConfig> family;
  ShapeDefaults shapes;

  ModelFamily getFamily() const {
    return static_cast<ModelFamily>(family.index());
  }
};

/// Parses and validates the text of a HF-style `config.json`. `name` names
/// the config in error messages. Errors are one line, e.g. "bert.json: field
/// 'num_attention_heads' is missing".
llvm::Expected<ModelConfig> parseModelConfig(llvm::StringRef jsonText,
                                             llvm::StringRef name);

/// Loads `nameOrPath`: a readable file is parsed as a config, a directory's
/// (a Hugging Face checkpoint's) config.json likewise, otherwise the bundled
/// config of that name is used (see `getBundledModelNames`).
llvm::Expected<ModelConfig> loadModelConfig(llvm::StringRef nameOrPath);

/// Names of the configs compiled into the library from `models/*.json`.
llvm::ArrayRef<llvm::StringRef> getBundledModelNames();

/// The JSON text of bundled config `name`, or an empty string.
llvm::StringRef getBundledModelConfig(llvm::StringRef name);

/// Number of trainable parameters the config implies, by formula over its
/// fields (tied weights counted once); `withHead` adds the task head (BERT's
/// QA span head; an untied LM head). Matches the reference implementations:
/// BERT-large + QA 334,094,338; GPT2-XL 1,557,611,200; T5-3B 2,851,598,336;
/// Flan-T5-XL 2,849,757,184; Llama-2-7B 6,738,415,616.
uint64_t computeParameterCount(const ModelConfig &config, bool withHead);

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_MODELGEN_MODELCONFIG_H
