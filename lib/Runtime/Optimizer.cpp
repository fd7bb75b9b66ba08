//===- Optimizer.cpp - SGD with momentum, AdamW, Adafactor ----------------===//
//
// Arithmetic in double per element, stored in f32 (PyTorch computes in f32;
// the difference is within f32 rounding of one update).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Optimizer.h"

#include <cassert>
#include <cmath>

using namespace ftpipe::runtime;

llvm::Error ftpipe::runtime::checkImplemented(schedule::Optimizer kind) {
  switch (kind) {
  case schedule::Optimizer::SGD:
  case schedule::Optimizer::Adam:
  case schedule::Optimizer::AdamW:
  case schedule::Optimizer::Adafactor:
    return llvm::Error::success();
  case schedule::Optimizer::Momentum:
    break;
  }
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "optimizer '" + schedule::optimizerName(kind) +
          "' is planned for but the runtime does not implement it (sgd "
          "with --momentum, adam, adamw or adafactor)");
}

double Optimizer::learningRate(int64_t step) const {
  if (step < config.warmupSteps)
    return config.lr * static_cast<double>(step) / config.warmupSteps;
  return config.lr;
}

void Optimizer::step(llvm::ArrayRef<std::string> names,
                     llvm::MutableArrayRef<Tensor *> params,
                     llvm::ArrayRef<const Tensor *> grads) {
  assert(names.size() == params.size() && params.size() == grads.size());
  double lr = learningRate(done);
  for (size_t i = 0; i < params.size(); ++i)
    update(names[i], *params[i], *grads[i], lr);
  ++done;
}

/// Zero-filled slots of the given sizes, each allocated once (no temporary
/// copy: the memory prediction counts the state exactly).
static void allocateSlots(std::vector<StateVector> &slots,
                          std::initializer_list<size_t> sizes) {
  slots.resize(sizes.size());
  for (auto [slot, size] : llvm::zip(slots, sizes))
    slot.assign(size, 0.0f);
}

void Optimizer::update(llvm::StringRef name, Tensor &param, const Tensor &grad,
                       double lr) {
  assert(param.type == DType::F32 && grad.type == DType::F32 &&
         param.elements() == grad.elements());
  llvm::MutableArrayRef<float> p = param.f32Values();
  llvm::ArrayRef<float> g = grad.f32Values();
  size_t n = p.size();
  std::vector<StateVector> &slots = state[name];
  double t = static_cast<double>(done + 1);

  switch (config.kind) {
  case schedule::Optimizer::SGD: {
    bool first = slots.empty();
    if (first)
      allocateSlots(slots, {n});
    StateVector &buffer = slots[0];
    for (size_t i = 0; i < n; ++i) {
      double gi = g[i] + config.weightDecay * p[i];
      double b = first ? gi : config.momentum * buffer[i] + gi;
      buffer[i] = static_cast<float>(b);
      p[i] = static_cast<float>(p[i] - lr * b);
    }
    return;
  }
  case schedule::Optimizer::Momentum:
    llvm_unreachable("an optimizer the runtime does not implement");
  case schedule::Optimizer::Adam:
  case schedule::Optimizer::AdamW: {
    // AdamW decays the weight itself; Adam adds the decay to the gradient
    // (torch.optim.Adam's weight_decay). Without decay they are one update.
    bool decoupled = config.kind == schedule::Optimizer::AdamW;
    if (slots.empty())
      allocateSlots(slots, {n, n});
    StateVector &m = slots[0], &v = slots[1];
    double correction1 = 1.0 - std::pow(config.beta1, t);
    double correction2 = 1.0 - std::pow(config.beta2, t);
    for (size_t i = 0; i < n; ++i) {
      double decayed =
          decoupled ? p[i] * (1.0 - lr * config.weightDecay) : double(p[i]);
      double gi =
          decoupled ? double(g[i]) : double(g[i]) + config.weightDecay * p[i];
      double mi = config.beta1 * m[i] + (1.0 - config.beta1) * gi;
      double vi = config.beta2 * v[i] + (1.0 - config.beta2) * gi * gi;
      m[i] = static_cast<float>(mi);
      v[i] = static_cast<float>(vi);
      double denominator = std::sqrt(vi) / std::sqrt(correction2) + config.eps;
      p[i] = static_cast<float>(decayed - lr / correction1 * mi / denominator);
    }
    return;
  }
  case schedule::Optimizer::Adafactor: {
    double beta2t = 1.0 - std::pow(t, config.decayRate);
    std::vector<double, LedgerAllocator<double>> u(n);
    if (param.shape.size() >= 2) {
      size_t cols = param.shape.back();
      size_t rows = param.shape[param.shape.size() - 2];
      size_t matrices = n / (rows * cols);
      if (slots.empty())
        allocateSlots(slots, {matrices * rows, matrices * cols});
      StateVector &row = slots[0], &col = slots[1];
      for (size_t b = 0; b < matrices; ++b) {
        const float *gb = g.data() + b * rows * cols;
        std::vector<double> rowMean(rows, 0.0), colMean(cols, 0.0);
        for (size_t r = 0; r < rows; ++r)
          for (size_t c = 0; c < cols; ++c) {
            double sq =
                double(gb[r * cols + c]) * gb[r * cols + c] + config.eps1;
            rowMean[r] += sq / cols;
            colMean[c] += sq / rows;
          }
        double rowAverage = 0.0;
        for (size_t r = 0; r < rows; ++r) {
          float &x = row[b * rows + r];
          x = static_cast<float>(beta2t * x + (1.0 - beta2t) * rowMean[r]);
          rowAverage += x / double(rows);
        }
        for (size_t c = 0; c < cols; ++c) {
          float &x = col[b * cols + c];
          x = static_cast<float>(beta2t * x + (1.0 - beta2t) * colMean[c]);
        }
        for (size_t r = 0; r < rows; ++r)
          for (size_t c = 0; c < cols; ++c) {
            double rowFactor = 1.0 / std::sqrt(row[b * rows + r] / rowAverage);
            double colFactor = 1.0 / std::sqrt(double(col[b * cols + c]));
            u[b * rows * cols + r * cols + c] =
                rowFactor * colFactor * gb[r * cols + c];
          }
      }
    } else {
      if (slots.empty())
        allocateSlots(slots, {n});
      StateVector &v = slots[0];
      for (size_t i = 0; i < n; ++i) {
        double sq = double(g[i]) * g[i] + config.eps1;
        v[i] = static_cast<float>(beta2t * v[i] + (1.0 - beta2t) * sq);
        u[i] = g[i] / std::sqrt(double(v[i]));
      }
    }
    double sumSquares = 0.0;
    for (double x : u)
      sumSquares += x * x;
    double rms = std::sqrt(sumSquares / n);
    double scale = lr / std::max(1.0, rms / config.clipThreshold);
    for (size_t i = 0; i < n; ++i)
      p[i] = static_cast<float>(p[i] - config.weightDecay * lr * p[i] -
                                scale * u[i]);
    return;
  }
  }
}

std::vector<std::pair<std::string, std::vector<int64_t>>>
Optimizer::slots(llvm::ArrayRef<int64_t> shape) const {
  std::vector<int64_t> full(shape.begin(), shape.end());
  switch (config.kind) {
  case schedule::Optimizer::Momentum:
    llvm_unreachable("an optimizer the runtime does not implement");
  case schedule::Optimizer::SGD:
    return {{"momentum_buffer", full}};
  case schedule::Optimizer::Adam:
  case schedule::Optimizer::AdamW:
    return {{"exp_avg", full}, {"exp_avg_sq", full}};
  case schedule::Optimizer::Adafactor: {
    if (shape.size() < 2)
      return {{"exp_avg_sq", full}};
    std::vector<int64_t> row(full.begin(), full.end() - 1);
    std::vector<int64_t> col(full.begin(), full.end() - 2);
    col.push_back(full.back());
    return {{"exp_avg_sq_row", row}, {"exp_avg_sq_col", col}};
  }
  }
  return {};
}

int64_t Optimizer::stateBytes() const {
  int64_t bytes = 0;
  for (const auto &entry : state)
    for (const StateVector &slot : entry.second)
      bytes += slot.size() * sizeof(float);
  return bytes;
}

int64_t Optimizer::stateBytes(llvm::ArrayRef<int64_t> shape) const {
  int64_t bytes = 0;
  for (const auto &slot : slots(shape)) {
    int64_t count = 1;
    for (int64_t size : slot.second)
      count *= size;
    bytes += count * static_cast<int64_t>(sizeof(float));
  }
  return bytes;
}

void Optimizer::saveState(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                          std::map<std::string, Tensor> &out) const {
  auto it = state.find(name);
  if (it == state.end())
    return;
  auto named = slots(shape);
  assert(named.size() == it->second.size());
  for (size_t i = 0; i < named.size(); ++i)
    out[(name + "." + named[i].first).str()] =
        Tensor::f32(named[i].second, it->second[i]);
}

llvm::Error Optimizer::loadState(llvm::StringRef name,
                                 llvm::ArrayRef<int64_t> shape,
                                 const std::map<std::string, Tensor> &in) {
  std::vector<StateVector> values;
  for (const auto &[slot, slotShape] : slots(shape)) {
    std::string key = (name + "." + slot).str();
    auto it = in.find(key);
    if (it == in.end())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "optimizer state '" + key +
                                         "' is missing");
    if (it->second.type != DType::F32 || it->second.shape != slotShape)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "optimizer state '" + key + "' is " +
                                         dtypeName(it->second.type).str() +
                                         " " + shapeString(it->second.shape) +
                                         ", expected F32 " +
                                         shapeString(slotShape));
    llvm::ArrayRef<float> data = it->second.f32Values();
    values.emplace_back(data.begin(), data.end());
  }
  state[name] = std::move(values);
  return llvm::Error::success();
}
