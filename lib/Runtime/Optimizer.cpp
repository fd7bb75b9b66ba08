//===- Optimizer.cpp - SGD with momentum, AdamW, Adafactor ----------------===//
//
// Arithmetic in double per element, stored in f32 (PyTorch computes in f32;
// the difference is within f32 rounding of one update). The arithmetic of
// one element is OptimizerRules.h's, shared with the device optimizers.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Optimizer.h"
#include "FTPipe/Runtime/OptimizerRules.h"

#include <cassert>
#include <cmath>

using namespace ftpipe::runtime;

llvm::Error ftpipe::runtime::checkImplemented(schedule::Optimizer kind) {
  if (isImplemented(kind))
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "optimizer '" + schedule::nameOf(kind) +
          "' is planned for but the runtime does not implement it (sgd "
          "with --momentum, adam, adamw or adafactor)");
}

double Optimizer::learningRate(int64_t step) const {
  return runtime::learningRate(config, step);
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
    for (size_t i = 0; i < n; ++i)
      rules::sgd(p[i], g[i], buffer[i], lr, config.weightDecay, config.momentum,
                 first);
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
    for (size_t i = 0; i < n; ++i)
      rules::adam(p[i], g[i], m[i], v[i], lr, config.beta1, config.beta2,
                  config.eps, config.weightDecay, decoupled, correction1,
                  correction2);
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
            double sq = rules::adafactorSquare(gb[r * cols + c], config.eps1);
            rowMean[r] += sq / cols;
            colMean[c] += sq / rows;
          }
        double rowAverage = 0.0;
        for (size_t r = 0; r < rows; ++r) {
          float &x = row[b * rows + r];
          x = rules::adafactorAverage(x, beta2t, rowMean[r]);
          rowAverage += x / double(rows);
        }
        for (size_t c = 0; c < cols; ++c) {
          float &x = col[b * cols + c];
          x = rules::adafactorAverage(x, beta2t, colMean[c]);
        }
        for (size_t r = 0; r < rows; ++r)
          for (size_t c = 0; c < cols; ++c)
            u[b * rows * cols + r * cols + c] =
                rules::adafactorFactored(row[b * rows + r], rowAverage,
                                         col[b * cols + c], gb[r * cols + c]);
      }
    } else {
      if (slots.empty())
        allocateSlots(slots, {n});
      StateVector &v = slots[0];
      for (size_t i = 0; i < n; ++i) {
        v[i] = rules::adafactorAverage(
            v[i], beta2t, rules::adafactorSquare(g[i], config.eps1));
        u[i] = rules::adafactorUnfactored(v[i], g[i]);
      }
    }
    double sumSquares = 0.0;
    for (double x : u)
      sumSquares += x * x;
    double scale =
        rules::adafactorScale(lr, sumSquares, double(n), config.clipThreshold);
    for (size_t i = 0; i < n; ++i)
      p[i] = rules::adafactorApply(p[i], u[i], lr, config.weightDecay, scale);
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
