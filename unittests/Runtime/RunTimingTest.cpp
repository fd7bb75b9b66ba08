//===- RunTimingTest.cpp - Timelines against the simulator ----------------===//
//
// A hand-made timeline of GPipe on a two-stage chain that runs exactly as
// the simulator would (forward 1 ms, backward 2 ms, waits inside the
// actions that receive): the simulator, given the costs read off the
// timeline, predicts the same makespan; the updates and the time inside
// actions that is neither stage code nor waiting count as overhead.
// Updates with CPU time: each process's mean goes to the simulator as its
// update time, and the costs line names them. Receives that take their
// receiver longer than their senders explain: the rest is the receiver's.
// Processes sharing cores: nodes from hosts and affinities, and a timeline
// of processor sharing predicted exactly from its CPU times.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/RunTiming.h"
#include "FTPipe/Schedule/Simulator.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace ftpipe;
using namespace ftpipe::runtime;
using schedule::Action;

namespace {

TraceEvent event(Action action, double startMs, double endMs, double computeMs,
                 double waitMs = 0) {
  return {action, startMs / 1e3, endMs / 1e3, computeMs / 1e3, waitMs / 1e3};
}

TEST(RunTiming, ExactTimelineMatchesTheSimulator) {
  schedule::StageGraph graph = schedule::StageGraph::chain({0, 1});
  schedule::ScheduleConfig config{schedule::Kind::GPipe, 2, 1};
  auto lists = schedule::generate(graph, config);
  ASSERT_TRUE(bool(lists)) << llvm::toString(lists.takeError());
  ASSERT_EQ(lists->str(), "device 0: 0F0 0F1 0B0 0B1 U0\n"
                          "device 1: 1F0 1F1 1B0 1B1 U0\n");
  // Device 0's first backward waits 3 ms for device 1's gradient, device
  // 1's first forward 1 ms for device 0's activation.
  std::vector<std::vector<TraceEvent>> traces = {
      {event(Action::forward(0, 0), 0, 1, 1),
       event(Action::forward(0, 1), 1, 2, 1),
       event(Action::backward(0, 0), 2, 7, 2, 3),
       event(Action::backward(0, 1), 7, 9, 2),
       event(Action::update(0), 9, 9, 0)},
      {event(Action::forward(1, 0), 0, 2, 1, 1),
       event(Action::forward(1, 1), 2, 3, 1),
       event(Action::backward(1, 0), 3, 5, 2),
       event(Action::backward(1, 1), 5, 7, 2),
       event(Action::update(0), 7, 7, 0)}};
  auto timing = compareWithSimulator(graph, config, *lists, traces);
  ASSERT_TRUE(bool(timing)) << llvm::toString(timing.takeError());
  EXPECT_EQ(timing->microBatches, 2);
  EXPECT_DOUBLE_EQ(timing->measuredMs, 9.0);
  EXPECT_NEAR(timing->simulatedMs, 9.0, 1e-6);
  EXPECT_EQ(timing->stageForwardMs, (std::vector<double>{1, 1}));
  EXPECT_EQ(timing->stageBackwardMs, (std::vector<double>{2, 2}));
  // 12 ms of stage code on 2 devices over 9 ms.
  EXPECT_NEAR(timing->measuredIdle, 1.0 - 12.0 / 18.0, 1e-12);
  EXPECT_NEAR(timing->simulatedIdle, timing->measuredIdle, 1e-6);
  EXPECT_DOUBLE_EQ(timing->updateShare, 0.0);
  EXPECT_NEAR(timing->bookkeepingShare, 0.0, 1e-12);
  EXPECT_NE(formatRunTiming(*timing).find("measured / simulated: 1.000"),
            std::string::npos);

  // A slower update and 0.5 ms of bookkeeping inside a backward are the
  // runtime's overhead, not stage code.
  traces[0][3] = event(Action::backward(0, 1), 7, 9.5, 2);
  traces[0][4] = event(Action::update(0), 9.5, 10, 0);
  timing = compareWithSimulator(graph, config, *lists, traces);
  ASSERT_TRUE(bool(timing));
  EXPECT_DOUBLE_EQ(timing->measuredMs, 10.0);
  EXPECT_NEAR(timing->updateShare, 0.05, 1e-12);
  EXPECT_NEAR(timing->bookkeepingShare, 0.05, 1e-12);
}

/// GPipe on a two-stage chain, 2 micro-batches and 2 steps (F 1 ms, B 2 ms
/// as above), whose updates took CPU time: 1 ms on device 0 (the mean of
/// 0.5 and 1.5) and 0.25 ms on device 1. Device 0's first update delays its
/// second step's forwards by 1 ms: the simulated run is 9 + 1 + 9 + 1 ms.
TEST(RunTiming, UpdatesTakeTheirMeasuredCpuTime) {
  schedule::StageGraph graph = schedule::StageGraph::chain({0, 1});
  schedule::ScheduleConfig config{schedule::Kind::GPipe, 2, 2};
  auto lists = schedule::generate(graph, config);
  ASSERT_TRUE(bool(lists)) << llvm::toString(lists.takeError());
  std::vector<std::vector<TraceEvent>> traces(2);
  for (int64_t step = 0; step < 2; ++step) {
    double at = step * 10;
    int64_t m = 2 * step;
    traces[0].push_back(event(Action::forward(0, m), at, at + 1, 1));
    traces[0].push_back(event(Action::forward(0, m + 1), at + 1, at + 2, 1));
    traces[0].push_back(event(Action::backward(0, m), at + 2, at + 7, 2, 3));
    traces[0].push_back(event(Action::backward(0, m + 1), at + 7, at + 9, 2));
    traces[0].push_back(event(Action::update(step), at + 9, at + 10, 0));
    traces[0].back().cpuSeconds = step == 0 ? 0.5e-3 : 1.5e-3;
    traces[1].push_back(event(Action::forward(1, m), at + 1, at + 2, 1));
    traces[1].push_back(event(Action::forward(1, m + 1), at + 2, at + 3, 1));
    traces[1].push_back(event(Action::backward(1, m), at + 3, at + 5, 2));
    traces[1].push_back(event(Action::backward(1, m + 1), at + 5, at + 7, 2));
    traces[1].push_back(event(Action::update(step), at + 7, at + 8, 0));
    traces[1].back().cpuSeconds = 0.25e-3;
  }
  auto timing = compareWithSimulator(graph, config, *lists, traces);
  ASSERT_TRUE(bool(timing)) << llvm::toString(timing.takeError());
  ASSERT_EQ(timing->processUpdateMs.size(), 2u);
  EXPECT_NEAR(timing->processUpdateMs[0], 1.0, 1e-12);
  EXPECT_NEAR(timing->processUpdateMs[1], 0.25, 1e-12);
  EXPECT_NEAR(timing->measuredMs, 20.0, 1e-9);
  EXPECT_NEAR(timing->simulatedMs, 20.0, 1e-6);
  EXPECT_NE(formatRunTiming(*timing).find(
                "updates as measured (1.000/0.250 ms CPU per update and "
                "process)"),
            std::string::npos)
      << formatRunTiming(*timing);

  // Updates without CPU time: the simulated ones take none (9 ms a step).
  for (auto &events : traces)
    for (TraceEvent &e : events)
      e.cpuSeconds = 0;
  timing = compareWithSimulator(graph, config, *lists, traces);
  ASSERT_TRUE(bool(timing));
  EXPECT_TRUE(timing->processUpdateMs.empty());
  EXPECT_NEAR(timing->simulatedMs, 18.0, 1e-6);
  EXPECT_EQ(formatRunTiming(*timing).find("updates as measured"),
            std::string::npos);
}

/// GPipe on a two-stage chain, 2 micro-batches (F 1 ms, B 2 ms), where
/// each message holds up its receiver 0.5 ms after its sender's task ends,
/// whether it came while the receiver waited (device 1's first forward,
/// device 0's first backward) or before the receiver asked (the second
/// ones): the receivers' costs gain 0.5 ms and the simulation predicts the
/// measured 11 ms exactly; with free transfers it predicts 9.
TEST(RunTiming, ReceivesCostTheirReceiversWhatTheSendersDoNotExplain) {
  schedule::StageGraph graph = schedule::StageGraph::chain({0, 1});
  schedule::ScheduleConfig config{schedule::Kind::GPipe, 2, 1};
  auto lists = schedule::generate(graph, config);
  ASSERT_TRUE(bool(lists)) << llvm::toString(lists.takeError());
  std::vector<std::vector<TraceEvent>> traces = {
      {event(Action::forward(0, 0), 0, 1, 1),
       event(Action::forward(0, 1), 1, 2, 1),
       // Device 1's gradient is sent at 6: 4 ms of the wait, then 0.5.
       event(Action::backward(0, 0), 2, 8.5, 2, 4.5),
       // Sent at 8, before this task began at 8.5: 0.5 ms all the same.
       event(Action::backward(0, 1), 8.5, 11, 2, 0.5),
       event(Action::update(0), 11, 11, 0)},
      {event(Action::forward(1, 0), 0, 2.5, 1, 1.5),
       event(Action::forward(1, 1), 2.5, 4, 1, 0.5),
       event(Action::backward(1, 0), 4, 6, 2),
       event(Action::backward(1, 1), 6, 8, 2),
       event(Action::update(0), 8, 8, 0)}};
  std::vector<std::vector<double>> overhead = receiveOverheadMs(graph, traces);
  ASSERT_EQ(overhead.size(), 2u);
  std::vector<std::vector<double>> expected = {{0, 0, 0.5, 0.5, 0},
                                               {0.5, 0.5, 0, 0, 0}};
  for (size_t p = 0; p < 2; ++p) {
    ASSERT_EQ(overhead[p].size(), expected[p].size());
    for (size_t i = 0; i < expected[p].size(); ++i)
      EXPECT_NEAR(overhead[p][i], expected[p][i], 1e-9) << p << " " << i;
  }

  auto timing = compareWithSimulator(graph, config, *lists, traces);
  ASSERT_TRUE(bool(timing)) << llvm::toString(timing.takeError());
  EXPECT_NEAR(timing->measuredMs, 11.0, 1e-9);
  EXPECT_EQ(timing->receives, 4u);
  EXPECT_NEAR(timing->receiveMs, 0.5, 1e-9);
  EXPECT_NEAR(timing->simulatedMs, 11.0, 1e-6);
  EXPECT_NEAR(timing->freeTransfersMs, 9.0, 1e-6);
  std::string text = formatRunTiming(*timing);
  EXPECT_NE(text.find("receives as measured: median 0.500 ms beyond their "
                      "senders, 4 tasks waited"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("measured / simulated: 1.000"), std::string::npos)
      << text;
  EXPECT_NE(text.find("simulated with free transfers: 4.500 ms per "
                      "micro-batch, idle 0.333, measured / simulated 1.222"),
            std::string::npos)
      << text;
}

/// A zero-bubble run whose timeline is the simulator's own (F = 1, I = 2,
/// W = 1 ms, free transfers): the measured I and W costs reach the
/// simulator, which then predicts the measured time exactly.
TEST(RunTiming, SplitBackwardsGiveTheSimulatorTheirCosts) {
  schedule::StageGraph graph = schedule::StageGraph::chain({0, 1});
  schedule::ScheduleConfig config{schedule::Kind::ZeroBubbleH1, 3, 1};
  auto lists = schedule::generate(graph, config);
  ASSERT_TRUE(bool(lists)) << llvm::toString(lists.takeError());
  schedule::TimedStageGraph stages =
      schedule::TimedStageGraph::withCosts(graph, {1, 1}, {2, 2}, {1, 1}, 0);
  schedule::SimulatorConfig simulator;
  simulator.kind = config.kind;
  simulator.microBatches = config.microBatches;
  simulator.orders = *lists;
  auto simulated = schedule::simulate(
      stages, schedule::Links::uniform(2, 1e15, 0.0), simulator);
  ASSERT_TRUE(bool(simulated)) << llvm::toString(simulated.takeError());
  std::vector<std::vector<TraceEvent>> traces(2);
  for (const schedule::SimEvent &e : simulated->events) {
    if (e.onLink())
      continue;
    using K = schedule::SimEvent::Kind;
    Action action =
        e.kind == K::Forward         ? Action::forward(e.stage, e.microBatch)
        : e.kind == K::InputBackward ? Action::input(e.stage, e.microBatch)
                                     : Action::weight(e.stage, e.microBatch);
    traces[e.device].push_back(
        event(action, e.startMs, e.endMs, e.endMs - e.startMs));
  }
  for (auto &events : traces) {
    llvm::sort(events, [](const TraceEvent &a, const TraceEvent &b) {
      return a.startSeconds < b.startSeconds;
    });
    events.push_back(event(Action::update(0), events.back().endSeconds * 1e3,
                           events.back().endSeconds * 1e3, 0));
  }
  auto timing = compareWithSimulator(graph, config, *lists, traces);
  ASSERT_TRUE(bool(timing)) << llvm::toString(timing.takeError());
  EXPECT_NEAR(timing->measuredMs, simulated->makespanMs, 1e-9);
  EXPECT_NEAR(timing->simulatedMs, timing->measuredMs, 1e-6);
  EXPECT_NEAR(timing->simulatedIdle, timing->measuredIdle, 1e-6);
}

} // namespace

namespace {

/// One stage on one device run twice (F 1 ms, B 2 ms, 2 micro-batches of
/// GPipe, one each): the simulated step is 3 ms with free all-reduces, and
/// 3 + 2 ms with 2 MB of gradients ring all-reduced over the 2 replicas at
/// 1 GB/s (2 (2 - 1) / 2 x 2e6 bytes / 1e9 B/s = 2 ms on each process).
TEST(RunTiming, ReplicasAllReducesArePricedAtTheGivenRate) {
  schedule::StageGraph graph = schedule::StageGraph::chain({0});
  schedule::ScheduleConfig config{schedule::Kind::GPipe, 2, 1};
  auto lists = schedule::generate(graph, config);
  ASSERT_TRUE(bool(lists)) << llvm::toString(lists.takeError());
  schedule::ReplicaLayout layout{{2}};
  schedule::Schedule processLists = schedule::replicateSchedule(*lists, layout);
  std::vector<std::vector<TraceEvent>> traces = {
      {event(Action::forward(0, 0), 0, 1, 1),
       event(Action::backward(0, 0), 1, 3, 2),
       event(Action::update(0), 3, 5, 0)},
      {event(Action::forward(0, 1), 0, 1, 1),
       event(Action::backward(0, 1), 1, 3, 2),
       event(Action::update(0), 3, 5, 0)}};
  auto free = compareWithSimulator(graph, config, processLists, traces, layout);
  ASSERT_TRUE(bool(free)) << llvm::toString(free.takeError());
  EXPECT_NEAR(free->simulatedMs, 3.0, 1e-6);
  EXPECT_EQ(free->allReduceGBps, 0.0);
  EXPECT_EQ(formatRunTiming(*free).find("all-reduces at"), std::string::npos);

  std::vector<uint64_t> bytes = {2000000};
  auto priced = compareWithSimulator(graph, config, processLists, traces,
                                     layout, bytes, 1.0);
  ASSERT_TRUE(bool(priced)) << llvm::toString(priced.takeError());
  EXPECT_NEAR(priced->simulatedMs, 5.0, 1e-6);
  EXPECT_NEAR(priced->simulatedAllReduceMs, 4.0, 1e-6);
  EXPECT_NEAR(priced->measuredMs, 5.0, 1e-12);
  EXPECT_NE(formatRunTiming(*priced).find(
                "all-reduces at 1 GB/s: 4.000 ms over the processes"),
            std::string::npos)
      << formatRunTiming(*priced);

  // A rate without the stages' bytes, or a negative one, is refused.
  EXPECT_FALSE(bool(compareWithSimulator(graph, config, processLists, traces,
                                         layout, {}, 1.0)));
  auto negative = compareWithSimulator(graph, config, processLists, traces,
                                       layout, bytes, -1.0);
  ASSERT_FALSE(bool(negative));
  EXPECT_NE(llvm::toString(negative.takeError()).find("must be positive"),
            std::string::npos);
}

/// Each parameter's float bytes once per device that reads it, with the
/// device's lowest stage.
TEST(RunTiming, StageGradientBytesGoToEachReadersLowestStage) {
  schedule::StageGraph graph = schedule::StageGraph::chain({0, 1, 0});
  ParameterPlacement placement = {{"tied", {0, 1}}, {"head", {0}}};
  std::vector<ParameterInfo> parameters = {{"tied", {10, 10}, DType::BF16},
                                           {"head", {5}, DType::F32}};
  EXPECT_EQ(stageGradientBytes(graph, placement, parameters),
            (std::vector<uint64_t>{420, 400, 0}));
}

} // namespace

namespace {

/// ProcessCpus on host `host` with CPUs `cpus`.
ProcessCpus on(const char *host, std::initializer_list<int> cpus) {
  ProcessCpus process;
  std::strncpy(process.host, host, sizeof(process.host) - 1);
  for (int cpu : cpus)
    process.cpus[cpu / 64] |= uint64_t(1) << (cpu % 64);
  return process;
}

// mpirun's bindings on 2 cores: 2 processes a core each (two nodes of one
// core), 4 processes on both (one node of 2 cores); another host is
// another node whatever its CPUs; overlaps join through a third process.
TEST(RunTiming, SharedCoresFollowHostsAndAffinity) {
  schedule::SharedCores two = sharedCoresOf({on("a", {0}), on("a", {1})});
  EXPECT_EQ(two.node, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(two.cores, (std::vector<uint32_t>{1, 1}));
  EXPECT_FALSE(two.shares());
  schedule::SharedCores four = sharedCoresOf(
      {on("a", {0, 1}), on("a", {0, 1}), on("a", {0, 1}), on("a", {0, 1})});
  EXPECT_EQ(four.node, (std::vector<uint32_t>{0, 0, 0, 0}));
  EXPECT_EQ(four.cores, (std::vector<uint32_t>{2}));
  EXPECT_EQ(four.str(), "4 devices on 2 cores");
  schedule::SharedCores hosts = sharedCoresOf(
      {on("a", {0}), on("b", {0}), on("a", {70, 1}), on("a", {1, 2})});
  EXPECT_EQ(hosts.node, (std::vector<uint32_t>{0, 1, 2, 2}));
  EXPECT_EQ(hosts.cores, (std::vector<uint32_t>{1, 1, 3}));
  EXPECT_GE(ProcessCpus::current().count(), 1);
}

// Two stages of a chain on two processes sharing one core, GPipe over 2
// micro-batches, F 1 ms and B 2 ms of CPU each: a timeline that runs as
// processor sharing does (the simulator's own, wall times from it) is
// predicted exactly from its CPU times; on cores of their own, with the
// wall times, the same lists take another time, printed beside it.
TEST(RunTiming, SharedCoresSimulateWithCpuTimes) {
  schedule::StageGraph graph = schedule::StageGraph::chain({0, 1});
  schedule::ScheduleConfig config{schedule::Kind::GPipe, 2, 1};
  auto lists = schedule::generate(graph, config);
  ASSERT_TRUE(bool(lists)) << llvm::toString(lists.takeError());
  schedule::TimedStageGraph stages =
      schedule::TimedStageGraph::withCosts(graph, {1, 1}, {2, 2}, {0, 0}, 0);
  schedule::SimulatorConfig simulator;
  simulator.kind = config.kind;
  simulator.orders = *lists;
  simulator.sharedCores = {{0, 0}, {1}};
  auto shared = schedule::simulate(
      stages, schedule::Links::uniform(2, 1e15, 0.0), simulator);
  ASSERT_TRUE(bool(shared)) << llvm::toString(shared.takeError());
  std::vector<std::vector<TraceEvent>> traces(2);
  for (const schedule::SimEvent &e : shared->events) {
    if (e.onLink())
      continue;
    bool forward = e.kind == schedule::SimEvent::Kind::Forward;
    TraceEvent step = event(forward ? Action::forward(e.stage, e.microBatch)
                                    : Action::backward(e.stage, e.microBatch),
                            e.startMs, e.endMs, e.endMs - e.startMs);
    step.cpuSeconds = (forward ? 1.0 : 2.0) / 1e3;
    traces[e.device].push_back(step);
  }
  for (auto &events : traces) {
    llvm::sort(events, [](const TraceEvent &a, const TraceEvent &b) {
      return a.startSeconds < b.startSeconds;
    });
    events.push_back(event(Action::update(0), events.back().endSeconds * 1e3,
                           events.back().endSeconds * 1e3, 0));
  }
  // 12 ms of work on one core.
  EXPECT_DOUBLE_EQ(shared->makespanMs, 12.0);
  auto timing = compareWithSimulator(graph, config, *lists, traces, {}, {}, 0,
                                     simulator.sharedCores);
  ASSERT_TRUE(bool(timing)) << llvm::toString(timing.takeError());
  EXPECT_TRUE(timing->sharedCores);
  EXPECT_NEAR(timing->simulatedMs, timing->measuredMs, 1e-9);
  EXPECT_NEAR(timing->simulatedIdle, timing->measuredIdle, 1e-9);
  EXPECT_EQ(timing->stageForwardMs, (std::vector<double>{1, 1}));
  EXPECT_GT(timing->ownCoresMs, 0.0);
  std::string text = formatRunTiming(*timing);
  EXPECT_NE(text.find("(processes: 2 devices on 1 core)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("per-stage CPU times measured in this run (with "
                      "their receives' own work), 2 devices on 1 core "
                      "shared)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("simulated on cores of their own (wall times; no task "
                      "waited for a message)"),
            std::string::npos)
      << text;

  // A core each: the wall times, as without the cores.
  auto own = compareWithSimulator(graph, config, *lists, traces, {}, {}, 0,
                                  {{0, 1}, {1, 1}});
  ASSERT_TRUE(bool(own)) << llvm::toString(own.takeError());
  EXPECT_FALSE(own->sharedCores);
  EXPECT_NEAR(own->simulatedMs, timing->ownCoresMs, 1e-9);
  auto refused = compareWithSimulator(graph, config, *lists, traces, {}, {}, 0,
                                      {{0}, {1}});
  ASSERT_FALSE(bool(refused));
  EXPECT_EQ(llvm::toString(refused.takeError()),
            "timing: the cores place 1 processes, the run has 2");
}

} // namespace
