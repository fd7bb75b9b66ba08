//===- TrainingSetup.cpp - A pass's options against #ftpipe.training ------===//
//
// The training setup is recorded once on the module; every pass that plans
// or reports reads it from there, and its own options only fill it in the
// first time (or must agree with it). A plan made for a synchronous step
// (`sync-schedule`) records that schedule as the setup's.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "PassUtils.h"

#include <string>
#include <type_traits>

using namespace mlir;
using namespace mlir::ftpipe;
namespace setup = ::ftpipe::schedule;

/// A setup field's value as its option spells it.
template <typename T> static std::string spell(T value) {
  if constexpr (std::is_integral_v<T>)
    return std::to_string(value);
  else
    return setup::nameOf(value).str();
}

FailureOr<setup::TrainingSetup>
mlir::ftpipe::resolveTrainingSetup(ModuleOp module, StringRef pass,
                                   const SetupOptions &options) {
  setup::TrainingSetup given;
  given.schedule = options.schedule;
  given.microBatches = options.microbatches;
  given.optimizer = options.optimizer;
  given.weightVersions = options.stashing;
  given.recompute = options.recompute;
  auto recorded = module->getAttrOfType<TrainingAttr>(TrainingAttr::kName);
  if (!recorded) {
    if (given.microBatches == 0) {
      module.emitError() << pass << ": microbatches must be at least 1";
      return failure();
    }
    module->setAttr(TrainingAttr::kName,
                    TrainingAttr::get(module.getContext(), given));
    return given;
  }
  setup::TrainingSetup setup = recorded.getSetup();
  // Each option given explicitly must say what the module records.
  auto agrees = [&](const auto &option, auto ours, auto theirs) {
    if (!option.hasValue() || ours == theirs)
      return true;
    module.emitError() << pass << ": option " << option.getArgStr() << "="
                       << spell(ours)
                       << " contradicts the module's training setup ("
                       << TrainingAttr::kName << " has " << option.getArgStr()
                       << " = " << spell(theirs) << ")";
    return false;
  };
  if (!agrees(options.schedule, given.schedule, setup.schedule) ||
      !agrees(options.microbatches, given.microBatches, setup.microBatches) ||
      !agrees(options.optimizer, given.optimizer, setup.optimizer) ||
      !agrees(options.stashing, given.weightVersions, setup.weightVersions) ||
      !agrees(options.recompute, given.recompute, setup.recompute))
    return failure();
  return setup;
}

void mlir::ftpipe::recordSyncSchedule(ModuleOp module,
                                      const setup::TrainingSetup &setup,
                                      setup::Kind sync) {
  setup::TrainingSetup planned = setup;
  planned.schedule = sync;
  module->setAttr(TrainingAttr::kName,
                  TrainingAttr::get(module.getContext(), planned));
}
