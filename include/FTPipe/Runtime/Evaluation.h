//===- Evaluation.h - Held-out loss during a pipeline run -------*- C++ -*-===//
//
// `ftpipe-run --eval-data FILE --eval-every N`: before training and after
// every N-th update (and the last), every device runs forward passes only
// over the held-out data set, through the same stage programs and transfers
// as training (DeviceExecutor::evaluate), on the micro-batches of GPipe's
// lists without their backwards. The device that computes the loss reports
// the mean loss over the held-out micro-batches and its exponential (the
// perplexity of a language model; for other losses only the loss means
// something), in the progress output and as a CSV of step, wall time,
// samples trained, loss and perplexity, rewritten whole after each
// evaluation (link-safe, atomic), to plot the loss over time
// (tools/ftpipe-run/plot-eval.py).
//
// Evaluation runs between steps, so only schedules that leave no
// micro-batch in flight across an update (GPipe, 1F1B) evaluate during the
// run.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_EVALUATION_H
#define FTPIPE_RUNTIME_EVALUATION_H

#include "FTPipe/Runtime/Executor.h"
#include "FTPipe/Runtime/PipelineModel.h"

#include <mutex>
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
  /// Samples per step (to report the samples trained).
  int64_t samplesPerStep = 1;
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

/// One device's evaluations during a run.
class Evaluator {
public:
  /// `print` guards the progress output shared with the training's lines.
  Evaluator(const EvaluationSetup &setup, int64_t device, std::mutex &print);
  /// Evaluates after `updates` updates (0: before training) if it is time,
  /// printing "eval step K loss L perplexity P" on the loss device.
  llvm::Error afterUpdates(DeviceExecutor &executor, int64_t updates);

private:
  const EvaluationSetup &setup;
  int64_t device;
  std::mutex &print;
  double start;
  std::string csv;
};

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_EVALUATION_H
