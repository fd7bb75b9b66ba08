//===- OptimizerTest.cpp - The optimizers against PyTorch -----------------===//
//
// optimizer-reference.json holds trajectories computed by torch.optim.SGD,
// torch.optim.AdamW and transformers' Adafactor (optimizer-reference.py, run
// in the reference environment): the same gradients replayed through
// lib/Runtime's optimizers must end at PyTorch's parameters.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Optimizer.h"

#include "OptimizerReference.h"

#include "gtest/gtest.h"

using namespace ftpipe::runtime;
using namespace ftpipe::runtime::testing;

namespace {

TEST(Optimizer, MatchesPyTorch) {
  int64_t steps = 0;
  std::vector<ReferenceCase> cases = loadOptimizerReference(steps);
  ASSERT_EQ(cases.size(), 5u);
  for (const ReferenceCase &c : cases) {
    SCOPED_TRACE(c.optimizer + " lr " + std::to_string(c.config.lr));
    Optimizer optimizer(c.config);
    std::vector<std::string> names;
    std::vector<Tensor> params;
    for (const ReferenceParameter &param : c.params) {
      names.push_back(param.name);
      params.push_back(Tensor::f32(param.shape, param.initial));
    }
    for (int64_t t = 0; t < steps; ++t) {
      std::vector<Tensor> grads;
      std::vector<Tensor *> paramPointers;
      std::vector<const Tensor *> gradPointers;
      for (size_t i = 0; i < c.params.size(); ++i)
        grads.push_back(Tensor::f32(params[i].shape, c.params[i].grads[t]));
      for (size_t i = 0; i < c.params.size(); ++i) {
        paramPointers.push_back(&params[i]);
        gradPointers.push_back(&grads[i]);
      }
      optimizer.step(names, paramPointers, gradPointers);
    }
    EXPECT_EQ(optimizer.steps(), steps);
    for (size_t i = 0; i < c.params.size(); ++i)
      expectMatchesPyTorch(c.params[i],
                           std::vector<float>(params[i].f32Values().begin(),
                                              params[i].f32Values().end()));
  }
}

TEST(Optimizer, WarmUpIsLinear) {
  OptimizerConfig config;
  config.lr = 0.5;
  config.warmupSteps = 4;
  Optimizer optimizer(config);
  EXPECT_DOUBLE_EQ(optimizer.learningRate(0), 0.0);
  EXPECT_DOUBLE_EQ(optimizer.learningRate(1), 0.125);
  EXPECT_DOUBLE_EQ(optimizer.learningRate(3), 0.375);
  EXPECT_DOUBLE_EQ(optimizer.learningRate(4), 0.5);
  EXPECT_DOUBLE_EQ(optimizer.learningRate(40), 0.5);
}

TEST(Optimizer, RefusesUnknownKind) {
  llvm::Expected<ftpipe::schedule::Optimizer> kind =
      ftpipe::schedule::parseName<ftpipe::schedule::Optimizer>("lamb");
  ASSERT_FALSE(bool(kind));
  EXPECT_EQ(llvm::toString(kind.takeError()),
            "unknown optimizer 'lamb' (sgd, momentum, adam, adamw or "
            "adafactor)");
}

TEST(Optimizer, RefusesKindsOnlyPlannedFor) {
  // The planner also prices SGD with momentum as its own optimizer; the
  // runtime's sgd takes a momentum option instead.
  for (auto kind :
       {ftpipe::schedule::Optimizer::SGD, ftpipe::schedule::Optimizer::Adam,
        ftpipe::schedule::Optimizer::AdamW,
        ftpipe::schedule::Optimizer::Adafactor})
    EXPECT_FALSE(llvm::errorToBool(checkImplemented(kind)));
  EXPECT_EQ(
      llvm::toString(checkImplemented(ftpipe::schedule::Optimizer::Momentum)),
      "optimizer 'momentum' is planned for but the runtime does not "
      "implement it (sgd with --momentum, adam, adamw or adafactor)");
}

TEST(Optimizer, AdamIsAdamWWithoutDecayAndL2WithIt) {
  // Without weight decay Adam and AdamW make the same update; with it, Adam
  // adds wd * p to the gradient (torch.optim.Adam), AdamW scales p by
  // 1 - lr * wd (torch.optim.AdamW).
  auto run = [](ftpipe::schedule::Optimizer kind, double decay) {
    OptimizerConfig config;
    config.kind = kind;
    config.lr = 0.1;
    config.weightDecay = decay;
    Optimizer optimizer(config);
    Tensor param = Tensor::f32({2}, {1.0f, -2.0f});
    Tensor grad = Tensor::f32({2}, {0.5f, 0.25f});
    std::string name = "w";
    Tensor *params[] = {&param};
    const Tensor *grads[] = {&grad};
    optimizer.step({name}, params, grads);
    return std::vector<float>(param.f32Values().begin(),
                              param.f32Values().end());
  };
  EXPECT_EQ(run(ftpipe::schedule::Optimizer::Adam, 0.0),
            run(ftpipe::schedule::Optimizer::AdamW, 0.0));
  // First step: the corrected m / sqrt(v) is sign(g') (eps aside), so the
  // update is -lr * sign(g') for Adam, with g' = g + wd * p.
  std::vector<float> adam = run(ftpipe::schedule::Optimizer::Adam, 1.0);
  EXPECT_NEAR(adam[0], 1.0 - 0.1, 1e-6);  // g' = 1.5
  EXPECT_NEAR(adam[1], -2.0 + 0.1, 1e-6); // g' = -1.75
  std::vector<float> adamw = run(ftpipe::schedule::Optimizer::AdamW, 1.0);
  EXPECT_NEAR(adamw[0], 1.0 * 0.9 - 0.1, 1e-6);
  EXPECT_NEAR(adamw[1], -2.0 * 0.9 - 0.1, 1e-6);
}

} // namespace
