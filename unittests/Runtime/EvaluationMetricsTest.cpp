//===- EvaluationMetricsTest.cpp - Token accuracy, exact match, F1 --------===//

#include "FTPipe/Runtime/EvaluationMetrics.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace ftpipe::runtime;

namespace {

Tensor i32(std::vector<int64_t> shape, std::vector<int32_t> values) {
  Tensor tensor(DType::I32, std::move(shape));
  std::memcpy(tensor.bytes.data(), values.data(), values.size() * 4);
  return tensor;
}

TEST(EvaluationMetricsTest, SpanF1IsSquadsOverTokenPositions) {
  EXPECT_DOUBLE_EQ(spanF1(3, 5, 3, 5), 1.0);
  // Shared tokens 4..5: precision 2/3, recall 2/4.
  EXPECT_DOUBLE_EQ(spanF1(3, 5, 4, 7), 2 * (2.0 / 3) * 0.5 / (2.0 / 3 + 0.5));
  EXPECT_DOUBLE_EQ(spanF1(0, 2, 3, 4), 0.0);
  // An end before its start predicts no tokens.
  EXPECT_DOUBLE_EQ(spanF1(5, 4, 4, 5), 0.0);
}

TEST(EvaluationMetricsTest, TokenAccuracySumsTheCountsOfEveryMicroBatch) {
  std::vector<EvaluatedMicroBatch> batches(2);
  batches[0].metrics["correct_tokens"] = i32({}, {3});
  batches[0].metrics["counted_tokens"] = i32({}, {10});
  batches[1].metrics["correct_tokens"] = i32({}, {5});
  batches[1].metrics["counted_tokens"] = i32({}, {6});
  llvm::Expected<EvaluationMetrics> metrics = computeMetrics(batches, {}, 2);
  ASSERT_TRUE(bool(metrics)) << llvm::toString(metrics.takeError());
  EXPECT_EQ(metrics->correctTokens, 8);
  EXPECT_EQ(metrics->countedTokens, 16);
  ASSERT_TRUE(metrics->tokenAccuracy);
  EXPECT_DOUBLE_EQ(*metrics->tokenAccuracy, 0.5);
  EXPECT_FALSE(metrics->exactMatch);
  EXPECT_EQ(metrics->csvColumns(), "token_accuracy");
  EXPECT_EQ(metrics->csvValues(), ",0.500000");
  EXPECT_EQ(metrics->describe(), " token accuracy 0.500000 (8/16)");
}

TEST(EvaluationMetricsTest, ExactMatchAndF1AgainstTheSamplesOfEachMicroBatch) {
  // 3 samples of 8 tokens; micro-batches of 2: micro-batch 7 reads samples
  // (14, 15) mod 3 = (2, 0).
  std::map<std::string, Tensor> data;
  data["input_ids"] = i32({3, 8}, std::vector<int32_t>(24, 1));
  data["start_positions"] = i32({3}, {1, 2, 3});
  data["end_positions"] = i32({3}, {2, 8, 6});
  std::vector<EvaluatedMicroBatch> batches(1);
  batches[0].microBatch = 7;
  batches[0].metrics["start_prediction"] = i32({2}, {3, 0});
  batches[0].metrics["end_prediction"] = i32({2}, {6, 1});
  llvm::Expected<EvaluationMetrics> metrics = computeMetrics(batches, data, 2);
  ASSERT_TRUE(bool(metrics)) << llvm::toString(metrics.takeError());
  // Sample 2 matches exactly; sample 0 (gold 1..2) shares token 1 with
  // 0..1: F1 0.5.
  EXPECT_EQ(metrics->answers, 2);
  EXPECT_DOUBLE_EQ(*metrics->exactMatch, 0.5);
  EXPECT_DOUBLE_EQ(*metrics->f1, 0.75);
  EXPECT_EQ(metrics->csvColumns(), "exact_match,f1");

  // Sample 1's gold end is outside the sequence (the ignored label): not
  // counted.
  batches[0].microBatch = 0;
  metrics = computeMetrics(batches, data, 2);
  ASSERT_TRUE(bool(metrics));
  EXPECT_EQ(metrics->answers, 1);
  EXPECT_DOUBLE_EQ(*metrics->exactMatch, 0.0);
}

TEST(EvaluationMetricsTest, RefusesMetricsOfTheWrongShapeOrWithoutLabels) {
  std::vector<EvaluatedMicroBatch> batches(1);
  batches[0].metrics["start_prediction"] = i32({2}, {0, 0});
  batches[0].metrics["end_prediction"] = i32({2}, {0, 0});
  llvm::Expected<EvaluationMetrics> noLabels = computeMetrics(batches, {}, 2);
  ASSERT_FALSE(bool(noLabels));
  EXPECT_NE(llvm::toString(noLabels.takeError()).find("start_positions"),
            std::string::npos);

  batches[0].metrics.clear();
  batches[0].metrics["correct_tokens"] = i32({2}, {1, 2});
  batches[0].metrics["counted_tokens"] = i32({}, {4});
  llvm::Expected<EvaluationMetrics> shape = computeMetrics(batches, {}, 2);
  ASSERT_FALSE(bool(shape));
  EXPECT_NE(llvm::toString(shape.takeError())
                .find("metric 'correct_tokens' of held-out micro-batch 0 has "
                      "2 values, expected 1"),
            std::string::npos);
}

TEST(EvaluationMetricsTest, NoMetricWithoutItsResults) {
  std::vector<EvaluatedMicroBatch> batches(1);
  llvm::Expected<EvaluationMetrics> metrics = computeMetrics(batches, {}, 2);
  ASSERT_TRUE(bool(metrics));
  EXPECT_FALSE(metrics->tokenAccuracy);
  EXPECT_FALSE(metrics->exactMatch);
  EXPECT_EQ(metrics->csvColumns(), "");
  EXPECT_EQ(metrics->describe(), "");
}

} // namespace
