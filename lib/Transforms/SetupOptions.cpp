//===- SetupOptions.cpp - Option values of the training setup -------------===//
//
// The `schedule`, `optimizer`, `stashing` and `recompute` options of every pass
// that plans or reports (and the planners' `sync-schedule`) take their
// spellings and help lines from FTPipe/Schedule/TrainingSetup.h, so the
// runtime, the report and the options name each value once. The planners'
// `replicas` values live here too.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Transforms/Passes.h"

using namespace ::ftpipe::schedule;

/// The option value of `e`: its spelling and its line for a person.
template <typename Enum> static llvm::cl::OptionEnumValue value(Enum e) {
  return {nameOf(e), int(e), descriptionOf(e)};
}

llvm::cl::ValuesClass mlir::ftpipe::scheduleOptionValues() {
  return llvm::cl::ValuesClass(
      {value(Kind::Async), value(Kind::GPipe), value(Kind::OneFOneB),
       value(Kind::ZeroBubbleH1), value(Kind::ZeroBubbleAuto)});
}

llvm::cl::ValuesClass mlir::ftpipe::syncScheduleOptionValues() {
  return llvm::cl::ValuesClass(
      {{"none", int(Kind::Async), "no synchronous step: 'schedule' decides"},
       value(Kind::GPipe),
       value(Kind::OneFOneB),
       value(Kind::ZeroBubbleH1),
       value(Kind::ZeroBubbleAuto)});
}

llvm::cl::ValuesClass mlir::ftpipe::optimizerOptionValues() {
  return llvm::cl::ValuesClass({value(Optimizer::SGD),
                                value(Optimizer::Momentum),
                                value(Optimizer::Adam), value(Optimizer::AdamW),
                                value(Optimizer::Adafactor)});
}

llvm::cl::ValuesClass mlir::ftpipe::weightVersionsOptionValues() {
  return llvm::cl::ValuesClass({value(WeightVersions::Stash),
                                value(WeightVersions::DoubleBuffered),
                                value(WeightVersions::None)});
}

llvm::cl::ValuesClass mlir::ftpipe::recomputeModeOptionValues() {
  return llvm::cl::ValuesClass({value(RecomputeMode::Always),
                                value(RecomputeMode::Never),
                                value(RecomputeMode::Auto)});
}

llvm::cl::ValuesClass mlir::ftpipe::replicasOptionValues() {
  return llvm::cl::ValuesClass(
      {{"none", int(mlir::ftpipe::ReplicasMode::None),
        "one pipeline over every device"},
       {"auto", int(mlir::ftpipe::ReplicasMode::Auto),
        "also choose the pipeline's depth and each device's data-parallel "
        "replicas"}});
}
