//===- MemoryCheckTest.cpp - The one memory rule and its message ----------===//
//
// checkMemory on one device by hand: the replay alone without replicas, the
// all-reduce's buffer beside the weights' state with them, a figure counted
// otherwise as a floor, and the message naming the device at one byte over.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/MemoryCheck.h"
#include "FTPipe/Schedule/MemoryReplay.h"

#include "llvm/ADT/StringRef.h"

#include "gtest/gtest.h"

#include <string>

using namespace ftpipe::schedule;

namespace {

TEST(MemoryCheck, OneRuleWithAndWithoutReplicas) {
  // One stage of 1 MB of weights and 1000 bytes kept per micro-batch under
  // GPipe with SGD: 2 MB of weights' state and a little of activations;
  // two replicas all-reduce the 1 MB of gradients from a copy beside it.
  StageGraph graph = StageGraph::chain({0});
  DeviceMemoryInputs inputs;
  DeviceMemoryInputs::Stage stage;
  stage.keptBytesPerMicroBatch = 1000;
  inputs.stages = {stage};
  inputs.paramBytesByHeight = {1'000'000};
  inputs.budgetBytes = uint64_t(1) << 30;
  TrainingSetup setup;
  setup.schedule = Kind::GPipe;
  setup.microBatches = 2;
  setup.optimizer = Optimizer::SGD;
  ReplicaLayout none = ReplicaLayout::none(1),
                two = ReplicaLayout::uniform(1, 2);

  DeviceMemory replayed = replayedMemory(graph, {inputs}, setup)[0];
  uint64_t total = replayed.totalBytes();
  ASSERT_EQ(total - replayed.activationBytes, 2'000'000u);
  // Each replica keeps its own micro-batches only.
  DeviceMemory replica = replayedMemory(graph, {inputs}, setup, {2})[0];
  EXPECT_LT(replica.activationBytes, replayed.activationBytes);
  MemoryCheck plain = checkMemory(graph, {inputs}, setup, none);
  ASSERT_EQ(plain.devices.size(), 1u);
  EXPECT_EQ(plain.devices[0].bytes, total);
  EXPECT_EQ(plain.devices[0].allReduceBytes, 0u);
  MemoryCheck replicated = checkMemory(graph, {inputs}, setup, two);
  EXPECT_EQ(replicated.devices[0].bytes, 3'000'000u);
  EXPECT_EQ(replicated.devices[0].allReduceBytes, 1'000'000u);
  EXPECT_TRUE(plain.fits() && replicated.fits());

  // At the figure it fits, one byte below it does not, by one message.
  inputs.budgetBytes = total;
  EXPECT_TRUE(checkMemory(graph, {inputs}, setup, none).fits());
  inputs.budgetBytes = total - 1;
  auto parts = [](const DeviceMemory &memory) {
    return "(weights 1000000 bytes, gradients 1000000 bytes, optimizer "
           "state 0 bytes, stashed versions 0 bytes, activations " +
           std::to_string(memory.activationBytes) + " bytes, reserved 0 bytes";
  };
  EXPECT_EQ(checkMemory(graph, {inputs}, setup, none).failure,
            "does not fit in memory: device 0 needs " + std::to_string(total) +
                " bytes of its " + std::to_string(total - 1) + " bytes " +
                parts(replayed) + ")");
  inputs.budgetBytes = 3'000'000;
  EXPECT_TRUE(checkMemory(graph, {inputs}, setup, two).fits());
  inputs.budgetBytes = 2'999'999;
  EXPECT_EQ(checkMemory(graph, {inputs}, setup, two).failure,
            "does not fit in memory as replicas 2: device 0 needs 3000000 "
            "bytes of its 2999999 bytes " +
                parts(replica) +
                "; 3000000 bytes while its replicas' all-reduce buffer of "
                "1000000 bytes is held)");

  // A larger figure counted otherwise (the planner's) is needed at least,
  // and said so.
  MemoryCheck counted =
      checkMemory(graph, {inputs}, setup, two, {uint64_t(3'000'005)});
  EXPECT_EQ(counted.devices[0].bytes, 3'000'005u);
  EXPECT_TRUE(llvm::StringRef(counted.failure)
                  .ends_with("; 3000005 bytes by the plan's count)"))
      << counted.failure;
}

} // namespace
