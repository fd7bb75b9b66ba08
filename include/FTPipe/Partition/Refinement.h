//===- Refinement.h - Mixed-Pipe uncoarsening with refinement ---*- C++ -*-===//
//
// The last phase of Mixed-Pipe (FTPipe, Eliad et al., ATC'21, Sec. 4.4):
// walk the coarsening hierarchy back down, coarsest level first, and at each
// level move units (a block of that level's ops within one stage, single ops
// at the end) across stage
// boundaries while the objective of Objective.h improves. Moves never break a
// memory limit, never empty a stage, and keep the stage graph acyclic: stages
// keep a topological rank during a pass, and a unit may only move to a stage
// ranked after all stages that feed it and before all stages it feeds.
//
// IncrementalObjective keeps evaluatePlan's figures up to date under moves in
// time proportional to the moved nodes' values and parameters (plus the
// stage count when the stage graph's edge set changes); tests hold it equal
// to evaluatePlan.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_REFINEMENT_H
#define FTPIPE_PARTITION_REFINEMENT_H

#include "FTPipe/Partition/Coarsening.h"
#include "FTPipe/Partition/Graph.h"
#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/Plan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace ftpipe {
namespace partition {

/// evaluatePlan's load and memory model, maintained under node moves.
/// Stage and device sets are fixed, and so is each stage's choice of
/// recomputation; only nodes move. All figures equal
/// evaluatePlan's on the current plan up to floating-point rounding.
class IncrementalObjective {
public:
  /// Most stages a plan may have (the stage graph is kept as a dense table).
  static constexpr size_t kMaxStages = 4096;

  /// Builds the state for `plan`. Fails when the plan does not match the
  /// graph or hardware, its stage graph has a cycle, or it has more than
  /// kMaxStages stages.
  static llvm::Expected<IncrementalObjective>
  create(const Graph &graph, const Hardware &hw, Plan plan,
         const ObjectiveConfig &config);

  const Plan &plan() const { return current; }
  const ObjectiveConfig &objectiveConfig() const { return config; }
  size_t numStages() const { return current.numStages(); }
  size_t numDevices() const { return devLoad.size(); }

  /// Largest device load: the async steady-state time per micro-batch.
  double objective() const;
  double deviceLoadMs(DeviceId d) const { return devLoad[d]; }
  double stageLoadMs(StageId s) const { return stLoad[s]; }
  /// Device memory as evaluatePlan counts it (reserve included).
  uint64_t deviceMemoryBytes(DeviceId d) const;
  bool deviceMemoryFits(DeviceId d) const;
  bool allMemoryFits() const;
  uint32_t stageNodeCount(StageId s) const { return stCount[s]; }
  /// Stages in a topological order of the stage graph (smallest id first
  /// among ready stages), and each stage's position in it.
  llvm::ArrayRef<StageId> stageOrder() const { return topo; }
  llvm::ArrayRef<uint32_t> stageRank() const { return rank; }
  /// Whether some stage recomputes its forward (then a move changes the
  /// kept stage inputs of stages other than the two involved).
  bool anyStageRecomputes() const {
    return current.stageRecompute.empty()
               ? config.recompute
               : llvm::is_contained(current.stageRecompute, true);
  }
  /// Whether the last moveNodes changed the stage graph's edge set.
  bool lastMoveChangedStageGraph() const { return edgeSetChanged; }

  /// Moves `nodes` to stage `to` and updates every figure. The caller keeps
  /// the stage graph acyclic (moveIsOrderSafe); a move that breaks it leaves
  /// stageOrder() partial and heights undefined until it is undone.
  void moveNodes(llvm::ArrayRef<NodeId> nodes, StageId to);

  /// True when moving `nodes` (all in one stage) to `to` keeps every stage
  /// edge going forward in stageRank(), hence the stage graph acyclic.
  bool moveIsOrderSafe(llvm::ArrayRef<NodeId> nodes, StageId to) const;

  /// Recomputes everything from scratch (drops accumulated rounding).
  void rebuild();

private:
  IncrementalObjective(const Graph &graph, const Hardware &hw, Plan plan,
                       const ObjectiveConfig &config);
  void applyValue(ValueId v, bool add);
  void applyParam(ParamId p, bool add);
  uint64_t paramContribution(ParamId p, DeviceId d) const;
  void recomputeOrder();
  void recomputeParamMemory();
  void refreshStage(StageId s);
  uint32_t inFlight(StageId s) const { return inFlightOf[s]; }
  /// Adds s to touchedStages unless this move touched it already.
  void touch(StageId s);

  const Graph *g;
  const Hardware *hw;
  ObjectiveConfig config;
  Plan current;
  std::vector<double> speed;
  // Per stage.
  std::vector<double> rawFwd, rawBwd, commFwd, commBwd, stLoad;
  std::vector<uint64_t> actSum, kept;
  std::vector<uint32_t> stCount, height, rank;
  // Cached: micro-batches in flight (from heights) and the fixed choice of
  // recomputation.
  std::vector<uint32_t> inFlightOf;
  std::vector<char> recomputes;
  std::vector<StageId> topo;
  std::vector<uint32_t> edgeCount; // S x S
  // Rows of S bits: bit b of row a set iff edgeCount[a * S + b] > 0; lets
  // recomputeOrder visit edges instead of the whole table.
  std::vector<uint64_t> edgeBits;
  // Per device.
  std::vector<double> devLoad;
  std::vector<uint64_t> paramMem;
  // Per parameter: reader stages with reader counts.
  std::vector<llvm::SmallVector<std::pair<StageId, uint32_t>, 2>> paramStages;
  // Scratch.
  std::vector<uint32_t> stageStamp, valueStamp, paramStamp;
  uint32_t stageEpoch = 0, valueEpoch = 0, paramEpoch = 0;
  std::vector<StageId> touchedStages;
  std::vector<uint32_t> touchedStamp;
  uint32_t touchEpoch = 0;
  std::vector<uint32_t> pairStamp;
  uint32_t pairEpoch = 0;
  std::vector<std::pair<size_t, bool>> touchedPairs;
  bool edgeSetChanged = false;
};

/// Parameters of refinement.
struct RefinementConfig {
  /// Passes over the units of one level; a pass without an accepted move
  /// ends the level early.
  uint32_t maxPassesPerLevel = 8;
  /// Refine on every level of the hierarchy (false: only on single ops).
  bool allLevels = true;
  /// Relative improvement a move must bring to count as one.
  double minRelativeGain = 1e-12;
  /// After the last level, move ops that compute only from parameters into
  /// the one stage that reads them (off: the paper's moves only).
  bool attachWeightOnlyOps = false;
  /// Before the single-op level, move ops that compute only from parameters
  /// into the one stage that reads them (those without compute, such as a
  /// weight's reshape, whatever the objective says; memory permitting), and
  /// let each that joined its one reader move with it from then on, so that
  /// the level rebalances around them instead of cutting between a weight
  /// and its matmul.
  bool glueWeightOnlyOps = false;

  /// Checks ranges; names the offending field.
  llvm::Error validate() const;
};

/// What refinement did.
struct RefinementStats {
  double initialObjectiveMs = 0.0;
  double finalObjectiveMs = 0.0;
  uint64_t movesTried = 0;
  uint64_t movesAccepted = 0;
  uint32_t levelsVisited = 0;
};

/// Improves `plan` in place by moving units of `hierarchy`'s levels (then
/// single ops) between the existing stages (Sec. 4.4). A unit may go to the
/// stage of a neighbouring op or to the stage right before or after its own
/// in topological order. A move is taken when it lowers the largest device
/// load; or leaves it unchanged and lowers the larger load of the two
/// devices involved; or changes neither and goes from the busier device to
/// the less busy one (so that ops without compute, e.g. reshapes, do not pin
/// a boundary). A unit that moves puts its neighbours back on the work list.
/// Last, with `attachWeightOnlyOps`, ops computing only from parameters
/// (weight transposes, reshapes) join the stage of their readers when all
/// readers share one and the move keeps the objective and memory, so that
/// no weight is sent every micro-batch.
/// With `glueWeightOnlyOps`, those ops join their reader before the single-op
/// level whatever the objective says, which may raise it.
/// Guarantees (without `glueWeightOnlyOps`): the objective of
/// evaluatePlan never increases (up to rounding); no device that fitted its
/// memory stops fitting; no stage becomes empty; the stage graph stays
/// acyclic; deterministic. Fails when the plan does not match the graph (or
/// the hierarchy), its stage graph has a cycle, or it has more than
/// IncrementalObjective::kMaxStages stages.
llvm::Expected<RefinementStats> refinePlan(const Graph &graph,
                                           const Hardware &hw,
                                           const CoarseningHierarchy &hierarchy,
                                           Plan &plan,
                                           const ObjectiveConfig &objective,
                                           const RefinementConfig &config = {});

/// Moves every op that computes only from parameters and costs nothing (a
/// weight's reshape, a transpose that code generation folds into its
/// matmul, docs/CostModel.md) into the one stage that reads it, last first,
/// when that keeps the stage graph acyclic and every device that fitted its
/// memory fitting, so that such a weight is not sent every micro-batch and a
/// folded transpose sits with its matmul. Then moves views without compute
/// of activations (inputs weighing no more than results) whose readers are
/// all in one other stage, when the objective does not rise, so that stage
/// receives their input once instead of each view. Works on any
/// partitioner's plan (no load changes); the result is kept only when
/// neither the objective nor the simulated time rises. A plan with
/// replicated or forwarded values is left as it is. Returns the number of
/// ops moved.
llvm::Expected<size_t> attachFreeOps(const Graph &graph, const Hardware &hw,
                                     Plan &plan,
                                     const ObjectiveConfig &objective);

/// Moves single ops of `plan` to a stage that one of their neighbours is in
/// (never a replicated or forwarded op, never a stage's last op), one at a
/// time in node order, and keeps a move when the plan still fits wherever it
/// fitted, its objective does not rise and its simulated time per
/// micro-batch drops (PlanFigures::noSlowerThan and fasterThan); a move that
/// cannot be measured (it makes the stage graph cyclic) is skipped. Rounds
/// repeat until none improves or `maxSimulations` simulations have run; only
/// moves that keep the objective are simulated
/// (measurePlanIfObjectiveHolds). For plans whose stages wait on one another
/// (the simulated time above the objective), which refinement by the
/// objective cannot see. Returns the number of ops moved; fails only when
/// the given plan cannot be measured.
llvm::Expected<size_t> polishBySimulation(const Graph &graph,
                                          const Hardware &hw, Plan &plan,
                                          const ObjectiveConfig &objective,
                                          uint32_t maxSimulations);

/// Parameters of refineForSyncStep.
struct SyncRefinementConfig {
  /// Rounds of moves judged by zb-auto's lists unsearched; each keeps at
  /// most one.
  uint32_t maxRounds = 6;
  /// Re-cuts simulated per such round: per stage pair the lowest step
  /// bound that fits, lowest first.
  uint32_t simulationsPerRound = 4;
  /// Then rounds, and re-cuts per round, judged by the step the plan runs
  /// (zb-auto's lists searched, synchronousStepMs).
  uint32_t searchedRounds = 4;
  uint32_t searchedSimulationsPerRound = 3;
  /// Most compute a re-cut moves, as a share of the smaller stage's.
  double maxShiftFraction = 0.3;

  /// Checks ranges; names the offending field.
  llvm::Error validate() const;
};

/// What refineForSyncStep did.
struct SyncRefinementStats {
  /// The plan's step under the schedule before and after
  /// (synchronousStepMs; infinite when it cannot run it).
  double initialStepMs = 0.0;
  double finalStepMs = 0.0;
  /// Moves kept (0 when the plan was left as it was), re-cuts bounded and
  /// simulated.
  uint32_t moves = 0;
  uint64_t recutsBounded = 0;
  uint32_t simulations = 0;
};

/// Shortens `plan`'s step under the synchronous schedule `kind` by moving
/// the boundary between two stages on different devices that an edge joins:
/// their movable ops (neither replicated nor forwarded) in node order, cut
/// at another position, one that moves at most `maxShiftFraction` of the
/// smaller stage's compute, cuts no more bytes than their boundary does
/// today and moves at least 1 % of it more or less than the last position
/// kept. Each round bounds every such re-cut (schedule::stepLowerBound),
/// simulates per stage pair its lowest bound that fits in memory under
/// `objective` (wherever the plan fitted), lowest first, and keeps the
/// shortest step when it beats the round's start: `maxRounds` rounds judged
/// by zb-auto's lists unsearched (ZeroBubbleSearch{0, 0}, far cheaper),
/// then `searchedRounds` judged by synchronousStepMs itself (other kinds
/// than zb-auto: the same lists in both). The result replaces `plan` only
/// when its step (synchronousStepMs) is shorter. Guarantees: the step never
/// rises, no device that fitted its memory stops fitting, stages and their
/// devices stay (none becomes empty), the stage graph stays acyclic; the
/// async objective may rise; deterministic. For plans chosen by a
/// synchronous step (MixedPipeConfig::syncSchedule), whose loads refinement
/// balanced but whose stages' backwards may hold up the step. Fails when
/// the config is invalid or the plan cannot be scored.
llvm::Expected<SyncRefinementStats>
refineForSyncStep(const Graph &graph, const Hardware &hw, Plan &plan,
                  const ObjectiveConfig &objective, schedule::Kind kind,
                  const SyncRefinementConfig &config = {});

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_REFINEMENT_H
