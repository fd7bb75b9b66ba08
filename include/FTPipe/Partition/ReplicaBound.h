//===- ReplicaBound.h - How fast any replicated chain could be --*- C++ -*-===//
//
// A lower bound on the mini-batch of any layout with a replica, against
// which `replicas=auto`'s best option is judged (bench/replica_planning.sh).
// It assumes the plan devices form a chain (every micro-batch runs the
// devices one after another, forward then backward) and prices nothing but
// compute: transfers between devices and the replicas' all-reduces are
// free, stages may be cut anywhere and balanced at will. A device run on
// r replicas of a mini-batch of M micro-batches has a replica with m =
// ceil(M / r) of them; its first task waits for the forwards of the devices
// before it (one micro-batch), its last is followed by their backwards, so
// T >= m_k c_k + (c_0 + ... + c_{k-1}) for device k doing c_k ms per
// micro-batch. The shortest T with c_0 + ... + c_{D-1} = C is
// C / (1 - prod_k (1 - 1 / m_k)) (independent of the devices' order).
// The depth is at least what the weights, gradients and optimizer state
// need of one device's memory, and where a device can hold only part of the
// model's compute with its weights' state (capMs: the most compute whose
// state fits in one device, ReplicaSearch's memoryCapMs), no c_k exceeds it;
// the devices' order then matters, and every order is tried. Devices that hold
// stages apart (Mixed-Pipe's embedding with the tied head) or interleave them
// are not chains: they can beat it, but transfers are then not free either.
//
// The step bound (stepBoundMs) holds for every plan, chain or not, and is
// what the search's options are judged against: no plan run as a layout
// simulates a shorter synchronous mini-batch than the longest path of one
// micro-batch (forward to the loss, backward back) with, where a replica
// holds m micro-batches, m - 1 more of the longest node's forward or
// backward on that path, nor shorter than the busiest replica's share of
// the compute. docs/Replicas.md "A bound on any replicated plan" derives it
// from the simulator's rules. No MLIR here.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_REPLICABOUND_H
#define FTPIPE_PARTITION_REPLICABOUND_H

#include "FTPipe/Partition/Graph.h"
#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Schedule/Replicas.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace ftpipe {
namespace partition {

/// The chain bound of one layout: C / (1 - prod_k (1 - 1 / ceil(M / r_k))).
double chainBoundMs(double computeMs, llvm::ArrayRef<int64_t> replicas,
                    uint32_t microBatches);

/// The compute per micro-batch of each device that reaches chainBoundMs for
/// `replicas` in this order: c_k = (T - c_0 - ... - c_{k-1}) / m_k, where T
/// is the bound, so a device that waits for fewer forwards before it takes
/// more (at M = 2 per replica, two devices take 2/3 and 1/3 of C: the first
/// computes through the second's bubble); they sum to `computeMs`.
std::vector<double> chainSharesMs(double computeMs,
                                  llvm::ArrayRef<int64_t> replicas,
                                  uint32_t microBatches);

/// The chain bound of `replicas` in this order when no device computes more
/// than `capMs` per micro-batch: the least T at which c_k = min(capMs, (T -
/// c_0 - ... - c_{k-1}) / m_k) add up to `computeMs` (each c_k as large as
/// T allows leaves the most for the others), found by bisection; infinite
/// when the devices cannot hold the compute. chainBoundMs where the cap
/// does not bind.
double cappedChainBoundMs(double computeMs, double capMs,
                          llvm::ArrayRef<int64_t> replicas,
                          uint32_t microBatches);

/// The lowest chainBoundMs over every layout of `processes` processes on
/// at least `minDepth` plan devices, and the layout that gives it.
struct ChainBound {
  double ms = 0.0;
  schedule::ReplicaLayout layout;
};

/// Over the layouts with at least one device on 2 or more replicas, with
/// each device's compute at most `capMs` (cappedChainBoundMs over every
/// order of the devices' replicas, up to kMaxCappedProcesses processes;
/// beyond, and for an infinite cap, chainBoundMs, which does not depend on
/// the order). Requires 1 <= minDepth < processes.
ChainBound
lowestChainBound(double computeMs, uint32_t minDepth, uint32_t processes,
                 uint32_t microBatches,
                 double capMs = std::numeric_limits<double>::infinity());

/// What the step bound needs of a model on a cluster, at the fastest
/// device's speed (node costs are device 0's, scaled by tflops as the
/// objective scales them).
struct StepBoundFigures {
  /// Every node's forward and backward: the work of one micro-batch.
  double computeMs = 0.0;
  /// pathMs[m - 1], for m = 1 .. M: the most, over the model's nodes v and
  /// their two tasks t (F_v, B_v; B_v's input part when the schedule splits
  /// backwards), of the longest path of one micro-batch through t plus
  /// m - 1 more t.
  std::vector<double> pathMs;
  /// Under async both are 0: its mini-batch is the simulator's estimate of
  /// a period from a few steps' completions, which bounds neither hold
  /// (ReplicaSearchProperties.MixedPipePlansStayAboveTheStepBound found
  /// async options under the work bound).
};

/// The figures of `graph` on `hw` under `config` (its schedule and M), for
/// plans whose every stage recomputes its forward before its backward when
/// `recomputes` (a backward task then runs its nodes' forwards too), and
/// for any plan otherwise.
StepBoundFigures stepBoundFigures(const Graph &graph, const Hardware &hw,
                                  const ObjectiveConfig &config,
                                  bool recomputes = false);

/// No plan of the model run as `replicas` (one factor per plan device, in
/// any order) simulates a mini-batch of M micro-batches shorter than this:
/// the larger of pathMs[ceil(M / r_max) - 1] and computeMs / sum_k 1 /
/// ceil(M / r_k).
double stepBoundMs(const StepBoundFigures &figures,
                   llvm::ArrayRef<int64_t> replicas, uint32_t microBatches);

/// The lowest stepBoundMs over every layout of `processes` processes on at
/// least `minDepth` devices with a device on 2 or more replicas, and that
/// layout. Requires 1 <= minDepth < processes.
ChainBound lowestStepBound(const StepBoundFigures &figures, uint32_t minDepth,
                           uint32_t processes, uint32_t microBatches);

/// The most processes whose ordered layouts (2^(P-1)) the capped bound
/// tries.
inline constexpr uint32_t kMaxCappedProcesses = 16;

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_REPLICABOUND_H
