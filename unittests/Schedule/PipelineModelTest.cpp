//===- PipelineModelTest.cpp - Simulator, memory and setup of lib/Schedule ===//
//
// lib/Schedule's simulator on stage graphs built by hand (no planner), the
// memory of a device under several setups, and the training setup's and
// memory inputs' JSON (the manifest's `training` and `device_memory`).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/Memory.h"
#include "FTPipe/Schedule/Simulator.h"
#include "FTPipe/Schedule/TrainingSetup.h"

#include "gtest/gtest.h"

using namespace ftpipe::schedule;

namespace {

/// A chain of `p` stages, one per device, each `f` forward and `b`
/// backward, sending `bytes` in one tensor each way.
TimedStageGraph chain(uint32_t p, double f, double b, uint64_t bytes) {
  TimedStageGraph graph;
  for (uint32_t s = 0; s < p; ++s) {
    graph.device.push_back(s);
    graph.fwdMs.push_back(f);
    graph.bwdMs.push_back(b);
    graph.recomputeMs.push_back(0);
    graph.topoOrder.push_back(s);
    graph.height.push_back(p - 1 - s);
    if (s + 1 < p) {
      StageEdge edge;
      edge.src = s;
      edge.dst = s + 1;
      edge.fwdBytes = edge.bwdBytes = bytes;
      edge.fwdTensors = edge.bwdTensors = 1;
      graph.edges.push_back(edge);
    }
  }
  return graph;
}

TEST(PipelineModel, SynchronousChainsTakeMPlusPMinusOneStageTimes) {
  for (Kind kind : {Kind::GPipe, Kind::OneFOneB})
    for (uint32_t p : {1u, 3u})
      for (uint32_t m : {1u, 4u}) {
        SimulatorConfig config;
        config.kind = kind;
        config.microBatches = m;
        llvm::Expected<SimResult> r = simulate(
            chain(p, 1.5, 2.5, 0), Links::uniform(p, 1.0, 0.0), config);
        ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
        EXPECT_NEAR(r->makespanMs, (m + p - 1) * 4.0, 1e-9)
            << nameOf(kind).str() << " p " << p << " m " << m;
      }
}

TEST(PipelineModel, TransfersTakeBytesOverBandwidthPlusLatency) {
  // Two stages, 1 MB each way over 1 GB/s (1 ms) plus 0.5 ms latency: one
  // micro-batch under GPipe is F0, send, F1, B1, send back, B0.
  SimulatorConfig config;
  config.kind = Kind::GPipe;
  config.microBatches = 1;
  llvm::Expected<SimResult> r = simulate(chain(2, 1, 1, 1'000'000),
                                         Links::uniform(2, 1.0, 500.0), config);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_NEAR(r->makespanMs, 4 * 1.0 + 2 * 1.5, 1e-9);
  EXPECT_DOUBLE_EQ(linkTransferMs(1'000'000, 1, 1.0, 500.0), 1.5);
}

TEST(PipelineModel, GivenListsAreReplayed) {
  llvm::Expected<Schedule> lists =
      generate(StageGraph::chain({0, 1}), {Kind::OneFOneB, 3, 1});
  ASSERT_TRUE(bool(lists)) << llvm::toString(lists.takeError());
  SimulatorConfig config;
  config.kind = Kind::OneFOneB;
  config.orders = *lists;
  llvm::Expected<SimResult> r =
      simulate(chain(2, 1, 2, 0), Links::uniform(2, 1.0, 0.0), config);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->microBatches, 3u);
  EXPECT_NEAR(r->makespanMs, (3 + 2 - 1) * 3.0, 1e-9);
}

TEST(PipelineModel, RefusesStagesOffTheLinks) {
  SimulatorConfig config;
  llvm::Expected<SimResult> r =
      simulate(chain(3, 1, 1, 0), Links::uniform(2, 1.0, 0.0), config);
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "simulator: stage 2 is on device 2, but the hardware has 2");
}

/// Two stages on one device: heights 2 and 0, keeping 100 and 10 bytes per
/// micro-batch in flight, recomputation peaks 7 and 9; 1000 bytes of
/// parameters read at height 2, 50 at height 0.
DeviceMemoryInputs twoStages() {
  DeviceMemoryInputs inputs;
  inputs.stages = {{2, 100, 7}, {0, 10, 9}};
  inputs.paramBytesByHeight = {50, 0, 1000};
  inputs.reservedBytes = 5;
  inputs.budgetBytes = 10'000;
  return inputs;
}

TEST(PipelineModel, DeviceMemoryFollowsTheSetup) {
  TrainingSetup async; // async, M = 8, adam, one version
  DeviceMemory m = deviceMemory(twoStages(), async);
  EXPECT_EQ(m.weightBytes, 1050u);
  EXPECT_EQ(m.gradientBytes, 1050u);
  EXPECT_EQ(m.optimizerBytes, 2100u);
  EXPECT_EQ(m.stashBytes, 0u);
  // Heights 2 and 0 keep 3 and 1 micro-batches; one recomputation peak.
  EXPECT_EQ(m.activationBytes, 3 * 100 + 1 * 10 + 9u);
  EXPECT_EQ(m.totalBytes(), 1050 + 1050 + 2100 + 319 + 5u);
  EXPECT_TRUE(m.fits());

  TrainingSetup stash = async;
  stash.weightVersions = WeightVersions::Stash;
  // Height 2: three in flight, two extra versions of its 1000 bytes.
  EXPECT_EQ(deviceMemory(twoStages(), stash).stashBytes, 2000u);
  stash.weightVersions = WeightVersions::DoubleBuffered;
  EXPECT_EQ(deviceMemory(twoStages(), stash).stashBytes, 1000u);

  TrainingSetup gpipe = async;
  gpipe.schedule = Kind::GPipe;
  gpipe.microBatches = 40;
  gpipe.optimizer = Optimizer::SGD;
  DeviceMemory g = deviceMemory(twoStages(), gpipe);
  EXPECT_EQ(g.optimizerBytes, 0u);
  EXPECT_EQ(g.activationBytes, 40 * 110 + 9u);
  EXPECT_EQ(g.totalBytes(), 1050 + 1050 + 4409 + 5u);
  gpipe.microBatches = 80;
  EXPECT_FALSE(deviceMemory(twoStages(), gpipe).fits());
}

TEST(PipelineModel, RuntimeMemoryCountsTheRuntimesAsyncRules) {
  TrainingSetup async; // async, M = 8, adam, one version
  DeviceMemory planned = deviceMemory(twoStages(), async);
  DeviceMemory m = runtimeMemory(twoStages(), async);
  // Two stages: the next step's sums may start before the step's update.
  EXPECT_EQ(m.gradientBytes, 2100u);
  EXPECT_EQ(m.stashBytes, 0u);
  EXPECT_EQ(m.activationBytes, planned.activationBytes);
  EXPECT_EQ(m.totalBytes(), planned.totalBytes() + 1050u);
  // One stage runs its backwards in order: one set.
  DeviceMemoryInputs one = twoStages();
  one.stages.pop_back();
  EXPECT_EQ(runtimeMemory(one, async).gradientBytes, 1050u);

  TrainingSetup stash = async;
  stash.weightVersions = WeightVersions::Stash;
  // Height 2: three micro-batches in flight span at most one update of the
  // M = 8 per step: one older version of all the device's weights (the
  // partitioner counts two versions of the 1000 bytes read at height 2).
  EXPECT_EQ(runtimeMemory(twoStages(), stash).stashBytes, 1050u);
  stash.microBatches = 1;
  // An update after every micro-batch: two older versions.
  EXPECT_EQ(runtimeMemory(twoStages(), stash).stashBytes, 2100u);
  stash.weightVersions = WeightVersions::DoubleBuffered;
  EXPECT_EQ(runtimeMemory(twoStages(), stash).stashBytes, 1050u);

  // The synchronous schedules keep what the partitioner counts.
  for (Kind kind : {Kind::GPipe, Kind::OneFOneB}) {
    TrainingSetup sync = async;
    sync.schedule = kind;
    EXPECT_EQ(runtimeMemory(twoStages(), sync).totalBytes(),
              deviceMemory(twoStages(), sync).totalBytes());
  }
}

TEST(PipelineModel, FrozenParametersAreOnlyStored) {
  DeviceMemoryInputs frozen = twoStages();
  frozen.frozenParamBytes = 400;
  for (Kind kind : {Kind::Async, Kind::GPipe}) {
    TrainingSetup setup; // M = 8, adam
    setup.schedule = kind;
    setup.weightVersions =
        kind == Kind::Async ? WeightVersions::Stash : WeightVersions::None;
    for (auto count : {deviceMemory, runtimeMemory}) {
      DeviceMemory with = count(frozen, setup),
                   without = count(twoStages(), setup);
      // Stored once: no gradient, optimizer state or stashed version.
      EXPECT_EQ(with.weightBytes, without.weightBytes + 400);
      EXPECT_EQ(with.gradientBytes, without.gradientBytes);
      EXPECT_EQ(with.optimizerBytes, without.optimizerBytes);
      EXPECT_EQ(with.stashBytes, without.stashBytes);
      EXPECT_EQ(with.totalBytes(), without.totalBytes() + 400);
    }
  }
  DeviceMemoryInputs read;
  llvm::json::Path::Root root;
  ASSERT_TRUE(fromJSON(toJSON(frozen), read, root));
  EXPECT_EQ(read.frozenParamBytes, 400u);
  // Written only when there are frozen parameters.
  EXPECT_EQ(toJSON(twoStages()).getAsObject()->get("frozen_param_bytes"),
            nullptr);
}

TEST(PipelineModel, SetupAndMemoryInputsRoundTripThroughJSON) {
  TrainingSetup setup{Kind::OneFOneB, 4, Optimizer::Adafactor,
                      WeightVersions::DoubleBuffered, RecomputeMode::Auto};
  TrainingSetup back;
  llvm::json::Path::Root root;
  ASSERT_TRUE(fromJSON(toJSON(setup), back, root));
  EXPECT_EQ(back, setup);

  DeviceMemoryInputs inputs = twoStages(), read;
  ASSERT_TRUE(fromJSON(toJSON(inputs), read, root));
  TrainingSetup async;
  EXPECT_EQ(deviceMemory(read, async).totalBytes(),
            deviceMemory(inputs, async).totalBytes());
  EXPECT_EQ(read.paramBytesByHeight, inputs.paramBytesByHeight);
  ASSERT_EQ(read.stages.size(), 2u);
  EXPECT_EQ(read.stages[0].keptBytesPerMicroBatch, 100u);
}

TEST(PipelineModel, SetupJSONNamesTheBadField) {
  llvm::json::Value bad = llvm::json::Object{{"schedule", "zb"},
                                             {"microbatches", 4},
                                             {"optimizer", "adam"},
                                             {"weight_versions", "none"},
                                             {"recompute", "true"}};
  TrainingSetup setup;
  llvm::json::Path::Root root("training");
  EXPECT_FALSE(fromJSON(bad, setup, root));
  EXPECT_EQ(llvm::toString(root.getError()),
            "not one of the options' spellings at training.schedule");
  bad.getAsObject()->erase("microbatches");
  llvm::json::Path::Root again("training");
  EXPECT_FALSE(fromJSON(bad, setup, again));
  EXPECT_EQ(llvm::toString(again.getError()),
            "expected an integer from 1 to 2^20 at training.microbatches");
}

TEST(PipelineModel, SpellingsParseBack) {
  for (Kind kind : {Kind::GPipe, Kind::OneFOneB, Kind::Async})
    EXPECT_EQ(*parseName<Kind>(nameOf(kind)), kind);
  for (Optimizer o : {Optimizer::SGD, Optimizer::Momentum, Optimizer::Adam,
                      Optimizer::AdamW, Optimizer::Adafactor})
    EXPECT_EQ(*parseName<Optimizer>(nameOf(o)), o);
  for (WeightVersions v : {WeightVersions::None, WeightVersions::Stash,
                           WeightVersions::DoubleBuffered})
    EXPECT_EQ(*parseName<WeightVersions>(nameOf(v)), v);
  for (RecomputeMode r :
       {RecomputeMode::Never, RecomputeMode::Always, RecomputeMode::Auto})
    EXPECT_EQ(*parseName<RecomputeMode>(nameOf(r)), r);
  llvm::Expected<WeightVersions> bad = parseName<WeightVersions>("3bw");
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "unknown weight versions '3bw' (none, stash or 2bw)");
}

} // namespace
