//===- RunFreezing.h - ftpipe-run --freeze ----------------------*- C++ -*-===//
//
// A freeze policy during a run (schedule/Freezing.h), turned into the
// frozen parameter set of each step: the model's layers from its parameter
// names, and the depth per step (alpha: per epoch of the data set; a
// schedule file as given). The devices apply it at step boundaries
// (RunDevices.cpp; the gradient-norm rule from the gradients they measure,
// GradientNormFreezer): a parameter frozen from step k is never updated again
// and its optimizer state is left as it was, as Hugging Face training with
// requires_grad = False from step k. The compiled backward still computes
// its gradient until the model is compiled again with the parameter frozen
// (docs/Freezing.md). No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_RUNFREEZING_H
#define FTPIPE_RUNTIME_RUNFREEZING_H

#include "FTPipe/Runtime/Communicator.h"
#include "FTPipe/Runtime/Executor.h"
#include "FTPipe/Schedule/Freezing.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

class PipelineModel;

struct RunFreezing {
  /// The model's layers (schedule::groupLayers) and the depth per step
  /// (alpha and schedule=FILE).
  std::vector<std::vector<std::string>> layers;
  schedule::FreezeSchedule depths;
  /// gradient-norm: its threshold and evaluation period (`depths` empty:
  /// the depth is decided during the run, GradientNormFreezer).
  std::optional<schedule::FreezePolicy> gradientNorm;
  /// The parameters frozen at `step` (0-based): `base` (the manifest's)
  /// and the policy's prefix.
  std::set<std::string> frozenAt(int64_t step,
                                 const std::set<std::string> &base) const {
    return frozenWith(depths.depthAt(step), base);
  }
  /// `base` and the first `depth` layers.
  std::set<std::string> frozenWith(uint32_t depth,
                                   const std::set<std::string> &base) const;
};

/// One device's side of `--freeze gradient-norm[,threshold=X][,every=N]`:
/// after each update, every device adds the sums of squares of its owned
/// parameters' gradients per layer, all devices sum them
/// (Communicator::allReduceSum over every device, so each gets the same
/// bits), and each layer's gradient norm that step is the square root. The
/// norms accumulate (add up) over `every` steps; then every device runs the
/// same schedule::GradientNormRule on the same values, so all decide the same
/// depth: a layer has settled when its accumulated norm changed by less than
/// `threshold` (relative) since the previous evaluation; the prefix grows by
/// at most one layer per evaluation, and at least one layer keeps learning.
class GradientNormFreezer {
public:
  explicit GradientNormFreezer(const RunFreezing &freezing);
  /// After the update of step `step` (0-based), with this device's
  /// StepReport::gradientSquares; every process of `communicator` (one end
  /// per process) calls it at every step (a collective; of a replicated
  /// device's processes, one gives the squares and the others none).
  /// Returns the depth from the next step on.
  uint32_t afterStep(Communicator &communicator, int64_t step,
                     const std::map<std::string, double> &squares);
  uint32_t depth() const { return rule.depth(); }
  /// The rule's state after the last afterStep, for a checkpoint: the
  /// depth, the last evaluation's norms and what accumulated since.
  llvm::json::Value state() const;
  /// Continues from a checkpoint's state(); refuses one of another model
  /// or period.
  llvm::Error restore(const llvm::json::Value &state);
  /// After an evaluation, what it saw, for a progress line (empty after
  /// other steps): the accumulated norm per layer and its change.
  const std::string &evaluation() const { return said; }

private:
  int64_t every;
  double threshold;
  std::string said;
  std::vector<double> previous;
  std::map<std::string, size_t> layerOf;
  std::vector<double> accumulated;
  int64_t accumulatedSteps = 0;
  schedule::GradientNormRule rule;
};

/// The policy `spec` (`alpha=X`, `gradient-norm[,threshold=X][,every=N]`
/// or `schedule=FILE`) for `model` trained for `steps` steps of
/// `microBatches` micro-batches on `data`.
llvm::Expected<RunFreezing> planFreezing(llvm::StringRef spec,
                                         const PipelineModel &model,
                                         const TensorMap &data, int64_t steps,
                                         int64_t microBatches);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_RUNFREEZING_H
