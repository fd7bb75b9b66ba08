//===- PassUtils.h - Helpers shared by FTPipe passes ------------*- C++ -*-===//
//
// Private to lib/Transforms: turning the generated pass options into
// lib/Partition configs, and opening output files.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_TRANSFORMS_PASSUTILS_H
#define FTPIPE_LIB_TRANSFORMS_PASSUTILS_H

#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/Recomputation.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

#include <memory>

namespace mlir {
namespace ftpipe {

/// The objective configuration given by a pass's ObjectiveOptions (the
/// generated option members are protected, so the pass passes their values).
inline ::ftpipe::partition::ObjectiveConfig makeObjectiveConfig(
    ::ftpipe::schedule::Kind schedule, ::ftpipe::schedule::Optimizer optimizer,
    ::ftpipe::schedule::WeightVersions versioning,
    ::ftpipe::partition::RecomputeMode recompute, unsigned microBatches) {
  ::ftpipe::partition::ObjectiveConfig config;
  config.schedule = schedule;
  config.optimizer = optimizer;
  config.versioning = versioning;
  // Auto plans are first solved with recomputation everywhere (and a plan
  // carries its own choice per stage, which overrides this).
  config.recompute = recompute != ::ftpipe::partition::RecomputeMode::Never;
  config.microBatches = microBatches;
  return config;
}

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
