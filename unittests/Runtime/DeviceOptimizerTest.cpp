//===- DeviceOptimizerTest.cpp - The GPU optimizers against PyTorch -------===//
//
// The trajectories of optimizer-reference.json (OptimizerReference.h)
// replayed through DeviceOptimizer on device memory must end where PyTorch
// ended, as the host optimizers do (OptimizerTest.cpp); the device state must
// have the host optimizer's slots. Needs a GPU: without one every test is
// reported skipped (GTEST_SKIP), never passed. Built into FTPipeDeviceTests,
// which scripts/gpu-check.sh runs on a lent GPU.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/DeviceOptimizer.h"
#include "FTPipe/Runtime/CudaRuntimeWrappers.h"

#include "OptimizerReference.h"

#include "gtest/gtest.h"

#include <cmath>
#include <memory>

using namespace ftpipe::runtime;
using namespace ftpipe::runtime::testing;

namespace {

/// A device copy of `values`, freed with the test.
struct DeviceVector {
  explicit DeviceVector(const std::vector<float> &values)
      : count(values.size()),
        data(static_cast<float *>(ftpipe_cuda_alloc(sizeof(float) * count))) {
    ftpipe_cuda_copy_to_device(data, values.data(), sizeof(float) * count);
  }
  ~DeviceVector() { ftpipe_cuda_free(data); }
  std::vector<float> host() const {
    std::vector<float> out(count);
    ftpipe_cuda_copy_to_host(out.data(), data, sizeof(float) * count);
    return out;
  }
  size_t count;
  float *data;
};

class DeviceOptimizerTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!ftpipe_cuda_available())
      GTEST_SKIP() << "no CUDA device: the device optimizers were not run";
  }
};

TEST_F(DeviceOptimizerTest, MatchesPyTorch) {
  int64_t steps = 0;
  std::vector<ReferenceCase> cases = loadOptimizerReference(steps);
  ASSERT_EQ(cases.size(), 5u);
  for (const ReferenceCase &c : cases) {
    SCOPED_TRACE(c.optimizer + " lr " + std::to_string(c.config.lr));
    DeviceOptimizer optimizer(c.config);
    std::vector<std::unique_ptr<DeviceVector>> params;
    for (const ReferenceParameter &param : c.params)
      params.push_back(std::make_unique<DeviceVector>(param.initial));
    for (int64_t t = 0; t < steps; ++t) {
      std::vector<std::unique_ptr<DeviceVector>> grads;
      std::vector<DeviceParameter> step;
      for (size_t i = 0; i < c.params.size(); ++i) {
        grads.push_back(std::make_unique<DeviceVector>(c.params[i].grads[t]));
        step.push_back({c.params[i].name, c.params[i].shape, params[i]->data,
                        grads.back()->data});
      }
      optimizer.step(step);
      // The gradients go back to the pool after the step's kernels (stream
      // order); nothing waits here.
    }
    EXPECT_EQ(optimizer.steps(), steps);
    for (size_t i = 0; i < c.params.size(); ++i)
      expectMatchesPyTorch(c.params[i], params[i]->host());
  }
}

TEST_F(DeviceOptimizerTest, StateHasTheHostSlots) {
  // Adafactor on a 2 x 3 matrix keeps a row and a column state (2 + 3
  // floats), AdamW two full slots: the sizes Optimizer::stateBytes counts.
  struct Expected {
    ftpipe::schedule::Optimizer kind;
    int64_t bytes;
  };
  for (Expected expected :
       {Expected{ftpipe::schedule::Optimizer::Adafactor, 5 * 4},
        Expected{ftpipe::schedule::Optimizer::AdamW, 12 * 4},
        Expected{ftpipe::schedule::Optimizer::SGD, 6 * 4}}) {
    OptimizerConfig config;
    config.kind = expected.kind;
    DeviceOptimizer optimizer(config);
    DeviceVector param({1, 2, 3, 4, 5, 6}), grad({1, -1, 1, -1, 1, -1});
    optimizer.step({{"w", {2, 3}, param.data, grad.data}});
    EXPECT_EQ(optimizer.stateBytes(), expected.bytes);
    EXPECT_FALSE(optimizer.stateSlot("w", 0).empty());
    EXPECT_TRUE(optimizer.stateSlot("v", 0).empty());
  }
}

TEST_F(DeviceOptimizerTest, CFunctionsAreTheClass) {
  // ftpipe_cuda_optimizer_* (train_cuda_artifacts.py's) give the class's
  // result bit for bit: the same kernels with the same constants.
  std::vector<float> initial(24), grad(24);
  for (size_t i = 0; i < initial.size(); ++i) {
    initial[i] = 0.1f * static_cast<float>(i) - 1.0f;
    grad[i] = 0.01f * static_cast<float>((i * 7) % 5) - 0.02f;
  }
  OptimizerConfig config;
  config.kind = ftpipe::schedule::Optimizer::AdamW;
  config.lr = 1e-2;
  config.weightDecay = 0.1;
  DeviceOptimizer optimizer(config);
  void *viaC = ftpipe_cuda_optimizer_create("adamw", 1e-2, 0, 0.1);
  ASSERT_NE(viaC, nullptr);
  DeviceVector a(initial), b(initial), g(grad);
  const char *names[] = {"w"};
  int64_t ranks[] = {2}, dims[] = {4, 6};
  float *values[] = {b.data};
  const float *grads[] = {g.data};
  for (int step = 0; step < 3; ++step) {
    optimizer.step({{"w", {4, 6}, a.data, g.data}});
    ftpipe_cuda_optimizer_step(viaC, 1, names, ranks, dims, values, grads);
  }
  ftpipe_cuda_optimizer_destroy(viaC);
  EXPECT_EQ(a.host(), b.host());
  EXPECT_NE(a.host(), initial);
}

TEST_F(DeviceOptimizerTest, AccumulateSumsScaledValues) {
  // sum = (first ? 0 : sum) + scale * value, one float operation or an FMA
  // per element: within 4 ulps of the host's.
  std::vector<float> x(1000), y(1000);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = std::sin(static_cast<float>(i));
    y[i] = std::cos(static_cast<float>(i));
  }
  DeviceVector sum(std::vector<float>(x.size(), 7.0f)), dx(x), dy(y);
  ftpipe_cuda_accumulate_f32(sum.data, dx.data, 1000, 0.25f, /*first=*/1);
  ftpipe_cuda_accumulate_f32(sum.data, dy.data, 1000, 0.25f, /*first=*/0);
  std::vector<float> out = sum.host();
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_FLOAT_EQ(out[i], 0.25f * x[i] + 0.25f * y[i]) << i;
}

// Needs no GPU: the kind is refused before anything runs on a device.
TEST(DeviceOptimizerCFunctions, RefuseKindsTheRuntimeLacks) {
  EXPECT_EQ(ftpipe_cuda_optimizer_create("momentum", 1e-3, 0, 0), nullptr);
  EXPECT_EQ(ftpipe_cuda_optimizer_create("lamb", 1e-3, 0, 0), nullptr);
  void *adamw = ftpipe_cuda_optimizer_create("adamw", 1e-3, 0, 0);
  EXPECT_NE(adamw, nullptr);
  ftpipe_cuda_optimizer_destroy(adamw);
}

} // namespace
