//===- Assignment.h - Mixed-Pipe placement of blocks on devices -*- C++ -*-===//
//
// The second phase of Mixed-Pipe (FTPipe, Eliad et al., ATC'21, Sec. 4.3):
// place the L coarse blocks on P devices, largest first, each on the least
// loaded device with memory for it (ties broken by communication saved), so
// that several non-adjacent blocks may share a device; then turn each
// device's blocks into as few stages as keep the stage graph acyclic. Also
// paired runs: one contiguous run of each of two parts of the block order
// per device.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_ASSIGNMENT_H
#define FTPIPE_PARTITION_ASSIGNMENT_H

#include "FTPipe/Partition/Coarsening.h"
#include "FTPipe/Partition/Graph.h"
#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/Plan.h"

#include "llvm/Support/Error.h"

namespace ftpipe {
namespace partition {

/// Parameters of assignment.
struct AssignmentConfig {
  /// Two devices whose loads differ by at most this fraction of the larger
  /// count as equally loaded; the tie goes to the one exchanging the most
  /// bytes with the block (its neighbours already there), then the lower id.
  double tieTolerance = 1e-9;
  /// Merge a device's blocks into as few stages as acyclicity allows (off:
  /// one stage per block, for ablation).
  bool mergeStagesPerDevice = true;
  /// Also place by balancing compute and memory together (each block on the
  /// device whose larger share, compute of the mean load or memory of its
  /// budget, stays smallest; blocks by their larger share, largest first)
  /// and keep that plan when it fits and is faster by evaluatePlan (off:
  /// largest compute first only, for ablation).
  bool balanceMemory = true;

  /// Checks ranges; names the offending field.
  llvm::Error validate() const;
};

/// Places the blocks of `coarse` on the devices of `hw` and forms stages
/// (Sec. 4.3). Memory while placing follows evaluatePlan's model with each
/// block's micro-batches in flight estimated from its height in the block
/// graph, then checked exactly (evaluatePlan): a device found over its
/// memory gets its placement budget cut by the excess and placement runs
/// again (at most four rounds; the caller still verifies the result). When
/// largest-compute-first runs out of memory, placement is retried once in
/// order of memory need (largest first) before giving up. With
/// `balanceMemory`, a second, two-resource placement is made the same way
/// and replaces the first when it fits and has a lower objective, so the
/// result is never worse by evaluatePlan than largest-compute-first alone.
/// Guarantees: every node in exactly one stage; stages numbered in a
/// topological order of an acyclic stage graph; no empty stage; a stage's
/// blocks all on its device; deterministic. Fails, naming the block, the
/// bytes it needs and the most free memory on any device, when a block fits
/// on no device.
llvm::Expected<Plan> assignDevices(const Graph &graph, const Hardware &hw,
                                   const CoarseGraph &coarse,
                                   const ObjectiveConfig &objective,
                                   const AssignmentConfig &config = {});

/// Another placement, for models whose parts differ in what they weigh
/// (an encoder heavy in compute, a decoder heavy in parameters): the
/// blocks, in topological order, are split at some k into two parts, each
/// cut into P contiguous runs of about equal compute (in proportion to the
/// devices' speeds), and device d gets run d of the first part and run
/// P - 1 - d of the second. So every device holds one chunk of each part
/// and as few stages as that allows (two, or one where its runs meet).
/// k = 0 gives contiguous runs over the whole order. Every k is estimated
/// with placement's memory model; the best three by the estimate (fitting,
/// then the smaller largest load) are checked exactly (evaluatePlan) and
/// the one that fits with the lowest objective is returned. Same
/// guarantees on the plan as assignDevices; fails when none of the three
/// fits in memory.
llvm::Expected<Plan> assignPairedRuns(const Graph &graph, const Hardware &hw,
                                      const CoarseGraph &coarse,
                                      const ObjectiveConfig &objective,
                                      const AssignmentConfig &config = {});

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_ASSIGNMENT_H
