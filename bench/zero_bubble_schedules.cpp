//===- zero_bubble_schedules.cpp - Simulated 1F1B, zb-h1, zb-auto ---------===//
//
// Prints the simulated step time and idle share of 1F1B with flush, zb-h1
// and zb-auto on a few fixed stage graphs and placements (8 stages; a chain
// on 8 devices, a V and a non-adjacent Mixed-Pipe placement on 4), M = 8
// and 16, 1 MB messages over 10 GB/s links with 10 us latency. Simulated
// figures: they do not depend on the machine's load.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/Simulator.h"
#include "FTPipe/Schedule/ZeroBubble.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace ftpipe::schedule;

static SimResult simulated(const TimedStageGraph &sg, const Links &links,
                           Kind kind, int64_t microBatches, Schedule orders) {
  SimulatorConfig config;
  config.kind = kind;
  config.microBatches = uint32_t(microBatches);
  config.orders = std::move(orders);
  config.recordEvents = false;
  llvm::Expected<SimResult> result = simulate(sg, links, config);
  if (!result) {
    llvm::errs() << llvm::toString(result.takeError()) << "\n";
    std::exit(1);
  }
  return *result;
}

static void row(llvm::StringRef name, const StageGraph &graph,
                const TimedStageGraph &sg, int64_t microBatches) {
  Links links = Links::uniform(graph.devices, 10.0, 10.0);
  SimResult oneF = simulated(sg, links, Kind::OneFOneB, microBatches, {});
  SimResult h1 = simulated(sg, links, Kind::ZeroBubbleH1, microBatches, {});
  llvm::Expected<Schedule> lists = generateZeroBubbleAuto(
      graph, sg, links, {Kind::ZeroBubbleAuto, microBatches, 1});
  if (!lists) {
    llvm::errs() << llvm::toString(lists.takeError()) << "\n";
    std::exit(1);
  }
  SimResult autoZb =
      simulated(sg, links, Kind::ZeroBubbleAuto, microBatches, *lists);
  llvm::outs() << llvm::formatv(
      "| {0} | {1} | {2:F2} ({3:P1}) | {4:F2} ({5:P1}) | {6:F2} ({7:P1}) |\n",
      name, microBatches, oneF.msPerMiniBatch, oneF.idleFraction,
      h1.msPerMiniBatch, h1.idleFraction, autoZb.msPerMiniBatch,
      autoZb.idleFraction);
}

int main() {
  std::vector<double> ones(8, 1.0);
  std::vector<double> fwd = {1.0, 1.2, 0.8, 1.1, 0.9, 1.3, 1.0, 1.4};
  std::vector<double> input = {1.1, 1.3, 0.9, 1.2, 1.0, 1.4, 1.1, 1.6};
  std::vector<double> weight = {0.9, 1.0, 0.7, 1.0, 0.8, 1.1, 0.9, 1.2};
  StageGraph chain = StageGraph::chain({0, 1, 2, 3, 4, 5, 6, 7});
  StageGraph v = StageGraph::chain({0, 1, 2, 3, 3, 2, 1, 0});
  StageGraph mixed = StageGraph::chain({0, 1, 2, 0, 3, 1, 2, 3});
  llvm::outs() << "| stages, placement, costs (ms) | M | 1F1B ms (idle) | "
                  "zb-h1 ms (idle) | zb-auto ms (idle) |\n|---|---|---|---|---|"
                  "\n";
  for (int64_t m : {8, 16}) {
    row("chain on 8, F = I = W = 1", chain,
        TimedStageGraph::withCosts(chain, ones, ones, ones, 1 << 20), m);
    row("chain on 8, unequal", chain,
        TimedStageGraph::withCosts(chain, fwd, input, weight, 1 << 20), m);
    row("V on 4 (0,1,2,3,3,2,1,0), unequal", v,
        TimedStageGraph::withCosts(v, fwd, input, weight, 1 << 20), m);
    row("Mixed-Pipe on 4 (0,1,2,0,3,1,2,3), unequal", mixed,
        TimedStageGraph::withCosts(mixed, fwd, input, weight, 1 << 20), m);
  }
  return 0;
}
