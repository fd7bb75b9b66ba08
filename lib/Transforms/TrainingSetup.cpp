//===- TrainingSetup.cpp - A pass's options against #ftpipe.training ------===//
//
// The training setup is recorded once on the module; every pass that plans
// or reports reads it from there, and its own options only fill it in the
// first time (or must agree with it).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "PassUtils.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::ftpipe;
namespace setup = ::ftpipe::schedule;

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
  auto check = [&](bool explicitlyGiven, bool differs, StringRef option,
                   const std::string &ours, const std::string &theirs) {
    if (!explicitlyGiven || !differs)
      return true;
    module.emitError() << pass << ": option " << option << "=" << ours
                       << " contradicts the module's training setup ("
                       << TrainingAttr::kName << " has " << option << " = "
                       << theirs << ")";
    return false;
  };
  if (!check(options.schedule.hasValue(), given.schedule != setup.schedule,
             "schedule", setup::kindName(given.schedule).str(),
             setup::kindName(setup.schedule).str()) ||
      !check(options.microbatches.hasValue(),
             given.microBatches != setup.microBatches, "microbatches",
             std::to_string(given.microBatches),
             std::to_string(setup.microBatches)) ||
      !check(options.optimizer.hasValue(), given.optimizer != setup.optimizer,
             "optimizer", setup::optimizerName(given.optimizer).str(),
             setup::optimizerName(setup.optimizer).str()) ||
      !check(options.stashing.hasValue(),
             given.weightVersions != setup.weightVersions, "stashing",
             setup::weightVersionsName(given.weightVersions).str(),
             setup::weightVersionsName(setup.weightVersions).str()) ||
      !check(options.recompute.hasValue(), given.recompute != setup.recompute,
             "recompute", setup::recomputeModeName(given.recompute).str(),
             setup::recomputeModeName(setup.recompute).str()))
    return failure();
  return setup;
}
