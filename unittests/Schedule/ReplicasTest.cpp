//===- ReplicasTest.cpp - Replica layouts and replicated lists ------------===//
//
// The layout's numbering, parsing and checks; the lists of a small
// replicated pipeline by eye; and a property test over random stage graphs,
// placements and layouts: the replicas of a device split its forwards and
// backwards round-robin, keep its order and every update, and the
// replicated lists run dry to the end (dryRunReplicated: each replica's
// update together with its group's and its tied devices' replicas'); the
// replicated dry run reports a deadlock.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/Replicas.h"
#include "FTPipe/Schedule/Memory.h"

#include "RandomStageGraph.h"

#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"

#include <map>
#include <random>
#include <set>
#include <tuple>

using namespace ftpipe::schedule;

namespace {

template <typename T> std::string outcome(llvm::Expected<T> &&value) {
  return value ? std::string("success") : llvm::toString(value.takeError());
}
std::string outcome(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : "success";
}

TEST(ReplicaLayout, NumbersProcessesDeviceByDevice) {
  ReplicaLayout layout{{2, 1, 3}};
  EXPECT_EQ(layout.processes(), 6);
  EXPECT_TRUE(layout.replicated());
  EXPECT_FALSE(ReplicaLayout::none(3).replicated());
  EXPECT_EQ(layout.process(0, 1), 1);
  EXPECT_EQ(layout.process(1, 0), 2);
  EXPECT_EQ(layout.process(2, 2), 5);
  for (int64_t p = 0; p < 6; ++p) {
    auto [d, j] = layout.replicaOf(p);
    EXPECT_EQ(layout.process(d, j), p);
  }
  EXPECT_EQ(layout.group(2), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(layout.replicaFor(2, 7), 1);
  EXPECT_EQ(layout.str(), "2,1,3");
}

TEST(ReplicaLayout, ParsesAndRefuses) {
  llvm::Expected<ReplicaLayout> perDevice = parseReplicas("2, 1,2", 3);
  ASSERT_TRUE(static_cast<bool>(perDevice));
  EXPECT_EQ(perDevice->replicas, (std::vector<int64_t>{2, 1, 2}));
  llvm::Expected<ReplicaLayout> width = parseReplicas("2", 4);
  ASSERT_TRUE(static_cast<bool>(width));
  EXPECT_EQ(width->replicas, (std::vector<int64_t>{2, 2, 2, 2}));
  llvm::Expected<ReplicaLayout> none = parseReplicas("none", 2);
  ASSERT_TRUE(static_cast<bool>(none));
  EXPECT_EQ(none->replicas, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(outcome(parseReplicas("2,0", 2)),
            "replicas: '0' is not a replication factor (1 to 65536)");
  EXPECT_EQ(outcome(parseReplicas("two", 2)),
            "replicas: 'two' is not a replication factor (1 to 65536)");
  EXPECT_EQ(outcome(parseReplicas("1,2,1", 2)),
            "replicas: '1,2,1' gives 3 factors, the plan has 2 devices (give "
            "one per device, or one for all)");
}

TEST(ReplicaLayout, VerifiesAgainstPlanAndProcesses) {
  ReplicaLayout layout{{1, 2, 1}};
  EXPECT_EQ(outcome(layout.verify(3, 4)), "success");
  EXPECT_EQ(outcome(layout.verify(3, 3)),
            "the replicas (1,2,1) add up to 4 processes, the run has 3");
  EXPECT_EQ(outcome(layout.verify(2, 4)),
            "the replicas name 3 devices (1,2,1), the plan has 2");
  EXPECT_EQ(outcome(ReplicaLayout{{1, 0}}.verify(2, 1)),
            "device 1 has 0 replicas: every device needs 1 to 65536");
  EXPECT_EQ(outcome(ReplicaLayout{{1, int64_t(1) << 40}}.verify(2, 1)),
            "device 1 has 1099511627776 replicas: every device needs 1 to "
            "65536");
}

TEST(ReplicaLayout, JSONRoundTrip) {
  ReplicaLayout layout{{2, 1}}, back;
  llvm::json::Value value = toJSON(layout);
  EXPECT_EQ(llvm::formatv("{0}", value).str(), "[2,1]");
  llvm::json::Path::Root root;
  ASSERT_TRUE(fromJSON(value, back, root));
  EXPECT_EQ(back.replicas, layout.replicas);
}

// 2 stages x 2 replicas, 1F1B with flush, 4 micro-batches, 2 steps.
TEST(ReplicateSchedule, TwoStagesTwice) {
  StageGraph graph = StageGraph::chain({0, 1});
  ScheduleConfig config{Kind::OneFOneB, 4, 2};
  llvm::Expected<Schedule> schedule = generate(graph, config);
  ASSERT_TRUE(static_cast<bool>(schedule));
  Schedule replicated = replicateSchedule(*schedule, ReplicaLayout{{2, 2}});
  EXPECT_EQ(replicated.str(),
            "device 0: 0F0 0B0 0F2 0B2 U0 0F4 0B4 0F6 0B6 U1\n"
            "device 1: 0F1 0B1 0F3 0B3 U0 0F5 0B5 0F7 0B7 U1\n"
            "device 2: 1F0 1B0 1F2 1B2 U0 1F4 1B4 1F6 1B6 U1\n"
            "device 3: 1F1 1B1 1F3 1B3 U0 1F5 1B5 1F7 1B7 U1\n");
}

// A replica that lists a backward before its forward is stuck, and so are
// the producer's replica waiting for its gradient and the other replica
// waiting for it at the update.
TEST(ReplicateSchedule, DryRunReportsDeadlock) {
  StageGraph graph = StageGraph::chain({0, 1});
  ReplicaLayout layout{{1, 2}};
  llvm::Expected<Schedule> lists =
      parseSchedule("device 0: 0F0 0F1 0B0 0B1 U0\n"
                    "device 1: 1F0 1B0 U0\n"
                    "device 2: 1B1 1F1 U0\n");
  ASSERT_TRUE(static_cast<bool>(lists));
  EXPECT_EQ(outcome(dryRunReplicated(graph, layout, *lists)),
            "replicated dry run: deadlock: process 0 (device 0 replica 0) "
            "waits at 0B1; process 1 (device 1 replica 0) waits at U0; "
            "process 2 (device 1 replica 1) waits at 1B1");
  EXPECT_EQ(outcome(dryRunReplicated(graph, ReplicaLayout{{1, 1}}, *lists)),
            "replicated dry run: 3 lists, the replicas (1,1) make 2 processes");
}

// Random stage graphs, placements, tied groups and layouts: every replica
// list is its device's list without the other replicas' micro-batches (so
// the replicas together run each action of the device once), and the
// replicated lists never deadlock.
TEST(ReplicateSchedule, RandomGraphsSplitAndNeverDeadlock) {
  std::mt19937 rng(28);
  for (int trial = 0; trial < 300; ++trial) {
    StageGraph graph = test::randomGraph(rng);
    ScheduleConfig config{static_cast<Kind>(rng() % 4),
                          static_cast<int64_t>(1 + rng() % 6),
                          static_cast<int64_t>(1 + rng() % 3)};
    ReplicaLayout layout;
    for (int64_t d = 0; d < graph.devices; ++d)
      layout.replicas.push_back(1 + rng() % 3);
    // The plan's lists made for the layout (more in flight) or without.
    if (trial % 2)
      config.replicas = layout.replicas;
    llvm::Expected<Schedule> schedule = generate(graph, config);
    ASSERT_TRUE(static_cast<bool>(schedule)) << "trial " << trial;
    Schedule lists = replicateSchedule(*schedule, layout);
    ASSERT_EQ(static_cast<int64_t>(lists.devices.size()), layout.processes());
    for (int64_t d = 0; d < graph.devices; ++d) {
      std::multiset<std::tuple<ActionKind, int64_t, int64_t>> expected, got;
      int64_t updates = 0;
      for (const Action &action : schedule->devices[d]) {
        if (action.kind == ActionKind::Update)
          ++updates;
        else
          expected.insert({action.kind, action.stage, action.index});
      }
      for (int64_t j = 0; j < layout.replicas[d]; ++j) {
        const std::vector<Action> &list = lists.devices[layout.process(d, j)];
        // A subsequence of the device's list.
        size_t at = 0;
        for (const Action &action : list) {
          while (at < schedule->devices[d].size() &&
                 !(schedule->devices[d][at] == action))
            ++at;
          ASSERT_LT(at, schedule->devices[d].size())
              << "trial " << trial << ": " << action.str()
              << " out of order on device " << d << " replica " << j;
          ++at;
        }
        int64_t ownUpdates = 0;
        for (const Action &action : list) {
          if (action.kind == ActionKind::Update) {
            ++ownUpdates;
            continue;
          }
          EXPECT_EQ(action.index % layout.replicas[d], j) << "trial " << trial;
          got.insert({action.kind, action.stage, action.index});
        }
        EXPECT_EQ(ownUpdates, updates) << "trial " << trial;
      }
      EXPECT_EQ(got, expected) << "trial " << trial << " device " << d;
    }
    EXPECT_EQ(outcome(dryRunReplicated(graph, layout, lists)), "success")
        << "trial " << trial << " layout " << layout.str() << "\n"
        << lists.str();
  }
}

TEST(ReplicateSchedule, OneFOneBKeepsEachReplicasPipelineFull) {
  // 2 devices x 2 replicas, 1F1B, M = 8. Made for the layout, device 0's
  // list starts 4 forwards (the processes on its path), so each of its
  // replicas has 2 in flight, as a 2-stage 1F1B pipeline; made without, each
  // replica would wait for its one micro-batch to come back.
  StageGraph graph = StageGraph::chain({0, 1});
  ReplicaLayout layout = ReplicaLayout::uniform(2, 2);
  ScheduleConfig config{Kind::OneFOneB, 8, 1};
  config.replicas = layout.replicas;
  llvm::Expected<Schedule> plan = generate(graph, config);
  ASSERT_TRUE(static_cast<bool>(plan));
  Schedule lists = replicateSchedule(*plan, layout);
  auto head = [&](int64_t process, size_t n) {
    std::string text;
    for (size_t i = 0; i < n; ++i)
      text += (i ? " " : "") + lists.devices[process][i].str();
    return text;
  };
  EXPECT_EQ(head(0, 4), "0F0 0F2 0B0 0F4");
  EXPECT_EQ(head(1, 4), "0F1 0F3 0B1 0F5");
  EXPECT_EQ(head(2, 4), "1F0 1B0 1F2 1B2");
  EXPECT_EQ(outcome(dryRunReplicated(graph, layout, lists)), "success");
  config.replicas.clear();
  llvm::Expected<Schedule> without = generate(graph, config);
  ASSERT_TRUE(static_cast<bool>(without));
  EXPECT_EQ(replicateSchedule(*without, layout).devices[0][1].str(), "0B0");
}

TEST(ReplicateSchedule, ReplicasMustNameEveryDevice) {
  ScheduleConfig config{Kind::OneFOneB, 4, 1};
  config.replicas = {2};
  llvm::Expected<Schedule> lists = generate(StageGraph::chain({0, 1}), config);
  ASSERT_FALSE(static_cast<bool>(lists));
  EXPECT_NE(
      llvm::toString(lists.takeError()).find("the replicas name 1 devices"),
      std::string::npos);
}

} // namespace

TEST(ReplicaMemory, AllReduceBufferBesideTheWeightsState) {
  // Parameters of 3 MB whose tallest reader has height 0 and of 5 MB at
  // height 2: the replicas all-reduce at most 5 MB at once, from a copy,
  // beside the weights' state (17 MB here) but not beside the activations.
  DeviceMemoryInputs inputs;
  inputs.paramBytesByHeight = {3'000'000, 0, 5'000'000};
  DeviceMemory memory;
  memory.weightBytes = 8'000'000;
  memory.gradientBytes = 8'000'000;
  memory.reservedBytes = 1'000'000;
  memory.activationBytes = 2'000'000;
  EXPECT_EQ(allReduceBufferBytes(inputs, 1), 0u);
  EXPECT_EQ(allReduceBufferBytes(inputs, 2), 5'000'000u);
  EXPECT_EQ(allReduceBufferBytes(inputs, 3), 5'000'000u);
  EXPECT_EQ(allReduceBufferBytes(DeviceMemoryInputs(), 2), 0u);
  EXPECT_EQ(reducingBytes(memory, inputs, 2), 22'000'000u);
  EXPECT_EQ(replicatedBytes(memory, inputs, 2), 22'000'000u);
  EXPECT_EQ(replicatedBytes(memory, inputs, 1), 19'000'000u);
  // Activations above the buffer: the peak decides.
  memory.activationBytes = 6'000'000;
  EXPECT_EQ(reducingBytes(memory, inputs, 2), 22'000'000u);
  EXPECT_EQ(replicatedBytes(memory, inputs, 2), 23'000'000u);
}
