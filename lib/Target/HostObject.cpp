//===- HostObject.cpp - LLVM dialect to objects and shared libraries ------===//
//
// emitHostObject and linkHostSharedLibrary (HostObject.h).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Target/HostObject.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;

/// LLVM's default pipeline at `optLevel`, without loop unrolling. Unrolling
/// made the object of a BERT-large encoder layer with its backward cost 12.7 s
/// of CPU instead of 2.5 s at -O2, for a run time within about 3%
/// (docs/Compile.md, "Compile time"); the loop vectoriser still interleaves.
/// Nor CalledValuePropagationPass: it only annotates indirect calls, which
/// the generated code has none of, and took 2.7 of the 4.0 s of `opt` on
/// GPT-2 124M's device 1, growing faster than the glue's descriptors.
static void optimize(llvm::Module &module, unsigned optLevel,
                     llvm::TargetMachine *machine) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassInstrumentationCallbacks instrumentation;
  instrumentation.registerShouldRunOptionalPassCallback(
      [](llvm::StringRef pass, llvm::Any) {
        return pass != "CalledValuePropagationPass";
      });
  llvm::PassBuilder builder(machine, tuning, std::nullopt, &instrumentation);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::OptimizationLevel level = optLevel >= 3   ? llvm::OptimizationLevel::O3
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                                  : llvm::OptimizationLevel::O0;
  llvm::ModulePassManager pipeline =
      optLevel == 0 ? builder.buildO0DefaultPipeline(level)
                    : builder.buildPerModuleDefaultPipeline(level);
  pipeline.run(module, modules);
}

LogicalResult ftpipe::emitHostObject(ModuleOp module,
                                     llvm::StringRef objectPath,
                                     unsigned optLevel, std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  if (!llvmModule) {
    error = "translation to LLVM IR failed";
    return failure();
  }
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    error = llvm::toString(builder.takeError());
    return failure();
  }
  builder->setCodeGenOptLevel(optLevel >= 3 ? llvm::CodeGenOptLevel::Aggressive
                              : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                              : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                              : llvm::CodeGenOptLevel::None);
  builder->setRelocationModel(llvm::Reloc::PIC_);
  auto machine = builder->createTargetMachine();
  if (!machine) {
    error = llvm::toString(machine.takeError());
    return failure();
  }
  ExecutionEngine::setupTargetTripleAndDataLayout(llvmModule.get(),
                                                  machine->get());
  optimize(*llvmModule, optLevel, machine->get());
  std::error_code ec;
  llvm::raw_fd_ostream os(objectPath, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = "cannot write '" + objectPath.str() + "': " + ec.message();
    return failure();
  }
  llvm::legacy::PassManager codegen;
  if ((*machine)->addPassesToEmitFile(codegen, os, nullptr,
                                      llvm::CodeGenFileType::ObjectFile)) {
    error = "the host target cannot emit object files";
    return failure();
  }
  codegen.run(*llvmModule);
  return success();
}

LogicalResult ftpipe::linkHostSharedLibrary(
    const std::vector<std::string> &objects, llvm::StringRef output,
    const HostLinkOptions &options, std::string &error) {
  auto linker = llvm::sys::findProgramByName(options.linker);
  if (!linker) {
    error = "linker '" + options.linker + "' not found on PATH";
    return failure();
  }
  std::vector<std::string> args = {options.linker, "-shared", "-o",
                                   output.str()};
  args.insert(args.end(), objects.begin(), objects.end());
  for (const std::string &dir : {options.runtimeDir, options.mlirLibDir}) {
    args.push_back("-L" + dir);
    args.push_back("-Wl,-rpath," + dir);
  }
  // Every artifact carries the stage ABI, also one that sends nothing: its
  // drivers reach the runtime (ftpipe_rt_local_*) through it.
  args.push_back("-Wl,--no-as-needed");
  for (const std::string &library : options.runtimeLibraries)
    args.push_back("-l" + library);
  for (const char *library :
       {"-Wl,--as-needed", "-lmlir_c_runner_utils", "-lm"})
    args.push_back(library);
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*linker, argRefs, std::nullopt, {}, 0,
                                         0, &message);
  if (status != 0) {
    error = "linking '" + output.str() + "' failed" +
            (message.empty() ? "" : ": " + message);
    return failure();
  }
  return success();
}
