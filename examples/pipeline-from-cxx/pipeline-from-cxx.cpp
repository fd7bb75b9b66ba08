//===- pipeline-from-cxx.cpp - FTPipe's passes in a host compiler -*- C++ -*-===//
//
// What a C++ host compiler does to use FTPipe: register the dialect into its
// own DialectRegistry, parse a model into its own MLIRContext, and run the
// partitioning pipeline through its own PassManager, next to its own passes:
// once with the typed builder, once with the Mixed-Pipe phases at a fixed L,
// once by name from a textual pipeline. Checks the stage attributes and the
// plan after each run; exits non-zero on the first problem.
//
//   pipeline-from-cxx MODEL.mlir
//
//===----------------------------------------------------------------------===//

#include "FTPipe/InitAllFTPipe.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <string>

using namespace mlir;

/// Checks what the pipeline promises: a plan with `expectedDevices` devices
/// whose method starts with `expectedMethod`, and a valid stage on every op
/// of the model function.
static LogicalResult checkPartitioned(ModuleOp module, unsigned expectedDevices,
                                      llvm::StringRef expectedMethod,
                                      llvm::StringRef what) {
  auto fail = [&](const llvm::Twine &message) {
    llvm::errs() << "pipeline-from-cxx: " << what << ": " << message << "\n";
    return failure();
  };
  auto plan = module->getAttrOfType<mlir::ftpipe::PlanAttr>(
      mlir::ftpipe::FTPipeDialect::kPlanAttrName);
  if (!plan)
    return fail("the module has no ftpipe.plan");
  if (!plan.getMethod().starts_with(expectedMethod))
    return fail("plan method is '" + plan.getMethod() + "', expected '" +
                expectedMethod + "'");
  if (plan.getMemoryBytes().size() != expectedDevices)
    return fail("plan is for " + llvm::Twine(plan.getMemoryBytes().size()) +
                " devices, expected " + llvm::Twine(expectedDevices));
  size_t numStages = plan.getStageDevice().size();
  for (int64_t device : plan.getStageDevice())
    if (device < 0 || device >= int64_t(expectedDevices))
      return fail("a stage is on device " + llvm::Twine(device));

  std::set<int64_t> usedStages;
  size_t numOps = 0;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    for (Operation &op : func.getBody().front().without_terminator()) {
      ++numOps;
      auto stage = op.getAttrOfType<IntegerAttr>(
          mlir::ftpipe::FTPipeDialect::kStageAttrName);
      if (!stage)
        return fail("op '" + op.getName().getStringRef() +
                    "' has no ftpipe.stage");
      if (stage.getInt() < 0 || stage.getInt() >= int64_t(numStages))
        return fail("op stage " + llvm::Twine(stage.getInt()) +
                    " is not one of the plan's " + llvm::Twine(numStages));
      usedStages.insert(stage.getInt());
    }
  }
  if (numOps == 0)
    return fail("no ops were partitioned");
  if (usedStages.size() != numStages)
    return fail("only " + llvm::Twine(usedStages.size()) + " of " +
                llvm::Twine(numStages) + " stages hold ops");
  llvm::outs() << what << ": " << plan.getMethod() << ", " << numOps
               << " ops in " << numStages << " stages on " << expectedDevices
               << " devices, " << llvm::format("%.3f", double(plan.getObjectiveMs()))
               << " ms per micro-batch\n";
  return success();
}

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: pipeline-from-cxx MODEL.mlir\n";
    return 2;
  }

  // The host's registry: its own dialects would go here too.
  DialectRegistry registry;
  mlir::ftpipe::registerFTPipeDialect(registry);
  mlir::ftpipe::registerFTPipeInputDialects(registry);
  MLIRContext context(registry);

  OwningOpRef<ModuleOp> model =
      parseSourceFile<ModuleOp>(argv[1], ParserConfig(&context));
  if (!model)
    return 1;

  // 1. The typed builder, between passes of the host's own.
  OwningOpRef<ModuleOp> first = model->clone();
  {
    PassManager pm(&context, ModuleOp::getOperationName());
    pm.addPass(createCSEPass());
    mlir::ftpipe::PartitionPipelineOptions options;
    options.hardware = "rtx2080ti-pcie-x8";
    options.devices = 4;
    options.method = mlir::ftpipe::PartitionMethod::MixedPipe;
    mlir::ftpipe::buildPartitionPipeline(pm, options);
    pm.addPass(createSymbolDCEPass());
    if (failed(pm.run(*first)) ||
        failed(checkPartitioned(*first, 4, "mixed-pipe", "typed builder")))
      return 1;
  }

  // 2. The Mixed-Pipe phases with a fixed number of blocks.
  OwningOpRef<ModuleOp> second = model->clone();
  {
    PassManager pm(&context, ModuleOp::getOperationName());
    mlir::ftpipe::MixedPipeOptions options;
    options.devices = 2;
    options.stages = 4;
    mlir::ftpipe::buildMixedPipePipeline(pm, options);
    if (failed(pm.run(*second)) ||
        failed(checkPartitioned(*second, 2, "", "fixed-L phases")))
      return 1;
  }

  // 3. By name, as a textual pipeline, after the global registration (the
  // host registers the upstream passes it names, too).
  registerCSEPass();
  mlir::ftpipe::registerFTPipePasses();
  mlir::ftpipe::registerFTPipePipelines();
  OwningOpRef<ModuleOp> third = model->clone();
  {
    PassManager pm(&context, ModuleOp::getOperationName());
    std::string errors;
    llvm::raw_string_ostream errorStream(errors);
    // Passes for `pm` itself, so no `builtin.module(...)` around them: that
    // would nest a pass manager for modules inside the module.
    if (failed(parsePassPipeline("cse,ftpipe-partition-pipeline{devices=2 "
                                 "method=seq-dp schedule=gpipe microbatches=4}",
                                 pm, errorStream))) {
      llvm::errs() << "pipeline-from-cxx: " << errorStream.str() << "\n";
      return 1;
    }
    if (failed(pm.run(*third)) ||
        failed(checkPartitioned(*third, 2, "seq-dp", "textual pipeline")))
      return 1;
  }
  return 0;
}
