//===- ftpipe-opt.cpp - FTPipe's optimizer driver ---------------*- C++ -*-===//
//
// mlir-opt for FTPipe: the upstream dialects that model IR uses, the ftpipe
// dialect, every FTPipe pass and the generic upstream transforms (canonicalize,
// cse, ...). Registers only what it uses, to keep the build lean.
// The input is parsed once under a ParseGuard before MlirOptMain parses it
// again, so that an input on which MLIR 19's parser would crash ends at its
// first error instead (FTPipe/ParseGuard.h).
// An input whose locations name things (NameLocs: the ops' scope paths, which
// coarsening and profiles read, and the model's input names) is printed with
// its locations unless `--mlir-print-debuginfo` says otherwise: printed
// without them, it would plan and compile differently when parsed again.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/AutoDiff/AutoDiffInterfaces.h"
#include "FTPipe/Conversion/CPUPipeline.h"
#include "FTPipe/Conversion/CUDAPipeline.h"
#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/ParseGuard.h"
#include "FTPipe/Transforms/Passes.h"
#include "FTPipe/Transforms/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

/// Whether a location of an op or block argument under `block` is a NameLoc.
static bool carriesNames(mlir::Block &block) {
  auto named = [](mlir::Location loc) {
    return loc
        ->walk([](mlir::Location inner) {
          return mlir::isa<mlir::NameLoc>(inner) ? mlir::WalkResult::interrupt()
                                                 : mlir::WalkResult::advance();
        })
        .wasInterrupted();
  };
  return block
      .walk([&](mlir::Operation *op) {
        if (named(op->getLoc()))
          return mlir::WalkResult::interrupt();
        for (mlir::Region &region : op->getRegions())
          for (mlir::Block &inner : region)
            for (mlir::BlockArgument arg : inner.getArguments())
              if (named(arg.getLoc()))
                return mlir::WalkResult::interrupt();
        return mlir::WalkResult::advance();
      })
      .wasInterrupted();
}

/// Parses each chunk of `input` (as MlirOptMain splits it), unverified and
/// under a ParseGuard: the first parse error ends the process with status 1,
/// printed as MlirOptMain would print it. Returns whether a chunk's
/// locations name things (carriesNames). Only errors are printed (warnings
/// come from MlirOptMain's parse), and ops and types of dialects that are not
/// registered are accepted (MlirOptMain's parse refuses them where it should;
/// --irdl-file dialects are known only to it).
static bool exitOnParseError(const llvm::MemoryBuffer &input,
                             mlir::DialectRegistry &registry,
                             const mlir::MlirOptMainConfig &config) {
  bool named = false;
  auto parseChunk = [&](std::unique_ptr<llvm::MemoryBuffer> chunk,
                        llvm::raw_ostream &) {
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(std::move(chunk), llvm::SMLoc());
    mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
    context.allowUnregisteredDialects();
    mlir::ftpipe::ParseGuard guard(sourceMgr, &context);
    mlir::ScopedDiagnosticHandler onlyErrors(&context, [](mlir::Diagnostic &d) {
      return mlir::success(d.getSeverity() != mlir::DiagnosticSeverity::Error);
    });
    mlir::FallbackAsmResourceMap resources;
    mlir::Block block;
    (void)mlir::parseSourceFile(
        sourceMgr, &block,
        mlir::ParserConfig(&context, /*verifyAfterParse=*/false, &resources));
    named = named || carriesNames(block);
    return mlir::success();
  };
  (void)mlir::splitAndProcessBuffer(
      llvm::MemoryBuffer::getMemBuffer(input.getMemBufferRef(),
                                       /*RequiresNullTerminator=*/false),
      parseChunk, llvm::nulls(), config.inputSplitMarker(),
      config.outputSplitMarker());
  return named;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::DialectRegistry registry;
  registry.insert<mlir::arith::ArithDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::func::FuncDialect, mlir::gpu::GPUDialect,
                  mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                  mlir::tensor::TensorDialect, mlir::tosa::TosaDialect>();
  mlir::ftpipe::registerFTPipeDialect(registry);
  mlir::ftpipe::autodiff::registerAllRules(registry);
  mlir::ftpipe::registerCPULoweringDialects(registry);
  mlir::ftpipe::registerCUDALoweringDialects(registry);

  mlir::registerTransformsPasses();
  mlir::ftpipe::registerFTPipePasses();
  mlir::ftpipe::registerFTPipePipelines();
  mlir::ftpipe::registerFTPipeConversions();

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "FTPipe optimizer driver: pipeline partitioning passes\n",
      registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  // The rest of MlirOptMain(argc, argv, ...), with the guarded parse first
  // (here, since stdin can be read only once).
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  // --verify-diagnostics checks every expected diagnostic itself.
  if (!config.shouldVerifyDiagnostics() &&
      exitOnParseError(*input, registry, config)) {
    // Named locations print unless the command line says otherwise.
    auto *debugInfo = static_cast<llvm::cl::opt<bool> *>(
        llvm::cl::getRegisteredOptions()["mlir-print-debuginfo"]);
    if (!debugInfo->getNumOccurrences())
      *debugInfo = true;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
