//===- SimulatorOrdersTest.cpp - The simulator replaying given orders -----===//
//
// lib/Schedule's per-device lists, given to the simulator as device orders:
// GPipe and 1F1B lists reproduce the closed form (M + P - 1) x stage time of
// the built-in schedules, the async lists the busiest device's load per
// micro-batch; orders that deadlock or miss a task are refused.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Simulator.h"
#include "FTPipe/Schedule/Schedule.h"

#include "TestUtil.h"

using namespace ftpipe::partition;
using namespace ftpipe::partition::test;
namespace sched = ftpipe::schedule;

namespace {

/// The lists of `config` for a chain placed by `placement`.
sched::Schedule ordersOf(const std::vector<int64_t> &placement,
                         const sched::ScheduleConfig &config) {
  sched::StageGraph graph = sched::StageGraph::chain(placement);
  return unwrap(sched::generate(graph, config));
}

/// A schedule in its text form.
sched::Schedule parsed(llvm::StringRef text) {
  return unwrap(sched::parseSchedule(text));
}

StageGraph stagesOf(const Graph &g, const Hardware &hw,
                    const std::vector<int64_t> &placement) {
  Plan plan;
  for (size_t i = 0; i < placement.size(); ++i) {
    plan.nodeStage.push_back(StageId(i));
    plan.stageDevice.push_back(DeviceId(placement[i]));
  }
  return unwrap(buildStageGraph(g, hw, plan, ObjectiveConfig()));
}

TEST(SimulatorOrders, SynchronousListsMatchTheClosedForm) {
  const double f = 1.5, b = 2.5;
  for (sched::Kind kind : {sched::Kind::GPipe, sched::Kind::OneFOneB})
    for (int p : {2, 4})
      for (int m : {1, 4, 8}) {
        Graph g = chain(p, f, b, /*bytes=*/0);
        Hardware hw = uniformHardware(p, 1.0, 0.0);
        std::vector<int64_t> placement;
        for (int i = 0; i < p; ++i)
          placement.push_back(i);
        SimulatorConfig config;
        config.kind = kind;
        config.orders = ordersOf(placement, {kind, m, 1});
        SimResult r = unwrap(simulate(stagesOf(g, hw, placement), hw, config));
        EXPECT_NEAR(r.makespanMs, (m + p - 1) * (f + b), 1e-9)
            << sched::nameOf(kind).str() << " p " << p << " m " << m;
      }
}

TEST(SimulatorOrders, AsyncListsRunAtTheBusiestDevicesLoad) {
  const double f = 1.0, b = 2.0;
  Graph g = chain(4, f, b, /*bytes=*/0);
  Hardware hw = uniformHardware(3, 1.0, 0.0);
  // Stages 0 and 3 share device 0: it carries two stages' work per
  // micro-batch.
  std::vector<int64_t> placement = {0, 1, 2, 0};
  SimulatorConfig config;
  config.kind = Kind::Async;
  config.orders = ordersOf(placement, {sched::Kind::Async, 4, 24});
  SimResult r = unwrap(simulate(stagesOf(g, hw, placement), hw, config));
  EXPECT_EQ(r.microBatches, 96u);
  EXPECT_NEAR(r.msPerMicroBatch, 2 * (f + b), 1e-9);
}

TEST(SimulatorOrders, RefusesBadOrders) {
  Graph g = chain(2, 1, 1, 0);
  Hardware hw = uniformHardware(2, 1.0, 0.0);
  StageGraph sg = stagesOf(g, hw, {0, 1});
  SimulatorConfig config;
  // Device 1 wants the backward before its forward.
  config.orders = parsed("device 0: 0F0 0B0\ndevice 1: 1B0 1F0");
  llvm::Expected<SimResult> r = simulate(sg, hw, config);
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "simulator: device 1's order runs stage 1's backward of "
            "micro-batch 0 before its forward");
  // Stages 0 and 2 on device 0, which wants stage 2 first: it waits for
  // stage 1, which waits for stage 0.
  Graph g3 = chain(3, 1, 1, 0);
  StageGraph sg3 = stagesOf(g3, hw, {0, 1, 0});
  config.orders = parsed("device 0: 2F0 2B0 0F0 0B0\ndevice 1: 1F0 1B0");
  r = simulate(sg3, hw, config);
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "simulator: stage 0 stalled after 0 of 2 tasks: the given orders "
            "deadlock");
  config.orders = parsed("device 0: 0F0 0B0\ndevice 1: 1F0");
  r = simulate(sg, hw, config);
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "simulator: the orders hold 3 tasks, 2 stages x 1 micro-batches "
            "need 4");
  config.orders = parsed("device 0: 1F0\ndevice 1:");
  r = simulate(sg, hw, config);
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "simulator: device 0's order names stage 1, not on it");
}

} // namespace
