//===- ftpipe-model-gen.cpp - Transformer IR generator ----------*- C++ -*-===//
//
// Writes the tensor IR of a BERT, GPT-2, T5, Llama or Mistral model, from a
// Hugging Face style config.json or a bundled model name, for FTPipe to
// partition:
//
//   ftpipe-model-gen t5-3b -o t5-3b.mlir
//   ftpipe-model-gen path/to/config.json --seq-len=128 --loss
//   ftpipe-model-gen path/to/checkpoint-dir --seq-len=128 --loss
//
// A one-line summary (ops, parameters, bytes) goes to stderr; errors are one
// line and a non-zero exit.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/ModelGen/ModelGen.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
using namespace mlir::ftpipe;

namespace cl = llvm::cl;

static cl::OptionCategory category("ftpipe-model-gen options");

static cl::opt<std::string>
    modelArg(cl::Positional,
             cl::desc("<bundled model name, config.json or checkpoint dir>"),
             cl::cat(category));

static cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                           cl::value_desc("filename"),
                                           cl::init("-"), cl::cat(category));

static cl::opt<int64_t> microBatchSize(
    "micro-batch-size",
    cl::desc("Sequences per micro-batch (default: the config's, else BERT 4, "
             "GPT-2 1, T5 4, LLaMA 1)"),
    cl::init(0), cl::cat(category));

static cl::opt<int64_t>
    seqLen("seq-len",
           cl::desc("Tokens per sequence, T5: encoder tokens (default: the "
                    "config's, else BERT 384, GPT-2 1024, T5 512, LLaMA "
                    "2048)"),
           cl::init(0), cl::cat(category));

static cl::opt<int64_t> decoderSeqLen(
    "decoder-seq-len",
    cl::desc("T5 only: decoder tokens (default: the config's, else 4)"),
    cl::init(0), cl::cat(category));

static cl::opt<ModelHead> head(
    "head", cl::desc("Head on top of the backbone"), cl::init(ModelHead::Task),
    cl::values(clEnumValN(ModelHead::Task, "task",
                          "the family's head: BERT question answering, the "
                          "LM head of GPT-2, T5 and LLaMA"),
               clEnumValN(ModelHead::None, "none",
                          "no head: the backbone's last hidden state")),
    cl::cat(category));

static cl::opt<bool>
    withLoss("loss",
             cl::desc("Add the labels input(s) and return the scalar "
                      "cross-entropy loss"),
             cl::init(false), cl::cat(category));

static cl::opt<bool> withMetrics(
    "metrics",
    cl::desc("With --loss, also return the task's evaluation metrics for "
             "ftpipe-run --eval-data: token accuracy's counts (GPT-2, T5, "
             "LLaMA), the predicted answer span (BERT)"),
    cl::init(false), cl::cat(category));

static cl::opt<ElementKind> elementType(
    "element-type", cl::desc("Float type of weights and activations"),
    cl::init(ElementKind::F32),
    cl::values(clEnumValN(ElementKind::F32, "f32", "32-bit floats"),
               clEnumValN(ElementKind::F64, "f64",
                          "64-bit floats (outside TOSA's profiles)")),
    cl::cat(category));

static cl::opt<bool> listModels("list-models",
                                cl::desc("Print the bundled model names"),
                                cl::init(false), cl::cat(category));

static cl::opt<bool> quiet("quiet", cl::desc("No summary on stderr"),
                           cl::init(false), cl::cat(category));

/// Prints one error line and returns the exit code.
static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "ftpipe-model-gen") << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv, "FTPipe model generator: transformer IR in tosa\n");

  if (listModels) {
    for (llvm::StringRef name : getBundledModelNames())
      llvm::outs() << name << "\n";
    return 0;
  }
  if (modelArg.empty())
    return fail("no model given (a bundled name, see --list-models, or a "
                "config.json)");

  auto start = std::chrono::steady_clock::now();
  llvm::Expected<ModelConfig> config = loadModelConfig(modelArg);
  if (!config)
    return fail(llvm::toString(config.takeError()));

  ModelGenOptions options;
  options.microBatchSize = microBatchSize;
  options.seqLen = seqLen;
  options.decoderSeqLen = decoderSeqLen;
  options.head = head;
  options.withLoss = withLoss;
  options.withMetrics = withMetrics;
  options.elementKind = elementType;

  DialectRegistry registry;
  registerModelGenDialects(registry);
  MLIRContext context(registry);
  llvm::Expected<OwningOpRef<ModuleOp>> module =
      generateModel(context, *config, options);
  if (!module)
    return fail(llvm::toString(module.takeError()));

  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output)
    return fail(errorMessage);
  OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  uint64_t before = output->os().tell();
  (*module)->print(output->os(), flags);
  output->os() << "\n";
  uint64_t written = output->os().tell() - before;
  output->os().flush();
  if (std::error_code error = output->os().error()) {
    output->os().clear_error();
    return fail(llvm::formatv("cannot write '{0}': {1}", outputFilename,
                              error.message()));
  }
  output->keep();

  if (!quiet) {
    auto func = cast<func::FuncOp>((*module)->getBody()->front());
    ModelStats stats = computeModelStats(func);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    llvm::errs() << llvm::formatv(
        "ftpipe-model-gen: {0}: {1} ops, {2} parameters, {3} parameter "
        "bytes, {4} IR bytes, {5:f3} s\n",
        config->name, stats.numOps, stats.numParameters, stats.parameterBytes,
        written, seconds);
  }
  return 0;
}
