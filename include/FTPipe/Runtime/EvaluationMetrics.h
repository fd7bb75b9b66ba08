//===- EvaluationMetrics.h - Task metrics over a held-out set ---*- C++ -*-===//
//
// The task's metric of an evaluation (docs/FineTuneCheckpoint.md,
// "Evaluation metrics"), from what the loss stage's forwards return beside
// the loss when the model was generated with `ftpipe-model-gen --metrics`:
// token accuracy from the counts "correct_tokens" and "counted_tokens"
// (language models: the argmax of the logits equals the label, labels -100
// not counted), summed over the micro-batches; exact match and F1 of
// extractive QA from the predicted spans "start_prediction" and
// "end_prediction" (argmax per sample), against the data set's
// `start_positions` and `end_positions`, on token positions (SQuAD's
// definitions over the span's tokens), averaged over the samples.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_EVALUATIONMETRICS_H
#define FTPIPE_RUNTIME_EVALUATIONMETRICS_H

#include "FTPipe/Runtime/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

/// One held-out micro-batch's forward in the loss stage.
struct EvaluatedMicroBatch {
  /// The micro-batch's number: its samples are (mb * b + i) mod the set's
  /// size, as in training (DeviceExecutor::setData).
  int64_t microBatch = 0;
  double loss = 0;
  /// The metric results by name (integer tensors).
  std::map<std::string, Tensor> metrics;
};

/// The task's metrics over a held-out set; each is absent where the model
/// returns nothing to compute it.
struct EvaluationMetrics {
  /// Token accuracy: correct / counted (counted > 0).
  std::optional<double> tokenAccuracy;
  int64_t correctTokens = 0, countedTokens = 0;
  /// Exact match and F1 in [0, 1], means over `answers` samples.
  std::optional<double> exactMatch, f1;
  int64_t answers = 0;

  /// "token_accuracy", or "exact_match,f1", or "" (the CSV's extra
  /// columns).
  std::string csvColumns() const;
  /// The values of csvColumns(), each led by a comma.
  std::string csvValues() const;
  /// " token accuracy 0.123456 (12/97)", or " exact match 0.500000 f1
  /// 0.666667", or "".
  std::string describe() const;
};

/// SQuAD's F1 of the predicted token span [predStart, predEnd] against the
/// gold one (inclusive; an end before its start is an empty span, F1 0):
/// precision and recall of the shared tokens.
double spanF1(int64_t predStart, int64_t predEnd, int64_t goldStart,
              int64_t goldEnd);

/// The metrics of `batches` on the held-out `data` (micro-batches of
/// `microBatchSize` samples). QA samples whose gold positions are outside
/// the sequence (the ignored label) do not count. Fails on a metric of an
/// unexpected shape, or on QA predictions without the gold positions.
llvm::Expected<EvaluationMetrics>
computeMetrics(llvm::ArrayRef<EvaluatedMicroBatch> batches,
               const std::map<std::string, Tensor> &data,
               int64_t microBatchSize);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_EVALUATIONMETRICS_H
