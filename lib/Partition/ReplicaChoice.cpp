//===- ReplicaChoice.cpp - replicas=auto over every partitioner -----------===//
//
// One pass over every search's options keeps the fastest pure pipeline and
// the fastest option with replicas; kReplicaMinGain decides between them.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/ReplicaChoice.h"

using namespace ftpipe::partition;
using llvm::Expected;

/// Whether `a` is shorter than `b` beyond rounding (ties keep the earlier).
static bool faster(const ReplicaOption &a, const ReplicaOption &b) {
  return a.rankMs() < b.rankMs() * (1.0 - 1e-9);
}

Expected<ReplicaChoice>
ftpipe::partition::chooseReplicas(std::vector<MethodSearch> searches) {
  ReplicaChoice choice;
  choice.searches = std::move(searches);
  std::string reasons;
  for (auto [m, method] : llvm::enumerate(choice.searches)) {
    method.bestPure.reset();
    method.bestReplicated.reset();
    if (!method.search) {
      reasons += "\n  " + method.method + ": " + method.failure;
      continue;
    }
    const std::vector<ReplicaOption> &options = method.search->options;
    for (auto [o, option] : llvm::enumerate(options)) {
      if (!option.feasible)
        continue;
      std::optional<size_t> &best =
          option.layout.replicated() ? method.bestReplicated : method.bestPure;
      if (!best || faster(option, options[*best]))
        best = o;
    }
    auto keep = [&](std::optional<size_t> own, std::optional<OptionRef> &best) {
      if (own && (!best || faster(options[*own], choice.option(*best))))
        best = OptionRef{m, *own};
    };
    keep(method.bestPure, choice.bestPure);
    keep(method.bestReplicated, choice.bestReplicated);
  }
  if (!choice.bestPure && !choice.bestReplicated)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no partitioner's depth x replicas option is feasible:" + reasons);
  bool replicate =
      choice.bestReplicated &&
      (!choice.bestPure ||
       choice.option(*choice.bestReplicated).rankMs() <
           choice.option(*choice.bestPure).rankMs() * (1.0 - kReplicaMinGain));
  choice.chosen = replicate ? *choice.bestReplicated : *choice.bestPure;
  return choice;
}

Expected<ReplicaChoice> ftpipe::partition::searchReplicasOver(
    const Graph &graph, const Hardware &hw, const ObjectiveConfig &config,
    llvm::ArrayRef<NamedPartitioner> partitioners,
    llvm::ArrayRef<int64_t> replicas,
    std::optional<schedule::Kind> syncSchedule) {
  // A layout that does not fit the devices fails every search alike.
  if (!replicas.empty())
    if (Expected<schedule::ReplicaLayout> layout =
            requestedLayout(replicas, uint32_t(hw.numDevices()));
        !layout)
      return layout.takeError();
  std::vector<MethodSearch> searches;
  for (const NamedPartitioner &named : partitioners) {
    MethodSearch method;
    method.method = named.method;
    Expected<ReplicaSearchResult> search = searchReplicas(
        graph, hw, config, named.partitioner, replicas, syncSchedule);
    if (search)
      method.search = std::move(*search);
    else
      method.failure = llvm::toString(search.takeError());
    searches.push_back(std::move(method));
  }
  return chooseReplicas(std::move(searches));
}
