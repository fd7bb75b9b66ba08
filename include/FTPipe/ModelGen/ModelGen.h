//===- ModelGen.h - Transformer IR generator --------------------*- C++ -*-===//
//
// Builds one `func.func` on ranked tensors (tosa, plus tensor/arith where TOSA
// has no op) for a BERT, GPT-2 or T5 config: the IR that FTPipe partitions.
// Every op carries its module scope as a NameLoc in FTPipe's tracer format;
// every trainable weight is a function argument marked `ftpipe.param` with its
// Hugging Face checkpoint name in `ftpipe.name`.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_MODELGEN_MODELGEN_H
#define FTPIPE_MODELGEN_MODELGEN_H

#include "FTPipe/ModelGen/ModelConfig.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir {
class DialectRegistry;

namespace ftpipe {

/// What the generated function computes after the backbone.
enum class ModelHead {
  /// The family's task head: BERT's question-answering span head
  /// (BertForQuestionAnswering), GPT-2's LM head (GPT2LMHeadModel), T5's LM
  /// head (T5ForConditionalGeneration).
  Task,
  /// The bare backbone (BertModel, GPT2Model, T5Model): returns the last
  /// hidden state.
  None,
};

/// Float type of activations and weights.
enum class ElementKind { F32, F64 };

/// Options of one generation; a 0 shape takes the config's or family's
/// default (see `resolveShapes`).
struct ModelGenOptions {
  int64_t microBatchSize = 0;
  /// Tokens per sequence (T5: encoder tokens).
  int64_t seqLen = 0;
  /// T5 only: decoder tokens.
  int64_t decoderSeqLen = 0;
  ModelHead head = ModelHead::Task;
  /// Adds the labels input(s) and returns the scalar cross-entropy loss.
  bool withLoss = false;
  /// With the loss, also returns the task's evaluation metrics (results
  /// named by `ftpipe.metric`): token accuracy's counts for the language
  /// models, the argmax start and end positions for question answering.
  bool withMetrics = false;
  ElementKind elementKind = ElementKind::F32;
};

/// The shapes one generation uses after defaults are applied.
struct ResolvedShapes {
  int64_t microBatchSize;
  int64_t seqLen;
  /// 0 except for T5.
  int64_t decoderSeqLen;
};

/// Applies the defaults (options, then the config's `"ftpipe"` object, then
/// the family's: BERT 4 x 384, GPT-2 1 x 1024, T5 4 x 512 -> 4) and checks
/// them against the config (e.g. positions), failing with one line.
llvm::Expected<ResolvedShapes> resolveShapes(const ModelConfig &config,
                                             const ModelGenOptions &options);

/// Counts of a generated function.
struct ModelStats {
  /// Ops inside the function body (constants and the return included).
  uint64_t numOps = 0;
  /// Sum of the element counts of the `ftpipe.param` arguments.
  uint64_t numParameters = 0;
  /// Bytes of those parameters at the element type.
  uint64_t parameterBytes = 0;
};

/// Builds the module holding the model's function (named after the model's
/// top module, e.g. `@T5ForConditionalGeneration`). The context must have
/// the dialects of `registerModelGenDialects` loaded or registered. Fails
/// with one line on bad options.
llvm::Expected<OwningOpRef<ModuleOp>>
generateModel(MLIRContext &context, const ModelConfig &config,
              const ModelGenOptions &options);

/// Counts ops and `ftpipe.param` arguments of `func`.
ModelStats computeModelStats(func::FuncOp func);

/// Adds the dialects generated IR uses (func, tosa, tensor, arith, ftpipe).
void registerModelGenDialects(DialectRegistry &registry);

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_MODELGEN_MODELGEN_H
