//===- PassUtils.h - Helpers shared by FTPipe passes ------------*- C++ -*-===//
//
// Private to lib/Transforms: the training setup of a pass (its options
// against the module's #ftpipe.training) and the lib/Partition config it
// gives, and opening output files.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_TRANSFORMS_PASSUTILS_H
#define FTPIPE_LIB_TRANSFORMS_PASSUTILS_H

#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/Recomputation.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

#include <memory>

namespace mlir {
namespace ftpipe {

/// The options of a pass that plans or reports (Passes.td's
/// ObjectiveOptions), by reference (the generated members are protected).
struct SetupOptions {
  const Pass::Option<::ftpipe::schedule::Kind> &schedule;
  const Pass::Option<unsigned> &microbatches;
  const Pass::Option<::ftpipe::schedule::Optimizer> &optimizer;
  const Pass::Option<::ftpipe::schedule::WeightVersions> &stashing;
  const Pass::Option<::ftpipe::schedule::RecomputeMode> &recompute;
};

/// The training setup `pass` plans or reports for: the module's
/// `#ftpipe.training` when it has one, else the options' values (given or
/// default), which are then recorded on the module. An option given
/// explicitly that differs from the recorded setup is an error at the module
/// naming both values.
FailureOr<::ftpipe::schedule::TrainingSetup>
resolveTrainingSetup(ModuleOp module, StringRef pass,
                     const SetupOptions &options);

/// Records on `module` that its plan will run under the synchronous schedule
/// `sync` (the planners' `sync-schedule`), whose step chose it and whose
/// memory it was checked for: `#ftpipe.training` becomes `setup` with that
/// schedule, so that ftpipe-compile's manifest, ftpipe-run's default and its
/// messages name it.
void recordSyncSchedule(ModuleOp module,
                        const ::ftpipe::schedule::TrainingSetup &setup,
                        ::ftpipe::schedule::Kind sync);

/// Opens `path` for writing ("-" is stdout); emits an error at `loc` and
/// returns null when it cannot. Call keep() on the result once written.
inline std::unique_ptr<llvm::ToolOutputFile> openOutput(StringRef path,
                                                        Location loc) {
  std::string message;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &message);
  if (!file)
    emitError(loc) << "cannot write '" << path << "': " << message;
  return file;
}

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_LIB_TRANSFORMS_PASSUTILS_H
