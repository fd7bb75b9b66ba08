//===- StepBoundTest.cpp - The lower bound on a synchronous step ----------===//
//
// stepLowerBound against steps it must equal (1F1B on a chain of equal
// stages, a two-stage split pipeline worked by hand), against a forward
// that only passes values on, and, on random stage DAGs, costs and
// placements, never above the simulated step of any synchronous kind; the
// edge lags zb-auto justifies with.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/StepBound.h"

#include "FTPipe/Schedule/ZeroBubble.h"
#include "RandomStageGraph.h"

#include "gtest/gtest.h"

#include <random>

using namespace ftpipe::schedule;

namespace {

SimResult simulated(const TimedStageGraph &sg, const Links &links, Kind kind,
                    uint32_t microBatches, Schedule orders = {}) {
  SimulatorConfig config;
  config.kind = kind;
  config.microBatches = microBatches;
  config.recordEvents = false;
  config.orders = std::move(orders);
  llvm::Expected<SimResult> result = simulate(sg, links, config);
  if (!result) {
    ADD_FAILURE() << llvm::toString(result.takeError());
    return SimResult();
  }
  return *result;
}

// Equal stages that do not split, free messages: 1F1B's (M + p - 1)(F + B)
// is the least step (every device reaches it: the fill before its first F
// and the drain after its last B are (p - 1)(F + B) together).
TEST(StepLowerBound, EqualChainIsOneFOneBsStep) {
  for (int64_t p : {1, 2, 3, 5})
    for (uint32_t m : {1u, 2u, 4u, 9u}) {
      std::vector<int64_t> placement;
      for (int64_t s = 0; s < p; ++s)
        placement.push_back(s);
      StageGraph graph = StageGraph::chain(placement);
      std::vector<double> ones(p, 1.0), zeros(p, 0.0);
      TimedStageGraph sg =
          TimedStageGraph::withCosts(graph, ones, ones, zeros, 0);
      std::vector<bool> whole(p, false);
      StepLowerBound bound = stepLowerBound(sg, whole, m);
      double oneF =
          simulated(sg, Links::uniform(p, 1e9, 0.0), Kind::OneFOneB, m)
              .makespanMs;
      EXPECT_DOUBLE_EQ(bound.msPerMiniBatch, 2.0 * (m + p - 1))
          << "p=" << p << " M=" << m;
      EXPECT_DOUBLE_EQ(bound.msPerMiniBatch, oneF);
      EXPECT_DOUBLE_EQ(bound.busyMs, 2.0 * m);
    }
}

// Two stages on two devices, F = I = W = 1, M = 2. Device 1 can start at
// 1 and has 6 of work; device 0's last I waits for device 1's (its
// earliest at 2 + 1) and then needs its own W: 7 either way, which the
// lists 0F0 0F1 0I0 0W0 0I1 0W1 / 1F0 1I0 1F1 1I1 1W0 1W1 reach.
TEST(StepLowerBound, SplitPairByHand) {
  StageGraph graph = StageGraph::chain({0, 1});
  TimedStageGraph sg =
      TimedStageGraph::withCosts(graph, {1, 1}, {1, 1}, {1, 1}, 0);
  StepLowerBound bound = stepLowerBound(sg, {}, 2);
  EXPECT_DOUBLE_EQ(bound.msPerMiniBatch, 7.0);
  EXPECT_DOUBLE_EQ(bound.busyMs, 6.0);
  llvm::Expected<Schedule> lists =
      parseSchedule("device 0: 0F0 0F1 0I0 0W0 0I1 0W1\n"
                    "device 1: 1F0 1I0 1F1 1I1 1W0 1W1\n");
  ASSERT_TRUE(bool(lists)) << llvm::toString(lists.takeError());
  EXPECT_DOUBLE_EQ(simulated(sg, Links::uniform(2, 1e9, 0.0),
                             Kind::ZeroBubbleAuto, 2, *lists)
                       .makespanMs,
                   7.0);
}

// An edge that carries only values its source passes on lets the
// consumer's forward start with the producer's (as the simulator sends
// them): the bound drops by one forward and stays below the simulated step.
// With links, each message adds its transfer time (1 MB at 1 GB/s: 1 ms,
// forward and backward).
TEST(StepLowerBound, PassedOnValuesLeaveAtTheForwardsStart) {
  StageGraph graph = StageGraph::chain({0, 1});
  TimedStageGraph sg =
      TimedStageGraph::withCosts(graph, {2, 1}, {1, 1}, {0, 0}, 0);
  std::vector<bool> whole(2, false);
  double made = stepLowerBound(sg, whole, 1).msPerMiniBatch;
  sg.edges[0].passTensors = sg.edges[0].fwdTensors;
  double passed = stepLowerBound(sg, whole, 1).msPerMiniBatch;
  EXPECT_DOUBLE_EQ(made, 5.0); // F0 2, F1 1, B1 1, B0 1
  EXPECT_DOUBLE_EQ(passed, 3.0);
  EXPECT_LE(
      passed,
      simulated(sg, Links::uniform(2, 1e9, 0.0), Kind::OneFOneB, 1).makespanMs);
}

// The lags zb-auto's justification uses: made values leave at the end of
// the producer's forward, passed-on ones at its start; the producer's I
// waits for the consumer's I and its transfer, and not at all when only
// gradients it passes on come back.
TEST(StepLowerBound, EdgeLagsAsTheSimulatorSends) {
  StageGraph graph = StageGraph::chain({0, 1});
  TimedStageGraph sg =
      TimedStageGraph::withCosts(graph, {2, 1}, {1, 3}, {0, 0}, 1 << 20);
  std::vector<bool> whole(2, false);
  Links links = Links::uniform(2, 1.0, 0.0);
  double transfer =
      links.transferMs(sg.edges[0].fwdBytes, sg.edges[0].fwdTensors, 0, 1);
  EdgeLags made = edgeLags(sg, whole, &links);
  ASSERT_EQ(made.forwardMs.size(), 1u);
  EXPECT_DOUBLE_EQ(made.forwardMs[0], 2.0 + transfer);
  ASSERT_TRUE(made.backwardMs[0].has_value());
  EXPECT_DOUBLE_EQ(*made.backwardMs[0], 3.0 + transfer);
  sg.edges[0].passTensors = sg.edges[0].fwdTensors;
  sg.edges[0].passBytes = sg.edges[0].fwdBytes;
  sg.edges[0].passGradTensors = sg.edges[0].bwdTensors;
  sg.edges[0].passGradBytes = sg.edges[0].bwdBytes;
  EdgeLags passed = edgeLags(sg, whole, &links);
  EXPECT_DOUBLE_EQ(passed.forwardMs[0], transfer);
  EXPECT_FALSE(passed.backwardMs[0].has_value());
}

// On random stage DAGs, placements, costs, messages and splits, no
// synchronous step the simulator runs (GPipe, 1F1B, zb-h1, zb-auto) is
// shorter than the bound with its links, and the bound is at least the
// busiest device's work.
TEST(StepLowerBoundProperty, NeverAboveASimulatedStep) {
  std::mt19937 rng(2727);
  for (int trial = 0; trial < 300; ++trial) {
    StageGraph graph = test::randomGraph(rng);
    int64_t n = graph.stages();
    test::RandomCosts costs =
        test::randomCosts(rng, n, 0.0, 4.0, /*zeroWeights=*/true);
    const std::vector<double> &fwd = costs.forward, &input = costs.input,
                              &weight = costs.weight;
    TimedStageGraph sg = TimedStageGraph::withCosts(graph, fwd, input, weight,
                                                    uint64_t(rng() % 3) << 20);
    for (int64_t s = 0; s < n; ++s)
      sg.recomputeMs[s] = rng() % 2 ? fwd[s] : 0.0;
    Links links = Links::uniform(graph.devices, 10.0, 5.0);
    uint32_t m = 1 + rng() % 8;
    std::vector<bool> split;
    if (rng() % 2)
      for (int64_t s = 0; s < n; ++s)
        split.push_back(rng() % 4 != 0);
    StepLowerBound zb = stepLowerBound(sg, split, m, &links);
    StepLowerBound whole =
        stepLowerBound(sg, std::vector<bool>(n, false), m, &links);
    EXPECT_LE(stepLowerBound(sg, split, m).msPerMiniBatch,
              zb.msPerMiniBatch * (1 + 1e-12))
        << "trial " << trial << ": messages only lengthen the step";
    std::vector<double> work(graph.devices, 0.0);
    for (int64_t s = 0; s < n; ++s)
      work[graph.device[s]] +=
          m * (fwd[s] + input[s] + weight[s] + sg.recomputeMs[s]);
    double busiest = *std::max_element(work.begin(), work.end());
    EXPECT_GE(zb.msPerMiniBatch, busiest * (1 - 1e-12)) << "trial " << trial;
    EXPECT_GE(whole.msPerMiniBatch, busiest * (1 - 1e-12)) << "trial " << trial;
    for (Kind kind : {Kind::GPipe, Kind::OneFOneB})
      EXPECT_LE(whole.msPerMiniBatch,
                simulated(sg, links, kind, m).makespanMs * (1 + 1e-12))
          << "trial " << trial << " " << nameOf(kind).str();
    SimulatorConfig h1;
    h1.kind = Kind::ZeroBubbleH1;
    h1.microBatches = m;
    h1.recordEvents = false;
    h1.split = split;
    llvm::Expected<SimResult> h1Sim = simulate(sg, links, h1);
    ASSERT_TRUE(bool(h1Sim)) << llvm::toString(h1Sim.takeError());
    EXPECT_LE(zb.msPerMiniBatch, h1Sim->makespanMs * (1 + 1e-12))
        << "trial " << trial << " zb-h1";
    ScheduleConfig config{Kind::ZeroBubbleAuto, int64_t(m), 1, split};
    llvm::Expected<Schedule> lists =
        generateZeroBubbleAuto(graph, sg, links, config);
    ASSERT_TRUE(bool(lists)) << llvm::toString(lists.takeError());
    EXPECT_LE(zb.msPerMiniBatch,
              simulated(sg, links, Kind::ZeroBubbleAuto, m, *lists).makespanMs *
                  (1 + 1e-12))
        << "trial " << trial << " zb-auto\n"
        << lists->str();
  }
}

} // namespace
