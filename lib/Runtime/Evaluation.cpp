//===- Evaluation.cpp - Held-out loss during a pipeline run ---------------===//
//
// The forward-only lists, the checks of the held-out set, the evaluations
// between steps and their report; DeviceExecutor::evaluate, which runs a
// device's forwards without keeping anything for a backward, is here too.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Evaluation.h"
#include "FTPipe/Runtime/DataValues.h"
#include "FTPipe/Runtime/MemoryLedger.h"
#include "FTPipe/Runtime/Safetensors.h"
#include "FTPipe/Runtime/Transport.h"
#include "FTPipe/Support/OutputFiles.h"

#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>

using namespace ftpipe;
using namespace ftpipe::runtime;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

llvm::Expected<schedule::Schedule>
ftpipe::runtime::forwardOnlyLists(const schedule::StageGraph &graph,
                                  int64_t microBatches) {
  schedule::ScheduleConfig config;
  config.kind = schedule::Kind::GPipe;
  config.microBatches = microBatches;
  config.steps = 1;
  llvm::Expected<schedule::Schedule> lists = schedule::generate(graph, config);
  if (!lists)
    return lists.takeError();
  if (llvm::Expected<schedule::DryRunResult> checked =
          schedule::dryRun(graph, config, *lists);
      !checked)
    return checked.takeError();
  // GPipe's forwards come first on every device, in an order that the dry
  // run found free of deadlocks; without the backwards they still are.
  for (std::vector<schedule::Action> &list : lists->devices)
    llvm::erase_if(list, [](const schedule::Action &action) {
      return action.kind != schedule::ActionKind::Forward;
    });
  return lists;
}

llvm::Expected<EvaluationSetup> ftpipe::runtime::prepareEvaluation(
    llvm::StringRef path, int64_t every, llvm::StringRef csvPath,
    const PipelineModel &model, const ExecutorConfig &config) {
  if (every < 1)
    return fail("--eval-every must be at least 1");
  // Every schedule but async flushes at each update (the zero-bubble ones
  // run their last W before it); async keeps micro-batches of the next
  // step in flight across it, so no moment has one set of weights.
  if (config.schedule.kind == schedule::Kind::Async)
    return fail("--eval-data evaluates between steps, which schedule '" +
                schedule::nameOf(config.schedule.kind) +
                "' does not flush: use gpipe, 1f1b, zb-h1 or zb-auto");
  EvaluationSetup setup;
  llvm::Expected<SafetensorsFile> file = readSafetensors(path);
  if (!file)
    return file.takeError();
  setup.data = std::move(file->tensors);
  if (llvm::Error error = validateDataset(model.dataInputs(), setup.data))
    return fail(path + ": " + llvm::toString(std::move(error)));
  if (llvm::Error error = checkFinite(setup.data))
    return fail(path + ": " + llvm::toString(std::move(error)));
  for (const DataInputInfo &input : model.dataInputs())
    if (std::optional<std::string> bad =
            checkIndexValues(input, setup.data.at(input.name)))
      return fail(path + ": " + *bad);
  int64_t samples = setup.data.begin()->second.shape.front();
  int64_t microBatches = std::max<int64_t>(1, samples / model.microBatchSize());
  llvm::Expected<schedule::Schedule> lists =
      forwardOnlyLists(model.stageGraph(), microBatches);
  if (!lists)
    return lists.takeError();
  // Counted after every micro-batch of the run, so that no message of an
  // evaluation is taken for one of training (transfers are matched by
  // micro-batch); a multiple of the set's size, so that micro-batch j still
  // reads samples j * b + i (DeviceExecutor::setData).
  int64_t trained = config.schedule.steps * config.schedule.microBatches;
  int64_t first = samples * (trained / std::max<int64_t>(samples, 1) + 1);
  for (std::vector<schedule::Action> &list : lists->devices)
    for (schedule::Action &action : list)
      action.index += first;
  setup.lists = std::move(*lists);
  setup.every = every;
  setup.steps = config.schedule.steps;
  setup.samplesPerStep = config.schedule.microBatches * model.microBatchSize();
  setup.microBatchSize = model.microBatchSize();
  if (!csvPath.empty())
    if (llvm::Error error = support::checkOutputPath(csvPath, "--eval-csv"))
      return error;
  setup.csvPath = csvPath.str();
  return setup;
}

llvm::Expected<std::vector<EvaluatedMicroBatch>>
DeviceExecutor::evaluate(llvm::ArrayRef<schedule::Action> forwards,
                         const TensorMap &data) {
  if (llvm::Error error = validateDataset(inputs, data, /*allowExtra=*/true))
    return std::move(error);
  if (live.size() != params.size())
    return fail("device " + llvm::Twine(communicator.device()) +
                " has no weights");
  // Inside run() (from onStep) the transport and ledger are already the
  // executor's; before it, evaluate sets them for its own duration.
  Transport *transport = threadTransport();
  int32_t charged = ftpipe_mem_thread_device();
  setThreadTransport(timedTransport());
  ftpipe_mem_set_thread_device(static_cast<int32_t>(communicator.device()));
  const TensorMap *training = dataset;
  double begin = seconds(), computed = computeSeconds, waited = waitedSeconds;
  dataset = &data;
  evaluating = true;
  evaluated.clear();
  llvm::Error error = llvm::Error::success();
  for (const schedule::Action &action : forwards)
    if ((error = forward(action.stage, action.index)))
      break;
  evaluating = false;
  dataset = training;
  // The step in progress neither counts the evaluation's time nor its
  // computing.
  computeSeconds = computed;
  waitedSeconds = waited;
  stepStart += seconds() - begin;
  setThreadTransport(transport);
  ftpipe_mem_set_thread_device(charged);
  if (error)
    return std::move(error);
  return std::move(evaluated);
}

Evaluator::Evaluator(const EvaluationSetup &setup, int64_t device)
    : setup(setup), device(device), start(seconds()) {}

llvm::Expected<std::optional<EvaluationReport>>
Evaluator::afterUpdates(DeviceExecutor &executor, int64_t updates) {
  if (updates % setup.every != 0 && updates != setup.steps)
    return std::nullopt;
  llvm::Expected<std::vector<EvaluatedMicroBatch>> batches =
      executor.evaluate(setup.lists.devices[device], setup.data);
  if (!batches)
    return batches.takeError();
  if (batches->empty())
    return std::nullopt;
  EvaluationReport report;
  report.updates = updates;
  for (const EvaluatedMicroBatch &batch : *batches)
    report.loss += batch.loss;
  report.loss /= batches->size();
  report.perplexity = std::exp(report.loss);
  llvm::Expected<EvaluationMetrics> metrics =
      computeMetrics(*batches, setup.data, setup.microBatchSize);
  if (!metrics)
    return metrics.takeError();
  report.metrics = std::move(*metrics);
  report.microBatches = batches->size();
  report.seconds = seconds() - start;
  csvRows +=
      llvm::formatv("{0},{1:f3},{2},{3:f6},{4:f6}{5}\n", updates,
                    report.seconds, updates * setup.samplesPerStep, report.loss,
                    report.perplexity, report.metrics.csvValues())
          .str();
  std::string columns = report.metrics.csvColumns();
  std::string csv = "step,seconds,samples,loss,perplexity" +
                    (columns.empty() ? "" : "," + columns) + "\n" + csvRows;
  if (!setup.csvPath.empty())
    if (llvm::Error error = support::writeFileAtomically(setup.csvPath, csv))
      return std::move(error);
  return report;
}

std::string ftpipe::runtime::formatEvaluation(const EvaluationReport &report) {
  return llvm::formatv("eval step {0} loss {1:f6} perplexity {2:f4}{3} ({4} "
                       "micro-batches, {5:f1} s)\n",
                       report.updates, report.loss, report.perplexity,
                       report.metrics.describe(), report.microBatches,
                       report.seconds)
      .str();
}
