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

} // namespace
