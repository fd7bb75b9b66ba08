//===- SeqPipe.cpp - Contiguous stages, one per device ----------*- C++ -*-===//
//
// The Seq-Pipe baselines: contiguous stages over program order, solved
// exactly by dynamic programming or greedily (lib/Partition/SeqPipe).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/SeqPipe.h"
#include "FTPipe/Transforms/Passes.h"

#include "PartitionProblem.h"
#include "PassUtils.h"

#define DEBUG_TYPE "ftpipe-seq-pipe"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_SEQPIPEPASS
#include "FTPipe/Transforms/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;

namespace {
struct SeqPipePass : public mlir::ftpipe::impl::SeqPipePassBase<SeqPipePass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

void SeqPipePass::runOnOperation() {
  ModuleOp module = getOperation();
  Stopwatch stopwatch;
  FailureOr<PartitionProblem> problem =
      loadPartitionProblem(module, function, devices);
  if (failed(problem))
    return signalPassFailure();

  partition::SeqPipeConfig config;
  config.objective = makeObjectiveConfig(schedule, optimizer, stashing,
                                         recompute, microbatches);
  bool exact = method == SeqPipeMethod::DP;
  llvm::Expected<partition::SeqPipeResult> result =
      exact ? partition::seqPipeDP(problem->opGraph.graph, problem->hardware,
                                   config)
            : partition::seqPipeGreedy(problem->opGraph.graph,
                                       problem->hardware, config);
  StringRef name = exact ? "seq-dp" : "seq-greedy";
  if (!result) {
    emitError(module.getLoc())
        << name << ": " << llvm::toString(result.takeError());
    return signalPassFailure();
  }
  if (failed(commitPlan(module, *problem, result->plan, name, config.objective,
                        stopwatch.seconds())))
    return signalPassFailure();
}
