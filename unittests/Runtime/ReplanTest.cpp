//===- ReplanTest.cpp - Re-planning's policy, prediction and decision -----===//

#include "FTPipe/Runtime/Replan.h"
#include "FTPipe/Runtime/Transport.h"

#include "gtest/gtest.h"

#include <thread>

using namespace ftpipe;
using namespace ftpipe::runtime;

namespace {

TEST(ReplanTest, ParsesPolicies) {
  auto every = parseReplanPolicy("every=3", 0.1, 1);
  ASSERT_TRUE(bool(every)) << llvm::toString(every.takeError());
  EXPECT_EQ(every->mode, ReplanPolicy::Mode::Every);
  EXPECT_EQ(every->every, 3);
  EXPECT_DOUBLE_EQ(every->threshold, 0.1);
  EXPECT_EQ(every->warmup, 1);
  auto automatic = parseReplanPolicy("auto", 0.05, 2);
  ASSERT_TRUE(bool(automatic));
  EXPECT_EQ(automatic->mode, ReplanPolicy::Mode::Auto);
  auto off = parseReplanPolicy("off", 0.05, 2);
  ASSERT_TRUE(bool(off));
  EXPECT_FALSE(off->enabled());
  for (auto [mode, threshold, warmup] :
       {std::make_tuple("every=0", 0.05, 2),
        std::make_tuple("every=x", 0.05, 2),
        std::make_tuple("sometimes", 0.05, 2), std::make_tuple("auto", -0.1, 2),
        std::make_tuple("auto", 1.0, 2), std::make_tuple("auto", 0.05, -1)}) {
    auto refused = parseReplanPolicy(mode, threshold, warmup);
    EXPECT_FALSE(bool(refused)) << mode;
    if (!refused) {
      EXPECT_NE(llvm::toString(refused.takeError()).find("--replan"),
                std::string::npos);
    }
  }
}

TEST(ReplanTest, BusiestOverMean) {
  EXPECT_DOUBLE_EQ(busiestOverMean({}), 1.0);
  EXPECT_DOUBLE_EQ(busiestOverMean({0, 0}), 1.0);
  EXPECT_DOUBLE_EQ(busiestOverMean({3, 1}), 1.5);
  EXPECT_DOUBLE_EQ(busiestOverMean({2, 2, 2}), 1.0);
}

TEST(ReplanTest, WhenAReplanIsDue) {
  ReplanPolicy every{ReplanPolicy::Mode::Every, 3, 0.05, 2};
  ReplanState start;
  // Not before a step after the warm-up, nor while compiling.
  EXPECT_FALSE(replanDue(every, 2, start, 2.0));
  EXPECT_TRUE(replanDue(every, 3, start, 1.0));
  ReplanState compiling;
  compiling.compiling = true;
  EXPECT_FALSE(replanDue(every, 3, compiling, 1.0));
  EXPECT_FALSE(replanDue(every, 4, start, 1.0));
  // A plan taken after step 3: its warm-up counts again.
  ReplanState moved;
  moved.planStart = 3;
  moved.replanned = true;
  EXPECT_FALSE(replanDue(every, 3, moved, 1.0));
  EXPECT_FALSE(replanDue(every, 5, moved, 1.0));
  EXPECT_TRUE(replanDue(every, 6, moved, 1.0));

  ReplanPolicy automatic{ReplanPolicy::Mode::Auto, 0, 0.05, 2};
  EXPECT_FALSE(replanDue(automatic, 2, start, 1.5));
  // Once after the warm-up, whatever the balance.
  EXPECT_TRUE(replanDue(automatic, 3, start, 1.0));
  // Then only on a drift above the baseline by more than the threshold,
  // over a window of kReplanDriftSteps steps at least.
  ReplanState kept;
  kept.replanned = true;
  kept.baseline = 1.2;
  int64_t full = 2 + kReplanDriftSteps;
  EXPECT_FALSE(replanDue(automatic, full - 1, kept, 2.0));
  EXPECT_FALSE(replanDue(automatic, full, kept, 1.25));
  EXPECT_TRUE(replanDue(automatic, full, kept, 1.27));
  // Without a baseline yet (a plan just moved to), not at all.
  moved.planStart = 10;
  EXPECT_FALSE(replanDue(automatic, 10 + full, moved, 3.0));
  moved.baseline = 1.0;
  EXPECT_TRUE(replanDue(automatic, 10 + full, moved, 1.06));
  kept.compiling = true;
  EXPECT_FALSE(replanDue(automatic, full, kept, 2.0));

  ReplanPolicy off;
  EXPECT_FALSE(replanDue(off, 10, start, 3.0));
}

TEST(ReplanTest, PredictsAStepWithTheSimulator) {
  // Two stages on two devices, 1F1B, 2 micro-batches: F0 F0 on device 0,
  // then the backward; a slower stage 1 makes the step longer and the
  // balance worse.
  schedule::StageGraph graph = schedule::StageGraph::chain({0, 1});
  schedule::ScheduleConfig config;
  config.kind = schedule::Kind::OneFOneB;
  config.microBatches = 2;
  auto even = predictStep(graph, config, {1, 1}, {2, 2});
  ASSERT_TRUE(bool(even)) << llvm::toString(even.takeError());
  EXPECT_NEAR(even->balance, 1.0, 1e-12);
  ASSERT_EQ(even->deviceMs.size(), 2u);
  EXPECT_NEAR(even->deviceMs[0], 6.0, 1e-9);
  auto uneven = predictStep(graph, config, {1, 3}, {2, 6});
  ASSERT_TRUE(bool(uneven));
  EXPECT_GT(uneven->stepMs, even->stepMs);
  EXPECT_NEAR(uneven->balance, 18.0 / 12.0, 1e-9);
  EXPECT_FALSE(bool(predictStep(graph, config, {1}, {2, 2})));
  llvm::consumeError(predictStep(graph, config, {1}, {2, 2}).takeError());
}

TEST(ReplanTest, PricesTheMeasuredPlanAsTheCostModelDoes) {
  // Wall times say stage 1 is 3x slower (a loaded machine); CPU times say
  // the stages are even. A CPU-target profile is priced with its CPU
  // times, as ftpipe-annotate-costs prices the new plan; another target's
  // with the wall times; a stage without CPU times means wall times.
  schedule::StageGraph graph = schedule::StageGraph::chain({0, 1});
  schedule::ScheduleConfig config;
  config.kind = schedule::Kind::OneFOneB;
  config.microBatches = 2;
  MeasuredProfile profile;
  profile.source.target = "cpu";
  profile.stages.resize(2);
  for (int64_t s = 0; s < 2; ++s) {
    profile.stages[s].id = profile.stages[s].device = s;
    profile.stages[s].forwardMs = s ? 3 : 1;
    profile.stages[s].backwardMs = s ? 6 : 2;
    profile.stages[s].forwardCpuMs = 1;
    profile.stages[s].backwardCpuMs = 2;
  }
  EXPECT_TRUE(profile.pricesCpuTime());
  auto cpu = predictMeasured(graph, config, profile);
  ASSERT_TRUE(bool(cpu)) << llvm::toString(cpu.takeError());
  EXPECT_NEAR(cpu->balance, 1.0, 1e-12);
  profile.source.target = "cuda";
  EXPECT_FALSE(profile.pricesCpuTime());
  auto wall = predictMeasured(graph, config, profile);
  ASSERT_TRUE(bool(wall));
  EXPECT_NEAR(wall->balance, 18.0 / 12.0, 1e-9);
  profile.source.target = "cpu";
  profile.stages[1].forwardCpuMs.reset();
  profile.stages[1].backwardCpuMs.reset();
  EXPECT_FALSE(profile.pricesCpuTime());
}

TEST(ReplanTest, Decides) {
  PlanPrediction current{10.0, 1.5, {}}, faster{9.0, 1.1, {}},
      slightly{9.8, 1.4, {}};
  ReplanDecision taken = decideReplan(current, faster, 0.05);
  EXPECT_TRUE(taken.migrate);
  EXPECT_NEAR(taken.gain, 0.1, 1e-12);
  EXPECT_NE(taken.reason.find("taken: predicted step 10.000 ms -> 9.000 ms "
                              "(10.0 %)"),
            std::string::npos)
      << taken.reason;
  ReplanDecision small = decideReplan(current, slightly, 0.05);
  EXPECT_FALSE(small.migrate);
  EXPECT_NE(small.reason.find("not above the threshold (5.0 %)"),
            std::string::npos)
      << small.reason;
  // The gain must exceed the threshold, not equal it.
  EXPECT_FALSE(decideReplan(current, faster, 0.1).migrate);
  ReplanDecision unusable =
      decideReplan(current, faster, 0.05, "it does not fit device 1");
  EXPECT_FALSE(unusable.migrate);
  EXPECT_NE(unusable.reason.find("not taken: it does not fit device 1"),
            std::string::npos);
  ReplanDecision slower = decideReplan(current, {12.0, 1.0, {}}, 0.05);
  EXPECT_FALSE(slower.migrate);
  EXPECT_LT(slower.gain, 0);
}

TEST(ReplanTest, ExchangesTheControlEveryStep) {
  LocalMailbox mailbox(3, 10.0);
  std::vector<ReplanControl> got(3);
  std::vector<double> seen;
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < 3; ++d)
    threads.emplace_back([&, d] {
      for (int64_t step = 1; step <= 2; ++step)
        got[d] = exchangeReplanControl(mailbox.endpoint(d), step, 0.5 * (d + 1),
                                       [&](std::vector<double> compute) {
                                         seen = compute;
                                         ReplanControl control;
                                         if (step == 2) {
                                           control.action =
                                               ReplanControl::Action::Migrate;
                                           control.directory = "/plans/next";
                                         }
                                         return control;
                                       });
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(seen, (std::vector<double>{0.5, 1.0, 1.5}));
  for (const ReplanControl &control : got) {
    EXPECT_EQ(control.action, ReplanControl::Action::Migrate);
    EXPECT_EQ(control.directory, "/plans/next");
  }
}

TEST(ReplanTest, AFailedCompileSaysWhy) {
  ManifestCompile command{"/no/such/model.mlir", {"--devices=2"}};
  std::string log = ::testing::TempDir() + "/replan-test-compile.log";
  // `false` runs and fails: the failure names its status and log.
  auto started = PlanCompile::start("/bin/false", command, "p.json",
                                    ::testing::TempDir() + "/replan-out", log);
  ASSERT_TRUE(bool(started)) << llvm::toString(started.takeError());
  std::optional<llvm::Error> finished = started->poll(/*wait=*/true);
  ASSERT_TRUE(finished.has_value());
  ASSERT_TRUE(bool(*finished));
  std::string message = llvm::toString(std::move(*finished));
  EXPECT_NE(message.find("exited with status 1"), std::string::npos) << message;
  EXPECT_NE(message.find(log), std::string::npos) << message;
  // A compiler that does not exist does not start.
  auto missing = PlanCompile::start("/no/such/ftpipe-compile", command,
                                    "p.json", "out", log);
  EXPECT_FALSE(bool(missing));
  llvm::consumeError(missing.takeError());
}

TEST(ReplanTest, ACompileThatLeavesNoPlanSaysSoAtItsEnd) {
  ManifestCompile command{"/no/such/model.mlir", {"--devices=2"}};
  std::string log = ::testing::TempDir() + "/replan-test-true.log";
  std::string directory = ::testing::TempDir() + "/replan-no-plan";
  // `true` exits 0 without writing a plan: finishing it fails on the plan.
  auto started = PlanCompile::start("/bin/true", command, "", directory, log);
  ASSERT_TRUE(bool(started)) << llvm::toString(started.takeError());
  auto finished = started->finish(/*wait=*/true);
  ASSERT_TRUE(finished.has_value());
  ASSERT_FALSE(bool(*finished));
  std::string message = llvm::toString(finished->takeError());
  EXPECT_NE(message.find("manifest.json"), std::string::npos) << message;
}

} // namespace
