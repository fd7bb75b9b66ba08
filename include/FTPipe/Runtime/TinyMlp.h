//===- TinyMlp.h - A hand-written pipeline model ----------------*- C++ -*-===//
//
// A small multi-layer perceptron split into S stages, with forward and
// backward written by hand as the generated stage code would be: transfers
// through the C ABI (ftpipe_rt_send_f32 / ftpipe_rt_recv_f32, edge s -> s+1
// has tags 2s and 2s + 1), recomputation from the received input, and a
// tied weight. It lets the executor, the schedules and the communicators
// run end to end before compiled artifacts exist, and `ftpipe-run --model
// tiny-mlp` train it.
//
//   stage 0:      a = x E^T            (E = "embed.weight", [H, D])
//   every stage:  h = tanh(a W_s^T + b_s)   ("layers.s.weight", [H, H])
//   last stage:   out = h E,  loss = 0.5 / B * sum((out - y)^2)
// Data inputs: "x" and "y", [B, D] per micro-batch. E is read by stage 0
// and the last stage: a tied parameter when they are on different devices.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_TINYMLP_H
#define FTPIPE_RUNTIME_TINYMLP_H

#include "FTPipe/Runtime/PipelineModel.h"

#include <memory>

namespace ftpipe {
namespace runtime {

struct TinyMlpShape {
  int64_t stages = 4, hidden = 8, features = 4, microBatchSize = 2;
};

/// The stage programs of `shape` for the stages on `device`; `placement[s]`
/// is stage s's device.
std::vector<std::unique_ptr<StageProgram>>
tinyMlpStages(const TinyMlpShape &shape, const std::vector<int64_t> &placement,
              int64_t device);

/// Which devices read each parameter (the tied embedding on two when stage 0
/// and the last stage are apart).
ParameterPlacement tinyMlpPlacement(const TinyMlpShape &shape,
                                    const std::vector<int64_t> &placement);

/// Seeded weights of every parameter (uniform in +-1/sqrt(fan-in)).
TensorMap tinyMlpWeights(const TinyMlpShape &shape, uint64_t seed);

/// A synthetic regression data set of `samples` samples: y = sin(x A) for
/// a fixed random A, so the model can fit it.
TensorMap tinyMlpData(const TinyMlpShape &shape, int64_t samples,
                      uint64_t seed);

/// The model as the launcher runs it (stage s on device placement[s]).
std::unique_ptr<PipelineModel>
createTinyMlpModel(const TinyMlpShape &shape, std::vector<int64_t> placement);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_TINYMLP_H
