//===- OptimizerRules.h - One element of each optimizer's update -*- C++
//-*-===//
//
// The arithmetic of Optimizer.h's updates, element by element, shared by the
// host optimizers (lib/Runtime/Optimizer.cpp) and the device ones
// (lib/Runtime/DeviceOptimizerKernels.cu, compiled by nvcc): one definition,
// so both follow PyTorch the same way. Arithmetic in double, state stored in
// f32. No LLVM, no CUDA header: plain functions, FTPIPE_HOST_DEVICE.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_OPTIMIZERRULES_H
#define FTPIPE_RUNTIME_OPTIMIZERRULES_H

#include "FTPipe/Runtime/HostDevice.h"

#include <math.h>

namespace ftpipe {
namespace runtime {
namespace rules {

/// torch.optim.SGD (dampening 0, no Nesterov): the first update stores the
/// gradient as the momentum buffer.
FTPIPE_HOST_DEVICE inline void sgd(float &p, float g, float &buffer, double lr,
                                   double weightDecay, double momentum,
                                   bool first) {
  double gi = g + weightDecay * p;
  double b = first ? gi : momentum * buffer + gi;
  buffer = static_cast<float>(b);
  p = static_cast<float>(p - lr * b);
}

/// torch.optim.AdamW (`decoupled`) or torch.optim.Adam (decay added to the
/// gradient); `correction1/2` = 1 - beta^t.
FTPIPE_HOST_DEVICE inline void adam(float &p, float g, float &m, float &v,
                                    double lr, double beta1, double beta2,
                                    double eps, double weightDecay,
                                    bool decoupled, double correction1,
                                    double correction2) {
  double decayed = decoupled ? p * (1.0 - lr * weightDecay) : double(p);
  double gi = decoupled ? double(g) : double(g) + weightDecay * p;
  double mi = beta1 * m + (1.0 - beta1) * gi;
  double vi = beta2 * v + (1.0 - beta2) * gi * gi;
  m = static_cast<float>(mi);
  v = static_cast<float>(vi);
  double denominator = sqrt(vi) / sqrt(correction2) + eps;
  p = static_cast<float>(decayed - lr / correction1 * mi / denominator);
}

/// Adafactor (transformers): the squared gradient with eps1 added.
FTPIPE_HOST_DEVICE inline double adafactorSquare(float g, double eps1) {
  return double(g) * g + eps1;
}

/// A second-moment state element moved towards `mean` by 1 - beta2t.
FTPIPE_HOST_DEVICE inline float adafactorAverage(float state, double beta2t,
                                                 double mean) {
  return static_cast<float>(beta2t * state + (1.0 - beta2t) * mean);
}

/// The factored update of one matrix element from its row's and column's
/// states and the matrix's mean row state.
FTPIPE_HOST_DEVICE inline double adafactorFactored(float row, double rowAverage,
                                                   float col, float g) {
  double rowFactor = 1.0 / sqrt(row / rowAverage);
  double colFactor = 1.0 / sqrt(double(col));
  return rowFactor * colFactor * g;
}

/// The unfactored update of a vector element from its state.
FTPIPE_HOST_DEVICE inline double adafactorUnfactored(float v, float g) {
  return g / sqrt(double(v));
}

/// The step size once the update's sum of squares over `n` elements is known
/// (update clipping by its RMS).
FTPIPE_HOST_DEVICE inline double
adafactorScale(double lr, double sumSquares, double n, double clipThreshold) {
  double rms = sqrt(sumSquares / n);
  double clip = rms / clipThreshold;
  return lr / (clip > 1.0 ? clip : 1.0);
}

/// The parameter after weight decay and the scaled update.
FTPIPE_HOST_DEVICE inline float
adafactorApply(float p, double u, double lr, double weightDecay, double scale) {
  return static_cast<float>(p - weightDecay * lr * p - scale * u);
}

} // namespace rules
} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_OPTIMIZERRULES_H
