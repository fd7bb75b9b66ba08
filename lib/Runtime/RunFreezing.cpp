//===- RunFreezing.cpp - ftpipe-run --freeze --------------------*- C++ -*-===//
//
// Turns a freeze policy into the frozen set of each step (RunFreezing.h).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/RunFreezing.h"

#include "FTPipe/Runtime/PipelineModel.h"
#include "FTPipe/Support/BoundedInput.h"

using namespace ftpipe::runtime;
namespace schedule = ftpipe::schedule;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::set<std::string>
RunFreezing::frozenAt(int64_t step, const std::set<std::string> &base) const {
  std::set<std::string> frozen = base;
  std::set<std::string> prefix =
      schedule::frozenNames(layers, depths.depthAt(step));
  frozen.insert(prefix.begin(), prefix.end());
  return frozen;
}

llvm::Expected<RunFreezing>
ftpipe::runtime::planFreezing(llvm::StringRef spec, const PipelineModel &model,
                              const TensorMap &data, int64_t steps,
                              int64_t microBatches) {
  auto policy = schedule::parseFreezePolicy(spec);
  if (!policy)
    return policy.takeError();
  std::vector<std::string> names;
  for (const ParameterInfo &param : model.parameters())
    names.push_back(param.name);
  auto layers = schedule::groupLayers(names);
  if (!layers)
    return fail("--freeze: " + llvm::toString(layers.takeError()));
  RunFreezing freezing;
  freezing.layers = std::move(*layers);
  uint32_t count = uint32_t(freezing.layers.size());
  switch (policy->kind) {
  case schedule::FreezePolicy::Kind::GradientNorm:
    return fail("--freeze gradient-norm is not wired into ftpipe-run yet "
                "(schedule/Freezing.h has the rule): use alpha=X or "
                "schedule=FILE");
  case schedule::FreezePolicy::Kind::Schedule: {
    auto text = support::readBoundedFile(policy->file, "freeze schedule");
    if (!text)
      return text.takeError();
    auto depths = schedule::parseFreezeSchedule((*text)->getBuffer(), count);
    if (!depths)
      return fail(policy->file + ": " + llvm::toString(depths.takeError()));
    freezing.depths = std::move(*depths);
    return freezing;
  }
  case schedule::FreezePolicy::Kind::Alpha: {
    // An epoch is one pass over the data set.
    int64_t samples = data.empty() || data.begin()->second.shape.empty()
                          ? 0
                          : data.begin()->second.shape.front();
    int64_t perStep =
        std::max<int64_t>(1, microBatches * model.microBatchSize());
    int64_t stepsPerEpoch = std::max<int64_t>(1, samples / perStep);
    for (int64_t epoch = 0; epoch * stepsPerEpoch <= steps; ++epoch)
      freezing.depths.points.push_back(
          {epoch * stepsPerEpoch,
           schedule::alphaFrozenDepth(count, policy->alpha, uint32_t(epoch))});
    return freezing;
  }
  }
  llvm_unreachable("unknown freeze policy");
}
