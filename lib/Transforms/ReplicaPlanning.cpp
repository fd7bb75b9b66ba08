//===- ReplicaPlanning.cpp - Partitioners and their replicas --------------===//
//
// The partitioners as the partitioning passes run them, the lines of
// replicas=auto, and the commit of a chosen option.
//
//===----------------------------------------------------------------------===//

#include "ReplicaPlanning.h"

#include "FTPipe/Partition/MixedPipe.h"
#include "FTPipe/Partition/Replication.h"
#include "FTPipe/Partition/SeqPipe.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::ftpipe;

/// The plan of a partitioner's result.
template <typename Result>
static llvm::Expected<partition::Plan> planOf(llvm::Expected<Result> result) {
  if (!result)
    return result.takeError();
  return std::move(result->plan);
}

Partitioners::Partitioners(const partition::Graph &graph,
                           PartitionerSetup setup)
    : graph(graph), setup(std::move(setup)) {
  // Each method on the given devices under the recompute option
  // (recompute=auto: chosen per stage, lib/Partition/Recomputation.h).
  auto onDevices = [this](auto method, bool tryKeeping) -> Solver {
    return [this, method, tryKeeping](const partition::Hardware &on) {
      auto solve = [&](const partition::Graph &g,
                       const partition::ObjectiveConfig &config) {
        return method(g, on, config);
      };
      return partition::solvePartitioning(
          this->setup.recompute, this->setup.replicate, this->setup.forward,
          this->graph, on, this->setup.objective, solve, tryKeeping,
          this->setup.syncSchedule);
    };
  };
  auto seqPipe = [](bool exact) {
    return [exact](const partition::Graph &g, const partition::Hardware &on,
                   const partition::ObjectiveConfig &config) {
      partition::SeqPipeConfig seqConfig;
      seqConfig.objective = config;
      return planOf(exact ? partition::seqPipeDP(g, on, seqConfig)
                          : partition::seqPipeGreedy(g, on, seqConfig));
    };
  };
  seqDP = onDevices(seqPipe(true), /*tryKeeping=*/false);
  seqGreedy = onDevices(seqPipe(false), /*tryKeeping=*/true);
  mixedPipe = onDevices(
      [this](const partition::Graph &g, const partition::Hardware &on,
             const partition::ObjectiveConfig &config) {
        partition::MixedPipeConfig mixedConfig;
        mixedConfig.objective = config;
        mixedConfig.syncSchedule = this->setup.syncSchedule;
        if (!this->setup.multithreaded)
          mixedConfig.threads = 1;
        return planOf(partition::runMixedPipe(g, on, mixedConfig));
      },
      /*tryKeeping=*/true);
}

partition::NamedPartitioner Partitioners::named(StringRef method) const {
  assert((method == "seq-dp" || method == "seq-greedy" ||
          method == "mixed-pipe") &&
         "unknown partitioner");
  const Solver &solver = method == "seq-dp"       ? seqDP
                         : method == "seq-greedy" ? seqGreedy
                                                  : mixedPipe;
  return {method.str(), solver};
}

std::vector<partition::NamedPartitioner>
Partitioners::all(unsigned dpMaxOps) const {
  std::vector<partition::NamedPartitioner> partitioners;
  if (graph.numNodes() <= dpMaxOps)
    partitioners.push_back(named("seq-dp"));
  partitioners.push_back(named("seq-greedy"));
  partitioners.push_back(named("mixed-pipe"));
  return partitioners;
}

void mlir::ftpipe::printReplicaChoice(
    StringRef pass, const partition::ReplicaChoice &choice, size_t numNodes,
    const partition::Hardware &hw, const ReplicasOption &replicas,
    ArrayRef<std::pair<std::string, std::string>> skipped) {
  llvm::errs() << llvm::formatv(
      "{0}: {1} ops on {2} devices of '{3}', replicas={4}\n", pass, numNodes,
      hw.numDevices(), hw.name(), replicas.str());
  for (const auto &[method, why] : skipped)
    llvm::errs() << llvm::formatv("  {0,-10} {1}\n", method, why);
  auto describe = [](const partition::ReplicaOption &option) {
    return llvm::formatv(
               "{0,10:f3} ms (depth {1}, replicas {2}){3}",
               option.simulatedMsPerMiniBatch, option.depth(),
               partition::describeOption(option),
               option.syncStepMs > 0
                   ? llvm::formatv(" step {0:f3} ms", option.syncStepMs).str()
                   : std::string())
        .str();
  };
  for (auto [m, method] : llvm::enumerate(choice.searches)) {
    if (!method.search) {
      llvm::errs() << llvm::formatv("  {0,-10} no option: {1}\n", method.method,
                                    method.failure);
      continue;
    }
    auto column = [&](std::optional<size_t> o) {
      return o ? describe(method.search->options[*o]) : std::string("-");
    };
    llvm::errs() << llvm::formatv(
        "  {0,-10} pure {1}  replicated {2}{3}\n", method.method,
        column(method.bestPure), column(method.bestReplicated),
        choice.chosen.method == m ? "  <- chosen" : "");
  }
  llvm::errs() << llvm::formatv("  chosen: {0} {1}\n", choice.chosenMethod(),
                                describe(choice.chosenOption()));
}

LogicalResult mlir::ftpipe::commitReplicaOption(
    ModuleOp module, PartitionProblem &problem,
    const partition::ReplicaOption &option, StringRef method,
    const partition::ObjectiveConfig &config, double seconds) {
  llvm::Expected<partition::Hardware> pipeline =
      partition::pipelineHardware(problem.hardware, option.layout);
  if (!pipeline)
    return emitError(module.getLoc()) << llvm::toString(pipeline.takeError());
  // The module holds one pipeline: its plan on its devices.
  problem.hardware = std::move(*pipeline);
  return commitPlan(module, problem, option.plan, method, config, seconds,
                    option.layout.replicas);
}
