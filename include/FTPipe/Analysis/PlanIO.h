//===- PlanIO.h - The partition plan in IR ----------------------*- C++ -*-===//
//
// Reads and writes a lib/Partition Plan as IR attributes: `ftpipe.stage` on
// every op of the model function and `#ftpipe.plan` (stage -> device,
// objective, memory per device) on the module. Before partitioning a model is
// one stage on device 0.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_ANALYSIS_PLANIO_H
#define FTPIPE_ANALYSIS_PLANIO_H

#include "FTPipe/Analysis/OpGraph.h"
#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/Plan.h"

namespace mlir {
namespace ftpipe {

/// The plan recorded in IR for `opGraph`'s function: every op's stage from
/// `ftpipe.stage` and every stage's device from the module's `ftpipe.plan`,
/// with its per-stage recompute list when it has one (left out, the plan's
/// stageRecompute stays empty and the objective config decides), and the
/// replicated nodes from `ftpipe.replicate` (none: nodeReplicated empty) and
/// the forwarded ones from `ftpipe.forward` (none: nodeForwarded empty).
/// Without either, the single-stage plan. Emits an error and fails when only
/// some ops have a stage, or a stage has no device in the plan.
FailureOr<partition::Plan> readPlan(ModuleOp module, const OpGraph &opGraph);

/// Records `plan` in IR: `ftpipe.stage` on every op, `ftpipe.replicate` on
/// the replicated ones and `ftpipe.forward` on the forwarded ones (both
/// removed from the others), and `ftpipe.plan` with
/// `method`, the async time per micro-batch and the memory of every device
/// from `metrics`, the partitioning time in seconds, and which stages
/// recompute (from `metrics`; the list is left out when all do), and each
/// device's replicas (`replicas`; left out when empty or all 1).
void writePlan(ModuleOp module, const OpGraph &opGraph,
               const partition::Plan &plan, StringRef method,
               const partition::PlanMetrics &metrics, double seconds,
               ArrayRef<int64_t> replicas = {});

/// The hardware recorded on the module by ftpipe-annotate-costs; emits an
/// error and fails when there is none or it is incomplete.
FailureOr<partition::Hardware> readHardware(ModuleOp module);

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_ANALYSIS_PLANIO_H
