//===- ModelGen.cpp - Generating model IR -----------------------*- C++ -*-===//
//
// The library's entry: resolves shapes against the config, creates the
// module and function, dispatches to the family builder and verifies what it
// built; plus the op and parameter counts the tool reports and tests check.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/ModelGen/ModelGen.h"

#include "FamilyBuilders.h"

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::ftpipe;

llvm::StringRef mlir::ftpipe::getTopModuleName(ModelFamily family,
                                               ModelHead head) {
  bool task = head == ModelHead::Task;
  switch (family) {
  case ModelFamily::Bert:
    return task ? "BertForQuestionAnswering" : "BertModel";
  case ModelFamily::GPT2:
    return task ? "GPT2LMHeadModel" : "GPT2Model";
  case ModelFamily::T5:
    return task ? "T5ForConditionalGeneration" : "T5Model";
  case ModelFamily::Llama:
    return task ? "LlamaForCausalLM" : "LlamaModel";
  }
  llvm_unreachable("unknown model family");
}

llvm::StringRef mlir::ftpipe::getTopModuleName(const ModelConfig &config,
                                               ModelHead head) {
  const auto *llama = std::get_if<LlamaConfig>(&config.family);
  if (llama && llama->isMistral)
    return head == ModelHead::Task ? "MistralForCausalLM" : "MistralModel";
  return getTopModuleName(config.getFamily(), head);
}

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Family defaults: BERT-large on SQuAD (384 tokens), GPT-2 at its full
/// context, T5-3B as in the FTPipe paper (512 -> 4 tokens, micro-batch 4),
/// the LLaMA family at 2048 tokens (a common instruction-tuning length).
static ResolvedShapes familyDefaults(ModelFamily family) {
  switch (family) {
  case ModelFamily::Bert:
    return {4, 384, 0};
  case ModelFamily::GPT2:
    return {1, 1024, 0};
  case ModelFamily::T5:
    return {4, 512, 4};
  case ModelFamily::Llama:
    return {1, 2048, 0};
  }
  llvm_unreachable("unknown model family");
}

llvm::Expected<ResolvedShapes>
mlir::ftpipe::resolveShapes(const ModelConfig &config,
                            const ModelGenOptions &options) {
  auto pick = [](int64_t option, int64_t fromConfig, int64_t fromFamily) {
    if (option > 0)
      return option;
    return fromConfig > 0 ? fromConfig : fromFamily;
  };
  ModelFamily family = config.getFamily();
  ResolvedShapes defaults = familyDefaults(family);
  ResolvedShapes shapes;
  shapes.microBatchSize =
      pick(options.microBatchSize, config.shapes.microBatchSize,
           defaults.microBatchSize);
  shapes.seqLen = pick(options.seqLen, config.shapes.seqLen, defaults.seqLen);
  shapes.decoderSeqLen =
      family == ModelFamily::T5
          ? pick(options.decoderSeqLen, config.shapes.decoderSeqLen,
                 defaults.decoderSeqLen)
          : 0;
  if (options.microBatchSize < 0 || options.seqLen < 0 ||
      options.decoderSeqLen < 0)
    return makeError("shape options must be positive");
  // Masks and T5's bucket tables hold one constant per token.
  constexpr int64_t kMaxTokens = int64_t(1) << 20;
  for (int64_t value :
       {shapes.microBatchSize, shapes.seqLen, shapes.decoderSeqLen})
    if (value > kMaxTokens)
      return makeError(
          llvm::formatv("shape {0} exceeds the supported maximum {1}", value,
                        kMaxTokens)
              .str());
  if (options.decoderSeqLen > 0 && family != ModelFamily::T5)
    return makeError(config.name +
                     ": a decoder sequence length applies to T5 only");
  if (options.withLoss && options.head == ModelHead::None)
    return makeError("a loss needs a head (--head=none has no labels)");
  if (options.withMetrics && !options.withLoss)
    return makeError("--metrics are returned beside the loss: add --loss");

  int64_t maxPositions = 0;
  llvm::StringRef positionsField;
  if (const auto *bert = std::get_if<BertConfig>(&config.family)) {
    maxPositions = bert->maxPositionEmbeddings;
    positionsField = "max_position_embeddings";
  } else if (const auto *gpt2 = std::get_if<GPT2Config>(&config.family)) {
    maxPositions = gpt2->nPositions;
    positionsField = "n_positions";
  } else if (const auto *llama = std::get_if<LlamaConfig>(&config.family)) {
    maxPositions = llama->maxPositionEmbeddings;
    positionsField = "max_position_embeddings";
  }
  bool causalLM = family == ModelFamily::GPT2 || family == ModelFamily::Llama;
  if (causalLM && options.withLoss && shapes.seqLen < 2)
    return makeError(config.name +
                     ": the language-modelling loss needs at least 2 "
                     "tokens per sequence");
  if (maxPositions > 0 && shapes.seqLen > maxPositions)
    return makeError(llvm::formatv("{0}: sequence length {1} exceeds '{2}' "
                                   "({3})",
                                   config.name, shapes.seqLen, positionsField,
                                   maxPositions)
                         .str());
  return shapes;
}

llvm::Expected<OwningOpRef<ModuleOp>>
mlir::ftpipe::generateModel(MLIRContext &context, const ModelConfig &config,
                            const ModelGenOptions &options) {
  llvm::Expected<ResolvedShapes> shapes = resolveShapes(config, options);
  if (!shapes)
    return shapes.takeError();
  context
      .loadDialect<func::FuncDialect, tosa::TosaDialect, tensor::TensorDialect,
                   arith::ArithDialect, FTPipeDialect>();

  llvm::StringRef top = getTopModuleName(config, options.head);
  Location loc = NameLoc::get(StringAttr::get(&context, top));
  // The module's location names the config, so that errors located at the
  // module of generated IR say which model they are about.
  OwningOpRef<ModuleOp> module = ModuleOp::create(NameLoc::get(
      StringAttr::get(&context, top),
      FileLineColLoc::get(&context, config.name, /*line=*/0, /*column=*/0)));
  OpBuilder builder(&context);
  builder.setInsertionPointToEnd(module->getBody());
  auto func =
      builder.create<func::FuncOp>(loc, top, builder.getFunctionType({}, {}));

  FloatType floatType = options.elementKind == ElementKind::F64
                            ? FloatType(builder.getF64Type())
                            : FloatType(builder.getF32Type());
  GraphBuilder graph(func, floatType);
  if (const auto *bert = std::get_if<BertConfig>(&config.family))
    buildBert(graph, *bert, *shapes, options);
  else if (const auto *gpt2 = std::get_if<GPT2Config>(&config.family))
    buildGPT2(graph, *gpt2, *shapes, options);
  else if (const auto *t5 = std::get_if<T5Config>(&config.family))
    buildT5(graph, *t5, *shapes, options);
  else
    buildLlama(graph, std::get<LlamaConfig>(config.family), *shapes, options);

  // A failure here is a bug of the builders, not of the user's config.
  if (failed(verify(*module)))
    return makeError(config.name + ": internal error: generated IR does not "
                                   "verify");
  return module;
}

ModelStats mlir::ftpipe::computeModelStats(func::FuncOp func) {
  ModelStats stats;
  func.walk([&](Operation *op) {
    if (op != func.getOperation())
      ++stats.numOps;
  });
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    if (!func.getArgAttr(i, FTPipeDialect::kParamAttrName))
      continue;
    auto type = cast<RankedTensorType>(func.getArgument(i).getType());
    uint64_t elements = type.getNumElements();
    stats.numParameters += elements;
    stats.parameterBytes +=
        elements * (type.getElementType().getIntOrFloatBitWidth() / 8);
  }
  return stats;
}

void mlir::ftpipe::registerModelGenDialects(DialectRegistry &registry) {
  registry.insert<func::FuncDialect, tosa::TosaDialect, tensor::TensorDialect,
                  arith::ArithDialect>();
  registerFTPipeDialect(registry);
}
