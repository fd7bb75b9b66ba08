//===- EvaluationMetrics.cpp - Task metrics over a held-out set -----------===//
//
// Token accuracy, and exact match and F1 of extractive QA, from the metric
// results of the loss stage's forwards (EvaluationMetrics.h).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/EvaluationMetrics.h"
#include "FTPipe/Runtime/DataValues.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace ftpipe;
using namespace ftpipe::runtime;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string EvaluationMetrics::csvColumns() const {
  if (tokenAccuracy)
    return "token_accuracy";
  if (exactMatch)
    return "exact_match,f1";
  return "";
}

std::string EvaluationMetrics::csvValues() const {
  if (tokenAccuracy)
    return llvm::formatv(",{0:f6}", *tokenAccuracy).str();
  if (exactMatch)
    return llvm::formatv(",{0:f6},{1:f6}", *exactMatch, *f1).str();
  return "";
}

std::string EvaluationMetrics::describe() const {
  if (tokenAccuracy)
    return llvm::formatv(" token accuracy {0:f6} ({1}/{2})", *tokenAccuracy,
                         correctTokens, countedTokens)
        .str();
  if (exactMatch)
    return llvm::formatv(" exact match {0:f6} f1 {1:f6} ({2} answers)",
                         *exactMatch, *f1, answers)
        .str();
  return "";
}

double ftpipe::runtime::spanF1(int64_t predStart, int64_t predEnd,
                               int64_t goldStart, int64_t goldEnd) {
  int64_t shared =
      std::min(predEnd, goldEnd) - std::max(predStart, goldStart) + 1;
  if (predEnd < predStart || goldEnd < goldStart || shared <= 0)
    return 0;
  double precision = double(shared) / double(predEnd - predStart + 1);
  double recall = double(shared) / double(goldEnd - goldStart + 1);
  return 2 * precision * recall / (precision + recall);
}

/// The integer values of metric `name` of `batch`, `count` of them.
static llvm::Expected<std::vector<int64_t>>
metricValues(const EvaluatedMicroBatch &batch, llvm::StringRef name,
             int64_t count) {
  const Tensor &tensor = batch.metrics.at(name.str());
  if (tensor.elements() != count)
    return fail(llvm::formatv("metric '{0}' of held-out micro-batch {1} has "
                              "{2} values, expected {3}",
                              name, batch.microBatch, tensor.elements(),
                              count));
  std::vector<int64_t> values;
  for (int64_t i = 0; i < count; ++i) {
    std::optional<int64_t> value = integerAt(tensor, i);
    if (!value)
      return fail("metric '" + name + "' is not an integer tensor");
    values.push_back(*value);
  }
  return values;
}

llvm::Expected<EvaluationMetrics>
ftpipe::runtime::computeMetrics(llvm::ArrayRef<EvaluatedMicroBatch> batches,
                                const std::map<std::string, Tensor> &data,
                                int64_t microBatchSize) {
  EvaluationMetrics metrics;
  if (batches.empty())
    return metrics;
  auto returns = [&](llvm::StringRef name) {
    return llvm::all_of(batches, [&](const EvaluatedMicroBatch &batch) {
      return batch.metrics.count(name.str()) != 0;
    });
  };
  if (returns("correct_tokens") && returns("counted_tokens")) {
    for (const EvaluatedMicroBatch &batch : batches) {
      llvm::Expected<std::vector<int64_t>> correct =
          metricValues(batch, "correct_tokens", 1);
      if (!correct)
        return correct.takeError();
      llvm::Expected<std::vector<int64_t>> counted =
          metricValues(batch, "counted_tokens", 1);
      if (!counted)
        return counted.takeError();
      metrics.correctTokens += correct->front();
      metrics.countedTokens += counted->front();
    }
    if (metrics.countedTokens > 0)
      metrics.tokenAccuracy =
          double(metrics.correctTokens) / double(metrics.countedTokens);
  }
  if (returns("start_prediction") && returns("end_prediction")) {
    auto start = data.find("start_positions"), end = data.find("end_positions");
    auto ids = data.find("input_ids");
    if (start == data.end() || end == data.end() || ids == data.end() ||
        ids->second.shape.size() != 2)
      return fail("the model predicts answer spans, but the held-out set has "
                  "no 'start_positions', 'end_positions' and 'input_ids'");
    int64_t samples = start->second.shape.front();
    int64_t seqLen = ids->second.shape[1];
    double exact = 0, f1 = 0;
    for (const EvaluatedMicroBatch &batch : batches) {
      llvm::Expected<std::vector<int64_t>> predStart =
          metricValues(batch, "start_prediction", microBatchSize);
      if (!predStart)
        return predStart.takeError();
      llvm::Expected<std::vector<int64_t>> predEnd =
          metricValues(batch, "end_prediction", microBatchSize);
      if (!predEnd)
        return predEnd.takeError();
      for (int64_t i = 0; i < microBatchSize; ++i) {
        int64_t sample = (batch.microBatch * microBatchSize + i) % samples;
        int64_t goldStart = integerAt(start->second, sample).value_or(-1);
        int64_t goldEnd = integerAt(end->second, sample).value_or(-1);
        if (goldStart < 0 || goldStart >= seqLen || goldEnd < 0 ||
            goldEnd >= seqLen)
          continue;
        ++metrics.answers;
        exact += (*predStart)[i] == goldStart && (*predEnd)[i] == goldEnd;
        f1 += spanF1((*predStart)[i], (*predEnd)[i], goldStart, goldEnd);
      }
    }
    if (metrics.answers > 0) {
      metrics.exactMatch = exact / double(metrics.answers);
      metrics.f1 = f1 / double(metrics.answers);
    }
  }
  return metrics;
}
