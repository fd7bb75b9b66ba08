//===- StageProgram.h - One stage's forward and backward --------*- C++ -*-===//
//
// What the executor runs for a stage (docs/StagePrograms.md): a forward that
// returns the loss (in the stage that computes it) and the saved values, and
// a backward that adds one gradient per parameter into the step's sums.
// Transfers to and from other stages happen inside, through the calling
// thread's Transport, as in generated code. The compiled artifacts of
// `ftpipe-compile` implement this interface over their `_mlir_ciface_` entry
// points; tests implement it by hand.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_STAGEPROGRAM_H
#define FTPIPE_RUNTIME_STAGEPROGRAM_H

#include "FTPipe/Runtime/MemoryNeeds.h"
#include "FTPipe/Runtime/Tensor.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

/// A parameter as a stage's entry points take it.
struct ParameterInfo {
  /// Hugging Face name.
  std::string name;
  std::vector<int64_t> shape;
  DType type = DType::F32;
};

/// A data input as a stage reads it: the shape of one micro-batch's slice
/// (the data set holds the same with a leading sample dimension instead of
/// the micro-batch's).
struct DataInputInfo {
  std::string name;
  std::vector<int64_t> shape;
  DType type = DType::F32;
  /// For an input that indexes a table (token ids, labels): every value
  /// lies in [0, indexBound) or equals indexIgnored (checkIndexValues).
  std::optional<int64_t> indexBound, indexIgnored;
};

class StageProgram {
public:
  virtual ~StageProgram();
  virtual int64_t stage() const = 0;
  virtual const std::vector<ParameterInfo> &parameters() const = 0;
  virtual const std::vector<DataInputInfo> &dataInputs() const = 0;
  /// Whether forward() returns the loss.
  virtual bool computesLoss() const = 0;
  /// The stage's memory needs; none where they are not known (hand-written
  /// stages).
  virtual std::optional<StageMemory> memory() const { return std::nullopt; }
  /// Bounds the generated code's buffers and the allocator's cache (of the
  /// calling thread's device) by `bytes` from now until the next task
  /// (ftpipe_host_cache_limit, HostAllocator.h): the executor passes what
  /// the memory replay allows the task (DeviceExecutor::boundCaches), else
  /// the recorded peak of the entry point it calls. Nothing for stages
  /// without recorded peaks.
  virtual void limitCache(int64_t bytes) {}

  struct ForwardResult {
    std::optional<float> loss;
    /// Evaluation metrics returned beside the loss, by name
    /// (EvaluationMetrics.h).
    std::map<std::string, Tensor> metrics;
    std::vector<Tensor> saved;
  };
  /// Runs the forward of micro-batch `mb` on `params` (order of
  /// parameters()) and the micro-batch's slices of `data` (order of
  /// dataInputs()).
  virtual ForwardResult forward(int64_t mb,
                                const std::vector<const Tensor *> &params,
                                const std::vector<const Tensor *> &data) = 0;
  /// Runs the backward of `mb` and adds its gradients into `gradSums` (in
  /// parameter order; the step's sums, so no second copy of them is made).
  /// The sum of a frozen parameter is null: its gradient, where the code
  /// still computes one (frozen during the run), is dropped.
  virtual void backward(int64_t mb, const std::vector<const Tensor *> &params,
                        const std::vector<const Tensor *> &data,
                        std::vector<Tensor> saved,
                        const std::vector<Tensor *> &gradSums) = 0;

  /// Whether the backward also runs as an input part and a weight part
  /// (docs/StagePrograms.md, contract version 2; zero-bubble schedules).
  virtual bool splitsBackward() const { return false; }
  /// Runs the input part of `mb`'s backward (the backward's transfers) and
  /// returns the values its weight part reads. Only if splitsBackward().
  virtual std::vector<Tensor>
  backwardInput(int64_t mb, const std::vector<const Tensor *> &params,
                const std::vector<const Tensor *> &data,
                std::vector<Tensor> saved);
  /// Runs the weight part of `mb`'s backward on what backwardInput returned
  /// and adds its gradients into `gradSums`. Only if splitsBackward().
  virtual void backwardWeight(int64_t mb,
                              const std::vector<const Tensor *> &params,
                              const std::vector<const Tensor *> &data,
                              std::vector<Tensor> weightSaved,
                              const std::vector<Tensor *> &gradSums);
};

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_STAGEPROGRAM_H
