//===- SimulatorReplicasTest.cpp - Simulating replicated devices ----------===//
//
// The simulator on replicateSchedule's lists: a device replicated twice
// halves its work per step and adds the ring all-reduce at the update (by
// hand: 2 (r - 1) / r x bytes over the link); a device of two stages
// all-reduces the later stage's gradients while the earlier one's last
// backward runs; transfers and tasks go to the replica m mod r; random
// graphs, placements and layouts run to the end with one all-reduce per
// replica, stage and step, never shorter than stepLowerBound of the
// layout (by hand: equal to it on a chain whose first device is doubled);
// refusals. Updates that take time (SimulatorConfig::updateMs), by hand:
// after a replicated device's all-reduce, and holding an unreplicated
// device before its next step.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/Replicas.h"
#include "FTPipe/Schedule/Simulator.h"
#include "FTPipe/Schedule/StepBound.h"

#include "RandomStageGraph.h"

#include "gtest/gtest.h"

#include <map>
#include <random>
#include <string>

using namespace ftpipe::schedule;

namespace {

template <typename T> T unwrap(llvm::Expected<T> value) {
  EXPECT_TRUE(static_cast<bool>(value))
      << (value ? "" : llvm::toString(value.takeError()));
  return value ? std::move(*value) : T();
}

/// The simulator's config for `graph` under `kind`, M micro-batches and
/// `steps` steps, replicated by `layout`.
SimulatorConfig replicatedConfig(const StageGraph &graph, Kind kind, int64_t M,
                                 int64_t steps, const ReplicaLayout &layout) {
  SimulatorConfig config;
  config.kind = kind;
  config.microBatches = uint32_t(M);
  config.orders =
      replicateSchedule(unwrap(generate(graph, {kind, M, steps})), layout);
  config.replicas = layout;
  return config;
}

TEST(SimulatorReplicas, RingAllReduceByHand) {
  Links links = Links::uniform(4, /*GBps=*/2.0, /*latencyUs=*/10.0);
  // r = 4: 6 steps of 1e6 bytes at 2 GB/s (0.5 ms) plus 10 us each.
  EXPECT_NEAR(ringAllReduceMs(4000000, {0, 1, 2, 3}, links), 6 * 0.51, 1e-12);
  EXPECT_EQ(ringAllReduceMs(4000000, {2}, links), 0.0);
  // The slowest link of the ring decides.
  links.GBps[1 * 4 + 2] = 0.5;
  EXPECT_NEAR(ringAllReduceMs(4000000, {0, 1, 2, 3}, links), 6 * 2.01, 1e-12);
}

// One stage, forward 1 ms and backward 2 ms, GPipe with 4 micro-batches:
// 12 ms on one device; replicated twice, each replica runs 2 micro-batches
// (6 ms) and then the all-reduce of 2 MB over a 1 GB/s link: 2 (r - 1) / r
// x 2 MB = 2 MB, 2 ms.
// The same stage (F 1 ms, B 2 ms), 2 micro-batches and 2 steps on one
// device: 12 ms with free updates, 12 + 2 x 0.5 with 0.5 ms updates (the
// first one delays the second step), and the updates are not busy time.
// Replicated twice (one micro-batch per replica and step, 2 MB all-reduced
// at 1 GB/s: 2 ms), replica 0's update of 0.5 ms and replica 1's of 1.5 ms
// follow the all-reduce: each step 3 + 2 + 1.5 ms.
TEST(SimulatorReplicas, UpdatesTakeTheirGivenTime) {
  StageGraph graph = StageGraph::chain({0});
  TimedStageGraph sg = TimedStageGraph::withCosts(graph, {1.0}, {1.0}, {1.0},
                                                  /*edgeBytes=*/0);
  SimulatorConfig plain;
  plain.kind = Kind::GPipe;
  plain.microBatches = 2;
  plain.orders = unwrap(generate(graph, {Kind::GPipe, 2, 2}));
  Links one = Links::uniform(1, 1.0, 0.0);
  SimResult free = unwrap(simulate(sg, one, plain));
  EXPECT_NEAR(free.makespanMs, 12.0, 1e-9);
  EXPECT_NEAR(free.idleFraction, 0.0, 1e-12);
  plain.updateMs = {0.5};
  SimResult timed = unwrap(simulate(sg, one, plain));
  EXPECT_NEAR(timed.makespanMs, 13.0, 1e-9);
  EXPECT_NEAR(timed.deviceBusyMs[0], 12.0, 1e-9);
  EXPECT_NEAR(timed.idleFraction, 1.0 / 13.0, 1e-12);
  std::vector<std::string> updates;
  for (const SimEvent &event : timed.events) {
    if (event.stage == 0 && event.microBatch == 2 &&
        event.kind == SimEvent::Kind::Forward)
      EXPECT_NEAR(event.startMs, 6.5, 1e-9);
    if (event.kind == SimEvent::Kind::Update)
      updates.push_back(event.label() + " " + std::to_string(event.startMs));
  }
  EXPECT_EQ(updates, (std::vector<std::string>{"U0 6.000000", "U1 12.500000"}));

  SimulatorConfig config =
      replicatedConfig(graph, Kind::GPipe, 2, 2, ReplicaLayout{{2}});
  config.stageGradientBytes = {2000000};
  config.updateMs = {0.5, 1.5};
  SimResult two = unwrap(simulate(sg, Links::uniform(2, 1.0, 0.0), config));
  EXPECT_NEAR(two.makespanMs, 2 * 6.5, 1e-9);

  // One time per device, each finite and at least 0, and only with lists.
  config.updateMs = {0.5};
  EXPECT_FALSE(bool(simulate(sg, Links::uniform(2, 1.0, 0.0), config)));
  config.updateMs = {0.5, -1.0};
  EXPECT_FALSE(bool(simulate(sg, Links::uniform(2, 1.0, 0.0), config)));
  SimulatorConfig listless;
  listless.kind = Kind::GPipe;
  listless.updateMs = {0.5};
  llvm::Expected<SimResult> refused = simulate(sg, one, listless);
  ASSERT_FALSE(bool(refused));
  EXPECT_NE(llvm::toString(refused.takeError()).find("need the lists"),
            std::string::npos);
}

TEST(SimulatorReplicas, TwiceHalvesTheStepPlusTheAllReduce) {
  StageGraph graph = StageGraph::chain({0});
  TimedStageGraph sg = TimedStageGraph::withCosts(graph, {1.0}, {1.0}, {1.0},
                                                  /*edgeBytes=*/0);
  SimulatorConfig plain;
  plain.kind = Kind::GPipe;
  plain.microBatches = 4;
  plain.orders = unwrap(generate(graph, {Kind::GPipe, 4, 1}));
  SimResult one = unwrap(simulate(sg, Links::uniform(1, 1.0, 0.0), plain));
  EXPECT_NEAR(one.makespanMs, 12.0, 1e-9);

  SimulatorConfig config =
      replicatedConfig(graph, Kind::GPipe, 4, 1, ReplicaLayout{{2}});
  config.stageGradientBytes = {2000000};
  SimResult two = unwrap(simulate(sg, Links::uniform(2, 1.0, 0.0), config));
  EXPECT_NEAR(two.makespanMs, 8.0, 1e-9);
  int allReduces = 0;
  for (const SimEvent &event : two.events)
    if (event.kind == SimEvent::Kind::AllReduce) {
      ++allReduces;
      EXPECT_NEAR(event.startMs, 6.0, 1e-9);
      EXPECT_NEAR(event.endMs, 8.0, 1e-9);
      EXPECT_EQ(event.label(), "AR s0 U0");
    }
  EXPECT_EQ(allReduces, 2);
  // Without gradient bytes the all-reduce only synchronizes.
  config.stageGradientBytes.clear();
  EXPECT_NEAR(
      unwrap(simulate(sg, Links::uniform(2, 1.0, 0.0), config)).makespanMs, 6.0,
      1e-9);
}

// Two stages on one device, replicated twice, GPipe with 2 micro-batches:
// each replica runs F s0 (0-1), F s1 (1-2), B s1 (2-4), B s0 (4-6). Stage
// 1's all-reduce (2 MB of gradients: 2 ms on 1 GB/s) starts when its
// backward ends, at 4, and runs during stage 0's; stage 0's follows, 6-8:
// the update ends at 8, not at 6 + 2 + 2 as one all-reduce at the update.
TEST(SimulatorReplicas, StagesAllReduceWhileTheBackwardGoesOn) {
  StageGraph graph = StageGraph::chain({0, 0});
  TimedStageGraph sg =
      TimedStageGraph::withCosts(graph, {1.0, 1.0}, {1.0, 1.0}, {1.0, 1.0},
                                 /*edgeBytes=*/0);
  SimulatorConfig config =
      replicatedConfig(graph, Kind::GPipe, 2, 1, ReplicaLayout{{2}});
  config.stageGradientBytes = {2000000, 2000000};
  Links links = Links::uniform(2, 1.0, 0.0);
  SimResult result = unwrap(simulate(sg, links, config));
  EXPECT_NEAR(result.makespanMs, 8.0, 1e-9);
  std::map<std::string, std::pair<double, double>> reduced;
  for (const SimEvent &event : result.events)
    if (event.kind == SimEvent::Kind::AllReduce)
      reduced[event.label()] = {event.startMs, event.endMs};
  ASSERT_EQ(reduced.size(), 2u);
  EXPECT_NEAR(reduced["AR s1 U0"].first, 4.0, 1e-9);
  EXPECT_NEAR(reduced["AR s1 U0"].second, 6.0, 1e-9);
  EXPECT_NEAR(reduced["AR s0 U0"].first, 6.0, 1e-9);
  EXPECT_NEAR(reduced["AR s0 U0"].second, 8.0, 1e-9);
  // The objective's closed form: stage 1's backward, then stage 0's, each
  // 2 ms; 2 ms of stage 0's all-reduce are left after the last backward.
  EXPECT_NEAR(exposedAllReduceMs({2.0, 2.0}, {2000000, 2000000}, {0, 1}, links),
              2.0, 1e-12);
  // One stage's all-reduce is all exposed; a long one ahead delays the next.
  EXPECT_NEAR(exposedAllReduceMs({2.0}, {2000000}, {0, 1}, links), 2.0, 1e-12);
  EXPECT_NEAR(exposedAllReduceMs({2.0, 1.0}, {6000000, 0}, {0, 1}, links), 5.0,
              1e-12);
  // All the gradients in the stage whose backward ends first: hidden but
  // for what outlasts stage 0's backward.
  EXPECT_NEAR(exposedAllReduceMs({2.0, 2.0}, {2000000, 0}, {0, 1}, links), 0.0,
              1e-12);
}

// 2 stages x 2 replicas: micro-batch m's tasks run on replica m mod 2 of
// each stage's device, and its activations and gradients travel between
// those two processes.
TEST(SimulatorReplicas, RoutesMicroBatchesRoundRobin) {
  StageGraph graph = StageGraph::chain({0, 1});
  TimedStageGraph sg = TimedStageGraph::withCosts(
      graph, {1.0, 1.0}, {1.0, 1.0}, {0.5, 0.5}, /*edgeBytes=*/1000000);
  ReplicaLayout layout{{2, 2}};
  SimulatorConfig config =
      replicatedConfig(graph, Kind::OneFOneB, 8, 2, layout);
  SimResult result = unwrap(simulate(sg, Links::uniform(4, 1.0, 0.0), config));
  int transfers = 0, tasks = 0;
  for (const SimEvent &event : result.events) {
    int64_t m = event.microBatch;
    if (event.kind == SimEvent::Kind::Transfer) {
      ++transfers;
      int64_t from = layout.process(0, m % 2), to = layout.process(1, m % 2);
      EXPECT_EQ(event.device, event.backward ? to : from) << event.label();
      EXPECT_EQ(event.toDevice, event.backward ? from : to) << event.label();
    } else if (event.kind != SimEvent::Kind::AllReduce) {
      ++tasks;
      EXPECT_EQ(event.device, layout.process(event.stage, m % 2))
          << event.label();
    }
  }
  // 16 micro-batches: an activation and a gradient each; a forward and a
  // backward per stage each.
  EXPECT_EQ(transfers, 32);
  EXPECT_EQ(tasks, 64);
}

// Random stage graphs, placements, schedules, recomputation and layouts:
// the replicated lists simulate to the end, with one all-reduce per replica
// of a replicated device, stage of it and step, and no synchronous run is
// shorter than stepLowerBound of its layout.
TEST(SimulatorReplicas, RandomGraphsRunToTheEnd) {
  std::mt19937 rng(2828);
  for (int trial = 0; trial < 200; ++trial) {
    StageGraph graph = test::randomGraph(rng);
    Kind kind = static_cast<Kind>(rng() % 3);
    int64_t M = 1 + rng() % 6, steps = 1 + rng() % 3;
    ReplicaLayout layout;
    for (int64_t d = 0; d < graph.devices; ++d)
      layout.replicas.push_back(1 + rng() % 3);
    std::vector<double> fwd, input, weight;
    for (int64_t s = 0; s < graph.stages(); ++s) {
      fwd.push_back(1.0 + rng() % 3);
      input.push_back(1.0 + rng() % 3);
      weight.push_back(1.0 + rng() % 3);
    }
    TimedStageGraph sg =
        TimedStageGraph::withCosts(graph, fwd, input, weight, 1000);
    for (int64_t s = 0; s < graph.stages(); ++s)
      sg.recomputeMs[size_t(s)] = rng() % 2 ? fwd[size_t(s)] : 0.0;
    SimulatorConfig config = replicatedConfig(graph, kind, M, steps, layout);
    config.stageGradientBytes.assign(size_t(graph.stages()), 4000);
    llvm::Expected<SimResult> result = simulate(
        sg, Links::uniform(size_t(layout.processes()), 1.0, 1.0), config);
    ASSERT_TRUE(static_cast<bool>(result))
        << "trial " << trial << ": " << llvm::toString(result.takeError());
    // No synchronous run is shorter than one step's bound of its layout,
    // which takes messages and all-reduces as free.
    std::vector<bool> whole(size_t(graph.stages()), false);
    if (kind != Kind::Async)
      EXPECT_LE(stepLowerBound(sg, whole, uint32_t(M), nullptr, layout.replicas)
                    .msPerMiniBatch,
                result->makespanMs * (1 + 1e-12))
          << "trial " << trial << " " << nameOf(kind).str() << " "
          << layout.str();
    int64_t expected = 0;
    for (int64_t s = 0; s < graph.stages(); ++s) {
      int64_t r = layout.replicas[size_t(graph.device[size_t(s)])];
      expected += r > 1 ? r * steps : 0;
    }
    int64_t allReduces = 0;
    for (const SimEvent &event : result->events)
      allReduces += event.kind == SimEvent::Kind::AllReduce;
    EXPECT_EQ(allReduces, expected) << "trial " << trial;
  }
}

// Stage 0 (F 2 ms, B 4 ms) on a device run twice, stage 1 (F 1 ms, B 2
// ms) once, M = 4, 1F1B made for the layout: each replica of the first
// device starts its two forwards at once (0-4 ms); the second device runs
// its four micro-batches from 2 ms (the first forward) to 14 ms without a
// gap, and the last backward of stage 0 follows it: 18 ms. The bound
// counts the second device's 12 ms with the 2 ms before them and the 4 ms
// after them. Without replicas the first device alone works 24 ms.
TEST(SimulatorReplicas, StepBoundOfALayoutByHand) {
  StageGraph graph = StageGraph::chain({0, 1});
  TimedStageGraph sg =
      TimedStageGraph::withCosts(graph, {2, 1}, {4, 2}, {0, 0}, 0);
  ReplicaLayout layout{{2, 1}};
  std::vector<bool> whole(2, false);
  StepLowerBound bound = stepLowerBound(sg, whole, 4, nullptr, layout.replicas);
  EXPECT_DOUBLE_EQ(bound.msPerMiniBatch, 18.0);
  EXPECT_EQ(bound.device, 1u);
  EXPECT_DOUBLE_EQ(bound.busyMs, 12.0);
  EXPECT_DOUBLE_EQ(stepLowerBound(sg, whole, 4).msPerMiniBatch, 24.0);
  SimulatorConfig config;
  config.kind = Kind::OneFOneB;
  config.microBatches = 4;
  config.orders = replicateSchedule(
      unwrap(generate(graph, {Kind::OneFOneB, 4, 1, {}, layout.replicas})),
      layout);
  config.replicas = layout;
  SimResult result = unwrap(simulate(sg, Links::uniform(3, 1e9, 0.0), config));
  EXPECT_DOUBLE_EQ(result.makespanMs, 18.0);
}

TEST(SimulatorReplicas, Refusals) {
  StageGraph graph = StageGraph::chain({0, 1});
  TimedStageGraph sg =
      TimedStageGraph::withCosts(graph, {1.0, 1.0}, {1.0, 1.0}, {0.0, 0.0}, 0);
  SimulatorConfig noLists;
  noLists.replicas = ReplicaLayout{{2, 1}};
  EXPECT_EQ(llvm::toString(
                simulate(sg, Links::uniform(3, 1.0, 0.0), noLists).takeError()),
            "simulator: replicas need the lists (orders) of replicateSchedule");
  SimulatorConfig config =
      replicatedConfig(graph, Kind::GPipe, 2, 1, ReplicaLayout{{2, 1}});
  EXPECT_EQ(
      llvm::toString(
          simulate(sg, Links::uniform(2, 1.0, 0.0), config).takeError()),
      "simulator: the replicas (2,1) make 3 processes, the hardware has 2 "
      "devices");
  config.stageGradientBytes = {1, 2, 3};
  EXPECT_EQ(llvm::toString(
                simulate(sg, Links::uniform(3, 1.0, 0.0), config).takeError()),
            "simulator: gradient bytes of 3 stages, the stage graph has 2");
}

} // namespace
