//===- TinyMlpReference.h - The tiny MLP's training, written plainly -----===//
//
// An emulation of a pipeline run of the tiny MLP (TinyMlp.h) written apart
// from its stage programs: the whole network's forward and backward per
// micro-batch in double precision, with the weight version each stage's
// forward and backward used read off the schedule's lists (the number of
// updates its device did before), gradients averaged over a step's
// micro-batches, then the optimizer. For GPipe and 1F1B every version is the
// step's: plain sequential training.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_UNITTESTS_RUNTIME_TINYMLPREFERENCE_H
#define FTPIPE_UNITTESTS_RUNTIME_TINYMLPREFERENCE_H

#include "FTPipe/Runtime/Executor.h"
#include "FTPipe/Runtime/TinyMlp.h"

#include <cmath>

namespace ftpipe {
namespace runtime {
namespace reference {

/// versions[s][m]: the weight version stage s's forward (first) and
/// backward (second) of micro-batch m used.
using Versions = std::vector<std::vector<std::pair<int64_t, int64_t>>>;

inline Versions versionsOf(const schedule::Schedule &schedule,
                           const std::vector<int64_t> &placement,
                           int64_t microBatches,
                           ftpipe::schedule::WeightVersions stashing) {
  Versions versions(placement.size(),
                    std::vector<std::pair<int64_t, int64_t>>(microBatches));
  for (const auto &actions : schedule.devices) {
    int64_t updates = 0;
    for (const schedule::Action &action : actions) {
      if (action.kind == schedule::ActionKind::Update)
        ++updates;
      else if (action.kind == schedule::ActionKind::Forward)
        versions[action.stage][action.index].first = updates;
      else
        versions[action.stage][action.index].second = updates;
    }
  }
  if (stashing != ftpipe::schedule::WeightVersions::None)
    for (auto &stage : versions)
      for (auto &[forward, backward] : stage)
        backward = forward;
  return versions;
}

using Vec = std::vector<double>;

inline Vec toVec(const Tensor &t) {
  return Vec(t.f32Values().begin(), t.f32Values().end());
}

/// The weights after training from `initial` with `versions`.
inline TensorMap emulate(const TinyMlpShape &shape, const TensorMap &initial,
                         const TensorMap &data, int64_t microBatches,
                         int64_t steps, const OptimizerConfig &optimizerConfig,
                         const Versions &versions,
                         std::vector<double> *losses = nullptr) {
  int64_t S = shape.stages, H = shape.hidden, D = shape.features,
          B = shape.microBatchSize, N = data.at("x").shape[0];
  std::vector<TensorMap> history = {initial};
  Optimizer optimizer(optimizerConfig);
  auto W = [&](int64_t v, int64_t s) {
    return history[v].at("layers." + std::to_string(s) + ".weight").f32Data();
  };
  auto bias = [&](int64_t v, int64_t s) {
    return history[v].at("layers." + std::to_string(s) + ".bias").f32Data();
  };
  auto E = [&](int64_t v) { return history[v].at("embed.weight").f32Data(); };

  for (int64_t k = 0; k < steps; ++k) {
    std::map<std::string, Vec> grad;
    for (const auto &[name, tensor] : initial)
      grad[name] = Vec(tensor.elements(), 0.0);
    double lossSum = 0;
    for (int64_t m = k * microBatches; m < (k + 1) * microBatches; ++m) {
      Vec x(B * D), y(B * D);
      for (int64_t i = 0; i < B; ++i) {
        int64_t sample = (m * B + i) % N;
        for (int64_t c = 0; c < D; ++c) {
          x[i * D + c] = data.at("x").f32Data()[sample * D + c];
          y[i * D + c] = data.at("y").f32Data()[sample * D + c];
        }
      }
      // One stage: in -> tanh(in W^T + b) with the weights of version v.
      auto layer = [&](const Vec &in, int64_t s, int64_t v) {
        Vec h(B * H);
        for (int64_t i = 0; i < B; ++i)
          for (int64_t r = 0; r < H; ++r) {
            double z = bias(v, s)[r];
            for (int64_t c = 0; c < H; ++c)
              z += in[i * H + c] * W(v, s)[r * H + c];
            h[i * H + r] = std::tanh(z);
          }
        return h;
      };
      auto embedded = [&](int64_t v) {
        Vec a(B * H, 0.0);
        for (int64_t i = 0; i < B; ++i)
          for (int64_t r = 0; r < H; ++r)
            for (int64_t c = 0; c < D; ++c)
              a[i * H + r] += x[i * D + c] * E(v)[r * D + c];
        return a;
      };
      // Forward with the forward versions: each stage's input.
      std::vector<Vec> inputs(S);
      inputs[0] = embedded(versions[0][m].first);
      for (int64_t s = 0; s + 1 < S; ++s)
        inputs[s + 1] = layer(inputs[s], s, versions[s][m].first);
      {
        int64_t v = versions[S - 1][m].first;
        Vec h = layer(inputs[S - 1], S - 1, v);
        for (int64_t i = 0; i < B; ++i)
          for (int64_t c = 0; c < D; ++c) {
            double out = 0;
            for (int64_t r = 0; r < H; ++r)
              out += h[i * H + r] * E(v)[r * D + c];
            lossSum += 0.5 * (out - y[i * D + c]) * (out - y[i * D + c]) / B;
          }
      }
      // Backward, last stage first, each with its backward version.
      Vec dh(B * H, 0.0);
      Vec &dE = grad["embed.weight"];
      for (int64_t s = S - 1; s >= 0; --s) {
        int64_t v = versions[s][m].second;
        Vec in = s == 0 ? embedded(v) : inputs[s];
        Vec h = layer(in, s, v);
        if (s == S - 1) {
          std::fill(dh.begin(), dh.end(), 0.0);
          for (int64_t i = 0; i < B; ++i)
            for (int64_t c = 0; c < D; ++c) {
              double out = 0;
              for (int64_t r = 0; r < H; ++r)
                out += h[i * H + r] * E(v)[r * D + c];
              double dout = (out - y[i * D + c]) / B;
              for (int64_t r = 0; r < H; ++r) {
                dh[i * H + r] += dout * E(v)[r * D + c];
                dE[r * D + c] += h[i * H + r] * dout;
              }
            }
        }
        Vec &dW = grad["layers." + std::to_string(s) + ".weight"];
        Vec &db = grad["layers." + std::to_string(s) + ".bias"];
        Vec din(B * H, 0.0);
        for (int64_t i = 0; i < B; ++i)
          for (int64_t r = 0; r < H; ++r) {
            double dz = dh[i * H + r] * (1 - h[i * H + r] * h[i * H + r]);
            db[r] += dz;
            for (int64_t c = 0; c < H; ++c) {
              dW[r * H + c] += dz * in[i * H + c];
              din[i * H + c] += dz * W(v, s)[r * H + c];
            }
          }
        if (s == 0)
          for (int64_t i = 0; i < B; ++i)
            for (int64_t r = 0; r < H; ++r)
              for (int64_t c = 0; c < D; ++c)
                dE[r * D + c] += din[i * H + r] * x[i * D + c];
        dh = din;
      }
    }
    if (losses)
      losses->push_back(lossSum / microBatches);
    TensorMap next = history.back();
    std::vector<std::string> names;
    std::vector<Tensor *> params;
    std::vector<Tensor> grads;
    for (auto &[name, tensor] : next) {
      names.push_back(name);
      params.push_back(&tensor);
      std::vector<float> g;
      for (double value : grad[name])
        g.push_back(static_cast<float>(value / microBatches));
      grads.push_back(Tensor::f32(tensor.shape, g));
    }
    std::vector<const Tensor *> gradPointers;
    for (const Tensor &g : grads)
      gradPointers.push_back(&g);
    optimizer.step(names, params, gradPointers);
    history.push_back(std::move(next));
  }
  return history.back();
}

/// Largest |a - b| / (|b| + 1e-3) over all weights, or a message when the
/// two sets of weights differ in names.
inline double maxRelativeDifference(const TensorMap &a, const TensorMap &b) {
  double worst = 0;
  for (const auto &[name, tensor] : b) {
    auto it = a.find(name);
    if (it == a.end())
      return INFINITY;
    for (int64_t i = 0; i < tensor.elements(); ++i) {
      double x = it->second.f32Data()[i], y = tensor.f32Data()[i];
      worst = std::max(worst, std::fabs(x - y) / (std::fabs(y) + 1e-3));
    }
  }
  return worst;
}

} // namespace reference
} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_UNITTESTS_RUNTIME_TINYMLPREFERENCE_H
