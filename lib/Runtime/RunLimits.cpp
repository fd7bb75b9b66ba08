//===- RunLimits.cpp - Limits on a run's settings -------------------------===//

#include "FTPipe/Runtime/RunLimits.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace ftpipe::runtime;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// `value` as a user wrote it: "nan", "inf", "-1", "0.001".
static std::string number(double value) {
  return llvm::formatv("{0}", llvm::format("%g", value)).str();
}

llvm::Error ftpipe::runtime::checkSizeOption(int64_t value, int64_t max,
                                             llvm::StringRef option) {
  if (value < 1 || value > max)
    return fail(llvm::formatv("{0} {1}: give a number from 1 to {2}", option,
                              value, max));
  return llvm::Error::success();
}

llvm::Error ftpipe::runtime::checkRunSettings(const ExecutorConfig &config,
                                              int64_t stages) {
  const schedule::ScheduleConfig &schedule = config.schedule;
  int64_t perStep = 2 * std::max<int64_t>(stages, 1);
  if (llvm::Error error =
          checkSizeOption(schedule.microBatches, kMaxScheduleActions / perStep,
                          "--micro-batches"))
    return error;
  int64_t maxSteps = kMaxScheduleActions / (perStep * schedule.microBatches);
  if (schedule.steps < 1 || schedule.steps > maxSteps)
    return fail(llvm::formatv(
        "--steps {0}: give a number from 1 to {1} (with {2} micro-batches "
        "and {3} stages: the schedule of the whole run is built first, at "
        "most {4} actions)",
        schedule.steps, maxSteps, schedule.microBatches, stages,
        kMaxScheduleActions));
  const OptimizerConfig &optimizer = config.optimizer;
  for (auto [value, option] :
       {std::pair{optimizer.lr, "--lr"},
        std::pair{optimizer.weightDecay, "--weight-decay"}})
    if (!std::isfinite(value) || value < 0)
      return fail(llvm::formatv("{0} {1}: give a finite number, at least 0",
                                option, number(value)));
  if (optimizer.warmupSteps < 0)
    return fail(llvm::formatv("--warmup {0}: give a number of updates, at "
                              "least 0",
                              optimizer.warmupSteps));
  return llvm::Error::success();
}

llvm::Error ftpipe::runtime::checkTimeout(double seconds,
                                          llvm::StringRef option) {
  if (!std::isfinite(seconds) || seconds <= 0 || seconds > kMaxTimeoutSeconds)
    return fail(llvm::formatv("{0} {1}: give seconds above 0, at most {2} "
                              "(a week)",
                              option, number(seconds),
                              number(kMaxTimeoutSeconds)));
  return llvm::Error::success();
}
