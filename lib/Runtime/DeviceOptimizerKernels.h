//===- DeviceOptimizerKernels.h - Optimizer updates on the GPU --*- C++ -*-===//
//
// The kernels of DeviceOptimizer.h (DeviceOptimizerKernels.cu, part of
// FTPipeCUDARuntime): one update of one parameter, every pointer device
// memory, queued on the calling thread's runtime stream (CudaDeviceMemory.h).
// The element arithmetic is OptimizerRules.h's, as on the host.
// A private header of lib/Runtime; no LLVM, no CUDA header.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_RUNTIME_DEVICEOPTIMIZERKERNELS_H
#define FTPIPE_LIB_RUNTIME_DEVICEOPTIMIZERKERNELS_H

#include <cstdint>

namespace ftpipe {
namespace cuda {

/// The hyper-parameters of one update (OptimizerConfig's, with the learning
/// rate of this update and the step's bias corrections already computed).
struct UpdateRule {
  double lr = 0, weightDecay = 0;
  double momentum = 0;                            // SGD
  double beta1 = 0, beta2 = 0, eps = 0;           // Adam(W)
  double correction1 = 1, correction2 = 1;        // Adam(W): 1 - beta^t
  bool decoupled = true;                          // AdamW, not Adam
  double eps1 = 0, clipThreshold = 1, beta2t = 0; // Adafactor
};

/// SGD with momentum over `n` elements; `first`: the buffer is not set yet.
__attribute__((visibility("default"))) void
sgdUpdate(float *param, const float *grad, float *buffer, int64_t n,
          const UpdateRule &rule, bool first);

/// Adam or AdamW over `n` elements.
__attribute__((visibility("default"))) void
adamUpdate(float *param, const float *grad, float *m, float *v, int64_t n,
           const UpdateRule &rule);

/// Adafactor on `matrices` row-major (rows x cols) matrices with factored
/// state (`row`: matrices x rows, `col`: matrices x cols).
__attribute__((visibility("default"))) void
adafactorFactoredUpdate(float *param, const float *grad, float *row, float *col,
                        int64_t matrices, int64_t rows, int64_t cols,
                        const UpdateRule &rule);

/// Adafactor on a vector of `n` elements with state `v`.
__attribute__((visibility("default"))) void
adafactorVectorUpdate(float *param, const float *grad, float *v, int64_t n,
                      const UpdateRule &rule);

/// sum = (first ? 0 : sum) + scale * value over `n` elements.
__attribute__((visibility("default"))) void
accumulate(float *sum, const float *value, int64_t n, float scale, bool first);

} // namespace cuda
} // namespace ftpipe

#endif // FTPIPE_LIB_RUNTIME_DEVICEOPTIMIZERKERNELS_H
