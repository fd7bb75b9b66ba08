//===- ModelConfig.cpp - Reading and checking model configs -----*- C++ -*-===//
//
// Reads HF-style `config.json` text with llvm::json into the per-family
// structs, with one-line errors for what a user gets wrong (missing or
// non-numeric fields, zero sizes, a hidden size that the heads do not
// divide), and finds configs by file path or bundled name.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/ModelGen/ModelConfig.h"
#include "FTPipe/Support/BoundedInput.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <limits>

using namespace mlir;
using namespace mlir::ftpipe;

/// The most layers a config may ask for (GPT-3 175B has 96).
static constexpr int64_t kMaxLayers = 1024;

namespace {
/// Reads fields of one JSON object; the first problem becomes `error`.
class FieldReader {
public:
  FieldReader(const llvm::json::Object &object, llvm::StringRef source)
      : object(object), source(source) {}

  /// A required positive integer.
  void positive(llvm::StringRef key, int64_t &out) {
    if (failed)
      return;
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return fail(llvm::formatv("field '{0}' is missing", key));
    readPositive(key, *value, out);
  }

  /// A required layer count: positive and at most kMaxLayers, so that no
  /// config asks for more IR than fits in memory.
  void layerCount(llvm::StringRef key, int64_t &out) {
    positive(key, out);
    if (!failed && out > kMaxLayers)
      fail(llvm::formatv("field '{0}' is {1}; at most {2} layers are supported",
                         key, out, kMaxLayers));
  }

  /// An optional positive integer (null or absent keeps `out`).
  void optionalPositive(llvm::StringRef key, int64_t &out) {
    const llvm::json::Value *value = object.get(key);
    if (failed || !value || value->kind() == llvm::json::Value::Null)
      return;
    readPositive(key, *value, out);
  }

  /// An optional row of a table of `rows` (absent: `out` unchanged; null:
  /// none), as HF's `pad_token_id` (nn.Embedding's `padding_idx`).
  void optionalRow(llvm::StringRef key, int64_t rows,
                   std::optional<int64_t> &out) {
    const llvm::json::Value *value = object.get(key);
    if (failed || !value)
      return;
    if (value->kind() == llvm::json::Value::Null) {
      out.reset();
      return;
    }
    std::optional<int64_t> number = value->getAsInteger();
    if (!number || *number < 0 || *number >= rows) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << *value;
      return fail(llvm::formatv("field '{0}' must be null or an id below "
                                "'vocab_size' ({1}), got {2}",
                                key, rows, text));
    }
    out = *number;
  }

  /// A required positive number.
  void positiveNumber(llvm::StringRef key, double &out) {
    if (failed)
      return;
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return fail(llvm::formatv("field '{0}' is missing", key));
    std::optional<double> number = value->getAsNumber();
    if (!number)
      return fail(llvm::formatv("field '{0}' must be a number", key));
    if (!(*number > 0.0)) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << *value;
      return fail(
          llvm::formatv("field '{0}' must be positive, got {1}", key, text));
    }
    out = *number;
  }

  /// An optional boolean.
  void optionalBool(llvm::StringRef key, bool &out) {
    const llvm::json::Value *value = object.get(key);
    if (failed || !value)
      return;
    std::optional<bool> flag = value->getAsBoolean();
    if (!flag)
      return fail(llvm::formatv("field '{0}' must be true or false", key));
    out = *flag;
  }

  /// Records a failure unless one is already recorded; the message is
  /// prefixed by the source, if any.
  void fail(const llvm::Twine &message) {
    if (failed)
      return;
    failed = true;
    error = source.empty() ? message.str() : (source + ": " + message).str();
  }

  bool failed = false;
  std::string error;

private:
  void readPositive(llvm::StringRef key, const llvm::json::Value &value,
                    int64_t &out) {
    std::optional<int64_t> number = value.getAsInteger();
    if (!number)
      return fail(llvm::formatv("field '{0}' must be an integer", key));
    if (*number <= 0)
      return fail(
          llvm::formatv("field '{0}' must be positive, got {1}", key, *number));
    // Sizes beyond i32 would overflow the products of tensor shapes.
    if (*number > std::numeric_limits<int32_t>::max())
      return fail(
          llvm::formatv("field '{0}' is too large, got {1}", key, *number));
    out = *number;
  }

  const llvm::json::Object &object;
  llvm::StringRef source;
};
} // namespace

/// Checks that `heads` divides `hidden`.
static void checkDivisible(FieldReader &reader, llvm::StringRef hiddenKey,
                           int64_t hidden, llvm::StringRef headsKey,
                           int64_t heads) {
  if (!reader.failed && hidden % heads != 0)
    reader.fail(llvm::formatv("'{0}' ({1}) is not divisible by '{2}' ({3})",
                              hiddenKey, hidden, headsKey, heads));
}

static BertConfig readBert(FieldReader &reader) {
  BertConfig c;
  reader.positive("hidden_size", c.hiddenSize);
  reader.layerCount("num_hidden_layers", c.numHiddenLayers);
  reader.positive("num_attention_heads", c.numAttentionHeads);
  reader.positive("intermediate_size", c.intermediateSize);
  reader.positive("vocab_size", c.vocabSize);
  reader.positive("max_position_embeddings", c.maxPositionEmbeddings);
  reader.positive("type_vocab_size", c.typeVocabSize);
  reader.positiveNumber("layer_norm_eps", c.layerNormEps);
  reader.optionalRow("pad_token_id", c.vocabSize, c.padTokenId);
  checkDivisible(reader, "hidden_size", c.hiddenSize, "num_attention_heads",
                 c.numAttentionHeads);
  return c;
}

static GPT2Config readGPT2(FieldReader &reader) {
  GPT2Config c;
  reader.positive("n_embd", c.nEmbd);
  reader.layerCount("n_layer", c.nLayer);
  reader.positive("n_head", c.nHead);
  reader.positive("vocab_size", c.vocabSize);
  reader.positive("n_positions", c.nPositions);
  reader.positiveNumber("layer_norm_epsilon", c.layerNormEpsilon);
  c.nInner = 4 * c.nEmbd;
  reader.optionalPositive("n_inner", c.nInner);
  reader.optionalBool("tie_word_embeddings", c.tieWordEmbeddings);
  checkDivisible(reader, "n_embd", c.nEmbd, "n_head", c.nHead);
  return c;
}

/// The activations T5's feed-forward can use, by HF name.
static std::optional<T5Activation> parseT5Activation(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<T5Activation>>(name)
      .Case("relu", T5Activation::Relu)
      .Case("gelu", T5Activation::Gelu)
      .Case("gelu_new", T5Activation::GeluNew)
      .Case("silu", T5Activation::Silu)
      .Default(std::nullopt);
}

/// HF's `T5Config` reading of the feed-forward: `feed_forward_proj` is "ACT"
/// or "gated-ACT" ("gated-gelu" means the tanh GELU, gelu_new); then, as
/// HF sets a config's extra fields last, `dense_act_fn` and `is_gated_act`
/// override it when present (Flan-T5's configs carry both).
static void readT5FeedForward(FieldReader &reader,
                              const llvm::json::Object &object, T5Config &c) {
  if (const llvm::json::Value *value = object.get("feed_forward_proj")) {
    std::optional<llvm::StringRef> proj = value->getAsString();
    if (!proj)
      return reader.fail("field 'feed_forward_proj' must be a string");
    llvm::StringRef act = *proj;
    c.isGatedAct = act.consume_front("gated-");
    std::optional<T5Activation> kind =
        *proj == "gated-gelu" ? T5Activation::GeluNew : parseT5Activation(act);
    if (!kind)
      return reader.fail(llvm::formatv(
          "feed_forward_proj '{0}' is not supported (expected 'relu', "
          "'gelu', 'gelu_new' or 'silu', optionally with 'gated-' in front)",
          *proj));
    c.denseActFn = *kind;
  }
  if (const llvm::json::Value *value = object.get("dense_act_fn")) {
    std::optional<llvm::StringRef> name = value->getAsString();
    std::optional<T5Activation> kind =
        name ? parseT5Activation(*name) : std::nullopt;
    if (!kind)
      return reader.fail("field 'dense_act_fn' must be 'relu', 'gelu', "
                         "'gelu_new' or 'silu'");
    c.denseActFn = *kind;
  }
  reader.optionalBool("is_gated_act", c.isGatedAct);
}

static T5Config readT5(FieldReader &reader, const llvm::json::Object &object) {
  T5Config c;
  reader.positive("d_model", c.dModel);
  reader.positive("d_ff", c.dFf);
  reader.positive("d_kv", c.dKv);
  reader.positive("num_heads", c.numHeads);
  reader.layerCount("num_layers", c.numLayers);
  reader.positive("vocab_size", c.vocabSize);
  reader.positive("relative_attention_num_buckets",
                  c.relativeAttentionNumBuckets);
  reader.positiveNumber("layer_norm_epsilon", c.layerNormEpsilon);
  c.numDecoderLayers = c.numLayers;
  if (object.get("num_decoder_layers"))
    reader.layerCount("num_decoder_layers", c.numDecoderLayers);
  reader.optionalPositive("relative_attention_max_distance",
                          c.relativeAttentionMaxDistance);
  reader.optionalBool("tie_word_embeddings", c.tieWordEmbeddings);
  if (!reader.failed && c.relativeAttentionNumBuckets < 4)
    reader.fail(llvm::formatv(
        "field 'relative_attention_num_buckets' must be at least 4, got {0}",
        c.relativeAttentionNumBuckets));
  // The log-spaced buckets start at half the buckets (a quarter when
  // bidirectional) and end at the maximum distance, which must lie beyond.
  if (!reader.failed &&
      c.relativeAttentionMaxDistance <= c.relativeAttentionNumBuckets / 2)
    reader.fail(llvm::formatv("field 'relative_attention_max_distance' ({0}) "
                              "must exceed half of "
                              "'relative_attention_num_buckets' ({1})",
                              c.relativeAttentionMaxDistance,
                              c.relativeAttentionNumBuckets));
  readT5FeedForward(reader, object, c);
  return c;
}

/// LlamaConfig / MistralConfig: `isMistral` picks the fields Mistral has.
static LlamaConfig readLlama(FieldReader &reader,
                             const llvm::json::Object &object, bool isMistral) {
  LlamaConfig c;
  c.isMistral = isMistral;
  reader.positive("hidden_size", c.hiddenSize);
  reader.positive("intermediate_size", c.intermediateSize);
  reader.layerCount("num_hidden_layers", c.numHiddenLayers);
  reader.positive("num_attention_heads", c.numAttentionHeads);
  reader.positive("vocab_size", c.vocabSize);
  reader.positive("max_position_embeddings", c.maxPositionEmbeddings);
  reader.positiveNumber("rms_norm_eps", c.rmsNormEps);
  c.numKeyValueHeads = c.numAttentionHeads;
  reader.optionalPositive("num_key_value_heads", c.numKeyValueHeads);
  if (!reader.failed && c.hiddenSize % c.numAttentionHeads == 0)
    c.headDim = c.hiddenSize / c.numAttentionHeads;
  reader.optionalPositive("head_dim", c.headDim);
  if (const llvm::json::Value *theta = object.get("rope_theta");
      theta && theta->kind() != llvm::json::Value::Null)
    reader.positiveNumber("rope_theta", c.ropeTheta);
  reader.optionalBool("tie_word_embeddings", c.tieWordEmbeddings);
  reader.optionalRow("pad_token_id", c.vocabSize, c.padTokenId);
  if (isMistral) {
    reader.optionalPositive("sliding_window", c.slidingWindow);
  } else {
    reader.optionalBool("attention_bias", c.attentionBias);
    reader.optionalBool("mlp_bias", c.mlpBias);
  }
  if (reader.failed)
    return c;
  if (c.headDim == 0)
    reader.fail(llvm::formatv(
        "'hidden_size' ({0}) is not divisible by 'num_attention_heads' ({1}) "
        "and 'head_dim' is not given",
        c.hiddenSize, c.numAttentionHeads));
  else if (c.headDim % 2 != 0)
    reader.fail(llvm::formatv(
        "the head size ({0}) must be even for rotary embeddings", c.headDim));
  checkDivisible(reader, "num_attention_heads", c.numAttentionHeads,
                 "num_key_value_heads", c.numKeyValueHeads);
  std::optional<llvm::StringRef> act = object.getString("hidden_act");
  if (act && *act != "silu")
    reader.fail(llvm::formatv(
        "hidden_act '{0}' is not supported (the LLaMA family uses 'silu')",
        *act));
  // Scaled rotary embeddings (linear, dynamic, YaRN, Llama 3's) change the
  // frequencies; only the plain ones are built.
  const llvm::json::Value *scaling = object.get("rope_scaling");
  if (scaling && scaling->kind() != llvm::json::Value::Null)
    reader.fail("field 'rope_scaling' is not supported (only plain rotary "
                "embeddings; set it to null)");
  return c;
}

/// Reads the optional FTPipe extension `"ftpipe": {...}` of a config.
static ShapeDefaults readShapes(FieldReader &reader,
                                const llvm::json::Object &object) {
  ShapeDefaults shapes;
  const llvm::json::Value *value = object.get("ftpipe");
  if (!value)
    return shapes;
  const llvm::json::Object *ftpipe = value->getAsObject();
  if (!ftpipe) {
    reader.fail("field 'ftpipe' must be an object");
    return shapes;
  }
  FieldReader inner(*ftpipe, "");
  inner.optionalPositive("micro_batch_size", shapes.microBatchSize);
  inner.optionalPositive("seq_len", shapes.seqLen);
  inner.optionalPositive("decoder_seq_len", shapes.decoderSeqLen);
  if (inner.failed)
    reader.fail(inner.error + " in 'ftpipe'");
  return shapes;
}

llvm::Expected<ModelConfig>
mlir::ftpipe::parseModelConfig(llvm::StringRef jsonText, llvm::StringRef name) {
  auto makeError = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  llvm::Expected<llvm::json::Value> json =
      ::ftpipe::support::parseBoundedJSON(jsonText);
  if (!json)
    return makeError(name +
                     ": invalid JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return makeError(name + ": invalid config: expected a JSON object");

  ModelConfig config;
  config.name = name.str();
  std::optional<llvm::StringRef> modelType = object->getString("model_type");
  if (!modelType)
    return makeError(name + ": field 'model_type' is missing (expected "
                            "\"bert\", \"gpt2\", \"t5\", \"llama\" or "
                            "\"mistral\")");
  FieldReader reader(*object, name);
  if (*modelType == "bert")
    config.family = readBert(reader);
  else if (*modelType == "gpt2")
    config.family = readGPT2(reader);
  else if (*modelType == "t5")
    config.family = readT5(reader, *object);
  else if (*modelType == "llama" || *modelType == "mistral")
    config.family = readLlama(reader, *object, *modelType == "mistral");
  else
    return makeError(name + ": model_type '" + *modelType +
                     "' is not supported (expected \"bert\", \"gpt2\", "
                     "\"t5\", \"llama\" or \"mistral\")");
  config.shapes = readShapes(reader, *object);
  if (reader.failed)
    return makeError(reader.error);
  return config;
}

//===----------------------------------------------------------------------===//
// Bundled configs
//===----------------------------------------------------------------------===//

namespace {
struct BundledModel {
  llvm::StringRef name;
  llvm::StringRef json;
};
} // namespace

// Generated by CMake from models/*.json: `kBundledModels`.
#include "BundledModels.inc"

llvm::ArrayRef<llvm::StringRef> mlir::ftpipe::getBundledModelNames() {
  static const llvm::SmallVector<llvm::StringRef> names = [] {
    llvm::SmallVector<llvm::StringRef> result;
    for (const BundledModel &model : kBundledModels)
      result.push_back(model.name);
    return result;
  }();
  return names;
}

llvm::StringRef mlir::ftpipe::getBundledModelConfig(llvm::StringRef name) {
  for (const BundledModel &model : kBundledModels)
    if (model.name == name)
      return model.json;
  return {};
}

llvm::Expected<ModelConfig>
mlir::ftpipe::loadModelConfig(llvm::StringRef nameOrPath) {
  if (llvm::sys::fs::exists(nameOrPath)) {
    // A checkpoint directory: its config.json.
    llvm::SmallString<256> path(nameOrPath);
    if (llvm::sys::fs::is_directory(nameOrPath))
      llvm::sys::path::append(path, "config.json");
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> text =
        ::ftpipe::support::readBoundedFile(
            path, "model config", ::ftpipe::support::kMaxInputFileBytes,
            ::ftpipe::support::FileKinds::RegularOrStream);
    if (!text)
      return text.takeError();
    return parseModelConfig((*text)->getBuffer(), path);
  }
  llvm::StringRef json = getBundledModelConfig(nameOrPath);
  if (json.empty())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "'" + nameOrPath +
            "' is neither a config file nor a bundled model (bundled: " +
            llvm::join(getBundledModelNames(), ", ") + ")");
  return parseModelConfig(json, nameOrPath);
}
