//===- ModelConfigTest.cpp - Config reading and parameter formulas -------===//
//
// Reading HF-style configs: the bundled ones parse, user mistakes give one
// clear line, defaults apply; and the parameter formulas give the reference
// implementations' counts for the paper's models.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/ModelGen/ModelConfig.h"
#include "FTPipe/ModelGen/ModelGen.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/JSON.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::ftpipe;

namespace {

/// The error message of `parseModelConfig(json)`, or "" when it parses.
std::string parseError(llvm::StringRef json) {
  llvm::Expected<ModelConfig> config = parseModelConfig(json, "cfg.json");
  if (config)
    return "";
  return llvm::toString(config.takeError());
}

/// A valid tiny BERT config with `key` set to `value` (or removed when
/// `value` is null).
std::string bertWith(llvm::StringRef key,
                     std::optional<llvm::json::Value> value) {
  llvm::json::Object object{
      {"model_type", "bert"},          {"hidden_size", 64},
      {"num_hidden_layers", 2},        {"num_attention_heads", 4},
      {"intermediate_size", 256},      {"vocab_size", 100},
      {"max_position_embeddings", 32}, {"type_vocab_size", 2},
      {"layer_norm_eps", 1e-12}};
  if (value)
    object[key] = std::move(*value);
  else
    object.erase(key);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(object));
  return text;
}

TEST(ModelConfigTest, BundledModelsParse) {
  llvm::ArrayRef<llvm::StringRef> names = getBundledModelNames();
  for (llvm::StringRef expected :
       {"bert-large-uncased", "gpt2-xl", "t5-3b", "flan-t5-xl", "llama-2-7b",
        "bert-tiny", "gpt2-tiny", "t5-tiny", "flan-t5-tiny", "llama-tiny"})
    EXPECT_TRUE(llvm::is_contained(names, expected)) << expected.str();
  for (llvm::StringRef name : names) {
    llvm::Expected<ModelConfig> config = loadModelConfig(name);
    ASSERT_TRUE(static_cast<bool>(config))
        << name.str() << ": " << llvm::toString(config.takeError());
    EXPECT_EQ(config->name, name.str());
  }
}

TEST(ModelConfigTest, PaperParameterCounts) {
  auto count = [](llvm::StringRef name) {
    llvm::Expected<ModelConfig> config = loadModelConfig(name);
    EXPECT_TRUE(static_cast<bool>(config));
    return config ? computeParameterCount(*config, true) : 0;
  };
  EXPECT_EQ(count("bert-large-uncased"), 334094338u);
  EXPECT_EQ(count("gpt2-xl"), 1557611200u);
  EXPECT_EQ(count("t5-3b"), 2851598336u);
  // transformers 4.57's num_parameters() on the meta device
  // (test/Reference/full-size-structure.test checks the same live).
  EXPECT_EQ(count("flan-t5-xl"), 2849757184u);
  EXPECT_EQ(count("llama-2-7b"), 6738415616u);
  EXPECT_EQ(count("flan-t5-tiny"), 238592u);
  EXPECT_EQ(count("llama-tiny"), 158016u);
}

TEST(ModelConfigTest, ReadsT5FeedForward) {
  auto t5 = [](llvm::StringRef extra) {
    std::string json =
        (R"({"model_type": "t5", "d_model": 8, "d_ff": 8, "d_kv": 2,
             "num_heads": 4, "num_layers": 1, "vocab_size": 10,
             "relative_attention_num_buckets": 8,
             "layer_norm_epsilon": 1e-6)" +
         extra + "}")
            .str();
    llvm::Expected<ModelConfig> config = parseModelConfig(json, "cfg.json");
    if (!config)
      return std::make_pair(llvm::toString(config.takeError()), T5Config());
    return std::make_pair(std::string(), std::get<T5Config>(config->family));
  };
  struct Case {
    const char *extra;
    T5Activation act;
    bool gated;
  } cases[] = {
      {"", T5Activation::Relu, false},
      {R"(, "feed_forward_proj": "relu")", T5Activation::Relu, false},
      {R"(, "feed_forward_proj": "gelu")", T5Activation::Gelu, false},
      // HF's backward-compatible meaning of "gated-gelu".
      {R"(, "feed_forward_proj": "gated-gelu")", T5Activation::GeluNew, true},
      {R"(, "feed_forward_proj": "gated-silu")", T5Activation::Silu, true},
      {R"(, "feed_forward_proj": "gated-relu")", T5Activation::Relu, true},
      // Explicit fields win, as HF sets them last.
      {R"(, "feed_forward_proj": "gated-gelu", "dense_act_fn": "gelu")",
       T5Activation::Gelu, true},
      {R"(, "feed_forward_proj": "gated-silu", "is_gated_act": false)",
       T5Activation::Silu, false},
  };
  for (const Case &c : cases) {
    auto [error, config] = t5(c.extra);
    ASSERT_EQ(error, "") << c.extra;
    EXPECT_EQ(config.denseActFn, c.act) << c.extra;
    EXPECT_EQ(config.isGatedAct, c.gated) << c.extra;
  }
  EXPECT_EQ(t5(R"(, "feed_forward_proj": "gated-tanh")").first,
            "cfg.json: feed_forward_proj 'gated-tanh' is not supported "
            "(expected 'relu', 'gelu', 'gelu_new' or 'silu', optionally with "
            "'gated-' in front)");
  EXPECT_EQ(t5(R"(, "feed_forward_proj": 3)").first,
            "cfg.json: field 'feed_forward_proj' must be a string");
  EXPECT_EQ(t5(R"(, "dense_act_fn": "tanh")").first,
            "cfg.json: field 'dense_act_fn' must be 'relu', 'gelu', "
            "'gelu_new' or 'silu'");
}

/// A valid tiny Llama config with `key` set to `value` (or removed when
/// `value` is null).
std::string llamaWith(llvm::StringRef key,
                      std::optional<llvm::json::Value> value) {
  llvm::json::Object object{
      {"model_type", "llama"},    {"hidden_size", 64},
      {"intermediate_size", 100}, {"num_hidden_layers", 2},
      {"num_attention_heads", 8}, {"num_key_value_heads", 2},
      {"vocab_size", 50},         {"max_position_embeddings", 32},
      {"rms_norm_eps", 1e-6},     {"hidden_act", "silu"},
      {"rope_scaling", nullptr}};
  if (value)
    object[key] = std::move(*value);
  else
    object.erase(key);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(object));
  return text;
}

TEST(ModelConfigTest, ReadsLlamaFamily) {
  llvm::Expected<ModelConfig> config =
      parseModelConfig(llamaWith("rope_theta", 500000.0), "cfg.json");
  ASSERT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());
  ASSERT_EQ(config->getFamily(), ModelFamily::Llama);
  const LlamaConfig &llama = std::get<LlamaConfig>(config->family);
  EXPECT_FALSE(llama.isMistral);
  EXPECT_EQ(llama.headDim, 8);
  EXPECT_EQ(llama.numKeyValueHeads, 2);
  EXPECT_EQ(llama.ropeTheta, 500000.0);
  EXPECT_FALSE(llama.tieWordEmbeddings);
  EXPECT_FALSE(llama.attentionBias);
  EXPECT_EQ(llama.slidingWindow, 0);

  // HF's defaults: kv heads = heads, theta 10000, head_dim from the sizes.
  config = parseModelConfig(llamaWith("num_key_value_heads", nullptr), "c");
  ASSERT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());
  EXPECT_EQ(std::get<LlamaConfig>(config->family).numKeyValueHeads, 8);
  EXPECT_EQ(std::get<LlamaConfig>(config->family).ropeTheta, 10000.0);
  config = parseModelConfig(llamaWith("head_dim", 6), "c");
  ASSERT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());
  EXPECT_EQ(std::get<LlamaConfig>(config->family).headDim, 6);

  config = parseModelConfig(R"({"model_type": "mistral", "hidden_size": 32,
      "intermediate_size": 64, "num_hidden_layers": 1,
      "num_attention_heads": 4, "num_key_value_heads": 1, "vocab_size": 20,
      "max_position_embeddings": 64, "rms_norm_eps": 1e-5,
      "sliding_window": 8, "tie_word_embeddings": true})",
                            "m");
  ASSERT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());
  const LlamaConfig &mistral = std::get<LlamaConfig>(config->family);
  EXPECT_TRUE(mistral.isMistral);
  EXPECT_EQ(mistral.slidingWindow, 8);
  EXPECT_TRUE(mistral.tieWordEmbeddings);
}

TEST(ModelConfigTest, LlamaErrorsAreOneClearLine) {
  EXPECT_EQ(parseError(llamaWith("rms_norm_eps", std::nullopt)),
            "cfg.json: field 'rms_norm_eps' is missing");
  EXPECT_EQ(parseError(llamaWith("num_key_value_heads", 3)),
            "cfg.json: 'num_attention_heads' (8) is not divisible by "
            "'num_key_value_heads' (3)");
  EXPECT_EQ(parseError(llamaWith("num_attention_heads", 6)),
            "cfg.json: 'hidden_size' (64) is not divisible by "
            "'num_attention_heads' (6) and 'head_dim' is not given");
  EXPECT_EQ(parseError(llamaWith("head_dim", 5)),
            "cfg.json: the head size (5) must be even for rotary embeddings");
  EXPECT_EQ(parseError(llamaWith("hidden_act", "gelu")),
            "cfg.json: hidden_act 'gelu' is not supported (the LLaMA family "
            "uses 'silu')");
  EXPECT_EQ(parseError(llamaWith(
                "rope_scaling",
                llvm::json::Object{{"rope_type", "llama3"}, {"factor", 8.0}})),
            "cfg.json: field 'rope_scaling' is not supported (only plain "
            "rotary embeddings; set it to null)");
  EXPECT_EQ(parseError(llamaWith("rope_theta", 0)),
            "cfg.json: field 'rope_theta' must be positive, got 0");
}

TEST(ModelConfigTest, ReadsFields) {
  llvm::Expected<ModelConfig> config = loadModelConfig("t5-3b");
  ASSERT_TRUE(static_cast<bool>(config));
  ASSERT_EQ(config->getFamily(), ModelFamily::T5);
  const T5Config &t5 = std::get<T5Config>(config->family);
  EXPECT_EQ(t5.dModel, 1024);
  EXPECT_EQ(t5.dFf, 16384);
  EXPECT_EQ(t5.dKv, 128);
  EXPECT_EQ(t5.numHeads, 32);
  EXPECT_EQ(t5.numLayers, 24);
  EXPECT_EQ(t5.numDecoderLayers, 24);
  EXPECT_EQ(t5.relativeAttentionNumBuckets, 32);
  EXPECT_EQ(t5.relativeAttentionMaxDistance, 128);
  EXPECT_DOUBLE_EQ(t5.layerNormEpsilon, 1e-6);
  EXPECT_EQ(config->shapes.microBatchSize, 4);
  EXPECT_EQ(config->shapes.seqLen, 512);
  EXPECT_EQ(config->shapes.decoderSeqLen, 4);
}

TEST(ModelConfigTest, OptionalFieldsTakeHFDefaults) {
  llvm::Expected<ModelConfig> gpt2 = parseModelConfig(
      R"({"model_type": "gpt2", "n_embd": 32, "n_layer": 1, "n_head": 2,
          "vocab_size": 10, "n_positions": 8, "layer_norm_epsilon": 1e-5,
          "n_inner": null})",
      "g");
  ASSERT_TRUE(static_cast<bool>(gpt2));
  EXPECT_EQ(std::get<GPT2Config>(gpt2->family).nInner, 128);
  EXPECT_TRUE(std::get<GPT2Config>(gpt2->family).tieWordEmbeddings);

  llvm::Expected<ModelConfig> t5 = parseModelConfig(
      R"({"model_type": "t5", "d_model": 32, "d_ff": 64, "d_kv": 8,
          "num_heads": 4, "num_layers": 3, "vocab_size": 10,
          "relative_attention_num_buckets": 8, "layer_norm_epsilon": 1e-6})",
      "t");
  ASSERT_TRUE(static_cast<bool>(t5));
  EXPECT_EQ(std::get<T5Config>(t5->family).numDecoderLayers, 3);
  EXPECT_EQ(std::get<T5Config>(t5->family).relativeAttentionMaxDistance, 128);
}

TEST(ModelConfigTest, UserErrorsAreOneClearLine) {
  EXPECT_EQ(parseError(bertWith("hidden_size", std::nullopt)),
            "cfg.json: field 'hidden_size' is missing");
  EXPECT_EQ(parseError(bertWith("num_attention_heads", 0)),
            "cfg.json: field 'num_attention_heads' must be positive, got 0");
  EXPECT_EQ(parseError(bertWith("num_attention_heads", 3)),
            "cfg.json: 'hidden_size' (64) is not divisible by "
            "'num_attention_heads' (3)");
  EXPECT_EQ(parseError(bertWith("vocab_size", "many")),
            "cfg.json: field 'vocab_size' must be an integer");
  EXPECT_EQ(parseError(bertWith("layer_norm_eps", -1.0)),
            "cfg.json: field 'layer_norm_eps' must be positive, got -1");
  EXPECT_EQ(parseError(bertWith("model_type", "falcon")),
            "cfg.json: model_type 'falcon' is not supported (expected "
            "\"bert\", \"gpt2\", \"t5\", \"llama\" or \"mistral\")");
  EXPECT_EQ(parseError(bertWith("model_type", std::nullopt)),
            "cfg.json: field 'model_type' is missing (expected \"bert\", "
            "\"gpt2\", \"t5\", \"llama\" or \"mistral\")");
  EXPECT_EQ(parseError("[1, 2]"),
            "cfg.json: invalid config: expected a JSON object");
  std::string invalid = parseError("{\"model_type\": \"bert\",");
  EXPECT_EQ(invalid.rfind("cfg.json: invalid JSON: ", 0), 0u) << invalid;
  EXPECT_EQ(invalid.find('\n'), std::string::npos) << invalid;
  EXPECT_EQ(parseError(bertWith("ftpipe", llvm::json::Object{{"seq_len", 0}})),
            "cfg.json: field 'seq_len' must be positive, got 0 in 'ftpipe'");
  EXPECT_EQ(parseError(bertWith("vocab_size", int64_t(1) << 40)),
            "cfg.json: field 'vocab_size' is too large, got 1099511627776");
  EXPECT_EQ(parseError(bertWith("hidden_size", 64)), "");
  EXPECT_EQ(
      parseError(R"({"model_type": "t5", "d_model": 8, "d_ff": 8, "d_kv": 2,
                     "num_heads": 4, "num_layers": 1, "vocab_size": 10,
                     "relative_attention_num_buckets": 32,
                     "relative_attention_max_distance": 16,
                     "layer_norm_epsilon": 1e-6})"),
      "cfg.json: field 'relative_attention_max_distance' (16) must exceed "
      "half of 'relative_attention_num_buckets' (32)");
}

TEST(ModelConfigTest, UnknownNameListsBundledModels) {
  llvm::Expected<ModelConfig> config = loadModelConfig("no-such-model");
  ASSERT_FALSE(static_cast<bool>(config));
  std::string message = llvm::toString(config.takeError());
  EXPECT_NE(message.find("'no-such-model' is neither a config file nor a "
                         "bundled model"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("t5-3b"), std::string::npos) << message;
}

TEST(ModelConfigTest, ShapeDefaults) {
  llvm::Expected<ModelConfig> bert = parseModelConfig(bertWith("x", 1), "b");
  ASSERT_TRUE(static_cast<bool>(bert));
  ModelGenOptions options;
  // The family default (384 tokens) exceeds this config's 32 positions.
  llvm::Expected<ResolvedShapes> shapes = resolveShapes(*bert, options);
  ASSERT_FALSE(static_cast<bool>(shapes));
  EXPECT_EQ(llvm::toString(shapes.takeError()),
            "b: sequence length 384 exceeds 'max_position_embeddings' (32)");
  // The config's "ftpipe" shapes come before the family's.
  bert->shapes.seqLen = 16;
  shapes = resolveShapes(*bert, options);
  ASSERT_TRUE(static_cast<bool>(shapes)) << llvm::toString(shapes.takeError());
  EXPECT_EQ(shapes->microBatchSize, 4);
  EXPECT_EQ(shapes->seqLen, 16);
  EXPECT_EQ(shapes->decoderSeqLen, 0);
  options.seqLen = 33;
  shapes = resolveShapes(*bert, options);
  ASSERT_FALSE(static_cast<bool>(shapes));
  EXPECT_EQ(llvm::toString(shapes.takeError()),
            "b: sequence length 33 exceeds 'max_position_embeddings' (32)");

  llvm::Expected<ModelConfig> t5 = loadModelConfig("t5-3b");
  ASSERT_TRUE(static_cast<bool>(t5));
  shapes = resolveShapes(*t5, ModelGenOptions());
  ASSERT_TRUE(static_cast<bool>(shapes));
  EXPECT_EQ(shapes->microBatchSize, 4);
  EXPECT_EQ(shapes->seqLen, 512);
  EXPECT_EQ(shapes->decoderSeqLen, 4);
}

} // namespace
