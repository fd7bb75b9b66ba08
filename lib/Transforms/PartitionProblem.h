//===- PartitionProblem.h - What partitioning passes share ------*- C++ -*-===//
//
// Private to lib/Transforms. Every partitioning pass follows one flow: build
// the problem from IR (training setup, graph, hardware, devices), solve it in
// lib/Partition, verify the plan independently, and write it back. This
// header holds the first and the last two steps.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_TRANSFORMS_PARTITIONPROBLEM_H
#define FTPIPE_LIB_TRANSFORMS_PARTITIONPROBLEM_H

#include "FTPipe/Analysis/OpGraph.h"
#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/Plan.h"
#include "PassUtils.h"

#include <chrono>
#include <vector>

namespace mlir {
namespace ftpipe {

/// A model function as a partitioning problem.
struct PartitionProblem {
  func::FuncOp func;
  OpGraph opGraph;
  /// The module's hardware, cut to the devices to plan for.
  partition::Hardware hardware;
};

/// Reads the model function (`function`, or the only one), its op graph and
/// the module's hardware, keeping the first `devices` devices (0: all).
/// Emits an error and fails on missing costs or hardware, or too many
/// devices.
FailureOr<PartitionProblem>
loadPartitionProblem(ModuleOp module, StringRef function, unsigned devices);

/// What a planning pass starts from: the training setup it plans for
/// (resolveTrainingSetup with the pass's options) and the problem
/// (loadPartitionProblem).
struct PlanningInputs {
  ::ftpipe::schedule::TrainingSetup setup;
  PartitionProblem problem;
};
FailureOr<PlanningInputs> loadPlanningInputs(ModuleOp module, StringRef pass,
                                             const SetupOptions &options,
                                             StringRef function,
                                             unsigned devices);

/// Verifies `plan` (every op placed, stage graph acyclic, memory fits) and
/// writes it to IR with its metrics: `ftpipe.stage` on every op,
/// `#ftpipe.plan` and the planned-for hardware on the module. Emits an
/// error naming the problem and fails when the plan is invalid.
/// `replicas` gives each device its data-parallel replicas
/// (`problem.hardware` is then the devices of replica 0).
LogicalResult commitPlan(ModuleOp module, const PartitionProblem &problem,
                         const partition::Plan &plan, StringRef method,
                         const partition::ObjectiveConfig &config,
                         double seconds, ArrayRef<int64_t> replicas = {});

/// Constants and empty tensors, and the ops the partitioner replicated
/// (`ftpipe.replicate`): ftpipe-outline-stages copies them into each stage
/// that reads them, so a stage of only such ops is outlined empty.
bool isCopiedIntoStages(Operation *op);

/// The block of every op from `ftpipe.block`; emits an error at the first op
/// without one and fails.
FailureOr<std::vector<uint32_t>> readBlocks(const OpGraph &opGraph);

/// Writes `ftpipe.block` on every op.
void writeBlocks(const OpGraph &opGraph, ArrayRef<uint32_t> nodeBlock);

/// Wall-clock seconds since construction.
class Stopwatch {
public:
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  }

private:
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
};

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_LIB_TRANSFORMS_PARTITIONPROBLEM_H
