//===- OptimizerReference.h - PyTorch's optimizer trajectories --*- C++ -*-===//
//
// optimizer-reference.json (optimizer-reference.py, run in the reference
// environment) read into cases: each an optimizer configuration, parameters
// with their initial values, one gradient per step and PyTorch's final
// values. expectMatchesPyTorch is the check both the host optimizers
// (OptimizerTest.cpp) and the device ones (DeviceOptimizerTest.cpp) pass.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_UNITTESTS_RUNTIME_OPTIMIZERREFERENCE_H
#define FTPIPE_UNITTESTS_RUNTIME_OPTIMIZERREFERENCE_H

#include "FTPipe/Runtime/Optimizer.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {
namespace testing {

struct ReferenceParameter {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> initial, final;
  /// One gradient per step.
  std::vector<std::vector<float>> grads;
};

struct ReferenceCase {
  std::string optimizer;
  OptimizerConfig config;
  std::vector<ReferenceParameter> params;
};

inline std::vector<float> referenceFloats(const llvm::json::Value *value) {
  std::vector<float> out;
  for (const llvm::json::Value &x : *value->getAsArray())
    out.push_back(static_cast<float>(*x.getAsNumber()));
  return out;
}

/// The cases of the reference file and their step count; fails the calling
/// test on a missing or malformed file. The file is the environment's
/// FTPIPE_OPTIMIZER_REFERENCE (a bundle on a lent GPU: docs/GPU.md), else
/// the source tree's (the macro of the same name).
inline std::vector<ReferenceCase> loadOptimizerReference(int64_t &steps) {
  std::vector<ReferenceCase> cases;
  const char *path = std::getenv("FTPIPE_OPTIMIZER_REFERENCE");
  if (!path)
    path = FTPIPE_OPTIMIZER_REFERENCE;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  EXPECT_TRUE(bool(buffer)) << path;
  if (!buffer)
    return cases;
  llvm::Expected<llvm::json::Value> root =
      llvm::json::parse((*buffer)->getBuffer());
  EXPECT_TRUE(bool(root)) << llvm::toString(root.takeError());
  if (!root)
    return cases;
  const llvm::json::Object &top = *root->getAsObject();
  steps = *top.getInteger("steps");
  for (const llvm::json::Value &caseValue : *top.getArray("cases")) {
    const llvm::json::Object &c = *caseValue.getAsObject();
    ReferenceCase out;
    out.optimizer = c.getString("optimizer")->str();
    out.config.kind = *ftpipe::schedule::parseName<ftpipe::schedule::Optimizer>(
        out.optimizer);
    out.config.lr = *c.getNumber("lr");
    out.config.weightDecay = *c.getNumber("weight_decay");
    out.config.warmupSteps = *c.getInteger("warmup");
    if (auto momentum = c.getNumber("momentum"))
      out.config.momentum = *momentum;
    for (const llvm::json::Value &r : *c.getArray("params")) {
      const llvm::json::Object &record = *r.getAsObject();
      ReferenceParameter param;
      param.name = record.getString("name")->str();
      for (const llvm::json::Value &size : *record.getArray("shape"))
        param.shape.push_back(*size.getAsInteger());
      param.initial = referenceFloats(record.get("initial"));
      param.final = referenceFloats(record.get("final"));
      for (const llvm::json::Value &grad : *record.getArray("grads"))
        param.grads.push_back(referenceFloats(&grad));
      out.params.push_back(std::move(param));
    }
    cases.push_back(std::move(out));
  }
  return cases;
}

/// `actual` (a parameter after all steps) moved from its initial values, and
/// to where PyTorch moved it.
inline void expectMatchesPyTorch(const ReferenceParameter &param,
                                 const std::vector<float> &actual) {
  ASSERT_EQ(actual.size(), param.final.size());
  for (size_t j = 0; j < actual.size(); ++j) {
    EXPECT_GT(std::fabs(param.final[j] - param.initial[j]), 1e-5);
    EXPECT_NEAR(actual[j], param.final[j],
                2e-6 + 2e-5 * std::fabs(param.final[j]))
        << param.name << "[" << j << "]";
  }
}

} // namespace testing
} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_UNITTESTS_RUNTIME_OPTIMIZERREFERENCE_H
