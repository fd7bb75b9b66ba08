//===- SeqPipeTest.cpp - Seq-Pipe DP and greedy -----------------*- C++ -*-===//
//
// The DP must equal brute force (every contiguous split, scored by
// evaluatePlan, memory included) on graphs small enough to enumerate, over
// graph families, device counts, schedules, recomputation and memory
// limits; greedy must be feasible and never better than the DP; both must
// fail with a helpful message when nothing fits. Polishing by the simulator
// must keep the objective and contiguity and never simulate slower.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/SeqPipe.h"
#include "FTPipe/Partition/Simulator.h"
#include "FTPipe/Partition/Verify.h"

#include "TestUtil.h"

#include <limits>

using namespace ftpipe::partition;
using namespace ftpipe::partition::test;

namespace {

struct Brute {
  double best = std::numeric_limits<double>::infinity();
  uint64_t minPeakMemory = ~uint64_t(0);
  uint64_t maxPeakMemory = 0;
};

/// Every split into at most `maxStages` contiguous stages.
Brute bruteForce(const Graph &g, const Hardware &hw,
                 const ObjectiveConfig &config, size_t maxStages) {
  Brute out;
  size_t n = g.numNodes();
  for (uint64_t mask = 0; mask < (1ull << (n - 1)); ++mask) {
    if (size_t(__builtin_popcountll(mask)) + 1 > maxStages)
      continue;
    std::vector<uint32_t> cuts;
    for (size_t i = 0; i + 1 < n; ++i)
      if (mask >> i & 1)
        cuts.push_back(uint32_t(i + 1));
    Plan plan = contiguousPlan(n, cuts, hw.numDevices());
    PlanMetrics m = unwrap(evaluatePlan(g, hw, plan, config));
    uint64_t peak = 0;
    for (const DeviceMetrics &d : m.devices)
      peak = std::max(peak, d.memoryBytes);
    out.minPeakMemory = std::min(out.minPeakMemory, peak);
    out.maxPeakMemory = std::max(out.maxPeakMemory, peak);
    if (m.memoryFits)
      out.best = std::min(out.best, m.asyncMsPerMicroBatch);
  }
  return out;
}

TEST(SeqPipe, ContiguousPlanUsesTheLastDevices) {
  Plan plan = contiguousPlan(5, {2, 4}, 8);
  EXPECT_EQ(plan.nodeStage, (std::vector<StageId>{0, 0, 1, 1, 2}));
  EXPECT_EQ(plan.stageDevice, (std::vector<DeviceId>{5, 6, 7}));
}

TEST(SeqPipe, EqualChainSplitsEvenly) {
  Graph g = chain(8, 1, 2, 0);
  Hardware hw = uniformHardware(4);
  SeqPipeConfig config;
  SeqPipeResult dp = unwrap(seqPipeDP(g, hw, config));
  EXPECT_DOUBLE_EQ(dp.objectiveMs, 6.0);
  EXPECT_EQ(dp.plan.nodeStage, (std::vector<StageId>{0, 0, 1, 1, 2, 2, 3, 3}));
  SeqPipeResult greedy = unwrap(seqPipeGreedy(g, hw, config));
  EXPECT_DOUBLE_EQ(greedy.objectiveMs, 6.0);
}

TEST(SeqPipe, CommunicationCanMakeFewerStagesBetter) {
  // Huge activations on a slow link: one stage (no traffic) wins.
  Graph g = chain(4, 1, 1, 1'000'000'000);
  Hardware hw = uniformHardware(2, /*gbps=*/1.0);
  SeqPipeResult dp = unwrap(seqPipeDP(g, hw, {}));
  EXPECT_DOUBLE_EQ(dp.objectiveMs, 8.0);
  EXPECT_EQ(dp.plan.numStages(), 1u);
  EXPECT_EQ(dp.plan.stageDevice, (std::vector<DeviceId>{1}));
}

TEST(SeqPipe, NothingFits) {
  GraphBuilder b;
  b.addNode("a", "t", {1, 1, 0, 0});
  b.addNode("b", "t", {1, 1, 0, 0});
  b.addEdge(0, 1, 8);
  b.addParamUse(0, b.addParam("w", 1000));
  Graph g = unwrap(b.build());
  Hardware hw = uniformHardware(2, 1.0, 0.0, /*memory=*/3000);
  for (bool dp : {true, false}) {
    llvm::Expected<SeqPipeResult> r =
        dp ? seqPipeDP(g, hw, {}) : seqPipeGreedy(g, hw, {});
    ASSERT_FALSE(bool(r));
    std::string err = llvm::toString(r.takeError());
    EXPECT_NE(err.find("no contiguous split of 2 nodes into at most 2 "
                       "stages fits"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("recomputation"), std::string::npos) << err;
  }
}

TEST(SeqPipe, StateBudget) {
  RandomGraphOptions o;
  o.family = GraphFamily::Wide;
  o.numNodes = 60;
  Graph g = unwrap(generateRandomGraph(o));
  SeqPipeConfig config;
  config.maxStates = 10;
  config.greedyBound = false;
  llvm::Expected<SeqPipeResult> r = seqPipeDP(g, uniformHardware(4), config);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("gave up"), std::string::npos);
}

struct BruteCase {
  GraphFamily family;
  uint64_t seed;
  size_t devices;
};

class SeqPipeBruteForce : public ::testing::TestWithParam<BruteCase> {};

TEST_P(SeqPipeBruteForce, DPEqualsBruteForceAndGreedyIsFeasible) {
  const BruteCase &bc = GetParam();
  RandomGraphOptions o;
  o.family = bc.family;
  o.seed = bc.seed;
  o.numNodes = 4 + uint32_t(bc.seed % 9); // 4..12 nodes
  // Traffic comparable to compute, so cuts matter.
  o.minBytes = 100'000;
  o.maxBytes = 4'000'000;
  Graph g = unwrap(generateRandomGraph(o));
  for (int variant = 0; variant < 4; ++variant) {
    ObjectiveConfig config;
    const Kind kinds[] = {Kind::Async, Kind::GPipe, Kind::OneFOneB};
    config.schedule = kinds[(bc.seed + variant) % 3];
    config.recompute = variant % 2;
    config.microBatches = 1 + variant;
    // Odd variants: links of different speeds and devices of different
    // speeds (the DP's general mode); even ones: identical devices.
    auto makeHardware = [&](uint64_t memory) {
      HardwareSpec spec = uniformHardware(bc.devices, 2.0, 10.0, memory).spec();
      if (variant % 2 == 1) {
        for (DeviceId a = 0; a < bc.devices; ++a) {
          spec.devices[a].tflops = 1.0 + 0.5 * (a % 2);
          for (DeviceId b = a + 1; b < bc.devices; ++b)
            spec.links.push_back({a, b, 0.5 + (a + 2 * b) % 3, 5.0 * b});
        }
      }
      return unwrap(Hardware::create(spec));
    };
    Hardware loose = makeHardware(1ull << 50);
    Brute unlimited = bruteForce(g, loose, config, bc.devices);
    // A budget between the smallest and largest peak memory of all splits
    // makes memory bind.
    uint64_t budget =
        unlimited.minPeakMemory +
        (unlimited.maxPeakMemory - unlimited.minPeakMemory) * variant / 4;
    Hardware hw = makeHardware(budget);
    Brute brute = bruteForce(g, hw, config, bc.devices);
    ASSERT_LT(brute.best, std::numeric_limits<double>::infinity());
    SeqPipeConfig sp;
    sp.objective = config;
    SeqPipeResult dp = unwrap(seqPipeDP(g, hw, sp));
    EXPECT_NEAR(dp.objectiveMs, brute.best, 1e-9 * brute.best)
        << "variant " << variant;
    // The DP alone, without the greedy bound, finds the same optimum.
    SeqPipeConfig alone = sp;
    alone.greedyBound = false;
    SeqPipeResult dpAlone = unwrap(seqPipeDP(g, hw, alone));
    EXPECT_NEAR(dpAlone.objectiveMs, brute.best, 1e-9 * brute.best)
        << "variant " << variant;
    EXPECT_EQ(message(verifyPlan(g, hw, dp.plan, config)), "");
    llvm::Expected<SeqPipeResult> greedy = seqPipeGreedy(g, hw, sp);
    if (greedy) {
      EXPECT_GE(greedy->objectiveMs, dp.objectiveMs * (1 - 1e-9));
      EXPECT_EQ(message(verifyPlan(g, hw, greedy->plan, config)), "");
    } else {
      llvm::consumeError(greedy.takeError()); // greedy may miss tight fits
    }
    // Below the smallest peak nothing fits, and the DP says so.
    if (unlimited.minPeakMemory > 1) {
      Hardware tiny = makeHardware(unlimited.minPeakMemory - 1);
      llvm::Expected<SeqPipeResult> none = seqPipeDP(g, tiny, sp);
      EXPECT_FALSE(bool(none));
      if (!none)
        llvm::consumeError(none.takeError());
    }
  }
}

std::vector<BruteCase> bruteCases() {
  std::vector<BruteCase> cases;
  for (GraphFamily f :
       {GraphFamily::Chain, GraphFamily::Layered, GraphFamily::Wide})
    for (uint64_t seed = 1; seed <= 9; ++seed)
      for (size_t devices : {1, 2, 3, 4})
        cases.push_back({f, seed, devices});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(TinyGraphs, SeqPipeBruteForce,
                         ::testing::ValuesIn(bruteCases()));

TEST(SeqPipe, DPEqualsBruteForceInDeepPipelinesWithTightMemory) {
  // Parameter-heavy layered graphs on six devices with memory just above
  // what the leanest split needs: most cuts leave a prefix that no number
  // of remaining stages can hold, which the DP prunes before expanding.
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    RandomGraphOptions o;
    o.family = GraphFamily::Layered;
    o.seed = seed;
    o.numNodes = 18;
    o.paramProbability = 0.9;
    o.minParamBytes = 64 << 20;
    o.maxParamBytes = 256 << 20;
    o.minBytes = 100'000;
    o.maxBytes = 4'000'000;
    Graph g = unwrap(generateRandomGraph(o));
    ObjectiveConfig config;
    config.optimizer = Optimizer::Adam;
    config.recompute = seed % 2;
    size_t devices = 6;
    Brute unlimited = bruteForce(
        g, uniformHardware(devices, 2.0, 10.0, 1ull << 50), config, devices);
    for (uint64_t eighths : {0, 1, 3}) {
      uint64_t budget =
          unlimited.minPeakMemory +
          (unlimited.maxPeakMemory - unlimited.minPeakMemory) * eighths / 8;
      Hardware hw = uniformHardware(devices, 2.0, 10.0, budget);
      Brute brute = bruteForce(g, hw, config, devices);
      ASSERT_LT(brute.best, std::numeric_limits<double>::infinity());
      for (bool bound : {true, false}) {
        SeqPipeConfig sp;
        sp.objective = config;
        sp.greedyBound = bound;
        SeqPipeResult dp = unwrap(seqPipeDP(g, hw, sp));
        EXPECT_NEAR(dp.objectiveMs, brute.best, 1e-9 * brute.best)
            << "seed " << seed << ", budget " << eighths << "/8, bound "
            << bound;
        EXPECT_EQ(message(verifyPlan(g, hw, dp.plan, config)), "");
      }
    }
  }
}

TEST(SeqPipe, DeterministicAndNoWorseThanGreedyOnLargerGraphs) {
  for (GraphFamily f :
       {GraphFamily::Chain, GraphFamily::Layered, GraphFamily::Wide}) {
    RandomGraphOptions o;
    o.family = f;
    o.numNodes = 300;
    o.seed = 5;
    Graph g = unwrap(generateRandomGraph(o));
    Hardware hw = unwrap(getHardwarePreset("rtx2080ti-pcie-x8"));
    SeqPipeResult dp = unwrap(seqPipeDP(g, hw, {}));
    SeqPipeResult again = unwrap(seqPipeDP(g, hw, {}));
    EXPECT_EQ(dp.plan, again.plan);
    SeqPipeResult greedy = unwrap(seqPipeGreedy(g, hw, {}));
    EXPECT_LE(dp.objectiveMs, greedy.objectiveMs * (1 + 1e-9));
    EXPECT_EQ(message(verifyPlan(g, hw, dp.plan, {})), "");
    PlanMetrics m = unwrap(evaluatePlan(g, hw, dp.plan, {}));
    EXPECT_GE(dp.objectiveMs, m.lowerBoundMs * (1 - 1e-12));
  }
}

TEST(SeqPipe, PolishKeepsTheObjectiveAndNeverSimulatesSlower) {
  // Plans of the same objective differ in the simulator; polishing keeps
  // the objective (the DP's is the optimum) and takes only shifts that
  // simulate faster. Over these graphs it must find some.
  Hardware hw = unwrap(getHardwarePreset("rtx2080ti-pcie-x8"));
  size_t improved = 0, plans = 0;
  for (GraphFamily f :
       {GraphFamily::Chain, GraphFamily::Layered, GraphFamily::Wide})
    for (uint64_t seed = 1; seed <= 6; ++seed)
      for (bool recompute : {false, true}) {
        RandomGraphOptions o;
        o.family = f;
        o.numNodes = 120;
        o.seed = seed;
        o.minBytes = 1 << 20; // traffic comparable to compute
        o.maxBytes = 1 << 26;
        Graph g = unwrap(generateRandomGraph(o));
        SeqPipeConfig config;
        config.objective.recompute = recompute;
        config.polishSimulations = 0;
        for (bool dp : {true, false}) {
          SeqPipeResult raw = unwrap(dp ? seqPipeDP(g, hw, config)
                                        : seqPipeGreedy(g, hw, config));
          PlanFigures before =
              unwrap(measurePlan(g, hw, raw.plan, config.objective));
          SeqPipeResult polished = raw;
          ASSERT_FALSE(bool(
              polishCutsBySimulation(g, hw, config.objective, 128, polished)));
          PlanFigures after =
              unwrap(measurePlan(g, hw, polished.plan, config.objective));
          SCOPED_TRACE(::testing::Message()
                       << "family " << int(f) << " seed " << seed
                       << " recompute " << recompute << " dp " << dp);
          EXPECT_TRUE(after.noSlowerThan(before));
          EXPECT_DOUBLE_EQ(polished.objectiveMs, after.objectiveMs);
          if (dp) { // the DP's objective is the optimum: polishing keeps it
            EXPECT_NEAR(after.objectiveMs, before.objectiveMs,
                        1e-9 * before.objectiveMs);
          }
          EXPECT_EQ(message(verifyPlan(g, hw, polished.plan, config.objective)),
                    "");
          // Still contiguous, with as many stages on the same devices.
          EXPECT_EQ(polished.plan.stageDevice, raw.plan.stageDevice);
          for (size_t x = 1; x < g.numNodes(); ++x)
            EXPECT_LE(polished.plan.nodeStage[x] -
                          polished.plan.nodeStage[x - 1],
                      1u);
          // The methods polish by default, with the same result.
          SeqPipeConfig byDefault = config;
          byDefault.polishSimulations = 128;
          SeqPipeResult direct = unwrap(dp ? seqPipeDP(g, hw, byDefault)
                                           : seqPipeGreedy(g, hw, byDefault));
          EXPECT_EQ(direct.plan, polished.plan);
          ++plans;
          improved += after.simulatedMs < before.simulatedMs * (1 - 1e-9);
        }
      }
  EXPECT_GT(improved, 0u) << "of " << plans << " plans";
}

TEST(SeqPipe, PolishNeedsAContiguousPlan) {
  Graph g = chain(4, 1, 2, 1000);
  Hardware hw = uniformHardware(2);
  SeqPipeResult result;
  result.plan.nodeStage = {0, 1, 0, 1};
  result.plan.stageDevice = {0, 1};
  std::string err = message(polishCutsBySimulation(g, hw, {}, 16, result));
  EXPECT_NE(err.find("contiguous"), std::string::npos) << err;
  // Without simulations the plan is left as it is.
  SeqPipeResult dp = unwrap(seqPipeDP(g, hw, {}));
  SeqPipeResult same = dp;
  EXPECT_FALSE(bool(polishCutsBySimulation(g, hw, {}, 0, same)));
  EXPECT_EQ(same.plan, dp.plan);
}

} // namespace
