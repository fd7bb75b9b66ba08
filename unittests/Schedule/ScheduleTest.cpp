//===- ScheduleTest.cpp - Schedule generators and dry run ----------------===//
//
// Golden text files for small pipelines (read them to check a schedule by
// eye; FTPIPE_UPDATE_GOLDEN=1 rewrites them), in-flight bounds that define
// GPipe / 1F1B / the depth rule, deadlocks the dry run must report, and a
// property test over random stage graphs and placements.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/Schedule.h"

#include "RandomStageGraph.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <cstdlib>
#include <random>

using namespace ftpipe::schedule;

namespace {

/// The message of a failed Expected, or "success" (consumes the error).
template <typename T> std::string outcome(llvm::Expected<T> &value) {
  return value ? std::string("success") : llvm::toString(value.takeError());
}
template <typename T> std::string outcome(llvm::Expected<T> &&value) {
  return outcome(value);
}

Schedule generated(const StageGraph &graph, const ScheduleConfig &config) {
  llvm::Expected<Schedule> schedule = generate(graph, config);
  EXPECT_EQ(outcome(schedule), "success");
  return schedule ? *schedule : Schedule();
}

DryRunResult ranDry(const StageGraph &graph, const ScheduleConfig &config,
                    const Schedule &schedule) {
  llvm::Expected<DryRunResult> result = dryRun(graph, config, schedule);
  EXPECT_EQ(outcome(result), "success");
  return result ? *result : DryRunResult();
}

void checkGolden(const std::string &name, const std::string &text) {
  std::string path = std::string(FTPIPE_SCHEDULE_GOLDEN_DIR) + "/" + name;
  if (std::getenv("FTPIPE_UPDATE_GOLDEN")) {
    std::error_code error;
    llvm::raw_fd_ostream out(path, error);
    ASSERT_FALSE(error) << path;
    out << text;
    return;
  }
  auto buffer = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(bool(buffer)) << "missing golden file " << path;
  EXPECT_EQ((*buffer)->getBuffer().str(), text) << "differs from " << path;
}

TEST(ScheduleText, ActionsRoundTrip) {
  for (const char *text : {"2F0", "0B13", "1I3", "12W0", "U4"}) {
    llvm::Expected<Action> action = parseAction(text);
    ASSERT_EQ(outcome(action), "success");
    EXPECT_EQ(action->str(), text);
  }
  for (const char *bad : {"F0", "2X0", "U", "2F", "-1F0", "2F0x"})
    EXPECT_NE(outcome(parseAction(bad)), "success") << bad;
}

TEST(ScheduleText, SchedulesRoundTrip) {
  Schedule schedule =
      generated(StageGraph::chain({0, 1, 0}), {Kind::OneFOneB, 3, 2});
  llvm::Expected<Schedule> parsed = parseSchedule(schedule.str());
  ASSERT_EQ(outcome(parsed), "success");
  EXPECT_EQ(parsed->devices, schedule.devices);
  EXPECT_NE(outcome(parseSchedule("device 1: 0F0\n")), "success");
}

struct GoldenCase {
  const char *file;
  std::vector<int64_t> placement;
  ScheduleConfig config;
};

TEST(ScheduleGolden, SmallPipelines) {
  std::vector<GoldenCase> cases = {
      {"gpipe-4x4.txt", {0, 1, 2, 3}, {Kind::GPipe, 4, 1}},
      {"1f1b-4x4.txt", {0, 1, 2, 3}, {Kind::OneFOneB, 4, 1}},
      {"1f1b-3x2-steps2.txt", {0, 1, 2}, {Kind::OneFOneB, 2, 2}},
      {"async-3x2-steps3.txt", {0, 1, 2}, {Kind::Async, 2, 3}},
      {"1f1b-mixed-4on3.txt", {0, 1, 2, 0}, {Kind::OneFOneB, 4, 1}},
      {"async-mixed-4on3.txt", {0, 1, 2, 0}, {Kind::Async, 2, 3}},
  };
  for (const GoldenCase &c : cases) {
    StageGraph graph = StageGraph::chain(c.placement);
    Schedule schedule = generated(graph, c.config);
    ranDry(graph, c.config, schedule);
    checkGolden(c.file, schedule.str());
  }
}

// GPipe keeps all M micro-batches in flight; 1F1B keeps min(M, height + 1)
// per stage; async keeps height + 1 (the depth rule), however long the run.
TEST(ScheduleBounds, InFlightPerSchedule) {
  StageGraph graph = StageGraph::chain({0, 1, 2, 3});
  for (int64_t m : {2, 4, 8}) {
    DryRunResult gpipe = ranDry(graph, {Kind::GPipe, m, 2},
                                generated(graph, {Kind::GPipe, m, 2}));
    DryRunResult oneF = ranDry(graph, {Kind::OneFOneB, m, 2},
                               generated(graph, {Kind::OneFOneB, m, 2}));
    DryRunResult async = ranDry(graph, {Kind::Async, m, 3},
                                generated(graph, {Kind::Async, m, 3}));
    for (int64_t d = 0; d < 4; ++d) {
      EXPECT_EQ(gpipe.peakInFlight[d], m);
      EXPECT_EQ(oneF.peakInFlight[d], std::min<int64_t>(m, 4 - d));
      EXPECT_EQ(async.peakInFlight[d], std::min<int64_t>(3 * m, 4 - d));
    }
    // The async pipeline never drains between steps: fewer rounds.
    EXPECT_LT(async.rounds, oneF.rounds * 3 / 2);
  }
}

TEST(ScheduleDryRun, ReportsDeadlock) {
  StageGraph graph = StageGraph::chain({0, 1});
  ScheduleConfig config{Kind::GPipe, 1, 1};
  llvm::Expected<Schedule> schedule =
      parseSchedule("device 0: 0F0 0B0 U0\ndevice 1: 1B0 1F0 U0\n");
  ASSERT_EQ(outcome(schedule), "success");
  EXPECT_EQ(outcome(dryRun(graph, config, *schedule)),
            std::string("the schedule deadlocks after 1 rounds: device "
                        "0 at 0B0 waits for 1B0; device 1 at 1B0 waits "
                        "for 1F0"));
}

TEST(ScheduleDryRun, ReportsTiedUpdatesOutOfStep) {
  // Device 0 updates before its next forward, device 1 only after the
  // forward that needs it: fine alone, a deadlock when their updates must
  // meet (tied weights).
  StageGraph graph = StageGraph::chain({0, 1});
  graph.tiedDevices = {{0, 1}};
  ScheduleConfig config{Kind::Async, 1, 2};
  llvm::Expected<Schedule> schedule = parseSchedule(
      "device 0: 0F0 0B0 U0 0F1 0B1 U1\ndevice 1: 1F0 1B0 1F1 U0 1B1 U1\n");
  ASSERT_EQ(outcome(schedule), "success");
  EXPECT_THAT(outcome(dryRun(graph, config, *schedule)),
              testing::HasSubstr("device 0 at U0 waits for its tied devices' "
                                 "update"));
  graph.tiedDevices.clear();
  EXPECT_EQ(outcome(dryRun(graph, config, *schedule)), "success");
}

TEST(ScheduleDryRun, RefusesIncompleteLists) {
  StageGraph graph = StageGraph::chain({0, 1});
  ScheduleConfig config{Kind::GPipe, 1, 1};
  auto check = [&](const char *text, const char *message) {
    llvm::Expected<Schedule> schedule = parseSchedule(text);
    ASSERT_EQ(outcome(schedule), "success");
    EXPECT_EQ(outcome(dryRun(graph, config, *schedule)), message);
  };
  check("device 0: 0F0 0B0 U0\ndevice 1: 1F0 1F0 U0\n",
        "device 1 lists 1F0 twice");
  check("device 0: 0F0 0B0 U0\ndevice 1: 1F0 U0\n",
        "device 1 lists 2 actions, the run has 3 for it");
  check("device 0: 0F0 0B0 U0\ndevice 1: 0F0 1B0 U0\n",
        "device 1 lists 0F0, but stage 0 is not on it");
  check("device 0: 0F0 0B0 U1\ndevice 1: 1F0 1B0 U0\n",
        "device 0 lists U1, beyond the run's 1");
}

TEST(ScheduleGenerate, RefusesBadGraphs) {
  StageGraph cycle;
  cycle.producers = {{1}, {0}};
  cycle.device = {0, 1};
  cycle.devices = 2;
  EXPECT_EQ(outcome(generate(cycle, {})), "the stage graph has a cycle");
  StageGraph idle = StageGraph::chain({0, 2});
  EXPECT_EQ(outcome(generate(idle, {})), "device 1 holds no stage");
  EXPECT_NE(outcome(parseName<Kind>("zb")), "success");
}

// Random stage DAGs (stages in topological order, each reading one to
// three earlier ones), random placements with several stages per device and
// random tied groups: every generated schedule runs dry to the end.
TEST(ScheduleProperty, RandomGraphsNeverDeadlock) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 300; ++trial) {
    StageGraph graph = test::randomGraph(rng);
    // GPipe, 1F1B, async or zb-h1.
    ScheduleConfig config{static_cast<Kind>(rng() % 4),
                          static_cast<int64_t>(1 + rng() % 5),
                          static_cast<int64_t>(1 + rng() % 3)};
    llvm::Expected<Schedule> schedule = generate(graph, config);
    ASSERT_EQ(outcome(schedule), "success") << "trial " << trial;
    ASSERT_EQ(outcome(dryRun(graph, config, *schedule)), "success")
        << "trial " << trial << "\n"
        << schedule->str();
  }
}

} // namespace
