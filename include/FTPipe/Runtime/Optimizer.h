//===- Optimizer.h - Per-parameter optimizers of a stage --------*- C++ -*-===//
//
// The update rules of fine-tuning, on f32 parameters, following PyTorch's
// definitions so that a run can be compared with PyTorch:
//  - SGD with momentum (torch.optim.SGD, dampening 0, no Nesterov);
//  - AdamW with bias correction (torch.optim.AdamW);
//  - Adafactor with factored second moments (transformers' Adafactor with
//    an explicit learning rate: relative_step, scale_parameter and
//    warmup_init off, no first moment), FTPipe's choice for T5.
// The learning rate warms up linearly: update k (from 0) uses
// lr * min(1, k / warmupSteps) (transformers'
// get_constant_schedule_with_warmup). Each parameter keeps its own state,
// keyed by name; the step count is the optimizer's. The state goes out and
// comes back as tensors with PyTorch's names (checkpoints, Checkpoint.h).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_OPTIMIZER_H
#define FTPIPE_RUNTIME_OPTIMIZER_H

#include "FTPipe/Runtime/Tensor.h"
#include "FTPipe/Schedule/TrainingSetup.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cassert>
#include <map>

namespace ftpipe {
namespace runtime {

/// Whether the runtime implements `kind` (sgd, adam, adamw, adafactor);
/// `momentum` is only planned for (the runtime's sgd takes a momentum
/// option).
inline bool isImplemented(schedule::Optimizer kind) {
  return kind != schedule::Optimizer::Momentum;
}

/// Succeeds for the optimizers the runtime implements (isImplemented), or
/// says what to use instead.
llvm::Error checkImplemented(schedule::Optimizer kind);

struct OptimizerConfig {
  schedule::Optimizer kind = schedule::Optimizer::AdamW;
  double lr = 1e-3;
  int64_t warmupSteps = 0;
  double weightDecay = 0.0;
  /// SGD.
  double momentum = 0.9;
  /// Adam and AdamW.
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  /// Adafactor.
  double eps1 = 1e-30, clipThreshold = 1.0, decayRate = -0.8;
};

/// The learning rate of update `step` (0-based) under `config`, warm-up
/// included. Inline: the device optimizers (FTPipeCUDARuntime, which links no
/// LLVM library) compute it too.
inline double learningRate(const OptimizerConfig &config, int64_t step) {
  if (step < config.warmupSteps)
    return config.lr * static_cast<double>(step) / config.warmupSteps;
  return config.lr;
}

/// One slot of a parameter's state, charged to the device's memory ledger.
using StateVector = std::vector<float, LedgerAllocator<float>>;

class Optimizer {
public:
  /// `config.kind` must pass checkImplemented.
  explicit Optimizer(OptimizerConfig config) : config(config) {
    assert(!llvm::errorToBool(checkImplemented(config.kind)) &&
           "an optimizer the runtime does not implement");
  }
  /// The learning rate of update `step` (0-based), warm-up included.
  double learningRate(int64_t step) const;
  /// Updates done so far.
  int64_t steps() const { return done; }
  /// Applies update number steps() to every parameter of one step: `grads`
  /// (same order and shapes as `params`, already summed and scaled) and the
  /// state kept under `names`. Then counts the step.
  void step(llvm::ArrayRef<std::string> names,
            llvm::MutableArrayRef<Tensor *> params,
            llvm::ArrayRef<const Tensor *> grads);

  /// The state of parameter `name` (of `shape`) as f32 tensors named
  /// "<name>.<slot>" with torch.optim's slot names and shapes (SGD
  /// `momentum_buffer`; AdamW `exp_avg`, `exp_avg_sq`; Adafactor
  /// `exp_avg_sq_row` and `exp_avg_sq_col` for a matrix, `exp_avg_sq` for a
  /// vector), added to `out`; nothing before the parameter's first update.
  void saveState(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                 std::map<std::string, Tensor> &out) const;
  /// Takes back what saveState wrote for `name`; refuses a missing or
  /// mis-shaped slot by name.
  llvm::Error loadState(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                        const std::map<std::string, Tensor> &in);
  /// Bytes of state kept for all parameters.
  int64_t stateBytes() const;
  /// Bytes of state this optimizer keeps for a parameter of `shape`.
  int64_t stateBytes(llvm::ArrayRef<int64_t> shape) const;
  /// Continues the count of updates (a resumed run).
  void setSteps(int64_t steps) { done = steps; }

private:
  void update(llvm::StringRef name, Tensor &param, const Tensor &grad,
              double lr);
  /// The slots of a parameter of `shape`: their names and shapes.
  std::vector<std::pair<std::string, std::vector<int64_t>>>
  slots(llvm::ArrayRef<int64_t> shape) const;
  OptimizerConfig config;
  int64_t done = 0;
  /// Per parameter: SGD {momentum buffer}; AdamW {m, v}; Adafactor
  /// {row, column} for a matrix (or more dimensions: rows are all but the
  /// last), {v} for a vector.
  llvm::StringMap<std::vector<StateVector>> state;
};

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_OPTIMIZER_H
