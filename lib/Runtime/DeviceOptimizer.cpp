//===- DeviceOptimizer.cpp - The optimizers on GPU memory -----------------===//
//
// DeviceOptimizer.h: the per-step constants (learning rate with warm-up,
// bias corrections, Adafactor's decay) as Optimizer.cpp computes them, the
// state in device memory (zeroed at a parameter's first update), and one
// kernel sequence per parameter (DeviceOptimizerKernels.h); and its C
// functions. Part of FTPipeCUDARuntime: no symbol of an LLVM library.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/DeviceOptimizer.h"

#include "CudaCheck.h"
#include "DeviceOptimizerKernels.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <cuda_runtime_api.h>

using namespace ftpipe::runtime;

DeviceOptimizer::DeviceOptimizer(OptimizerConfig config) : config(config) {
  assert(isImplemented(config.kind) &&
         "an optimizer the runtime does not implement");
}

DeviceOptimizer::~DeviceOptimizer() {
  for (auto &entry : state)
    for (Slot &slot : entry.second)
      ftpipe_cuda_free(slot.data);
}

void DeviceOptimizer::step(llvm::ArrayRef<DeviceParameter> params) {
  double t = static_cast<double>(done + 1);
  cuda::UpdateRule rule;
  rule.lr = learningRate(config, done);
  rule.weightDecay = config.weightDecay;
  rule.momentum = config.momentum;
  rule.beta1 = config.beta1;
  rule.beta2 = config.beta2;
  rule.eps = config.eps;
  rule.correction1 = 1.0 - std::pow(config.beta1, t);
  rule.correction2 = 1.0 - std::pow(config.beta2, t);
  rule.decoupled = config.kind == schedule::Optimizer::AdamW;
  rule.eps1 = config.eps1;
  rule.clipThreshold = config.clipThreshold;
  rule.beta2t = 1.0 - std::pow(t, config.decayRate);

  for (const DeviceParameter &param : params) {
    int64_t n = 1;
    for (int64_t size : param.shape)
      n *= size;
    bool matrix = param.shape.size() >= 2;
    int64_t cols = matrix ? param.shape.back() : n;
    int64_t rows = matrix ? param.shape[param.shape.size() - 2] : 1;
    int64_t matrices = rows * cols ? n / (rows * cols) : 0;

    std::vector<Slot> &slots = state[param.name];
    bool first = slots.empty();
    if (first) {
      std::vector<int64_t> counts;
      switch (config.kind) {
      case schedule::Optimizer::SGD:
        counts = {n};
        break;
      case schedule::Optimizer::Adam:
      case schedule::Optimizer::AdamW:
        counts = {n, n};
        break;
      case schedule::Optimizer::Adafactor:
        counts = matrix ? std::vector<int64_t>{matrices * rows, matrices * cols}
                        : std::vector<int64_t>{n};
        break;
      case schedule::Optimizer::Momentum: // refused by the constructor
        break;
      }
      for (int64_t count : counts) {
        Slot slot{
            static_cast<float *>(ftpipe_cuda_alloc(sizeof(float) * count)),
            count};
        FTPIPE_CUDA_CHECK(
            cudaMemsetAsync(slot.data, 0, sizeof(float) * count,
                            static_cast<cudaStream_t>(ftpipe_cuda_stream())));
        slots.push_back(slot);
      }
    }

    switch (config.kind) {
    case schedule::Optimizer::SGD:
      cuda::sgdUpdate(param.values, param.grad, slots[0].data, n, rule, first);
      break;
    case schedule::Optimizer::Adam:
    case schedule::Optimizer::AdamW:
      cuda::adamUpdate(param.values, param.grad, slots[0].data, slots[1].data,
                       n, rule);
      break;
    case schedule::Optimizer::Adafactor:
      if (matrix)
        cuda::adafactorFactoredUpdate(param.values, param.grad, slots[0].data,
                                      slots[1].data, matrices, rows, cols,
                                      rule);
      else
        cuda::adafactorVectorUpdate(param.values, param.grad, slots[0].data, n,
                                    rule);
      break;
    case schedule::Optimizer::Momentum: // refused by the constructor
      break;
    }
  }
  ++done;
}

int64_t DeviceOptimizer::stateBytes() const {
  int64_t bytes = 0;
  for (const auto &entry : state)
    for (const Slot &slot : entry.second)
      bytes += slot.count * static_cast<int64_t>(sizeof(float));
  return bytes;
}

std::vector<float> DeviceOptimizer::stateSlot(const std::string &name,
                                              unsigned index) const {
  auto it = state.find(name);
  if (it == state.end() || index >= it->second.size())
    return {};
  const Slot &slot = it->second[index];
  std::vector<float> host(slot.count);
  ftpipe_cuda_copy_to_host(host.data(), slot.data, sizeof(float) * slot.count);
  return host;
}

void *ftpipe_cuda_optimizer_create(const char *kind, double lr,
                                   int64_t warmup_steps, double weight_decay) {
  for (const auto &spelling :
       ftpipe::schedule::SetupEnum<ftpipe::schedule::Optimizer>::values) {
    if (std::strcmp(spelling.name.data(), kind) != 0)
      continue;
    if (!isImplemented(spelling.value))
      break;
    OptimizerConfig config;
    config.kind = spelling.value;
    config.lr = lr;
    config.warmupSteps = warmup_steps;
    config.weightDecay = weight_decay;
    return new DeviceOptimizer(config);
  }
  std::fprintf(stderr,
               "ftpipe_cuda_optimizer_create: no device optimizer '%s' (sgd, "
               "adam, adamw or adafactor)\n",
               kind);
  return nullptr;
}

void ftpipe_cuda_optimizer_step(void *optimizer, int64_t count,
                                const char *const *names, const int64_t *ranks,
                                const int64_t *dims, float *const *values,
                                const float *const *grads) {
  std::vector<DeviceParameter> params(count);
  for (int64_t i = 0; i < count; ++i) {
    params[i].name = names[i];
    params[i].shape.assign(dims, dims + ranks[i]);
    dims += ranks[i];
    params[i].values = values[i];
    params[i].grad = grads[i];
  }
  static_cast<DeviceOptimizer *>(optimizer)->step(params);
}

void ftpipe_cuda_optimizer_destroy(void *optimizer) {
  delete static_cast<DeviceOptimizer *>(optimizer);
}

void ftpipe_cuda_accumulate_f32(float *sum, const float *value, int64_t n,
                                float scale, int first) {
  ftpipe::cuda::accumulate(sum, value, n, scale, first != 0);
}
