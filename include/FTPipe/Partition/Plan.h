//===- Plan.h - A pipeline plan: stages and their devices -------*- C++ -*-===//
//
// A plan says which stage every node belongs to and which device runs every
// stage. Several stages may share a device (Mixed-Pipe places non-adjacent
// stages together), and, optionally, which stages recompute their forward
// before their backward instead of keeping activations, and which nodes are
// replicated: computed again in every stage that reads them instead of
// being sent there (cheap values made from graph inputs and parameters
// alone, such as T5's attention position bias), and which nodes' results
// are forwarded: passed from each stage that reads them to the next instead
// of sent from the producer to every reader. Plain data:
// algorithms produce plans, verifyPlan checks them, evaluatePlan scores them,
// the simulator runs them.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_PLAN_H
#define FTPIPE_PARTITION_PLAN_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ftpipe {
namespace partition {

/// Index of a pipeline stage.
using StageId = uint32_t;
/// Index of a device in a Hardware description.
using DeviceId = uint32_t;

/// Stage of each node and device of each stage.
struct Plan {
  /// nodeStage[n] is the stage of node n; one entry per node.
  std::vector<StageId> nodeStage;
  /// stageDevice[s] is the device of stage s; one entry per stage.
  std::vector<DeviceId> stageDevice;
  /// stageRecompute[s] says whether stage s keeps only its inputs in the
  /// forward and recomputes its forward just before its backward (true) or
  /// keeps every activation (false). Empty: every stage follows
  /// ObjectiveConfig::recompute (see stageRecomputes in Objective.h).
  std::vector<bool> stageRecompute;
  /// nodeReplicated[n] says that node n is computed in every stage that
  /// reads one of its results (directly, or through other replicated nodes)
  /// instead of once in nodeStage[n] and sent: its results never cross a
  /// stage boundary, and nodeStage[n] is nominal. A replicated node reads
  /// only graph inputs, parameters and results of replicated nodes (see
  /// replicaStages in Objective.h). Empty: no node is replicated.
  std::vector<bool> nodeReplicated;
  /// nodeForwarded[n] says that the results of node n go from its stage to
  /// the first other stage that reads them, and from each stage that reads
  /// them to the next, in the order the stages run, instead of from n's
  /// stage to every reader: the producer sends once, not once per reader.
  /// The stages reading a forwarded result must depend on one another in a
  /// chain (each reachable from the one before it), so forwarding adds no
  /// dependency between stages (see buildStageGraph in Objective.h). A
  /// forwarded node is not replicated. Empty: nothing is forwarded.
  std::vector<bool> nodeForwarded;

  /// Whether node n is replicated.
  bool replicated(size_t n) const {
    return !nodeReplicated.empty() && nodeReplicated[n];
  }

  /// Whether node n's results are forwarded along their readers.
  bool forwarded(size_t n) const {
    return !nodeForwarded.empty() && nodeForwarded[n];
  }

  /// Number of stages (the length of stageDevice).
  size_t numStages() const { return stageDevice.size(); }

  /// The plan before partitioning: every node in stage 0 on device 0.
  static Plan singleStage(size_t numNodes) {
    Plan plan;
    plan.nodeStage.assign(numNodes, 0);
    plan.stageDevice.assign(1, 0);
    return plan;
  }

  /// Plans are equal when they place every node and stage alike and agree
  /// on recomputation, replication and forwarding.
  bool operator==(const Plan &other) const {
    return nodeStage == other.nodeStage && stageDevice == other.stageDevice &&
           stageRecompute == other.stageRecompute &&
           nodeReplicated == other.nodeReplicated &&
           nodeForwarded == other.nodeForwarded;
  }
  bool operator!=(const Plan &other) const { return !(*this == other); }
};

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_PLAN_H
