//===- ftpipe-compile.cpp - Model IR to per-device artifacts --------------===//
//
// ftpipe-compile MODEL.mlir --target=cpu --devices=N [--hardware=...]
//   [--method=auto|mixed-pipe|seq-dp] -o DIR
//
// Partitions the model (unless it is partitioned already), turns the plan into
// per-device stage programs (docs/StagePrograms.md), lowers every device's
// entry points (CPU: FTPipe's CPU pipeline, BLAS contractions) and writes one
// shared library per device plus DIR/manifest.json (docs/Compile.md).
// A module that already holds per-device entry points (`ftpipe.entry`) skips
// the first two steps, a partitioned one the first; with --forward-only the
// model function itself becomes the one entry point of one artifact.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include "FTPipe/Conversion/CPUPipeline.h"
#include "FTPipe/InitAllFTPipe.h"
#include "FTPipe/Target/HostObject.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/Timer.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;
namespace ft = mlir::ftpipe;

namespace {

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::Required);
cl::opt<std::string> outputDir("o", cl::desc("Output directory"),
                               cl::value_desc("dir"), cl::Required);
enum class Target { CPU, CUDA };
cl::opt<Target> target("target", cl::desc("Code generation target"),
                       cl::init(Target::CPU),
                       cl::values(clEnumValN(Target::CPU, "cpu",
                                             "host CPU, contractions on OpenBLAS"),
                                  clEnumValN(Target::CUDA, "cuda",
                                             "NVIDIA GPUs, contractions on cuBLAS")));
cl::opt<unsigned> devices("devices", cl::desc("Number of devices"),
                          cl::init(1));
cl::opt<std::string>
    hardware("hardware", cl::desc("Hardware preset name or cluster JSON file"),
             cl::init(ft::PartitionPipelineOptions().hardware));
cl::opt<ft::PartitionMethod> method(
    "method", cl::desc("Partitioner"), cl::init(ft::PartitionMethod::Auto),
    cl::values(clEnumValN(ft::PartitionMethod::Auto, "auto",
                          "every partitioner, the fastest feasible plan"),
               clEnumValN(ft::PartitionMethod::MixedPipe, "mixed-pipe",
                          "Mixed-Pipe"),
               clEnumValN(ft::PartitionMethod::SeqDP, "seq-dp",
                          "contiguous stages, dynamic programming")));
cl::opt<std::string> recompute(
    "recompute",
    cl::desc("ftpipe-differentiate's recompute: true, false or plan"),
    cl::init("true"));
cl::opt<std::string> runtimeDir("runtime-dir",
                                cl::desc("Directory of FTPipe's runtime "
                                         "libraries"),
                                cl::init(FTPIPE_RUNTIME_DIR));
cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimisation level (0-3)"),
                           cl::Prefix, cl::init(2));
cl::opt<bool> blas("blas", cl::desc("Contractions call BLAS (else loops)"),
                   cl::init(true));
cl::opt<bool> fuse("fuse", cl::desc("Fuse element-wise producers"),
                   cl::init(true));
cl::opt<bool> forwardOnly(
    "forward-only",
    cl::desc("Compile the model function itself for one device (inference), "
             "no partition and no backward"),
    cl::init(false));
cl::opt<bool> keepIR("keep-ir",
                     cl::desc("Also write each device's IR before lowering"),
                     cl::init(false));

/// Progress on stderr: one line per step with its wall time.
class Progress {
public:
  void start(const std::string &step) {
    current = step;
    begin = std::chrono::steady_clock::now();
  }
  void done() {
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - begin)
                         .count();
    llvm::errs() << llvm::formatv("ftpipe-compile: {0}: {1:F2} s\n", current,
                                  seconds);
  }
  LogicalResult fail(const llvm::Twine &why = "") {
    llvm::errs() << "ftpipe-compile: error in step '" << current << "'";
    if (!why.isTriviallyEmpty())
      llvm::errs() << ": " << why;
    llvm::errs() << "\n";
    return failure();
  }
  const std::string &step() const { return current; }

private:
  std::string current;
  std::chrono::steady_clock::time_point begin;
};

bool hasEntryPoints(ModuleOp module) {
  for (auto function : module.getOps<func::FuncOp>())
    if (function->hasAttr("ftpipe.entry"))
      return true;
  return false;
}

LogicalResult runPipeline(ModuleOp module, Progress &progress,
                          llvm::function_ref<void(OpPassManager &)> build) {
  PassManager pm(module.getContext());
  build(pm);
  if (failed(pm.run(module)))
    return progress.fail();
  return success();
}

/// Partitions `module` and turns it into per-device stage programs.
LogicalResult buildStagePrograms(ModuleOp module, Progress &progress) {
  if (!module->hasAttr("ftpipe.plan")) {
    progress.start("partition (" + std::to_string(devices) + " devices)");
    ft::PartitionPipelineOptions options;
    options.hardware = hardware;
    options.devices = devices;
    options.method = method;
    if (failed(runPipeline(module, progress, [&](OpPassManager &pm) {
          ft::buildPartitionPipeline(pm, options);
        })))
      return failure();
    progress.done();
  }
  progress.start("stage programs (outline, differentiate, split)");
  if (failed(runPipeline(module, progress, [&](OpPassManager &pm) {
        pm.addPass(ft::createOutlineStagesPass());
        ft::DifferentiatePassOptions differentiate;
        differentiate.recompute = recompute;
        pm.addPass(ft::createDifferentiatePass(differentiate));
        pm.addPass(ft::createSplitDevicesPass());
      })))
    return failure();
  progress.done();
  return success();
}

/// The module of one device: its entry points and the private declarations.
OwningOpRef<ModuleOp> extractDevice(ModuleOp module, int64_t device) {
  OwningOpRef<ModuleOp> copy = module.clone();
  for (auto function :
       llvm::make_early_inc_range(copy->getOps<func::FuncOp>()))
    if (!function.isPrivate() && ft::getEntryDevice(function) != device)
      function.erase();
  // The helpers that only other devices' entry points call go too.
  PassManager pm(module.getContext());
  pm.addPass(createSymbolDCEPass());
  (void)pm.run(*copy);
  return copy;
}

std::string artifactName(int64_t device) {
  return "device" + std::to_string(device) + ".so";
}

LogicalResult compileDevice(ModuleOp module, int64_t device,
                            Progress &progress) {
  std::string prefix = "device " + std::to_string(device) + ": ";
  progress.start(prefix + "lower to LLVM (cpu)");
  OwningOpRef<ModuleOp> deviceModule = extractDevice(module, device);
  if (keepIR) {
    std::string path = outputDir + "/device" + std::to_string(device) + ".mlir";
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    deviceModule->print(os);
  }
  ft::CPULoweringOptions lowering;
  lowering.blas = blas;
  lowering.fuse = fuse;
  if (failed(runPipeline(*deviceModule, progress, [&](OpPassManager &pm) {
        ft::buildCPULoweringPipeline(pm, lowering);
      })))
    return failure();
  progress.done();

  progress.start(prefix + "emit object (-O" + std::to_string(optLevel) +
                 ", host CPU)");
  std::string object = outputDir + "/device" + std::to_string(device) + ".o";
  std::string error;
  if (failed(ft::emitHostObject(*deviceModule, object, optLevel, error)))
    return progress.fail(error);
  progress.done();

  progress.start(prefix + "link " + artifactName(device));
  ft::HostLinkOptions link;
  link.runtimeDir = runtimeDir;
  link.mlirLibDir = FTPIPE_MLIR_LIB_DIR;
  if (failed(ft::linkHostSharedLibrary(
          {object}, outputDir + "/" + artifactName(device), link, error)))
    return progress.fail(error);
  llvm::sys::fs::remove(object);
  progress.done();
  return success();
}

LogicalResult compile(MLIRContext &context) {
  Progress progress;
  progress.start("parse " + inputFile);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFile, sourceMgr, &context);
  if (!module)
    return progress.fail();
  progress.done();

  if (target == Target::CUDA)
    return progress.fail("the CUDA target is not part of this build yet "
                         "(docs/Compile.md)");
  if (forwardOnly && devices != 1)
    return progress.fail("--forward-only compiles for one device");
  if (!forwardOnly && !hasEntryPoints(*module))
    if (failed(buildStagePrograms(*module, progress)))
      return failure();

  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir)) {
    progress.start("create " + outputDir);
    return progress.fail(ec.message());
  }
  progress.start("manifest");
  llvm::json::Object manifest = ft::buildManifest(
      *module, "cpu", devices, [](int64_t d) { return artifactName(d); });
  std::string error;
  auto file = openOutputFile(outputDir + "/manifest.json", &error);
  if (!file)
    return progress.fail(error);
  file->os() << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest)))
             << "\n";
  file->keep();
  progress.done();

  for (int64_t device = 0; device < devices; ++device)
    if (failed(compileDevice(*module, device, progress)))
      return failure();
  return success();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  DialectRegistry registry;
  ft::registerAllFTPipe(registry);
  ft::registerCPULoweringDialects(registry);
  ft::registerFTPipeConversions();
  cl::ParseCommandLineOptions(
      argc, argv,
      "FTPipe compiler: model IR to one artifact per device and a manifest\n");
  MLIRContext context(registry);
  return failed(compile(context)) ? 1 : 0;
}
