//===- Evaluation.h - Held-out loss during a pipeline run -------*- C++ -*-===//
//
// `ftpipe-run --eval-data FILE --eval-every N`: before training and after
// every N-th update (and the last), every device runs forward passes only
// over the held-out data set, through the same stage programs and transfers
// as training (DeviceExecutor::evaluate), on the micro-batches of GPipe's
// lists without their backwards. The device that computes the loss reports
// the mean loss over the held-out micro-batches and its exponential (the
// perplexity of a language model; for other losses only the loss means
// something) and, for a model generated with `ftpipe-model-gen --metrics`,
// the task's metric (EvaluationMetrics.h: token accuracy, or exact match
// and F1), to the run's hooks (RunHooks::onEvaluation) and as a CSV of step,
// wall time, samples trained, loss, perplexity and the metric, rewritten
// whole after each evaluation (link-safe, atomic), to plot the loss and the
// metric over time (tools/ftpipe-run/plot-eval.py).
//
// Evaluation runs between steps, so only schedules that leave no
// micro-batch in flight across an update (GPipe, 1F1B, ZB-H1, zb-auto)
// evaluate during the run; async is refused.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_EVALUATION_H
#define FTPIPE_RUNTIME_EVALUATION_H

#include "FTPipe/Runtime/Executor.h"
#include "FTPipe/Runtime/PipelineModel.h"

#include <optional>
#include <string>

namespace ftpipe {
namespace runtime {

/// The forward-only lists of an evaluation over `microBatches` micro-batches
/// (GPipe's lists for one step without backwards and update, dry-run
/// checked).
llvm::Expected<schedule::Schedule>
forwardOnlyLists(const schedule::StageGraph &graph, int64_t microBatches);

/// What every device of a run needs to evaluate.
struct EvaluationSetup {
  TensorMap data;
  /// Per device, its forward-only list over the held-out micro-batches.
  schedule::Schedule lists;
  /// Evaluate after every `every` updates, and after the last (`steps`).
  int64_t every = 1, steps = 1;
  /// Samples per step (to report the samples trained) and per micro-batch.
  int64_t samplesPerStep = 1, microBatchSize = 1;
  /// Where the loss device writes the CSV (empty: none).
  std::string csvPath;
};

/// Checks the held-out data set at `path` against the model (names, types,
/// shapes, finite values, ids inside their tables) and the schedule (one
/// that flushes at every step), and prepares the lists: as many whole
/// micro-batches as the set holds (at least one), numbered after the run's.
llvm::Expected<EvaluationSetup>
prepareEvaluation(llvm::StringRef path, int64_t every, llvm::StringRef csvPath,
                  const PipelineModel &model, const ExecutorConfig &config);

/// One evaluation, as the device that computes the loss saw it.
struct EvaluationReport {
  /// Updates done before it (0: before training).
  int64_t updates = 0;
  /// Mean loss over the held-out micro-batches and its exponential.
  double loss = 0, perplexity = 0;
  /// The task's metric, where the model returns what it needs.
  EvaluationMetrics metrics;
  /// Held-out micro-batches evaluated.
  size_t microBatches = 0;
  /// Seconds since the evaluator was made (the run's start).
  double seconds = 0;
};

/// "eval step 3 loss 0.123456 perplexity 1.1314 (4 micro-batches, 0.5 s)\n",
/// with the metric after the perplexity (" token accuracy 0.250000 (3/12)").
std::string formatEvaluation(const EvaluationReport &report);

/// One device's evaluations during a run.
class Evaluator {
public:
  Evaluator(const EvaluationSetup &setup, int64_t device);
  /// Evaluates after `updates` updates (0: before training) if it is time.
  /// Returns the report on the loss device (which also rewrites the CSV),
  /// none elsewhere or when it is not time.
  llvm::Expected<std::optional<EvaluationReport>>
  afterUpdates(DeviceExecutor &executor, int64_t updates);

private:
  const EvaluationSetup &setup;
  int64_t device;
  double start;
  /// The CSV's lines after its header (which names the metric's columns,
  /// known once the first evaluation returns).
  std::string csvRows;
};

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_EVALUATION_H
