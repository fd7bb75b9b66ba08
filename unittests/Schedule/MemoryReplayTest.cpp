//===- MemoryReplayTest.cpp - A device's memory over its action list -----===//
//
// replayMemory's lifetimes on hand-made lists, and replayedMemory against
// the additive bound (runtimeMemory) it replaces where lists can be built.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/MemoryReplay.h"

#include "gtest/gtest.h"

using namespace ftpipe::schedule;

namespace {

std::vector<Action> parse(std::initializer_list<const char *> texts) {
  std::vector<Action> actions;
  for (const char *text : texts)
    actions.push_back(llvm::cantFail(parseAction(text)));
  return actions;
}

ReplayDevice oneStage(int64_t microBatches, WeightVersions versions) {
  ReplayDevice device;
  ReplayStage &stage = device.stages[0];
  stage.kept = 10;
  stage.forward = 5;
  stage.backward = 7;
  stage.input = 9;
  stage.weight = 3;
  stage.weightBuffer = 4;
  stage.backwardMessages = 1;
  device.weights = 100;
  device.trained = 80;
  device.optimizer = 160;
  device.update = 5;
  device.microBatches = microBatches;
  device.versions = versions;
  return device;
}

TEST(MemoryReplay, KeptBytesLiveFromForwardToBackward) {
  // GPipe: both micro-batches' kept bytes and the step's gradient set at B0.
  std::optional<ReplayPeak> peak =
      replayMemory(parse({"0F0", "0F1", "0B0", "0B1", "U0"}),
                   oneStage(2, WeightVersions::None));
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->action, 2u);
  EXPECT_EQ(peak->held.keptMicroBatches, 2);
  EXPECT_EQ(peak->held.gradients, 80);
  EXPECT_EQ(peak->bytes, 100 + 80 + 160 + 20 + 7 + 1);
  // 1F1B: one micro-batch's kept bytes at a time.
  peak = replayMemory(parse({"0F0", "0B0", "0F1", "0B1", "U0"}),
                      oneStage(2, WeightVersions::None));
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->action, 1u);
  EXPECT_EQ(peak->held.keptMicroBatches, 1);
  EXPECT_EQ(peak->bytes, 100 + 80 + 160 + 10 + 7 + 1);
  EXPECT_FALSE(replayMemory({}, oneStage(2, WeightVersions::None)));
}

TEST(MemoryReplay, StashedCopyLivesUntilItsLastReader) {
  // Async, one micro-batch per step: at U0 micro-batch 1 still reads version
  // 0, so stashing copies the trained weights until B1.
  std::vector<Action> list =
      parse({"0F0", "0F1", "0B0", "U0", "0F2", "0B1", "U1", "0B2", "U2"});
  std::optional<ReplayPeak> stashed =
      replayMemory(list, oneStage(1, WeightVersions::Stash));
  std::optional<ReplayPeak> none =
      replayMemory(list, oneStage(1, WeightVersions::None));
  ASSERT_TRUE(stashed && none);
  EXPECT_EQ(stashed->held.stash, 80);
  EXPECT_EQ(stashed->bytes, none->bytes + 80);
  // 2BW keeps the same copies where one older version suffices.
  std::optional<ReplayPeak> doubled =
      replayMemory(list, oneStage(1, WeightVersions::DoubleBuffered));
  ASSERT_TRUE(doubled);
  EXPECT_EQ(doubled->bytes, stashed->bytes);
  // Without a reader in flight at the update nothing is copied.
  std::optional<ReplayPeak> drained =
      replayMemory(parse({"0F0", "0B0", "U0", "0F1", "0B1", "U1"}),
                   oneStage(1, WeightVersions::Stash));
  ASSERT_TRUE(drained);
  EXPECT_EQ(drained->held.stash, 0);
}

TEST(MemoryReplay, WeightBufferLivesFromInputToWeightPart) {
  std::optional<ReplayPeak> peak =
      replayMemory(parse({"0F0", "0F1", "0I0", "0I1", "0W0", "0W1", "U0"}),
                   oneStage(2, WeightVersions::None));
  ASSERT_TRUE(peak);
  // At W0: both W buffers, no kept bytes, the gradient set open.
  EXPECT_EQ(peak->action, 4u);
  EXPECT_EQ(peak->held.weightBufferMicroBatches, 2);
  EXPECT_EQ(peak->held.keptMicroBatches, 0);
  EXPECT_EQ(peak->bytes, 100 + 80 + 160 + 8 + 3);
}

/// Stages 0 and 2 on device 0, stage 1 on device 1 (GPT-2's tied plan).
DeviceMemoryInputs device(uint32_t stages) {
  DeviceMemoryInputs inputs;
  for (uint32_t s = 0; s < stages; ++s) {
    DeviceMemoryInputs::Stage stage;
    stage.height = stages == 2 ? 2 - 2 * s : 1;
    stage.keptBytesPerMicroBatch = 10000;
    stage.recomputePeakBytes = 3000;
    stage.weightWorkingBytes = 3000;
    inputs.stages.push_back(stage);
  }
  inputs.paramBytesByHeight = {20000, 0, 0};
  inputs.updateWorkingBytes = 3000;
  inputs.largestParamBytes = 5000;
  inputs.budgetBytes = uint64_t(1) << 30;
  return inputs;
}

TEST(MemoryReplay, ReplayBoundsTighterThanEachTermsMaximum) {
  StageGraph graph = StageGraph::chain({0, 1, 0});
  std::vector<DeviceMemoryInputs> inputs = {device(2), device(1)};
  for (Kind kind : {Kind::GPipe, Kind::OneFOneB, Kind::Async}) {
    TrainingSetup setup;
    setup.schedule = kind;
    setup.microBatches = 4;
    setup.optimizer = Optimizer::AdamW;
    setup.weightVersions = WeightVersions::Stash;
    std::vector<DeviceMemory> replayed = replayedMemory(graph, inputs, setup);
    ASSERT_EQ(replayed.size(), 2u);
    for (size_t d = 0; d < 2; ++d)
      EXPECT_LE(replayed[d].totalBytes(),
                runtimeMemory(inputs[d], setup).totalBytes())
          << nameOf(kind).str() << " device " << d;
    if (kind != Kind::Async)
      continue;
    // Device 0 never holds two gradient sets, a stashed copy and every
    // micro-batch's kept bytes at once, which the additive bound adds.
    EXPECT_LT(replayed[0].totalBytes(),
              runtimeMemory(inputs[0], setup).totalBytes());
    // Adafactor's update works in doubles on the largest parameter.
    setup.optimizer = Optimizer::Adafactor;
    setup.weightVersions = WeightVersions::None;
    DeviceMemory before = replayedMemory(graph, inputs, setup)[1];
    inputs[1].largestParamBytes = 1 << 20;
    EXPECT_GT(replayedMemory(graph, inputs, setup)[1].totalBytes(),
              before.totalBytes());
  }
}

TEST(MemoryReplay, ReplicasCountTheirOwnLists) {
  // A chain of stages on devices 0 and 1, device 1 run twice under 1F1B
  // with M = 8: made for the layout, device 0 starts 3 micro-batches
  // before its first backward (its own process and device 1's two), where
  // the plan alone starts 2; each of device 1's replicas holds what the
  // plan's device 1 holds.
  StageGraph graph = StageGraph::chain({0, 1});
  DeviceMemoryInputs first, second;
  for (DeviceMemoryInputs *inputs : {&first, &second}) {
    DeviceMemoryInputs::Stage stage;
    stage.keptBytesPerMicroBatch = 10000;
    inputs->stages.push_back(stage);
    inputs->paramBytesByHeight = {0, 0};
    inputs->budgetBytes = uint64_t(1) << 30;
  }
  first.stages[0].height = 1;
  std::vector<DeviceMemoryInputs> inputs = {first, second};
  TrainingSetup setup;
  setup.schedule = Kind::OneFOneB;
  setup.microBatches = 8;
  std::vector<DeviceMemory> plain = replayedMemory(graph, inputs, setup);
  std::vector<DeviceMemory> replicated =
      replayedMemory(graph, inputs, setup, {1, 2});
  ASSERT_EQ(replicated.size(), 2u);
  EXPECT_EQ(replicated[0].activationBytes, plain[0].activationBytes + 10000);
  EXPECT_EQ(replicated[1].activationBytes, plain[1].activationBytes);
}

TEST(MemoryReplay, ZeroBubbleAutoKeepsTheBoundForAnyList) {
  StageGraph graph = StageGraph::chain({0, 1, 0});
  std::vector<DeviceMemoryInputs> inputs = {device(2), device(1)};
  TrainingSetup setup;
  setup.schedule = Kind::ZeroBubbleAuto;
  std::vector<DeviceMemory> replayed = replayedMemory(graph, inputs, setup);
  ASSERT_EQ(replayed.size(), 2u);
  EXPECT_EQ(replayed[0].totalBytes(),
            runtimeMemory(inputs[0], setup).totalBytes());
}

} // namespace
