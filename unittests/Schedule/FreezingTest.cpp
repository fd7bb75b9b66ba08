//===- FreezingTest.cpp - Freeze policies --------------------------------===//
//
// PipeTransformer's alpha schedule against its formula, property tests over
// random inputs (every policy's depth is monotone, bounded by the layers, and
// a prefix), schedule files and their errors, and the grouping of Hugging
// Face names into layers.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/Freezing.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace ftpipe::schedule;

namespace {

TEST(Freezing, AlphaScheduleFollowsTheFormula) {
  // L = 12, alpha = 1/3: 12 (1 - (2/3)^T) = 4, 6.67, 8.44, 9.63, ...
  EXPECT_EQ(alphaFrozenDepth(12, 1.0 / 3, 0), 0u);
  EXPECT_EQ(alphaFrozenDepth(12, 1.0 / 3, 1), 4u);
  EXPECT_EQ(alphaFrozenDepth(12, 1.0 / 3, 2), 6u);
  EXPECT_EQ(alphaFrozenDepth(12, 1.0 / 3, 3), 8u);
  EXPECT_EQ(alphaFrozenDepth(12, 1.0 / 3, 4), 9u);
  EXPECT_EQ(alphaFrozenDepth(12, 1.0, 1), 12u);
  EXPECT_EQ(alphaFrozenDepth(8, 0.5, 3), 7u); // 8 (1 - 1/8)
}

TEST(Freezing, AlphaScheduleIsMonotoneAndBounded) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 500; ++trial) {
    uint32_t layers = random() % 64;
    double alpha = std::uniform_real_distribution<double>(0.0, 1.0)(random);
    uint32_t last = 0;
    for (uint32_t epoch = 0; epoch < 40; ++epoch) {
      uint32_t depth = alphaFrozenDepth(layers, alpha, epoch);
      EXPECT_GE(depth, last);
      EXPECT_LE(depth, layers);
      EXPECT_LE(double(depth),
                double(layers) * (1 - std::pow(1 - alpha, epoch)) + 1e-6);
      last = depth;
    }
  }
}

TEST(Freezing, GradientNormRuleFreezesSettledPrefixesOnly) {
  std::mt19937 random(11);
  for (int trial = 0; trial < 300; ++trial) {
    uint32_t layers = 1 + random() % 16;
    uint32_t maxDepth = random() % (layers + 1);
    uint32_t maxStep = 1 + random() % 3;
    GradientNormRule rule(layers, 0.1, maxDepth, maxStep);
    std::vector<double> norms(layers, 1.0);
    uint32_t last = 0;
    for (int evaluation = 0; evaluation < 30; ++evaluation) {
      std::vector<double> before = norms;
      for (double &norm : norms)
        norm *= std::uniform_real_distribution<double>(0.8, 1.2)(random);
      uint32_t depth = rule.evaluate(norms);
      EXPECT_GE(depth, last);
      EXPECT_LE(depth, maxDepth);
      EXPECT_LE(depth - last, maxStep);
      if (evaluation > 0)
        // Every newly frozen layer changed by less than the threshold.
        for (uint32_t l = last; l < depth; ++l)
          EXPECT_LT(std::fabs(norms[l] - before[l]) / before[l], 0.1);
      last = depth;
    }
  }
}

TEST(Freezing, GradientNormRuleStopsAtAnUnsettledLayer) {
  GradientNormRule rule(4, 0.05, 4, /*maxStep=*/4);
  EXPECT_EQ(rule.evaluate({1, 1, 1, 1}), 0u); // nothing to compare with yet
  // Layers 0 and 1 settled, layer 2 did not: the prefix stops there even
  // though layer 3 settled.
  EXPECT_EQ(rule.evaluate({1.01, 0.99, 2, 1}), 2u);
  EXPECT_EQ(rule.evaluate({5, 5, 2.02, 1}), 4u);
}

TEST(Freezing, GradientNormRuleRestoredDecidesAsTheOriginal) {
  // A rule restored from another's depth and last norms (a checkpoint)
  // decides every later evaluation as the original does.
  std::mt19937 random(5);
  for (int trial = 0; trial < 100; ++trial) {
    GradientNormRule original(6, 0.1, 5, 2);
    std::vector<double> norms(6, 1.0);
    auto next = [&] {
      for (double &norm : norms)
        norm *= std::uniform_real_distribution<double>(0.85, 1.15)(random);
      return norms;
    };
    int split = random() % 10;
    for (int evaluation = 0; evaluation < split; ++evaluation)
      original.evaluate(next());
    GradientNormRule restored(6, 0.1, 5, 2);
    ASSERT_FALSE(
        bool(restored.restore(std::vector<double>(original.lastNorms().begin(),
                                                  original.lastNorms().end()),
                              original.depth())));
    for (int evaluation = split; evaluation < 20; ++evaluation) {
      std::vector<double> now = next();
      EXPECT_EQ(restored.evaluate(now), original.evaluate(now));
    }
  }
  GradientNormRule rule(3, 0.1, 2);
  llvm::Error layers = rule.restore({1, 2}, 0);
  ASSERT_TRUE(bool(layers));
  EXPECT_EQ(llvm::toString(std::move(layers)),
            "gradient-norm state: 2 norms for 3 layers");
  llvm::Error deep = rule.restore({1, 2, 3}, 3);
  ASSERT_TRUE(bool(deep));
  EXPECT_EQ(llvm::toString(std::move(deep)),
            "gradient-norm state: depth 3 above 2");
}

TEST(Freezing, ScheduleFilesAndTheirErrors) {
  llvm::Expected<FreezeSchedule> schedule =
      parseFreezeSchedule("# step depth\n0 0\n\n10 2  # two\n25 5\n", 6);
  ASSERT_TRUE(bool(schedule)) << llvm::toString(schedule.takeError());
  EXPECT_EQ(schedule->depthAt(0), 0u);
  EXPECT_EQ(schedule->depthAt(9), 0u);
  EXPECT_EQ(schedule->depthAt(10), 2u);
  EXPECT_EQ(schedule->depthAt(1000), 5u);
  auto error = [](llvm::StringRef text) {
    llvm::Expected<FreezeSchedule> s = parseFreezeSchedule(text, 6);
    return s ? std::string() : llvm::toString(s.takeError());
  };
  EXPECT_EQ(error("5 1\n3 2\n"), "line 2: step 3 does not come after step 5");
  EXPECT_EQ(error("5 3\n8 2\n"),
            "line 2: depth 2 is below the earlier 3: frozen layers never thaw");
  EXPECT_EQ(error("\n5 7\n"), "line 2: depth 7 exceeds the 6 layers");
  EXPECT_EQ(error("5\n"),
            "line 1: expected 'STEP DEPTH' (two non-negative integers), got "
            "'5'");
}

TEST(Freezing, PoliciesParse) {
  llvm::Expected<FreezePolicy> alpha = parseFreezePolicy("alpha=0.25");
  ASSERT_TRUE(bool(alpha));
  EXPECT_EQ(alpha->kind, FreezePolicy::Kind::Alpha);
  EXPECT_EQ(alpha->alpha, 0.25);
  llvm::Expected<FreezePolicy> norm =
      parseFreezePolicy("gradient-norm,threshold=0.01,every=5");
  ASSERT_TRUE(bool(norm));
  EXPECT_EQ(norm->threshold, 0.01);
  EXPECT_EQ(norm->every, 5);
  llvm::Expected<FreezePolicy> file = parseFreezePolicy("schedule=f.txt");
  ASSERT_TRUE(bool(file));
  EXPECT_EQ(file->file, "f.txt");
  for (const char *bad : {"alpha=0", "alpha=1.5", "alpha=x", "gradient",
                          "gradient-norm,every=0", "schedule="})
    EXPECT_FALSE(bool(parseFreezePolicy(bad))) << bad;
  llvm::consumeError(parseFreezePolicy("alpha=0").takeError());
}

TEST(Freezing, LayersGroupByBlockWithEmbeddingsFirst) {
  std::vector<std::string> names = {
      "bert.embeddings.word_embeddings.weight",
      "bert.encoder.layer.0.attention.self.query.weight",
      "bert.encoder.layer.1.output.dense.bias",
      "bert.encoder.layer.10.output.dense.bias",
      "bert.encoder.layer.2.output.dense.bias",
      "qa_outputs.weight"};
  auto layers = groupLayers(names);
  ASSERT_TRUE(bool(layers)) << llvm::toString(layers.takeError());
  ASSERT_EQ(layers->size(), 4u);
  EXPECT_EQ((*layers)[0],
            (std::vector<std::string>{
                "bert.embeddings.word_embeddings.weight",
                "bert.encoder.layer.0.attention.self.query.weight"}));
  // Numeric order: 2 before 10.
  EXPECT_EQ((*layers)[2][0], "bert.encoder.layer.2.output.dense.bias");
  EXPECT_EQ((*layers)[3][0], "bert.encoder.layer.10.output.dense.bias");
  std::set<std::string> frozen = frozenNames(*layers, 2);
  EXPECT_EQ(frozen.size(), 3u);
  EXPECT_FALSE(frozen.count("qa_outputs.weight"));
  // Every depth freezes a prefix: depth d's names contain depth d-1's.
  for (uint32_t d = 1; d <= 5; ++d)
    for (const std::string &name : frozenNames(*layers, d - 1))
      EXPECT_TRUE(frozenNames(*layers, d).count(name));
  auto twoStacks = groupLayers({"encoder.block.0.w", "decoder.block.0.w"});
  ASSERT_FALSE(bool(twoStacks));
  EXPECT_NE(llvm::toString(twoStacks.takeError()).find("two stacks"),
            std::string::npos);
}

} // namespace
