//===- ModelGenTest.cpp - Generated model IR ------------------------------===//
//
// Generates models and checks the IR: parameter counts from the
// `ftpipe.param` arguments equal the formula for the paper's models and for
// variations of every family; weights have unique HF names; tied weights
// are one argument with several uses; every op has a scope NameLoc; options
// (loss, head, element type) change what they should.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/ModelGen/ModelGen.h"
#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSet.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::ftpipe;

namespace {

class ModelGenTest : public ::testing::Test {
protected:
  ModelGenTest() {
    DialectRegistry registry;
    registerModelGenDialects(registry);
    context.appendDialectRegistry(registry);
  }

  /// Generates `config` with `options`; fails the test on error.
  OwningOpRef<ModuleOp> generate(const ModelConfig &config,
                                 const ModelGenOptions &options = {}) {
    llvm::Expected<OwningOpRef<ModuleOp>> module =
        generateModel(context, config, options);
    if (!module) {
      ADD_FAILURE() << llvm::toString(module.takeError());
      return nullptr;
    }
    return std::move(*module);
  }

  static ModelConfig load(llvm::StringRef nameOrJson) {
    llvm::Expected<ModelConfig> config =
        nameOrJson.starts_with("{") ? parseModelConfig(nameOrJson, "test")
                                    : loadModelConfig(nameOrJson);
    if (!config) {
      ADD_FAILURE() << llvm::toString(config.takeError());
      return {};
    }
    return *config;
  }

  static func::FuncOp getFunc(ModuleOp module) {
    return cast<func::FuncOp>(module.getBody()->front());
  }

  /// The argument named `name` by `ftpipe.name`, or null.
  static BlockArgument findParam(func::FuncOp func, llvm::StringRef name) {
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (auto attr = func.getArgAttrOfType<StringAttr>(
              i, FTPipeDialect::kNameAttrName))
        if (attr.getValue() == name)
          return func.getArgument(i);
    return nullptr;
  }

  MLIRContext context;
};

/// Small shapes, so the paper-sized models build quickly.
ModelGenOptions smallShapes() {
  ModelGenOptions options;
  options.microBatchSize = 1;
  options.seqLen = 8;
  options.decoderSeqLen = 2;
  return options;
}

TEST_F(ModelGenTest, PaperModelsHaveReferenceParameterCounts) {
  struct Case {
    const char *name;
    uint64_t params;
  } cases[] = {{"bert-large-uncased", 334094338u},
               {"gpt2-xl", 1557611200u},
               {"t5-3b", 2851598336u},
               // transformers 4.57's num_parameters() on the meta device.
               {"flan-t5-xl", 2849757184u},
               {"llama-2-7b", 6738415616u}};
  for (const Case &c : cases) {
    ModelConfig config = load(c.name);
    OwningOpRef<ModuleOp> module = generate(config);
    ASSERT_TRUE(module) << c.name;
    ModelStats stats = computeModelStats(getFunc(*module));
    EXPECT_EQ(stats.numParameters, c.params) << c.name;
    EXPECT_EQ(stats.numParameters, computeParameterCount(config, true))
        << c.name;
    EXPECT_EQ(stats.parameterBytes, 4 * c.params) << c.name;
  }
}

TEST_F(ModelGenTest, T5At3BHasThousandsOfOps) {
  OwningOpRef<ModuleOp> module = generate(load("t5-3b"));
  ASSERT_TRUE(module);
  ModelStats stats = computeModelStats(getFunc(*module));
  // FTPipe's own T5-3B traces had 4,228 to 6,187 nodes.
  EXPECT_GT(stats.numOps, 4000u);
  EXPECT_LT(stats.numOps, 8000u);
}

TEST_F(ModelGenTest, FormulaMatchesIRForOtherConfigs) {
  const char *configs[] = {
      // BERT-base-like, other sizes.
      R"({"model_type": "bert", "hidden_size": 48, "num_hidden_layers": 3,
          "num_attention_heads": 6, "intermediate_size": 100,
          "vocab_size": 77, "max_position_embeddings": 20,
          "type_vocab_size": 3, "layer_norm_eps": 1e-12})",
      // GPT-2 with n_inner set and an untied head.
      R"({"model_type": "gpt2", "n_embd": 40, "n_layer": 3, "n_head": 5,
          "n_inner": 70, "vocab_size": 91, "n_positions": 16,
          "layer_norm_epsilon": 1e-5, "tie_word_embeddings": false})",
      // GPT-2 tied (the default).
      R"({"model_type": "gpt2", "n_embd": 24, "n_layer": 2, "n_head": 3,
          "vocab_size": 50, "n_positions": 16, "layer_norm_epsilon": 1e-5})",
      // T5 with fewer decoder layers, inner != d_model, untied head.
      R"({"model_type": "t5", "d_model": 32, "d_ff": 80, "d_kv": 12,
          "num_heads": 3, "num_layers": 3, "num_decoder_layers": 1,
          "vocab_size": 57, "relative_attention_num_buckets": 16,
          "relative_attention_max_distance": 20, "layer_norm_epsilon": 1e-6,
          "tie_word_embeddings": false})",
      // T5 v1.1 style: gated feed-forward, untied head.
      R"({"model_type": "t5", "d_model": 32, "d_ff": 48, "d_kv": 8,
          "num_heads": 4, "num_layers": 2, "vocab_size": 57,
          "relative_attention_num_buckets": 16, "layer_norm_epsilon": 1e-6,
          "feed_forward_proj": "gated-gelu", "tie_word_embeddings": false})",
      // Llama with grouped-query attention, biases and a tied head.
      R"({"model_type": "llama", "hidden_size": 48, "intermediate_size": 70,
          "num_hidden_layers": 2, "num_attention_heads": 6,
          "num_key_value_heads": 2, "vocab_size": 61,
          "max_position_embeddings": 16, "rms_norm_eps": 1e-6,
          "attention_bias": true, "mlp_bias": true,
          "tie_word_embeddings": true})",
      // Mistral with head_dim * heads != hidden_size and a sliding window.
      R"({"model_type": "mistral", "hidden_size": 40, "intermediate_size": 64,
          "num_hidden_layers": 1, "num_attention_heads": 4,
          "num_key_value_heads": 1, "head_dim": 6, "vocab_size": 33,
          "max_position_embeddings": 16, "rms_norm_eps": 1e-5,
          "sliding_window": 3})",
  };
  for (const char *json : configs) {
    ModelConfig config = load(json);
    for (ModelHead head : {ModelHead::Task, ModelHead::None}) {
      ModelGenOptions options = smallShapes();
      if (config.getFamily() != ModelFamily::T5)
        options.decoderSeqLen = 0;
      options.head = head;
      OwningOpRef<ModuleOp> module = generate(config, options);
      ASSERT_TRUE(module) << json;
      EXPECT_EQ(computeModelStats(getFunc(*module)).numParameters,
                computeParameterCount(config, head == ModelHead::Task))
          << json;
    }
  }
}

TEST_F(ModelGenTest, ParametersHaveUniqueHFNames) {
  for (const char *name :
       {"bert-tiny", "gpt2-tiny", "t5-tiny", "flan-t5-tiny", "llama-tiny"}) {
    OwningOpRef<ModuleOp> module = generate(load(name));
    ASSERT_TRUE(module);
    func::FuncOp func = getFunc(*module);
    llvm::StringSet<> names;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      bool isParam =
          static_cast<bool>(func.getArgAttr(i, FTPipeDialect::kParamAttrName));
      auto argName =
          func.getArgAttrOfType<StringAttr>(i, FTPipeDialect::kNameAttrName);
      EXPECT_EQ(isParam, static_cast<bool>(argName)) << name << " arg " << i;
      if (argName) {
        EXPECT_TRUE(names.insert(argName.getValue()).second)
            << name << ": duplicate " << argName.getValue().str();
      }
    }
  }
  OwningOpRef<ModuleOp> t5 = generate(load("t5-tiny"));
  ASSERT_TRUE(t5);
  for (const char *expected :
       {"shared.weight", "encoder.block.1.layer.0.SelfAttention.q.weight",
        "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
        "decoder.block.1.layer.1.EncDecAttention.o.weight",
        "decoder.block.0.layer.2.DenseReluDense.wi.weight",
        "decoder.final_layer_norm.weight"})
    EXPECT_TRUE(findParam(getFunc(*t5), expected)) << expected;
  EXPECT_FALSE(findParam(getFunc(*t5), "lm_head.weight"));
  EXPECT_FALSE(findParam(
      getFunc(*t5),
      "encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight"));

  OwningOpRef<ModuleOp> bert = generate(load("bert-tiny"));
  ASSERT_TRUE(bert);
  for (const char *expected :
       {"bert.embeddings.word_embeddings.weight",
        "bert.encoder.layer.1.attention.self.query.bias",
        "bert.encoder.layer.0.attention.output.LayerNorm.weight",
        "bert.encoder.layer.1.output.dense.weight", "qa_outputs.bias"})
    EXPECT_TRUE(findParam(getFunc(*bert), expected)) << expected;

  OwningOpRef<ModuleOp> gpt2 = generate(load("gpt2-tiny"));
  ASSERT_TRUE(gpt2);
  for (const char *expected :
       {"transformer.wte.weight", "transformer.h.1.attn.c_attn.weight",
        "transformer.h.0.mlp.c_proj.bias", "transformer.ln_f.weight"})
    EXPECT_TRUE(findParam(getFunc(*gpt2), expected)) << expected;

  OwningOpRef<ModuleOp> flan = generate(load("flan-t5-tiny"));
  ASSERT_TRUE(flan);
  for (const char *expected :
       {"decoder.block.1.layer.2.DenseReluDense.wi_0.weight",
        "encoder.block.0.layer.1.DenseReluDense.wi_1.weight",
        "encoder.block.0.layer.1.DenseReluDense.wo.weight", "lm_head.weight"})
    EXPECT_TRUE(findParam(getFunc(*flan), expected)) << expected;
  EXPECT_FALSE(findParam(getFunc(*flan),
                         "encoder.block.0.layer.1.DenseReluDense.wi.weight"));

  OwningOpRef<ModuleOp> llama = generate(load("llama-tiny"));
  ASSERT_TRUE(llama);
  for (const char *expected :
       {"model.embed_tokens.weight", "model.layers.1.self_attn.k_proj.weight",
        "model.layers.0.mlp.gate_proj.weight",
        "model.layers.0.post_attention_layernorm.weight", "model.norm.weight",
        "lm_head.weight"})
    EXPECT_TRUE(findParam(getFunc(*llama), expected)) << expected;
  // Grouped-query attention: 2 key/value heads of 16 for 4 query heads.
  EXPECT_EQ(
      cast<RankedTensorType>(
          findParam(getFunc(*llama), "model.layers.0.self_attn.v_proj.weight")
              .getType())
          .getShape(),
      llvm::ArrayRef<int64_t>({32, 64}));
}

TEST_F(ModelGenTest, TiedWeightIsOneArgumentUsedTwice) {
  struct Case {
    const char *model, *param, *lookupScope;
  } cases[] = {{"gpt2-tiny", "transformer.wte.weight",
                "GPT2LMHeadModel/GPT2Model[transformer]/Embedding[wte]"},
               {"t5-tiny", "shared.weight",
                "T5ForConditionalGeneration/T5Stack[encoder]/"
                "Embedding[embed_tokens]"}};
  for (const Case &c : cases) {
    OwningOpRef<ModuleOp> module = generate(load(c.model));
    ASSERT_TRUE(module);
    BlockArgument weight = findParam(getFunc(*module), c.param);
    ASSERT_TRUE(weight) << c.model;
    llvm::StringSet<> scopes;
    for (Operation *user : weight.getUsers())
      scopes.insert(cast<NameLoc>(user->getLoc()).getName().getValue());
    EXPECT_TRUE(scopes.contains(c.lookupScope)) << c.model;
    std::string head = std::string(c.model == llvm::StringRef("gpt2-tiny")
                                       ? "GPT2LMHeadModel"
                                       : "T5ForConditionalGeneration") +
                       "/Linear[lm_head]";
    EXPECT_TRUE(scopes.contains(head)) << c.model;
  }
}

TEST_F(ModelGenTest, EveryOpHasAScopeUnderTheTopModule) {
  for (const char *name :
       {"bert-tiny", "gpt2-tiny", "t5-tiny", "flan-t5-tiny", "llama-tiny"}) {
    OwningOpRef<ModuleOp> module = generate(load(name));
    ASSERT_TRUE(module);
    func::FuncOp func = getFunc(*module);
    std::string prefix = func.getSymName().str();
    func.walk([&](Operation *op) {
      if (op == func.getOperation())
        return;
      auto loc = dyn_cast<NameLoc>(op->getLoc());
      ASSERT_TRUE(loc) << name << ": " << op->getName().getStringRef().str();
      EXPECT_EQ(loc.getName().getValue().find(prefix), 0u)
          << loc.getName().getValue().str();
    });
  }
}

TEST_F(ModelGenTest, LossReturnsAScalar) {
  for (const char *name :
       {"bert-tiny", "gpt2-tiny", "t5-tiny", "flan-t5-tiny", "llama-tiny"}) {
    ModelGenOptions options;
    options.withLoss = true;
    OwningOpRef<ModuleOp> module = generate(load(name), options);
    ASSERT_TRUE(module);
    FunctionType type = getFunc(*module).getFunctionType();
    ASSERT_EQ(type.getNumResults(), 1u) << name;
    auto result = cast<RankedTensorType>(type.getResult(0));
    EXPECT_EQ(result.getRank(), 0) << name;
    EXPECT_TRUE(result.getElementType().isF32()) << name;
  }
}

TEST_F(ModelGenTest, ResultsAndInputs) {
  OwningOpRef<ModuleOp> bert = generate(load("bert-tiny"));
  ASSERT_TRUE(bert);
  FunctionType type = getFunc(*bert).getFunctionType();
  ASSERT_EQ(type.getNumResults(), 2u);
  EXPECT_EQ(cast<RankedTensorType>(type.getResult(0)).getShape(),
            llvm::ArrayRef<int64_t>({2, 16}));
  // input_ids, attention_mask, token_type_ids: i32 data without marks.
  for (unsigned i = 0; i < 3; ++i) {
    EXPECT_FALSE(getFunc(*bert).getArgAttr(i, FTPipeDialect::kParamAttrName));
    EXPECT_TRUE(cast<RankedTensorType>(type.getInput(i))
                    .getElementType()
                    .isInteger(32));
  }

  ModelGenOptions options;
  options.seqLen = 10;
  options.decoderSeqLen = 3;
  options.microBatchSize = 5;
  OwningOpRef<ModuleOp> t5 = generate(load("t5-tiny"), options);
  ASSERT_TRUE(t5);
  type = getFunc(*t5).getFunctionType();
  EXPECT_EQ(cast<RankedTensorType>(type.getResult(0)).getShape(),
            llvm::ArrayRef<int64_t>({5, 3, 512}));
  EXPECT_EQ(cast<RankedTensorType>(type.getInput(0)).getShape(),
            llvm::ArrayRef<int64_t>({5, 10}));
  EXPECT_EQ(cast<RankedTensorType>(type.getInput(2)).getShape(),
            llvm::ArrayRef<int64_t>({5, 3}));

  options = ModelGenOptions();
  options.head = ModelHead::None;
  OwningOpRef<ModuleOp> gpt2 = generate(load("gpt2-tiny"), options);
  ASSERT_TRUE(gpt2);
  EXPECT_EQ(getFunc(*gpt2).getSymName(), "GPT2Model");
  EXPECT_TRUE(findParam(getFunc(*gpt2), "wte.weight"));
  EXPECT_EQ(
      cast<RankedTensorType>(getFunc(*gpt2).getFunctionType().getResult(0))
          .getShape(),
      llvm::ArrayRef<int64_t>({2, 16, 64}));
}

TEST_F(ModelGenTest, F64ElementType) {
  ModelGenOptions options;
  options.elementKind = ElementKind::F64;
  options.withLoss = true;
  OwningOpRef<ModuleOp> module = generate(load("t5-tiny"), options);
  ASSERT_TRUE(module);
  ModelStats stats = computeModelStats(getFunc(*module));
  EXPECT_EQ(stats.parameterBytes, 8 * stats.numParameters);
  getFunc(*module).walk([](Operation *op) {
    for (Type type : op->getResultTypes())
      if (auto tensor = dyn_cast<RankedTensorType>(type)) {
        EXPECT_FALSE(tensor.getElementType().isF32());
      }
  });
}

TEST_F(ModelGenTest, BadOptionsFailWithOneLine) {
  ModelGenOptions options;
  options.head = ModelHead::None;
  options.withLoss = true;
  llvm::Expected<OwningOpRef<ModuleOp>> module =
      generateModel(context, load("gpt2-tiny"), options);
  ASSERT_FALSE(static_cast<bool>(module));
  EXPECT_EQ(llvm::toString(module.takeError()),
            "a loss needs a head (--head=none has no labels)");

  options = ModelGenOptions();
  options.decoderSeqLen = 4;
  module = generateModel(context, load("bert-tiny"), options);
  ASSERT_FALSE(static_cast<bool>(module));
  EXPECT_EQ(llvm::toString(module.takeError()),
            "bert-tiny: a decoder sequence length applies to T5 only");
}

} // namespace
