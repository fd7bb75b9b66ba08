//===- ReplicaPlanning.h - Partitioners and their replicas ------*- C++ -*-===//
//
// What the passes that plan with Seq-Pipe and Mixed-Pipe share: each
// partitioner on given devices as the partitioning passes run it
// (solvePartitioning), the searches of replicas=auto over them
// (lib/Partition/ReplicaChoice.h) with the line per partitioner they
// print, every option of a search as the verbose passes print it, and the
// commit of the option chosen (its pipeline's hardware and replicas).
// ftpipe-auto-partition, ftpipe-mixed-pipe, ftpipe-seq-pipe and
// ftpipe-report use it.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_TRANSFORMS_REPLICAPLANNING_H
#define FTPIPE_TRANSFORMS_REPLICAPLANNING_H

#include "PartitionProblem.h"

#include "FTPipe/Partition/ReplicaChoice.h"
#include "FTPipe/Transforms/Passes.h"

#include <functional>
#include <optional>

namespace mlir {
namespace ftpipe {

/// How the partitioners plan: the pass's recompute option, objective,
/// shared-value options, the synchronous schedule candidates compete by
/// (none: the objective's schedule) and whether Mixed-Pipe's candidates run
/// in parallel.
struct PartitionerSetup {
  ::ftpipe::schedule::RecomputeMode recompute =
      ::ftpipe::schedule::RecomputeMode::Auto;
  partition::ObjectiveConfig objective;
  bool replicate = true, forward = true;
  std::optional<::ftpipe::schedule::Kind> syncSchedule;
  bool multithreaded = true;
};

/// Seq-Pipe dp, Seq-Pipe greedy and Mixed-Pipe, each planning `graph` on the
/// devices it is given through solvePartitioning (Seq-Pipe dp without the
/// plan that keeps everything: its search grows too much when activations
/// fill the memory). Holds the callables that the NamedPartitioners refer
/// to, so it outlives the searches and is not copied.
class Partitioners {
public:
  Partitioners(const partition::Graph &graph, PartitionerSetup setup);
  Partitioners(const Partitioners &) = delete;
  Partitioners &operator=(const Partitioners &) = delete;

  /// The partitioner a pass names ("seq-dp", "seq-greedy", "mixed-pipe").
  partition::NamedPartitioner named(StringRef method) const;
  /// Seq-Pipe dp (where the graph has at most `dpMaxOps` ops), Seq-Pipe
  /// greedy and Mixed-Pipe, the order ftpipe-auto-partition runs them in.
  std::vector<partition::NamedPartitioner> all(unsigned dpMaxOps) const;
  /// The plan of the partitioner `method` names on `on`.
  llvm::Expected<partition::Plan> plan(StringRef method,
                                       const partition::Hardware &on) const {
    return named(method).partitioner(on);
  }

private:
  using Solver = std::function<llvm::Expected<partition::Plan>(
      const partition::Hardware &)>;
  const partition::Graph &graph;
  PartitionerSetup setup;
  Solver seqDP, seqGreedy, mixedPipe;
};

/// The searches of `replicas` (auto or W) on `hw`, a line per partitioner on
/// stderr (its pure pipeline and its fastest option with replicas,
/// simulated ms per mini-batch, and the step under the sync schedule where
/// the options competed by it; `skipped` names a partitioner left out and
/// why), then the choice; `pass` heads it.
void printReplicaChoice(StringRef pass, const partition::ReplicaChoice &choice,
                        size_t numNodes, const partition::Hardware &hw,
                        const ReplicasOption &replicas,
                        ArrayRef<std::pair<std::string, std::string>> skipped);

/// Every option of `search` on stderr, a line each (depth, layout,
/// simulated mini-batch, all-reduce, idle share, objective, fullest device,
/// its plan's bound, shared cores, the step under `syncSchedule`; or why it
/// is infeasible), `marked` (if one of them) as "<- chosen" and the
/// search's own choice, where it is another, as "<- its search's choice",
/// then the
/// search's chain bound and step bound (ReplicaBound.h): what
/// `ftpipe-mixed-pipe verbose` and `ftpipe-auto-partition verbose` print.
void printReplicaSearch(const partition::ReplicaSearchResult &search,
                        const partition::Hardware &hw,
                        std::optional<::ftpipe::schedule::Kind> syncSchedule,
                        const partition::ReplicaOption *marked);

/// Commits `option` (planned on pipelineHardware(problem.hardware, its
/// layout)): the module then holds that pipeline, its plan and its replicas
/// (commitPlan). Emits an error and fails as they do.
LogicalResult commitReplicaOption(ModuleOp module, PartitionProblem &problem,
                                  const partition::ReplicaOption &option,
                                  StringRef method,
                                  const partition::ObjectiveConfig &config,
                                  double seconds);

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_TRANSFORMS_REPLICAPLANNING_H
