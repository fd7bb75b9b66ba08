//===- ExportGraph.cpp - Write the op graph as JSON -------------*- C++ -*-===//
//
// Exports the model function's graph, costs and plan in lib/Partition's JSON
// schema, so that other tools (and our tests) can check or re-use a plan
// without MLIR.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Analysis/PlanIO.h"
#include "FTPipe/Partition/GraphIO.h"
#include "FTPipe/Transforms/Passes.h"

#include "PassUtils.h"

#define DEBUG_TYPE "ftpipe-export-graph"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_EXPORTGRAPHPASS
#include "FTPipe/Transforms/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;

namespace {
struct ExportGraphPass
    : public mlir::ftpipe::impl::ExportGraphPassBase<ExportGraphPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

void ExportGraphPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (file.empty()) {
    emitError(module.getLoc()) << "ftpipe-export-graph needs 'file'";
    return signalPassFailure();
  }
  FailureOr<func::FuncOp> func = getModelFunction(module, function);
  if (failed(func))
    return signalPassFailure();
  FailureOr<OpGraph> opGraph = buildOpGraph(*func);
  if (failed(opGraph))
    return signalPassFailure();
  FailureOr<partition::Plan> plan = readPlan(module, *opGraph);
  if (failed(plan))
    return signalPassFailure();

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutput(file, module.getLoc());
  if (!output)
    return signalPassFailure();
  auto planAttr = module->getAttrOfType<PlanAttr>(FTPipeDialect::kPlanAttrName);
  output->os() << llvm::formatv(
      "{0:2}\n", partition::graphToJSON(
                     opGraph->graph, planAttr ? &*plan : nullptr,
                     planAttr ? planAttr.getReplicas() : ArrayRef<int64_t>()));
  output->keep();
  markAllAnalysesPreserved();
}
