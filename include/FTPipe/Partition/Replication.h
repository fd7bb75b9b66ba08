//===- Replication.h - Cheap values made where they are read ----*- C++ -*-===//
//
// Some values cost little to compute but a lot to send: T5's attention
// position bias (4 x 32 heads x 512 x 512 floats, 128 MiB per micro-batch)
// is made from constants, the attention mask and a 4 KiB embedding, and read
// by every encoder layer. Sent, it crosses into every encoder stage, and
// every such stage keeps it for each micro-batch in flight. Replicated, each
// stage that reads it makes its own copy (Plan::nodeReplicated): no
// transfer, and under recomputation nothing to keep but the small inputs.
//
// This phase chooses which nodes to replicate, from the graph alone, and
// runs any partitioner on the graph as it looks with those nodes made where
// they are read (solveWithReplication).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_REPLICATION_H
#define FTPIPE_PARTITION_REPLICATION_H

#include "FTPipe/Partition/Graph.h"
#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/Plan.h"
#include "FTPipe/Partition/Recomputation.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace ftpipe {
namespace partition {

/// The nodes worth replicating. For every value of at least one byte whose
/// readers are not all chosen yet, walks up from its producer to the graph
/// inputs; the value is replicated, with every node it is computed from,
/// when that is cheaper than sending it once: those nodes' forward and
/// backward time is at most the time to send the value over the slowest
/// link between two devices, their parameters (with gradients and optimizer
/// state under `config`) weigh no more than the value, and every result they
/// make is read by some node (a result the function returns stays where it
/// is made). The result has one entry per node (all false when nothing
/// qualifies, or with a single device).
std::vector<bool> chooseReplicatedNodes(const Graph &graph, const Hardware &hw,
                                        const ObjectiveConfig &config);

/// The graph partitioners plan on when the `replicated` nodes (a valid
/// choice: see chooseReplicatedNodes) are computed where they are read:
/// the same nodes, values and parameters, except that replicated nodes cost
/// nothing and read no parameters, and their results are 0-byte graph
/// inputs without gradient (free in every stage that reads them).
llvm::Expected<Graph>
replicationPlanningGraph(const Graph &graph,
                         const std::vector<bool> &replicated);

/// A partitioner run on some graph under some config.
using GraphPlanSolver = llvm::function_ref<llvm::Expected<Plan>(
    const Graph &graph, const ObjectiveConfig &config)>;

/// Runs `solve` twice: on `graph`, and with the nodes chooseReplicatedNodes
/// picks replicated, i.e. on the planning graph with the memory of every
/// replicated node's activations, parameters (gradients and optimizer state
/// included) and graph inputs reserved on every device, the plan then
/// mapped back to `graph` (the replicated nodes marked, each placed
/// nominally in the first stage computing it, stages left with replicated
/// nodes only removed). Returns the replicated plan when its objective on
/// `graph` is lower (between equals: its busiest sender sends fewer bytes)
/// and it does not simulate slower (under config's schedule); else the
/// other. A replicated plan that does not verify on `graph` (e.g. memory)
/// is dropped. Solves once when nothing is worth replicating. So it is
/// never worse, by the objective or the simulator, than `solve` on `graph`;
/// fails only when both fail (with the error of `solve` on `graph`). With a
/// `syncSchedule` (a synchronous kind the plan will run under), the plan
/// with the shorter step under it (synchronousStepMs) is returned, the rule
/// above deciding between equal steps.
llvm::Expected<Plan>
solveWithReplication(const Graph &graph, const Hardware &hw,
                     const ObjectiveConfig &config, GraphPlanSolver solve,
                     std::optional<schedule::Kind> syncSchedule = std::nullopt);

/// How the partitioning passes run a partitioner: solveWithRecomputation
/// under `mode` (with `tryKeeping`), each solve through
/// solveWithReplication when `replicate` (else `solve` on `graph`), the plan
/// it returns through attachFreeOps (Refinement.h), then through
/// forwardSharedValues (Forwarding.h) when `forward`; `syncSchedule` goes
/// to solveWithReplication.
llvm::Expected<Plan> solvePartitioning(
    RecomputeMode mode, bool replicate, bool forward, const Graph &graph,
    const Hardware &hw, const ObjectiveConfig &config, GraphPlanSolver solve,
    bool tryKeeping, std::optional<schedule::Kind> syncSchedule = std::nullopt);

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_REPLICATION_H
