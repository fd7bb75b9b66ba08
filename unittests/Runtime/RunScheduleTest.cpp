//===- RunScheduleTest.cpp - The one maker of a run's lists ---------------===//
//
// runSchedule: the lists ftpipe-run's start, --resume, a migration and a
// re-plan's predictions make for a plan. zb-h1 on a compiled plan whose
// manifest records its device memory keeps each device within its 1F1B peak
// (schedule::generate with the stages' bytes); without them it defers every
// W. The whole path (a migration under zb-h1 runs the next plan's start
// lists) is test/Runtime/migration-zero-bubble.test.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/RunSchedule.h"

#include "gtest/gtest.h"

using namespace ftpipe;
using namespace ftpipe::runtime;

namespace {

std::string listsOf(llvm::Expected<schedule::Schedule> lists) {
  if (!lists)
    return "error: " + llvm::toString(lists.takeError());
  return lists->str();
}

// Four stages on three devices (stage 3 back on device 0); W buffers that
// lift devices 1 and 2 above their 1F1B peak unless their stages run whole.
TEST(RunSchedule, ZeroBubbleH1KeepsTheManifestsDevicesWithinOneFOneB) {
  schedule::StageGraph graph = schedule::StageGraph::chain({0, 1, 2, 0});
  schedule::ScheduleConfig config{schedule::Kind::ZeroBubbleH1, 8, 2};
  ArtifactManifest manifest;
  manifest.deviceMemory.resize(3);
  // {height, kept per micro-batch, working set, W buffer, W's working set}.
  manifest.deviceMemory[0].stages = {{0, 10, 50, 4, 1}, {0, 10, 5, 4, 1}};
  manifest.deviceMemory[1].stages = {{0, 10, 5, 4, 1}};
  manifest.deviceMemory[2].stages = {{0, 10, 5, 4, 1}};
  schedule::StageMemory bytes{
      {10, 10, 10, 10}, {4, 4, 4, 4}, {50, 5, 5, 5}, {1, 1, 1, 1}};
  std::string bounded = listsOf(schedule::generate(graph, config, &bytes));
  std::string deferred = listsOf(schedule::generate(graph, config));
  ASSERT_NE(bounded, deferred);
  EXPECT_EQ(listsOf(runSchedule(graph, &manifest, config)), bounded);
  // Without a manifest, or one that records no device memory: no bound.
  EXPECT_EQ(listsOf(runSchedule(graph, nullptr, config)), deferred);
  ArtifactManifest unmeasured;
  EXPECT_EQ(listsOf(runSchedule(graph, &unmeasured, config)), deferred);
  // 1F1B's lists do not depend on the bytes.
  config.kind = schedule::Kind::OneFOneB;
  EXPECT_EQ(listsOf(runSchedule(graph, &manifest, config)),
            listsOf(schedule::generate(graph, config)));
  // Memory that does not match the plan's stages fails as the start does.
  config.kind = schedule::Kind::ZeroBubbleH1;
  manifest.deviceMemory.pop_back();
  EXPECT_EQ(listsOf(runSchedule(graph, &manifest, config)),
            "error: zb-auto: memory of 2 devices for a stage graph of 3");
}

} // namespace
