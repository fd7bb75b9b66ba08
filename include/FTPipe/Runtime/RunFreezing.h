//===- RunFreezing.h - ftpipe-run --freeze ----------------------*- C++ -*-===//
//
// A freeze policy during a run (schedule/Freezing.h), turned into the
// frozen parameter set of each step: the model's layers from its parameter
// names, and the depth per step (alpha: per epoch of the data set; a
// schedule file as given). The devices apply it at step boundaries
// (RunDevices.cpp): a parameter frozen from step k is never updated again
// and its optimizer state is left as it was, as Hugging Face training with
// requires_grad = False from step k. The compiled backward still computes
// its gradient until the model is compiled again with the parameter frozen
// (docs/Freezing.md). No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_RUNFREEZING_H
#define FTPIPE_RUNTIME_RUNFREEZING_H

#include "FTPipe/Runtime/Executor.h"
#include "FTPipe/Schedule/Freezing.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

class PipelineModel;

struct RunFreezing {
  /// The model's layers (schedule::groupLayers) and the depth per step.
  std::vector<std::vector<std::string>> layers;
  schedule::FreezeSchedule depths;
  /// The parameters frozen at `step` (0-based): `base` (the manifest's)
  /// and the policy's prefix.
  std::set<std::string> frozenAt(int64_t step,
                                 const std::set<std::string> &base) const;
};

/// The policy `spec` (`alpha=X` or `schedule=FILE`; the gradient-norm rule
/// is not wired into ftpipe-run yet and is refused) for `model` trained for
/// `steps` steps of `microBatches` micro-batches on `data`.
llvm::Expected<RunFreezing> planFreezing(llvm::StringRef spec,
                                         const PipelineModel &model,
                                         const TensorMap &data, int64_t steps,
                                         int64_t microBatches);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_RUNFREEZING_H
