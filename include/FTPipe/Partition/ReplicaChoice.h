//===- ReplicaChoice.h - replicas=auto over every partitioner ---*- C++ -*-===//
//
// `replicas=auto` of ftpipe-auto-partition: the depth x replicas search
// (ReplicaSearch.h) run with each partitioner's plans (Seq-Pipe dp and
// greedy, Mixed-Pipe), every option of every search scored by the same
// simulator, and one choice over all of them: the fastest feasible option,
// one with replicas only where it beats the fastest pure pipeline of any
// partitioner by kReplicaMinGain. A partitioner's replicated option may beat
// its own pure pipeline and still lose to another's (Seq-Pipe's pure
// pipelines of T5-3B on 8 V100s under 1F1B against Mixed-Pipe's replicated
// option). No MLIR here.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_REPLICACHOICE_H
#define FTPIPE_PARTITION_REPLICACHOICE_H

#include "FTPipe/Partition/ReplicaSearch.h"

#include <optional>
#include <string>
#include <vector>

namespace ftpipe {
namespace partition {

/// A partitioner whose plans searchReplicasOver tries, by its name.
struct NamedPartitioner {
  std::string method;
  ReplicaPartitioner partitioner;
};

/// One partitioner's search: its options, or why it has none.
struct MethodSearch {
  std::string method;
  std::optional<ReplicaSearchResult> search;
  std::string failure;
  /// Set by chooseReplicas: the index of the search's fastest feasible pure
  /// pipeline and of its fastest feasible option with replicas, if any.
  std::optional<size_t> bestPure, bestReplicated;
};

/// An option of one of the searches.
struct OptionRef {
  size_t method = 0, option = 0;
};

/// The searches and the option chosen among them.
struct ReplicaChoice {
  std::vector<MethodSearch> searches;
  OptionRef chosen;
  /// The fastest feasible pure pipeline (no replicas) and the fastest
  /// feasible option with replicas over every search, when there is one.
  std::optional<OptionRef> bestPure, bestReplicated;

  const ReplicaOption &option(OptionRef ref) const {
    return searches[ref.method].search->options[ref.option];
  }
  const ReplicaOption &chosenOption() const { return option(chosen); }
  const std::string &chosenMethod() const {
    return searches[chosen.method].method;
  }
};

/// Chooses among `searches` (in the order given; a search without options
/// counts for none): the fastest feasible pure pipeline and the fastest
/// feasible option with replicas (lowest ReplicaOption::rankMs, beyond
/// rounding; ties keep the earlier method, then the earlier option; each
/// search's own are recorded too), the latter only where it
/// takes less than (1 - kReplicaMinGain) of the former. Fails when no
/// search has a feasible option, naming each search's failure.
llvm::Expected<ReplicaChoice>
chooseReplicas(std::vector<MethodSearch> searches);

/// Runs searchReplicas (every layout, or with `replicas` requestedLayout's
/// one; the options ranked by their step under `syncSchedule` where one is
/// given) with each of `partitioners`, a failure kept with its search, then
/// chooseReplicas. Fails at once when requestedLayout refuses `replicas`.
llvm::Expected<ReplicaChoice>
searchReplicasOver(const Graph &graph, const Hardware &hw,
                   const ObjectiveConfig &config,
                   llvm::ArrayRef<NamedPartitioner> partitioners,
                   llvm::ArrayRef<int64_t> replicas = {},
                   std::optional<schedule::Kind> syncSchedule = std::nullopt);

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_REPLICACHOICE_H
