//===- RecomputationTest.cpp - Per-stage recomputation --------------------===//
//
// The per-stage choice between keeping activations and recomputing: how the
// objective, the verifier, the incremental objective and the simulator read
// it, chooseRecomputation against brute force on small plans and under
// tight memory on random DAGs, and solveWithRecomputation's guarantee that
// `auto` is never slower than recomputing everywhere, by the objective and
// by the simulator.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Recomputation.h"
#include "FTPipe/Partition/Refinement.h"
#include "FTPipe/Partition/SeqPipe.h"
#include "FTPipe/Partition/Simulator.h"
#include "FTPipe/Partition/Verify.h"

#include "TestUtil.h"

#include <cmath>

using namespace ftpipe::partition;
using namespace ftpipe::partition::test;

namespace {

/// A random DAG of `n` nodes (activations sized so that keeping them
/// matters next to the parameters).
Graph randomGraph(GraphFamily family, uint32_t n, uint64_t seed) {
  RandomGraphOptions options;
  options.family = family;
  options.numNodes = n;
  options.seed = seed;
  return unwrap(generateRandomGraph(options));
}

/// A chain of `n` nodes of forward `fwd`, backward `bwd` and `act` bytes of
/// activations each, every edge carrying `bytes`.
Graph activationChain(size_t n, double fwd, double bwd, uint64_t act,
                      uint64_t bytes) {
  GraphBuilder b;
  for (size_t i = 0; i < n; ++i)
    b.addNode("chain/op" + std::to_string(i), "test.op",
              {fwd, bwd, act, bytes});
  for (size_t i = 0; i + 1 < n; ++i)
    b.addEdge(NodeId(i), NodeId(i + 1), bytes);
  return unwrap(b.build());
}

const GraphFamily kFamilies[] = {GraphFamily::Chain, GraphFamily::Layered,
                                 GraphFamily::Wide};

/// `hw` with every device's budget set to `bytes[d]`.
Hardware withBudgets(const Hardware &hw, const std::vector<uint64_t> &bytes) {
  HardwareSpec spec = hw.spec();
  for (size_t d = 0; d < bytes.size(); ++d)
    spec.devices[d].memoryBytes = std::max<uint64_t>(bytes[d], 1);
  return unwrap(Hardware::create(spec));
}

/// Budgets between what recomputing everywhere and keeping everything need
/// on each device, `t` of the way (0: just enough to recompute everywhere).
Hardware tightHardware(const Graph &g, const Hardware &hw, const Plan &plan,
                       double t) {
  Plan keep = plan, recompute = plan;
  keep.stageRecompute.assign(plan.numStages(), false);
  recompute.stageRecompute.assign(plan.numStages(), true);
  PlanMetrics k = unwrap(evaluatePlan(g, hw, keep, ObjectiveConfig()));
  PlanMetrics r = unwrap(evaluatePlan(g, hw, recompute, ObjectiveConfig()));
  std::vector<uint64_t> budget;
  for (size_t d = 0; d < hw.numDevices(); ++d) {
    double lo = double(r.devices[d].memoryBytes);
    double hi = std::max(lo, double(k.devices[d].memoryBytes));
    budget.push_back(uint64_t(lo + t * (hi - lo)));
  }
  return withBudgets(hw, budget);
}

double objectiveOf(const Graph &g, const Hardware &hw, const Plan &plan,
                   const ObjectiveConfig &cfg) {
  return unwrap(evaluatePlan(g, hw, plan, cfg)).asyncMsPerMicroBatch;
}

} // namespace

TEST(Recomputation, PlanChoiceOverridesTheConfig) {
  // Two stages on two devices; f = 1, b = 2 per node, 3 nodes per stage.
  Graph g = activationChain(6, 1.0, 2.0, 1000, 1000);
  Hardware hw = uniformHardware(2, 1e6);
  Plan plan{{0, 0, 0, 1, 1, 1}, {0, 1}};
  ObjectiveConfig cfg;
  cfg.recompute = true;
  PlanMetrics all = unwrap(evaluatePlan(g, hw, plan, cfg));
  EXPECT_DOUBLE_EQ(all.stages[0].computeMs, 12.0);
  EXPECT_TRUE(all.stages[0].recompute);
  plan.stageRecompute = {false, true};
  PlanMetrics mixed = unwrap(evaluatePlan(g, hw, plan, cfg));
  EXPECT_DOUBLE_EQ(mixed.stages[0].computeMs, 9.0);
  EXPECT_FALSE(mixed.stages[0].recompute);
  EXPECT_DOUBLE_EQ(mixed.stages[1].computeMs, 12.0);
  EXPECT_DOUBLE_EQ(mixed.totalComputeMs, 21.0);
  // Kept activations: stage 0 keeps all three nodes' 1000 bytes for each of
  // its two micro-batches in flight; stage 1 keeps its 1000-byte input for
  // one and rebuilds 3000 bytes during its backward.
  EXPECT_EQ(mixed.stages[0].activationBytes, 2u * 3000u);
  EXPECT_EQ(mixed.stages[1].activationBytes, 1000u + 3000u);
  // The bound counts no recomputation once a plan chooses per stage.
  EXPECT_DOUBLE_EQ(mixed.lowerBoundMs, 9.0);
}

TEST(Recomputation, WrongLengthIsRejected) {
  Graph g = chain(4, 1.0, 1.0, 10);
  Hardware hw = uniformHardware(2);
  Plan plan{{0, 0, 1, 1}, {0, 1}};
  plan.stageRecompute = {true};
  EXPECT_NE(message(verifyPlan(g, hw, plan, {})), "");
  llvm::Expected<PlanMetrics> m = evaluatePlan(g, hw, plan, {});
  ASSERT_FALSE(bool(m));
  EXPECT_NE(llvm::toString(m.takeError()).find("recompute"), std::string::npos);
}

TEST(Recomputation, SimulatorLengthensOnlyRecomputingBackwards) {
  Graph g = chain(4, 1.0, 2.0, 10);
  Hardware hw = uniformHardware(1);
  Plan plan = Plan::singleStage(4);
  ObjectiveConfig cfg;
  cfg.recompute = true;
  SimResult with = unwrap(simulatePlan(g, hw, plan, cfg, false));
  plan.stageRecompute = {false};
  SimResult without = unwrap(simulatePlan(g, hw, plan, cfg, false));
  EXPECT_NEAR(with.msPerMicroBatch, 16.0, 1e-9);
  EXPECT_NEAR(without.msPerMicroBatch, 12.0, 1e-9);
}

TEST(Recomputation, KeepsEverythingWhenMemoryAllows) {
  Graph g = activationChain(6, 1.0, 2.0, 1000, 1000);
  Hardware hw = uniformHardware(2, 1e6);
  Plan plan{{0, 0, 0, 1, 1, 1}, {0, 1}};
  ObjectiveConfig cfg;
  cfg.recompute = true;
  ASSERT_EQ(message(chooseRecomputation(g, hw, plan, cfg)), "");
  EXPECT_EQ(plan.stageRecompute, (std::vector<bool>{false, false}));
  EXPECT_DOUBLE_EQ(objectiveOf(g, hw, plan, cfg), 9.0);
}

TEST(Recomputation, RecomputesOnlyWhereMemoryIsShort) {
  Graph g = activationChain(6, 1.0, 2.0, 1000, 1000);
  Hardware big = uniformHardware(2, 1e6);
  Plan plan{{0, 0, 0, 1, 1, 1}, {0, 1}};
  // Device 0 has room for what recomputing needs (2 x 0 inputs + 3000
  // rebuilt) but not for keeping (2 x 3000); device 1 has room for both.
  Hardware hw = withBudgets(big, {5000, 1ull << 30});
  ObjectiveConfig cfg;
  ASSERT_EQ(message(chooseRecomputation(g, hw, plan, cfg)), "");
  EXPECT_EQ(plan.stageRecompute, (std::vector<bool>{true, false}));
  EXPECT_EQ(message(verifyPlan(g, hw, plan, cfg)), "");
}

TEST(Recomputation, AgreesWithBruteForceOnSmallPlans) {
  int checked = 0, mixedChoices = 0;
  for (GraphFamily family : kFamilies)
    for (uint64_t seed = 1; seed <= 8; ++seed)
      for (double t : {0.0, 0.3, 0.7}) {
        SCOPED_TRACE(testing::Message()
                     << int(family) << " seed=" << seed << " t=" << t);
        Graph g = randomGraph(family, 40, seed);
        size_t P = 2 + seed % 3, S = 3 + seed % 5;
        Plan plan = randomContiguousPlan(g, S, P, seed);
        Hardware hw = tightHardware(g, uniformHardware(P, 8.0, 5.0), plan, t);
        ObjectiveConfig cfg;
        cfg.recompute = true;
        Plan chosen = plan;
        ASSERT_EQ(message(chooseRecomputation(g, hw, chosen, cfg)), "");
        ASSERT_EQ(chosen.stageRecompute.size(), plan.numStages());
        ASSERT_EQ(message(verifyPlan(g, hw, chosen, cfg)), "");
        double ours = objectiveOf(g, hw, chosen, cfg);
        EXPECT_LE(ours, objectiveOf(g, hw, plan, cfg) * (1 + 1e-12));
        // Every choice of the whole plan that fits: none is faster.
        double best = 1e300;
        Plan trial = plan;
        for (uint32_t mask = 0; mask < (1u << plan.numStages()); ++mask) {
          trial.stageRecompute.clear();
          for (size_t s = 0; s < plan.numStages(); ++s)
            trial.stageRecompute.push_back((mask >> s) & 1);
          PlanMetrics m = unwrap(evaluatePlan(g, hw, trial, cfg));
          if (m.memoryFits)
            best = std::min(best, m.asyncMsPerMicroBatch);
        }
        EXPECT_NEAR(ours, best, 1e-9 * best);
        mixedChoices += llvm::is_contained(chosen.stageRecompute, true) &&
                        llvm::is_contained(chosen.stageRecompute, false);
        ++checked;
      }
  EXPECT_EQ(checked, 72);
  // Tight budgets do force mixed choices somewhere.
  EXPECT_GT(mixedChoices, 0);
}

TEST(Recomputation, RefinementAndIncrementalObjectiveFollowThePlan) {
  for (GraphFamily family : kFamilies)
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE(testing::Message() << int(family) << " seed=" << seed);
      Graph g = randomGraph(family, 120, seed);
      Plan plan = randomContiguousPlan(g, 6, 3, seed);
      Hardware hw = tightHardware(g, uniformHardware(3, 8.0, 5.0), plan, 0.5);
      ObjectiveConfig cfg;
      cfg.recompute = true;
      ASSERT_EQ(message(chooseRecomputation(g, hw, plan, cfg)), "");
      llvm::Expected<IncrementalObjective> created =
          IncrementalObjective::create(g, hw, plan, cfg);
      ASSERT_TRUE(bool(created)) << llvm::toString(created.takeError());
      IncrementalObjective &inc = *created;
      PlanMetrics m = unwrap(evaluatePlan(g, hw, plan, cfg));
      EXPECT_NEAR(inc.objective(), m.asyncMsPerMicroBatch,
                  1e-9 * m.asyncMsPerMicroBatch);
      for (DeviceId d = 0; d < 3; ++d)
        EXPECT_EQ(inc.deviceMemoryBytes(d), m.devices[d].memoryBytes);
      std::vector<bool> choice = plan.stageRecompute;
      double before = m.asyncMsPerMicroBatch;
      CoarseningHierarchy none;
      ASSERT_TRUE(bool(unwrap(refinePlan(g, hw, none, plan, cfg)).movesTried));
      EXPECT_EQ(plan.stageRecompute, choice);
      EXPECT_LE(objectiveOf(g, hw, plan, cfg), before * (1 + 1e-9));
      EXPECT_EQ(message(verifyPlan(g, hw, plan, cfg)), "");
    }
}

TEST(Recomputation, AutoIsNeverSlowerThanRecomputingEverywhere) {
  int faster = 0;
  for (GraphFamily family : kFamilies)
    for (uint64_t seed = 1; seed <= 5; ++seed)
      for (double t : {0.0, 0.5, 2.0}) {
        SCOPED_TRACE(testing::Message()
                     << int(family) << " seed=" << seed << " t=" << t);
        Graph g = randomGraph(family, 150, seed);
        Hardware base = uniformHardware(4, 8.0, 5.0);
        // Budgets from a plan that recomputes everywhere, scaled by t.
        Plan ref = randomContiguousPlan(g, 4, 4, seed);
        Hardware hw = tightHardware(g, base, ref, t);
        auto greedy = [&](const ObjectiveConfig &c) -> llvm::Expected<Plan> {
          SeqPipeConfig seq;
          seq.objective = c;
          llvm::Expected<SeqPipeResult> r = seqPipeGreedy(g, hw, seq);
          if (!r)
            return r.takeError();
          return std::move(r->plan);
        };
        ObjectiveConfig cfg;
        bool tryKeeping = seed % 2 == 0;
        llvm::Expected<Plan> always =
            solveWithRecomputation(RecomputeMode::Always, g, hw, cfg, greedy);
        llvm::Expected<Plan> autoPlan = solveWithRecomputation(
            RecomputeMode::Auto, g, hw, cfg, greedy, tryKeeping);
        ASSERT_EQ(bool(always), bool(autoPlan));
        if (!always) {
          llvm::consumeError(always.takeError());
          llvm::consumeError(autoPlan.takeError());
          continue;
        }
        cfg.recompute = true;
        EXPECT_EQ(message(verifyPlan(g, hw, *autoPlan, cfg)), "");
        EXPECT_EQ(autoPlan->stageRecompute.size(), autoPlan->numStages());
        double a = objectiveOf(g, hw, *always, cfg);
        double b = objectiveOf(g, hw, *autoPlan, cfg);
        EXPECT_LE(b, a * (1 + 1e-12));
        faster += b < a * (1 - 1e-6);
        double simA =
            unwrap(simulatePlan(g, hw, *always, cfg, false)).msPerMicroBatch;
        double simB =
            unwrap(simulatePlan(g, hw, *autoPlan, cfg, false)).msPerMicroBatch;
        EXPECT_LE(simB, simA * (1 + 1e-12));
      }
  EXPECT_GT(faster, 0);
}

TEST(Recomputation, MemoryLowerBoundTradesComputeForMemory) {
  // Six nodes of f = 1, b = 2 and 1000 activation bytes on two devices.
  Graph g = activationChain(6, 1.0, 2.0, 1000, 1000);
  ObjectiveConfig cfg;
  Hardware roomy = uniformHardware(2, 1.0, 0.0, 3000);
  Hardware tight = uniformHardware(2, 1.0, 0.0, 2000);
  EXPECT_DOUBLE_EQ(memoryLowerBoundMs(g, roomy, cfg, RecomputeMode::Never),
                   9.0);
  EXPECT_DOUBLE_EQ(memoryLowerBoundMs(g, roomy, cfg, RecomputeMode::Auto), 9.0);
  EXPECT_DOUBLE_EQ(memoryLowerBoundMs(g, roomy, cfg, RecomputeMode::Always),
                   12.0);
  // 4000 bytes for 6000 of activations: 2000 must be recomputed (2 ms).
  EXPECT_DOUBLE_EQ(memoryLowerBoundMs(g, tight, cfg, RecomputeMode::Auto),
                   10.0);
  EXPECT_TRUE(
      std::isinf(memoryLowerBoundMs(g, tight, cfg, RecomputeMode::Never)));
  // Weights, gradients and Adam's state that exceed everything: no plan.
  Graph heavy = randomGraph(GraphFamily::Layered, 40, 1);
  EXPECT_TRUE(std::isinf(memoryLowerBoundMs(
      heavy, uniformHardware(2, 1.0, 0.0, heavy.totalParamBytes()), cfg,
      RecomputeMode::Always)));
}

TEST(Recomputation, MemoryLowerBoundHoldsForEveryFittingPlan) {
  int fitting = 0;
  for (GraphFamily family : kFamilies)
    for (uint64_t seed = 1; seed <= 8; ++seed)
      for (double t : {0.0, 0.5}) {
        SCOPED_TRACE(testing::Message()
                     << int(family) << " seed=" << seed << " t=" << t);
        Graph g = randomGraph(family, 40, seed);
        size_t P = 2 + seed % 3;
        Plan plan = randomContiguousPlan(g, 3 + seed % 5, P, seed);
        Hardware hw = tightHardware(g, uniformHardware(P, 8.0, 5.0), plan, t);
        ObjectiveConfig cfg;
        cfg.recompute = true;
        ASSERT_EQ(message(chooseRecomputation(g, hw, plan, cfg)), "");
        PlanMetrics m = unwrap(evaluatePlan(g, hw, plan, cfg));
        if (!m.memoryFits)
          continue;
        ++fitting;
        double bound = memoryLowerBoundMs(g, hw, cfg, RecomputeMode::Auto);
        EXPECT_LE(bound, m.asyncMsPerMicroBatch * (1 + 1e-12));
        // Never weaker than the plain bound without recomputation.
        EXPECT_GE(bound * (1 + 1e-12), m.lowerBoundMs);
      }
  EXPECT_GT(fitting, 24);
}
