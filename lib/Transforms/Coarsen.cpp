//===- Coarsen.cpp - Coarsen the op graph into blocks -----------*- C++ -*-===//
//
// Mixed-Pipe's first phase as a pass: contracts the op graph into L blocks
// (lib/Partition/Coarsening) and records each op's block as `ftpipe.block`,
// so assignment can run, be inspected and be tested on its own.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Coarsening.h"
#include "FTPipe/Transforms/Passes.h"

#include "PartitionProblem.h"

#define DEBUG_TYPE "ftpipe-coarsen"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_COARSENPASS
#include "FTPipe/Transforms/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;

namespace {
struct CoarsenPass : public mlir::ftpipe::impl::CoarsenPassBase<CoarsenPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

void CoarsenPass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<PartitionProblem> problem =
      loadPartitionProblem(module, function, devices);
  if (failed(problem))
    return signalPassFailure();

  partition::CoarseningConfig config;
  if (!blockTypes.empty())
    config.blockTypes.assign(blockTypes.begin(), blockTypes.end());
  uint32_t numBlocks =
      stages != 0 ? stages : 2 * problem->hardware.numDevices();
  llvm::Expected<partition::CoarseningHierarchy> hierarchy =
      partition::coarsenGraph(problem->opGraph.graph, problem->hardware,
                              numBlocks, config);
  if (!hierarchy) {
    emitError(module.getLoc())
        << "coarsening failed: " << llvm::toString(hierarchy.takeError());
    return signalPassFailure();
  }
  writeBlocks(problem->opGraph, hierarchy->levels.back().nodeBlock);
}
