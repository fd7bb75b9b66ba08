//===- SimulatorTest.cpp - Pipeline simulator closed forms ------*- C++ -*-===//
//
// Holds the discrete-event simulator to closed forms: GPipe and 1F1B with P
// equal stages and M micro-batches take (M + P - 1) x stage time (bubble
// (P - 1) / (M + P - 1)); the async steady state equals the busiest device's
// load, also with several stages per device; transfers slower than compute
// show up as exactly the exposed communication of the CCO rule; devices of
// a node with node_cores share its cores. Plus the timeline's invariants on
// random plans.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Simulator.h"

#include "TestUtil.h"

#include <map>

using namespace ftpipe::partition;
using namespace ftpipe::partition::test;

namespace {

/// One node per stage, stage i on device i.
Plan onePerDevice(size_t n) {
  Plan plan;
  for (size_t i = 0; i < n; ++i) {
    plan.nodeStage.push_back(StageId(i));
    plan.stageDevice.push_back(DeviceId(i));
  }
  return plan;
}

SimResult run(const Graph &g, const Hardware &hw, const Plan &plan,
              Kind schedule, uint32_t m) {
  ObjectiveConfig config;
  config.schedule = schedule;
  config.microBatches = m;
  return unwrap(simulatePlan(g, hw, plan, config));
}

class SyncClosedForm
    : public ::testing::TestWithParam<std::tuple<Kind, int, int>> {};

TEST_P(SyncClosedForm, EqualStagesTakeMPlusPMinusOneStageTimes) {
  auto [schedule, p, m] = GetParam();
  const double f = 1.5, b = 2.5;
  Graph g = chain(p, f, b, /*bytes=*/0);
  Hardware hw = uniformHardware(p, 1.0, 0.0);
  SimResult r = run(g, hw, onePerDevice(p), schedule, m);
  EXPECT_NEAR(r.makespanMs, (m + p - 1) * (f + b), 1e-9);
  EXPECT_NEAR(r.msPerMiniBatch, r.makespanMs, 0.0);
  EXPECT_NEAR(r.idleFraction, double(p - 1) / double(m + p - 1), 1e-12);
  for (int d = 0; d < p; ++d)
    EXPECT_NEAR(r.deviceBusyMs[d], m * (f + b), 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Schedules, SyncClosedForm,
                         ::testing::Combine(::testing::Values(Kind::GPipe,
                                                              Kind::OneFOneB),
                                            ::testing::Values(1, 2, 4, 8),
                                            ::testing::Values(1, 3, 8, 16)));

TEST(Simulator, GPipeRunsAllForwardsFirst) {
  Graph g = chain(3, 1, 2, 0);
  Hardware hw = uniformHardware(3);
  SimResult r = run(g, hw, onePerDevice(3), Kind::GPipe, 4);
  // On every device the first backward starts after the last forward ends.
  for (DeviceId d = 0; d < 3; ++d) {
    double lastF = 0, firstB = 1e30;
    for (const SimEvent &e : r.events)
      if (!e.onLink() && e.device == d) {
        if (e.kind == SimEvent::Kind::Forward)
          lastF = std::max(lastF, e.endMs);
        else
          firstB = std::min(firstB, e.startMs);
      }
    EXPECT_LE(lastF, firstB);
  }
}

TEST(Simulator, OneFOneBKeepsFewerMicroBatchesInFlight) {
  Graph g = chain(4, 1, 2, 0);
  Hardware hw = uniformHardware(4);
  SimResult r = run(g, hw, onePerDevice(4), Kind::OneFOneB, 8);
  // Stage 0 runs P = 4 forwards, then its first backward.
  std::vector<const SimEvent *> stage0;
  for (const SimEvent &e : r.events)
    if (!e.onLink() && e.stage == 0)
      stage0.push_back(&e);
  ASSERT_EQ(stage0.size(), 16u);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(stage0[i]->kind, SimEvent::Kind::Forward);
  EXPECT_EQ(stage0[4]->kind, SimEvent::Kind::Backward);
  EXPECT_EQ(stage0[5]->kind, SimEvent::Kind::Forward);
}

TEST(Simulator, AsyncSteadyStateIsBusiestDeviceLoad) {
  // Unequal stages, one per device: the period is the slowest stage.
  GraphBuilder b;
  double f[] = {1, 3, 2, 0.5}, bw[] = {2, 3, 1, 1};
  for (int i = 0; i < 4; ++i)
    b.addNode("s", "t", {f[i], bw[i], 0, 0});
  for (int i = 0; i < 3; ++i)
    b.addEdge(i, i + 1, 0);
  Graph g = unwrap(b.build());
  Hardware hw = uniformHardware(4);
  SimResult r = run(g, hw, onePerDevice(4), Kind::Async, 8);
  EXPECT_NEAR(r.msPerMicroBatch, 6.0, 1e-9);
  EXPECT_NEAR(r.msPerMiniBatch, 48.0, 1e-9);
  PlanMetrics m = unwrap(evaluatePlan(g, hw, onePerDevice(4), {}));
  EXPECT_NEAR(r.msPerMicroBatch, m.asyncMsPerMicroBatch, 1e-9);
}

TEST(Simulator, AsyncWithSeveralStagesPerDevice) {
  // Four stages, non-adjacent pairs share a device: {0, 2} on device 0 and
  // {1, 3} on device 1. Loads: 2 + 4 = 6 and 3 + 5 = 8.
  GraphBuilder b;
  double c[] = {2, 3, 4, 5};
  for (int i = 0; i < 4; ++i)
    b.addNode("s", "t", {c[i] / 2, c[i] / 2, 0, 0});
  for (int i = 0; i < 3; ++i)
    b.addEdge(i, i + 1, 0);
  Graph g = unwrap(b.build());
  Hardware hw = uniformHardware(2);
  Plan plan{{0, 1, 2, 3}, {0, 1, 0, 1}};
  SimResult r = run(g, hw, plan, Kind::Async, 8);
  PlanMetrics m = unwrap(evaluatePlan(g, hw, plan, {}));
  EXPECT_NEAR(m.asyncMsPerMicroBatch, 8.0, 1e-12);
  EXPECT_NEAR(r.msPerMicroBatch, 8.0, 1e-9);
}

TEST(Simulator, SlowTransfersAreExposedCommunicationExactly) {
  // Two stages, f = b = 1 each (C = 2); the activation (no gradient) takes
  // t ms on the link. CCO: load = C + max(0, t - C).
  for (double t : {0.5, 2.0, 3.0, 7.25}) {
    Graph g = chain(2, 1, 1, uint64_t(t * 1e6), /*grad=*/false);
    Hardware hw = uniformHardware(2, /*gbps=*/1.0);
    PlanMetrics m = unwrap(evaluatePlan(g, hw, onePerDevice(2), {}));
    EXPECT_NEAR(m.stages[0].exposedCommMs, std::max(0.0, t - 2.0), 1e-12);
    SimResult r = run(g, hw, onePerDevice(2), Kind::Async, 8);
    EXPECT_NEAR(r.msPerMicroBatch, m.asyncMsPerMicroBatch, 1e-9) << t;
    EXPECT_NEAR(r.msPerMicroBatch - 2.0, std::max(0.0, t - 2.0), 1e-9) << t;
  }
}

TEST(Simulator, GPipeWithSlowForwardLink) {
  // Stage 0 sends every activation over a link that needs t > f per
  // micro-batch; by hand: the last forward on stage 1 ends at
  // f + M t + f, its backwards follow back to back, and so do stage 0's
  // (no gradient crosses): makespan = 2 f + M t + M b.
  const double f = 1, b = 1, t = 3;
  const int m = 5;
  Graph g = chain(2, f, b, uint64_t(t * 1e6), /*grad=*/false);
  Hardware hw = uniformHardware(2, 1.0);
  SimResult r = run(g, hw, onePerDevice(2), Kind::GPipe, m);
  EXPECT_NEAR(r.makespanMs, 2 * f + m * t + m * b, 1e-9);
  double linkBusy = 0;
  for (const SimEvent &e : r.events)
    if (e.onLink())
      linkBusy += e.endMs - e.startMs;
  EXPECT_NEAR(linkBusy, m * t, 1e-9);
}

TEST(Simulator, ChromeTrace) {
  Graph g = chain(2, 1, 1, 1'000'000);
  Hardware hw = uniformHardware(2, 1.0);
  SimResult r = run(g, hw, onePerDevice(2), Kind::GPipe, 2);
  llvm::json::Value trace =
      ftpipe::schedule::simulationToChromeTrace(r, deviceNames(hw));
  const llvm::json::Array *events =
      trace.getAsObject()->getArray("traceEvents");
  ASSERT_NE(events, nullptr);
  // 2 device names + 2 link names (both directions) + 8 tasks + 4 transfers.
  EXPECT_EQ(events->size(), 2u + 2u + 8u + 4u);
  size_t complete = 0;
  for (const llvm::json::Value &e : *events) {
    const llvm::json::Object *o = e.getAsObject();
    if (o->getString("ph") == "X") {
      ++complete;
      EXPECT_GE(*o->getNumber("dur"), 0.0);
    }
  }
  EXPECT_EQ(complete, r.events.size());
  // First forward: 0..1 ms = 0..1000 us on device 0.
  const llvm::json::Object *first = (*events)[4].getAsObject();
  EXPECT_EQ(first->getString("name"), "F s0 mb0");
  EXPECT_EQ(first->getNumber("ts"), 0.0);
  EXPECT_EQ(first->getNumber("dur"), 1000.0);
}

TEST(Simulator, RecomputationLengthensBackward) {
  Graph g = chain(2, 1, 2, 0);
  Hardware hw = uniformHardware(2);
  ObjectiveConfig config;
  config.schedule = Kind::GPipe;
  config.microBatches = 4;
  config.recompute = true;
  SimResult r = unwrap(simulatePlan(g, hw, onePerDevice(2), config));
  EXPECT_NEAR(r.makespanMs, (4 + 1) * (1 + 2 + 1), 1e-9);
}

// The planner's zb-h1 runs the lists within each device's 1F1B peak
// (ZeroBubbleLists.h): two stages with F = I = W = 1 ms, M = 4. Where no W
// buffer is kept, each W fills an idle slot: (M + 1) x 3 - 2 = 13 ms, the ZB
// paper's bubble; where a W buffer does not fit on top of 1F1B's peak, both
// stages run whole: 1F1B's 15 ms.
TEST(Simulator, ZeroBubbleH1KeepsWithinOneFOneBsMemory) {
  ftpipe::schedule::StageGraph chain =
      ftpipe::schedule::StageGraph::chain({0, 1});
  StageGraph sg;
  static_cast<ftpipe::schedule::TimedStageGraph &>(sg) =
      ftpipe::schedule::TimedStageGraph::withCosts(chain, {1, 1}, {1, 1},
                                                   {1, 1}, 0);
  sg.keptBytesPerMicroBatch = {100, 100};
  sg.recomputePeakBytes = {10, 10};
  Hardware hw = uniformHardware(2, 1e12, 0.0);
  SimulatorConfig config;
  config.kind = Kind::ZeroBubbleH1;
  config.microBatches = 4;
  sg.weightBufferBytesPerMicroBatch = {0, 0};
  EXPECT_NEAR(unwrap(simulate(sg, hw, config)).makespanMs, 13.0, 1e-9);
  sg.weightBufferBytesPerMicroBatch = {150, 150};
  EXPECT_NEAR(unwrap(simulate(sg, hw, config)).makespanMs, 15.0, 1e-9);
}

TEST(Simulator, RejectsBadConfig) {
  StageGraph sg;
  Hardware hw = uniformHardware(1);
  SimulatorConfig config;
  config.microBatches = 0;
  llvm::Expected<SimResult> r = simulate(sg, hw, config);
  EXPECT_FALSE(bool(r));
  llvm::consumeError(r.takeError());
}

/// Checks the timeline: one task at a time per device and per link, every
/// task once, dependencies respected.
void checkTimeline(const Graph &g, const Hardware &hw, const Plan &plan,
                   const SimResult &r, Kind schedule, uint32_t m) {
  ObjectiveConfig config;
  config.schedule = schedule;
  config.microBatches = m;
  StageGraph sg = unwrap(buildStageGraph(g, hw, plan, config));
  std::map<std::pair<uint32_t, uint32_t>,
           std::vector<std::pair<double, double>>>
      tracks;
  std::map<std::tuple<StageId, uint32_t, bool>, std::pair<double, double>>
      tasks;
  for (const SimEvent &e : r.events) {
    EXPECT_LE(e.startMs, e.endMs);
    tracks[{e.device, e.onLink() ? e.toDevice + 1000 : e.device}].push_back(
        {e.startMs, e.endMs});
    if (!e.onLink()) {
      bool inserted =
          tasks
              .emplace(std::make_tuple(e.stage, e.microBatch,
                                       e.kind == SimEvent::Kind::Backward),
                       std::make_pair(e.startMs, e.endMs))
              .second;
      EXPECT_TRUE(inserted) << e.label();
    }
  }
  EXPECT_EQ(tasks.size(), sg.numStages() * r.microBatches * 2);
  for (auto &[track, intervals] : tracks) {
    std::sort(intervals.begin(), intervals.end());
    for (size_t i = 1; i < intervals.size(); ++i)
      EXPECT_LE(intervals[i - 1].second, intervals[i].first + 1e-9);
  }
  auto task = [&](StageId s, uint32_t mb, bool bwd) {
    return tasks[std::make_tuple(s, mb, bwd)];
  };
  for (const StageEdge &e : sg.edges)
    for (uint32_t mb = 0; mb < r.microBatches; ++mb) {
      EXPECT_LE(task(e.src, mb, false).second,
                task(e.dst, mb, false).first + 1e-9);
      if (e.bwdTensors > 0) {
        EXPECT_LE(task(e.dst, mb, true).second,
                  task(e.src, mb, true).first + 1e-9);
      }
    }
  for (StageId s = 0; s < sg.numStages(); ++s)
    for (uint32_t mb = 0; mb < r.microBatches; ++mb)
      EXPECT_LE(task(s, mb, false).second, task(s, mb, true).first);
}

class SimulatorProperties
    : public ::testing::TestWithParam<std::tuple<GraphFamily, int>> {};

TEST_P(SimulatorProperties, TimelineIsConsistent) {
  auto [family, seed] = GetParam();
  RandomGraphOptions o;
  o.family = family;
  o.seed = uint64_t(seed);
  o.numNodes = 60;
  Graph g = unwrap(generateRandomGraph(o));
  Hardware hw = unwrap(getHardwarePreset("rtx2080ti-pcie-x8"));
  for (Kind schedule : {Kind::GPipe, Kind::OneFOneB, Kind::Async}) {
    Plan plan = randomContiguousPlan(g, 2 + seed % 10, 8, uint64_t(seed));
    ObjectiveConfig config;
    config.schedule = schedule;
    config.microBatches = 1 + seed % 6;
    SimResult r = unwrap(simulatePlan(g, hw, plan, config));
    checkTimeline(g, hw, plan, r, schedule, config.microBatches);
    PlanMetrics m = unwrap(evaluatePlan(g, hw, plan, config));
    // No schedule beats the busiest device's compute per micro-batch.
    double maxCompute = 0;
    for (const DeviceMetrics &d : m.devices)
      maxCompute = std::max(maxCompute, d.computeMs);
    EXPECT_GE(r.msPerMicroBatch, maxCompute * (1 - 1e-9));
    if (schedule == Kind::Async) {
      EXPECT_GT(r.asyncCycle, 0u); // a repeating steady state was found
    }
    // Same input, same timeline.
    SimResult again = unwrap(simulatePlan(g, hw, plan, config));
    EXPECT_EQ(again.makespanMs, r.makespanMs);
    EXPECT_EQ(again.events.size(), r.events.size());
  }
}

// Four equal stages (F 1, B 2 ms) on four devices of one node: GPipe over
// 4 micro-batches takes (4 + 3) x 3 = 21 ms with a core each; with
// node_cores = [2] the devices share 2 cores, so the 48 ms of work take at
// least 24 ms, and at most twice the 21.
TEST(Simulator, NodeCoresShareTheNodesCores) {
  Graph g = chain(4, 1.0, 2.0, /*bytes=*/0);
  Hardware own = uniformHardware(4, 1.0, 0.0);
  EXPECT_TRUE(sharedCoresOf(own).empty());
  EXPECT_NEAR(run(g, own, onePerDevice(4), Kind::GPipe, 4).makespanMs, 21.0,
              1e-9);
  HardwareSpec spec = own.spec();
  spec.nodeCores = {2};
  Hardware shared = unwrap(Hardware::create(spec));
  ftpipe::schedule::SharedCores cores = sharedCoresOf(shared);
  EXPECT_EQ(cores.node, (std::vector<uint32_t>{0, 0, 0, 0}));
  EXPECT_EQ(cores.cores, (std::vector<uint32_t>{2}));
  SimResult r = run(g, shared, onePerDevice(4), Kind::GPipe, 4);
  EXPECT_GE(r.makespanMs, 24.0 - 1e-9);
  EXPECT_LE(r.makespanMs, 42.0 + 1e-9);
  // As many cores as devices: the times of a core each.
  spec.nodeCores = {4};
  EXPECT_NEAR(
      run(g, unwrap(Hardware::create(spec)), onePerDevice(4), Kind::GPipe, 4)
          .makespanMs,
      21.0, 1e-9);
}

TEST(Simulator, ChainsWithFreeLinksRunAtTheObjective) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    RandomGraphOptions o;
    o.family = GraphFamily::Chain;
    o.seed = seed;
    o.numNodes = 40;
    Graph g = unwrap(generateRandomGraph(o));
    Hardware hw = uniformHardware(4, 1e12, 0.0);
    Plan plan = randomContiguousPlan(g, 4, 4, seed);
    for (StageId s = 0; s < 4; ++s)
      plan.stageDevice[s] = s;
    PlanMetrics m = unwrap(evaluatePlan(g, hw, plan, {}));
    SimResult r = unwrap(simulatePlan(g, hw, plan, {}, /*recordEvents=*/false));
    EXPECT_NEAR(r.msPerMicroBatch, m.asyncMsPerMicroBatch,
                1e-6 * m.asyncMsPerMicroBatch);
    EXPECT_TRUE(r.events.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(
    RandomDAGs, SimulatorProperties,
    ::testing::Combine(::testing::Values(GraphFamily::Chain,
                                         GraphFamily::Layered,
                                         GraphFamily::Wide),
                       ::testing::Range(1, 7)));

} // namespace

TEST(Simulator, PlanFiguresCompareUpToRounding) {
  PlanFigures base{100.0, 110.0, 1000, true};
  PlanFigures same = base;
  same.objectiveMs += 1e-12; // rounding
  EXPECT_TRUE(same.noSlowerThan(base));
  EXPECT_FALSE(same.fasterThan(base));
  PlanFigures slowerSim = base;
  slowerSim.simulatedMs = 110.5;
  EXPECT_FALSE(slowerSim.noSlowerThan(base));
  PlanFigures faster = base;
  faster.objectiveMs = 99.0;
  EXPECT_TRUE(faster.noSlowerThan(base));
  EXPECT_TRUE(faster.fasterThan(base));
  // Not fitting where the base fits is never "no slower".
  PlanFigures overBudget = faster;
  overBudget.memoryFits = false;
  EXPECT_FALSE(overBudget.noSlowerThan(base));
  PlanFigures unfitBase = base;
  unfitBase.memoryFits = false;
  EXPECT_TRUE(overBudget.noSlowerThan(unfitBase));
}

TEST(Simulator, MeasuresOnlyPlansWhoseObjectiveHolds) {
  // An even split of an equal chain against the same chain all on one
  // device, which has twice the objective: the one-device plan is not
  // simulated against the split's figures, the split is, and gets exactly
  // measurePlan's figures.
  Graph g = chain(8, 1, 2, 1000);
  Hardware hw = uniformHardware(2);
  ObjectiveConfig cfg;
  Plan split, alone;
  split.nodeStage = {0, 0, 0, 0, 1, 1, 1, 1};
  split.stageDevice = {0, 1};
  alone.nodeStage.assign(8, 0);
  alone.stageDevice = {0};
  PlanFigures base = unwrap(measurePlan(g, hw, split, cfg));
  std::optional<PlanFigures> none =
      unwrap(measurePlanIfObjectiveHolds(g, hw, alone, cfg, base));
  EXPECT_FALSE(none.has_value());
  std::optional<PlanFigures> again =
      unwrap(measurePlanIfObjectiveHolds(g, hw, split, cfg, base));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->objectiveMs, base.objectiveMs);
  EXPECT_EQ(again->simulatedMs, base.simulatedMs);
  EXPECT_EQ(again->busiestSentBytes, base.busiestSentBytes);
  // The one-device plan against its own figures is simulated.
  PlanFigures aloneBase = unwrap(measurePlan(g, hw, alone, cfg));
  EXPECT_GT(aloneBase.objectiveMs, base.objectiveMs);
  EXPECT_TRUE(unwrap(measurePlanIfObjectiveHolds(g, hw, alone, cfg, aloneBase))
                  .has_value());
}

TEST(Simulator, SynchronousStepRunsTheRuntimesLists) {
  // A chain of 8 ops (F = 1, B = 2 of which W = 1 ms), two per stage on 4
  // devices (F = I = W = 2 ms a stage), free links, M = 8: 1F1B's lists
  // take (M + P - 1) x 6 = 66 ms; zb-auto's within memory (its candidates
  // include ZB-H1's lists) at most ZB-H1's M (F + I + W) + (p - 1)
  // (F + I - W) = 48 + 3 x 2 = 54 ms; async has no step.
  GraphBuilder b;
  for (int i = 0; i < 8; ++i)
    b.addNode("chain/op" + std::to_string(i), "test.op", {1, 2, 0, 1000, 1});
  for (int i = 0; i + 1 < 8; ++i)
    b.addValue(NodeId(i), 1000, {NodeId(i + 1)}, true);
  Graph g = unwrap(b.build());
  Hardware hw = uniformHardware(4, 1e12, 0.0);
  Plan plan;
  plan.nodeStage = {0, 0, 1, 1, 2, 2, 3, 3};
  plan.stageDevice = {0, 1, 2, 3};
  ObjectiveConfig cfg;
  cfg.microBatches = 8;
  SimResult oneFOneB =
      unwrap(simulateSynchronousStep(g, hw, plan, cfg, Kind::OneFOneB));
  EXPECT_NEAR(oneFOneB.msPerMiniBatch, 66.0, 1e-9);
  SimResult zbAuto =
      unwrap(simulateSynchronousStep(g, hw, plan, cfg, Kind::ZeroBubbleAuto));
  EXPECT_LE(zbAuto.msPerMiniBatch, 54.0 + 1e-9);
  EXPECT_NE(
      message(
          simulateSynchronousStep(g, hw, plan, cfg, Kind::Async).takeError()),
      "");
}
