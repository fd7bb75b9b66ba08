//===- DeviceOptimizer.h - The optimizers on GPU memory ---------*- C++ -*-===//
//
// Optimizer.h's updates (SGD with momentum, Adam, AdamW, Adafactor; same
// definitions, same warm-up, OptimizerRules.h's arithmetic) on parameters,
// gradients and state in device memory, as kernels on the calling thread's
// runtime stream (lib/Runtime/DeviceOptimizerKernels.cu). Nothing crosses to
// the host during a step. Built only with the CUDA toolkit
// (FTPIPE_HAVE_CUDA); needs a GPU to run.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_DEVICEOPTIMIZER_H
#define FTPIPE_RUNTIME_DEVICEOPTIMIZER_H

#include "FTPipe/Runtime/Optimizer.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"

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
  /// `config.kind` must pass checkImplemented.
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
  std::vector<float> stateSlot(llvm::StringRef name, unsigned index) const;

private:
  struct Slot {
    float *data = nullptr;
    int64_t count = 0;
  };
  OptimizerConfig config;
  int64_t done = 0;
  llvm::StringMap<std::vector<Slot>> state;
};

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_DEVICEOPTIMIZER_H
