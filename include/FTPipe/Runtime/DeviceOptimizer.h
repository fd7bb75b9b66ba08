//===- DeviceOptimizer.h - The optimizers on GPU memory ---------*- C++ -*-===//
//
// Optimizer.h's updates (SGD with momentum, Adam, AdamW, Adafactor; same
// definitions, same warm-up, OptimizerRules.h's arithmetic) on parameters,
// gradients and state in device memory, as kernels on the calling thread's
// runtime stream (lib/Runtime/DeviceOptimizerKernels.cu). Nothing crosses to
// the host during a step. Part of FTPipeCUDARuntime, which travels to a lent
// GPU (docs/GPU.md) and links no LLVM library: LLVM's header-only parts
// only. The C functions at the end drive it from Python
// (scripts/gpu/train_cuda_artifacts.py). Built only with the CUDA toolkit
// (FTPIPE_HAVE_CUDA); needs a GPU to run.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_DEVICEOPTIMIZER_H
#define FTPIPE_RUNTIME_DEVICEOPTIMIZER_H

#include "FTPipe/Runtime/CudaRuntimeWrappers.h"
#include "FTPipe/Runtime/Optimizer.h"

#include "llvm/ADT/ArrayRef.h"

#include <map>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

/// One parameter of a step: its name (the key of its state), its shape, and
/// the device buffers of its values (updated in place) and gradient.
struct DeviceParameter {
  std::string name;
  std::vector<int64_t> shape;
  float *values = nullptr;
  const float *grad = nullptr;
};

class DeviceOptimizer {
public:
  /// `config.kind` must be isImplemented.
  explicit DeviceOptimizer(OptimizerConfig config);
  ~DeviceOptimizer();
  DeviceOptimizer(const DeviceOptimizer &) = delete;
  DeviceOptimizer &operator=(const DeviceOptimizer &) = delete;

  /// Queues update number steps() of every parameter, then counts the step.
  void step(llvm::ArrayRef<DeviceParameter> params);
  int64_t steps() const { return done; }
  /// Bytes of device memory kept as state for all parameters.
  int64_t stateBytes() const;
  /// Slot `index` of parameter `name`'s state (Optimizer::saveState's
  /// order), copied to the host; empty before its first update.
  std::vector<float> stateSlot(const std::string &name, unsigned index) const;

private:
  struct Slot {
    float *data = nullptr;
    int64_t count = 0;
  };
  OptimizerConfig config;
  int64_t done = 0;
  std::map<std::string, std::vector<Slot>> state;
};

} // namespace runtime
} // namespace ftpipe

/* DeviceOptimizer for drivers without C++ (ctypes). Every pointer of a
 * parameter is device memory; the work is queued on the calling thread's
 * runtime stream, as DeviceOptimizer::step's. */
extern "C" {
/* A device optimizer `kind` ("sgd", "adam", "adamw" or "adafactor": the
 * spellings of schedule::Optimizer) with learning rate `lr`, `warmup_steps`
 * and `weight_decay`; its other hyper-parameters are OptimizerConfig's
 * defaults (PyTorch's). Null, with a message on stderr, for another kind. */
FTPIPE_CUDA_EXPORT void *ftpipe_cuda_optimizer_create(const char *kind,
                                                      double lr,
                                                      int64_t warmup_steps,
                                                      double weight_decay);
/* One step over `count` parameters: parameter i is named `names[i]`, has
 * `ranks[i]` dimensions (taken in turn from `dims`), values `values[i]`
 * (updated in place) and gradient `grads[i]`. */
FTPIPE_CUDA_EXPORT void
ftpipe_cuda_optimizer_step(void *optimizer, int64_t count,
                           const char *const *names, const int64_t *ranks,
                           const int64_t *dims, float *const *values,
                           const float *const *grads);
FTPIPE_CUDA_EXPORT void ftpipe_cuda_optimizer_destroy(void *optimizer);
/* sum[i] = (first ? 0 : sum[i]) + scale * value[i] for i < n: a step's
 * gradient summed over its micro-batches on the device. */
FTPIPE_CUDA_EXPORT void ftpipe_cuda_accumulate_f32(float *sum,
                                                   const float *value,
                                                   int64_t n, float scale,
                                                   int first);
}

#endif // FTPIPE_RUNTIME_DEVICEOPTIMIZER_H
