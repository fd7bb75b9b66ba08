//===- SetupCheckTest.cpp - ftpipe-run's memory check of a setup ---------===//
//
// checkRunMemory counts a replicated device as the planner does
// (schedule::replicatedBytes): its all-reduce's buffer beside its weights'
// state, on the run's layout.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/SetupCheck.h"

#include "gtest/gtest.h"

using namespace ftpipe;
using namespace ftpipe::runtime;

namespace {

TEST(SetupCheck, ReplicasHoldTheirAllReducesBuffer) {
  // One device, one stage of 1 MB of weights and 1 kB kept per micro-batch:
  // SGD keeps 2 MB and a little of activations; its replicas all-reduce the
  // 1 MB of gradients from a copy, beside the 2 MB. A budget between the
  // two figures runs one process and refuses two.
  ArtifactManifest manifest;
  manifest.artifacts = {"device0.so"};
  ManifestStage stage;
  stage.forward = "forward0";
  manifest.stages = {stage};
  manifest.entryPoints["forward0"].name = "forward0";
  schedule::DeviceMemoryInputs inputs;
  inputs.stages = {{0, 1000}};
  inputs.paramBytesByHeight = {1'000'000};
  manifest.deviceMemory = {inputs};
  schedule::TrainingSetup setup;
  setup.schedule = schedule::Kind::GPipe;
  setup.microBatches = 2;
  setup.optimizer = schedule::Optimizer::SGD;
  schedule::ReplicaLayout one = schedule::ReplicaLayout::none(1), two;
  two.replicas = {2};

  std::vector<schedule::DeviceMemory> planned =
      plannedMemory(manifest, setup, one);
  ASSERT_EQ(planned.size(), 1u);
  uint64_t state = planned[0].totalBytes() - planned[0].activationBytes;
  EXPECT_EQ(state, 2'000'000u);
  ASSERT_LT(planned[0].activationBytes, 1'000'000u);

  manifest.deviceMemory[0].budgetBytes = state + 1'000'000 - 1;
  EXPECT_FALSE(bool(checkRunMemory(manifest, setup, one)));
  llvm::Error refused = checkRunMemory(manifest, setup, two);
  ASSERT_TRUE(bool(refused));
  std::string message = llvm::toString(std::move(refused));
  EXPECT_NE(message.find("3000000 bytes while its replicas' all-reduce "
                         "buffer of 1000000 bytes is held"),
            std::string::npos)
      << message;
  // The manifest's own layout is not what is checked: the run's is.
  manifest.replicas = two;
  EXPECT_FALSE(bool(checkRunMemory(manifest, setup, one)));

  manifest.deviceMemory[0].budgetBytes = state + 1'000'000;
  EXPECT_FALSE(bool(checkRunMemory(manifest, setup, two)));
}

} // namespace
