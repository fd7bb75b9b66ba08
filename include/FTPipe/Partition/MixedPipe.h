//===- MixedPipe.h - The Mixed-Pipe partitioner -----------------*- C++ -*-===//
//
// FTPipe's Mixed-Pipe (Eliad et al., ATC'21, Sec. 4): coarsen the op graph to
// L blocks, place the blocks on P devices (several non-adjacent blocks may
// share one), then uncoarsen while refining. Run for L in {P, 2P, 3P, 4P}
// and keep the best plan that fits in memory; also place the blocks of
// L = 5P, 6P and 8P as paired runs (one chunk of each of two parts of the
// order per device, Assignment.h) and keep such a plan when it is better.
// The candidates run in parallel.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_MIXEDPIPE_H
#define FTPIPE_PARTITION_MIXEDPIPE_H

#include "FTPipe/Partition/Assignment.h"
#include "FTPipe/Partition/Coarsening.h"
#include "FTPipe/Partition/Graph.h"
#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/Plan.h"
#include "FTPipe/Partition/Refinement.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace ftpipe {
namespace partition {

/// Everything Mixed-Pipe depends on, grouped by phase.
struct MixedPipeConfig {
  ObjectiveConfig objective;
  CoarseningConfig coarsening;
  AssignmentConfig assignment;
  RefinementConfig refinement;
  /// L is tried as each of these multiples of the device count P.
  std::vector<uint32_t> stageMultipliers = {1, 2, 3, 4};
  /// Skip refinement (ablation, and "mixed never worse than unrefined").
  bool refine = true;
  /// Choose among the candidate L by the simulated time per micro-batch
  /// under the objective's schedule (the objective, a sum of loads per
  /// device, misses the waits between stage chains that share devices)
  /// instead of by the objective; ties go to the lower objective.
  bool selectBySimulation = true;
  /// Also coarsen to L = m * P blocks for each of these m (finer than the
  /// packing candidates: contiguous runs cut better on small blocks), place
  /// them as paired runs (assignPairedRuns, with blocks coarsened by the
  /// memory they need under recomputation; refinement also keeps weights'
  /// reshapes with their readers), refine, and take such a plan when the
  /// larger of its objective and simulated time is lower than the larger of
  /// the packing choice's and its objective is no higher, or the packing
  /// choice's objective lies more than 3% below its simulated time (without
  /// selectBySimulation: when its objective is lower). Empty: packing only
  /// (ablation).
  std::vector<uint32_t> pairedRunMultipliers = {5, 6, 8};
  /// Simulations polishBySimulation (Refinement.h) may run on the chosen
  /// plan when it simulates more than 1% above its objective (with
  /// selectBySimulation; 0: never).
  uint32_t polishSimulations = 384;
  /// The synchronous schedule the plan will run under, when it is not the
  /// objective's: packing also tries the L of pairedRunMultipliers (finer,
  /// interleaved placements, whose fill and drain are shorter), every
  /// feasible candidate is also simulated under it as ftpipe-run runs it
  /// (simulateSynchronousStep: zb-auto within each device's memory), and
  /// the candidates compete by that step first (one
  /// that cannot run it, such as no zb-auto list fitting, after those that
  /// can), then as without it. Memory is checked under the objective's
  /// schedule as before, and polishBySimulation's moves are kept only when
  /// the step does not rise. Unset: the objective's schedule alone decides.
  std::optional<schedule::Kind> syncSchedule;
  /// Threads that run the candidates at once (0: one per core). The choice
  /// is the same for any number.
  unsigned threads = 0;

  /// Validates every part; names the offending field.
  llvm::Error validate() const;
};

/// Seconds spent per phase, summed over the candidates (which run at once,
/// so the sum may exceed the wall-clock time).
struct PhaseTimes {
  double coarsenSec = 0.0;
  double assignSec = 0.0;
  double refineSec = 0.0;
  double totalSec() const { return coarsenSec + assignSec + refineSec; }
};

/// One value of L tried.
struct MixedPipeCandidate {
  uint32_t numBlocks = 0;
  /// Placed as paired runs (assignPairedRuns) rather than by packing.
  bool pairedRuns = false;
  /// Fits in memory and passed verifyPlan.
  bool feasible = false;
  /// Why not, when infeasible.
  std::string failure;
  uint32_t numStages = 0;
  /// Async time per micro-batch after assignment and after refinement.
  double assignedMs = 0.0;
  double refinedMs = 0.0;
  /// Simulated time per micro-batch of the refined plan (0 when not
  /// simulated).
  double simulatedMs = 0.0;
  /// Its simulated step under MixedPipeConfig::syncSchedule (ms per
  /// mini-batch; infinite when it cannot run it, 0 without one).
  double stepMs = 0.0;
  PhaseTimes times;
};

/// The best plan and how it was found.
struct MixedPipeResult {
  Plan plan;
  /// evaluatePlan of `plan`.
  PlanMetrics metrics;
  /// Simulated time per micro-batch of `plan` (0 when not simulated).
  double simulatedMs = 0.0;
  /// Simulated step of `plan` under MixedPipeConfig::syncSchedule (as
  /// MixedPipeCandidate::stepMs).
  double stepMs = 0.0;
  /// L of the chosen candidate, and whether it was placed as paired runs.
  uint32_t numBlocks = 0;
  bool pairedRuns = false;
  /// Ops polishBySimulation moved in `plan` (after the choice).
  size_t polishMoves = 0;
  std::vector<MixedPipeCandidate> candidates;
  /// Sums over all candidates.
  PhaseTimes times;
};

/// Runs Mixed-Pipe on all devices of `hw`: for each L = m * P, coarsening
/// (coarsenGraph, with paramCopies taken from the objective's optimizer),
/// assignment (assignDevices), refinement (refinePlan), then verifyPlan;
/// returns the feasible candidate with the smallest simulated time per
/// micro-batch (with selectBySimulation; else the smallest objective),
/// ties: the smaller objective, then the smaller L (with a syncSchedule:
/// the shortest step under it first), polished by
/// polishBySimulation when it simulates more than 1% above its objective.
/// Deterministic. Fails when
/// the config is invalid or the graph is empty, and, when no candidate fits,
/// with an error naming the memory needed and available.
llvm::Expected<MixedPipeResult>
runMixedPipe(const Graph &graph, const Hardware &hw,
             const MixedPipeConfig &config = {});

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_MIXEDPIPE_H
