//===- Recomputation.h - Per-stage choice of recomputation ------*- C++ -*-===//
//
// Keeping a stage's activations is faster than recomputing its forward just
// before its backward (about a third of a transformer's compute), but holds
// every activation of every micro-batch in flight. This phase decides, per
// stage of a plan whose placement is fixed, which of the two to do under the
// memory budget; RecomputeMode is the partitioning passes' `recompute`
// option and solveWithRecomputation applies it around any partitioner.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_RECOMPUTATION_H
#define FTPIPE_PARTITION_RECOMPUTATION_H

#include "FTPipe/Partition/Graph.h"
#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/Plan.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

namespace ftpipe {
namespace partition {

using schedule::RecomputeMode;

/// Chooses, for every stage of `plan` (placement unchanged), between keeping
/// activations and recomputing. Devices are independent: a stage's choice
/// changes only its compute, its CCO-exposed communication and its device's
/// memory (heights, hence micro-batches in flight, do not depend on it). So
/// on every device it picks the choice for its stages with the smallest
/// device load whose memory fits, the fewest kept stages among equals:
/// exhaustively when the device holds at most 12 stages, else by flipping
/// single stages while that lowers the load. The plan's current choice (its
/// own, else `config.recompute`) is always a candidate.
/// Guarantees: the result has one entry per stage; no device's load is
/// higher than with the plan's current choice, so neither is the objective;
/// a device whose memory fitted still fits. Fails as evaluatePlan does.
llvm::Error chooseRecomputation(const Graph &graph, const Hardware &hw,
                                Plan &plan, const ObjectiveConfig &config);

/// A partitioner that plans under `config` (config.recompute for every stage).
using PlanSolver =
    llvm::function_ref<llvm::Expected<Plan>(const ObjectiveConfig &config)>;

/// Runs `solve` under `mode`. Never and Always solve with config.recompute
/// false or true. Auto solves with recomputation everywhere (the placement
/// that fits in the least memory) and chooses per stage
/// (chooseRecomputation); with `tryKeeping` it also solves keeping every
/// activation (where that fits), chooses per stage likewise, and takes that
/// plan when its objective is lower. Seq-Pipe dp should not be asked to
/// (its search grows from about a second to minutes on T5-3B when
/// activations fill the memory); Mixed-Pipe gains from it, since a plan made
/// for recomputation has deeper pipelines than one made for keeping. The
/// result carries its choice per stage. Last, when the choice simulates
/// slower than the plan recomputing everywhere (the objective is a sum of
/// loads per device; the simulator also sees the waits between stages), the
/// latter is returned (with an all-true list).
/// Guarantees under Auto: never slower than the plan solved with
/// recomputation everywhere, by the simulator (and, unless that fallback
/// applies, by the objective); fails only when that solve fails.
llvm::Expected<Plan>
solveWithRecomputation(RecomputeMode mode, const Graph &graph,
                       const Hardware &hw, ObjectiveConfig config,
                       PlanSolver solve, bool tryKeeping = false);

/// A lower bound on the async time per micro-batch of every plan of `graph`
/// on `hw` under `config` that, unlike PlanMetrics::lowerBoundMs, accounts
/// for memory: the optimum of the fractional relaxation of assigning nodes
/// to devices under both the load and the memory limits. Nodes may be split
/// across devices; every parameter is held once, with its gradient and
/// optimizer state; every kept activation for at least one micro-batch; a
/// recomputed node keeps nothing and costs its forward again. Under Never
/// and Always every node keeps, or recomputes; under Auto the relaxation
/// recomputes the nodes with the least forward time per byte first, just
/// enough for the rest to fit (a fractional knapsack). The bound is then
/// max(compute / sum of relative speeds, largest node / fastest speed);
/// +infinity when the weights, gradients, state and whatever must be kept
/// exceed all the memory, i.e. no plan fits. O(N log N).
double memoryLowerBoundMs(const Graph &graph, const Hardware &hw,
                          const ObjectiveConfig &config, RecomputeMode mode);

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_RECOMPUTATION_H
