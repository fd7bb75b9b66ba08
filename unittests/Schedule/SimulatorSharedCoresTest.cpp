//===- SimulatorSharedCoresTest.cpp - Devices sharing a node's cores ------===//
//
// The simulator's processor sharing (SharedCores): by hand, two devices on
// one core share it while both compute and each runs alone at full speed;
// on random stage DAGs, placements and schedules, a node with a core per
// device gives exactly the times without shared cores, and fewer cores are
// never faster than that, never beat the node's work over its cores and
// never slow a run by more than the node's devices over its cores.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/Simulator.h"
#include "FTPipe/Schedule/ZeroBubble.h"

#include "RandomStageGraph.h"

#include "gtest/gtest.h"

#include <random>

using namespace ftpipe::schedule;

namespace {

/// Two stages on devices 0 and 1 that exchange nothing: forwards `f0` and
/// `f1`, backwards `b0` and `b1` (ms).
TimedStageGraph twoIndependentStages(double f0, double f1, double b0,
                                     double b1) {
  TimedStageGraph graph;
  graph.device = {0, 1};
  graph.fwdMs = {f0, f1};
  graph.bwdMs = {b0, b1};
  graph.recomputeMs = {0, 0};
  graph.topoOrder = {0, 1};
  graph.height = {0, 0};
  return graph;
}

/// The timeline's [start, end] of `kind`'s task of stage s.
std::pair<double, double> interval(const SimResult &result, SimEvent::Kind kind,
                                   uint32_t stage) {
  for (const SimEvent &event : result.events)
    if (event.kind == kind && event.stage == stage)
      return {event.startMs, event.endMs};
  ADD_FAILURE() << "no such event";
  return {};
}

SimResult run(const TimedStageGraph &graph, const SimulatorConfig &config) {
  llvm::Expected<SimResult> result =
      simulate(graph, Links::uniform(graph.device.size(), 1.0, 0.0), config);
  EXPECT_TRUE(static_cast<bool>(result))
      << (result ? "" : llvm::toString(result.takeError()));
  return result ? std::move(*result) : SimResult();
}

/// GPipe over one micro-batch, devices 0 and 1 on one core.
SimulatorConfig oneMicroBatchOnOneCore() {
  SimulatorConfig config;
  config.kind = Kind::GPipe;
  config.microBatches = 1;
  config.sharedCores = {{0, 0}, {1}};
  return config;
}

TEST(SimulatorSharedCores, TwoOneMsTasksOnOneCoreEndAtTwo) {
  SimulatorConfig config = oneMicroBatchOnOneCore();
  SimResult shared = run(twoIndependentStages(1, 1, 1, 1), config);
  EXPECT_EQ(interval(shared, SimEvent::Kind::Forward, 0),
            std::make_pair(0.0, 2.0));
  EXPECT_EQ(interval(shared, SimEvent::Kind::Forward, 1),
            std::make_pair(0.0, 2.0));
  EXPECT_EQ(shared.makespanMs, 4.0);
  // Two cores: each device its own, as without shared cores.
  config.sharedCores = {{0, 0}, {2}};
  EXPECT_EQ(run(twoIndependentStages(1, 1, 1, 1), config).makespanMs, 2.0);
}

// F0 = 1, F1 = 3, B0 = B1 = 1 on one core: F0 and F1 share it until F0 ends
// at 2 (F1 has done 1); B0 and F1 then share it until B0 ends at 4 (F1 has
// done 2); F1 runs alone to 5 and B1 to 6, the node's 6 ms of work.
TEST(SimulatorSharedCores, UnequalTasksShareByHand) {
  SimulatorConfig config = oneMicroBatchOnOneCore();
  SimResult shared = run(twoIndependentStages(1, 3, 1, 1), config);
  EXPECT_EQ(interval(shared, SimEvent::Kind::Forward, 0),
            std::make_pair(0.0, 2.0));
  EXPECT_EQ(interval(shared, SimEvent::Kind::Backward, 0),
            std::make_pair(2.0, 4.0));
  EXPECT_EQ(interval(shared, SimEvent::Kind::Forward, 1),
            std::make_pair(0.0, 5.0));
  EXPECT_EQ(interval(shared, SimEvent::Kind::Backward, 1),
            std::make_pair(5.0, 6.0));
  EXPECT_EQ(shared.makespanMs, 6.0);
  // Busy: from each task's start to its end.
  EXPECT_EQ(shared.deviceBusyMs, (std::vector<double>{4.0, 6.0}));
  EXPECT_DOUBLE_EQ(shared.idleFraction, 1.0 - 10.0 / 12.0);
}

TEST(SimulatorSharedCores, Refusals) {
  SimulatorConfig config;
  config.sharedCores = {{0, 1}, {1}};
  llvm::Expected<SimResult> result = simulate(
      twoIndependentStages(1, 1, 1, 1), Links::uniform(2, 1.0, 0.0), config);
  ASSERT_FALSE(static_cast<bool>(result));
  EXPECT_EQ(llvm::toString(result.takeError()),
            "simulator: a device is on node 1, the shared cores name 1 nodes");
  config.sharedCores = {{0}, {1}};
  result = simulate(twoIndependentStages(1, 1, 1, 1),
                    Links::uniform(2, 1.0, 0.0), config);
  ASSERT_FALSE(static_cast<bool>(result));
  EXPECT_EQ(llvm::toString(result.takeError()),
            "simulator: shared cores place 1 devices, the hardware has 2");
  config.sharedCores = {{0, 0}, {0}};
  result = simulate(twoIndependentStages(1, 1, 1, 1),
                    Links::uniform(2, 1.0, 0.0), config);
  ASSERT_FALSE(static_cast<bool>(result));
  EXPECT_EQ(llvm::toString(result.takeError()),
            "simulator: a node of shared cores needs at least 1 core");
  EXPECT_EQ((SharedCores{{0, 0, 1}, {2, 1}}).str(),
            "2 devices on 2 cores; 1 device on 1 core");
}

// Random stage DAGs and placements under GPipe, 1F1B, ZB-H1 and zb-auto
// (fixed per-device lists: with a device choosing among ready tasks, a
// slower task could change its choice and the run's length either way),
// devices on one or two nodes.
TEST(SimulatorSharedCores, RandomGraphsKeepTheBounds) {
  std::mt19937 rng(2727);
  const Kind kinds[] = {Kind::GPipe, Kind::OneFOneB, Kind::ZeroBubbleH1,
                        Kind::ZeroBubbleAuto};
  for (int trial = 0; trial < 300; ++trial) {
    StageGraph graph = test::randomGraph(rng);
    Kind kind = kinds[rng() % 4];
    int64_t M = 1 + rng() % 6;
    test::RandomCosts costs =
        test::randomCosts(rng, graph.stages(), 0.5, 3.0, true);
    TimedStageGraph sg = TimedStageGraph::withCosts(
        graph, costs.forward, costs.input, costs.weight, 100000);
    Links links = Links::uniform(size_t(graph.devices), 1.0, 5.0);
    SimulatorConfig config;
    config.kind = kind;
    config.microBatches = uint32_t(M);
    if (kind != Kind::ZeroBubbleAuto) {
      llvm::Expected<Schedule> lists = generate(graph, {kind, M, 1});
      ASSERT_TRUE(static_cast<bool>(lists))
          << llvm::toString(lists.takeError());
      config.orders = std::move(*lists);
    }
    llvm::Expected<SimResult> own = simulate(sg, links, config);
    ASSERT_TRUE(static_cast<bool>(own)) << llvm::toString(own.takeError());

    SharedCores shared;
    uint32_t nodes = 1 + rng() % 2;
    shared.cores.assign(nodes, 0);
    for (int64_t d = 0; d < graph.devices; ++d) {
      shared.node.push_back(rng() % nodes);
      ++shared.cores[shared.node.back()];
    }
    // A core per device (or more): exactly the times of own cores.
    for (uint32_t &cores : shared.cores)
      cores = std::max(1u, cores + uint32_t(rng() % 2));
    config.sharedCores = shared;
    llvm::Expected<SimResult> enough = simulate(sg, links, config);
    ASSERT_TRUE(static_cast<bool>(enough))
        << llvm::toString(enough.takeError());
    EXPECT_EQ(enough->makespanMs, own->makespanMs) << "trial " << trial;
    EXPECT_EQ(enough->deviceBusyMs, own->deviceBusyMs) << "trial " << trial;

    // Fewer cores.
    std::vector<double> work(nodes, 0.0);
    std::vector<uint32_t> devices(nodes, 0);
    for (int64_t d = 0; d < graph.devices; ++d) {
      work[shared.node[size_t(d)]] += own->deviceBusyMs[size_t(d)];
      ++devices[shared.node[size_t(d)]];
    }
    double slowest = 1.0, workBound = 0.0;
    for (uint32_t n = 0; n < nodes; ++n) {
      uint32_t cores = 1 + uint32_t(rng() % std::max(1u, devices[n]));
      shared.cores[n] = cores;
      slowest = std::max(slowest, double(devices[n]) / cores);
      workBound = std::max(workBound, work[n] / cores);
    }
    config.sharedCores = shared;
    llvm::Expected<SimResult> fewer = simulate(sg, links, config);
    ASSERT_TRUE(static_cast<bool>(fewer)) << llvm::toString(fewer.takeError());
    double tolerance = 1e-9 * own->makespanMs;
    EXPECT_GE(fewer->makespanMs, own->makespanMs - tolerance)
        << "trial " << trial << " " << shared.str();
    EXPECT_GE(fewer->makespanMs, workBound - tolerance)
        << "trial " << trial << " " << shared.str();
    EXPECT_LE(fewer->makespanMs, slowest * own->makespanMs + tolerance)
        << "trial " << trial << " " << shared.str();
    // Each device is busy at least as long as its work.
    for (int64_t d = 0; d < graph.devices; ++d)
      EXPECT_GE(fewer->deviceBusyMs[size_t(d)],
                own->deviceBusyMs[size_t(d)] - tolerance)
          << "trial " << trial << " device " << d;
  }
}

} // namespace
