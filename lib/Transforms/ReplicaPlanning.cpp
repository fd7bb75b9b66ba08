//===- ReplicaPlanning.cpp - Partitioners and their replicas --------------===//
//
// The partitioners as the partitioning passes run them, the lines of
// replicas=auto, a search's options, and the commit of a chosen option.
//
//===----------------------------------------------------------------------===//

#include "ReplicaPlanning.h"

#include "FTPipe/Partition/MixedPipe.h"
#include "FTPipe/Partition/Replication.h"
#include "FTPipe/Partition/SeqPipe.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

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

/// ", fullest device D: X of Y GiB": the plan device whose memory under the
/// schedule (its replicas' lists replayed where larger) is the largest share
/// of its own.
static std::string describeMemory(const partition::ReplicaOption &option,
                                  const partition::Hardware &hw) {
  double fullest = -1.0;
  std::string text;
  for (auto [d, bytes] : llvm::enumerate(option.memoryBytes)) {
    double budget = double(
        hw.device(partition::DeviceId(option.layout.group(int64_t(d)).front()))
            .memoryBytes);
    if (budget <= 0.0 || double(bytes) / budget <= fullest)
      continue;
    fullest = double(bytes) / budget;
    text = llvm::formatv(", fullest device {0}: {1:f2} of {2:f2} GiB", d,
                         double(bytes) / double(1ull << 30),
                         budget / double(1ull << 30))
               .str();
  }
  return text;
}

void mlir::ftpipe::printReplicaSearch(
    const partition::ReplicaSearchResult &search, const partition::Hardware &hw,
    std::optional<::ftpipe::schedule::Kind> syncSchedule,
    const partition::ReplicaOption *marked) {
  for (const partition::ReplicaOption &option : search.options)
    llvm::errs() << llvm::formatv(
        "  depth {0,2}, replicas {1}: {2}{3}\n", option.depth(),
        partition::describeOption(option),
        option.feasible
            ? llvm::formatv(
                  "simulated {0:f3} ms per mini-batch, all-reduce "
                  "{1:f3} ms, idle {2:p}, objective {3:f3} ms "
                  "per micro-batch{4}{5}{6}{7}",
                  option.simulatedMsPerMiniBatch, option.allReduceMs,
                  option.idleFraction, option.objectiveMs,
                  describeMemory(option, hw),
                  option.boundMs > 0
                      ? llvm::formatv(", bound (this plan) {0:f3} ms "
                                      "(device {1} busy {2:f3} ms)",
                                      option.boundMs, option.boundDevice,
                                      option.boundBusyMs)
                            .str()
                      : std::string(),
                  option.sharedCoresMs > 0
                      ? llvm::formatv(", shared cores {0:f3} ms",
                                      option.sharedCoresMs)
                            .str()
                      : std::string(),
                  option.syncStepMs > 0
                      ? llvm::formatv(", {0} step {1:f3} ms",
                                      ::ftpipe::schedule::nameOf(*syncSchedule),
                                      option.syncStepMs)
                            .str()
                      : std::string())
                  .str()
            : "infeasible: " + option.failure,
        &option == marked             ? "  <- chosen"
        : &option == &search.chosen() ? "  <- its search's choice"
                                      : "");
  llvm::errs() << llvm::formatv(
      "  bound (chain, compute only): pure pipeline {0:f3} ms per "
      "mini-batch, replicated {1}; compute {2:f3} ms per micro-batch, at "
      "least "
      "{3} devices, gradients {4:f3} GiB, all-reduce over 2 {5:f3} ms{6}\n",
      search.pureBoundMs,
      std::isfinite(search.replicatedBound.ms)
          ? llvm::formatv("{0:f3} ms (depth {1}, replicas {2})",
                          search.replicatedBound.ms,
                          search.replicatedBound.layout.devices(),
                          search.replicatedBound.layout.str())
                .str()
          : std::string("- (none fits)"),
      search.computeMs, search.minDepth,
      double(search.gradientBytes) / double(1ull << 30), search.allReduceTwoMs,
      std::isfinite(search.capMs)
          ? llvm::formatv(", at most {0:f3} ms per micro-batch a device "
                          "(its weights' state)",
                          search.capMs)
                .str()
          : std::string());
  llvm::errs() << llvm::formatv(
      "  bound (any plan): replicated {0}; one micro-batch's path {1:f3} "
      "ms; at most {2:f3} ms for a layout tried\n",
      !std::isfinite(search.stepBound.ms) ? std::string("- (none fits)")
      : search.stepBound.ms <= 0.0
          ? std::string("- (none under async)")
          : llvm::formatv("{0:f3} ms (depth {1}, replicas {2})",
                          search.stepBound.ms,
                          search.stepBound.layout.devices(),
                          search.stepBound.layout.str())
                .str(),
      search.pathMs, search.highestLayoutBoundMs);
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
