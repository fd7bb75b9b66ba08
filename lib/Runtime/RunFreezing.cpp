//===- RunFreezing.cpp - ftpipe-run --freeze --------------------*- C++ -*-===//
//
// Turns a freeze policy into the frozen set of each step (RunFreezing.h).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/RunFreezing.h"

#include "FTPipe/Runtime/PipelineModel.h"
#include "FTPipe/Support/BoundedInput.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace ftpipe::runtime;
namespace schedule = ftpipe::schedule;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::set<std::string>
RunFreezing::frozenWith(uint32_t depth,
                        const std::set<std::string> &base) const {
  std::set<std::string> frozen = base;
  std::set<std::string> prefix = schedule::frozenNames(layers, depth);
  frozen.insert(prefix.begin(), prefix.end());
  return frozen;
}

GradientNormFreezer::GradientNormFreezer(const RunFreezing &freezing)
    : every(freezing.gradientNorm ? freezing.gradientNorm->every : 1),
      threshold(freezing.gradientNorm ? freezing.gradientNorm->threshold : 0),
      accumulated(freezing.layers.size()),
      rule(uint32_t(freezing.layers.size()),
           freezing.gradientNorm ? freezing.gradientNorm->threshold : 0,
           /*maxDepth=*/uint32_t(freezing.layers.size()) - 1) {
  for (auto [index, names] : llvm::enumerate(freezing.layers))
    for (const std::string &name : names)
      layerOf[name] = index;
}

uint32_t
GradientNormFreezer::afterStep(Communicator &communicator, int64_t step,
                               const std::map<std::string, double> &squares) {
  std::vector<float> perLayer(accumulated.size());
  for (const auto &[name, square] : squares)
    if (auto layer = layerOf.find(name); layer != layerOf.end())
      perLayer[layer->second] += float(square);
  std::vector<int64_t> everyDevice(communicator.devices());
  for (int64_t d = 0; d < communicator.devices(); ++d)
    everyDevice[d] = d;
  communicator.allReduceSum(everyDevice, step, perLayer.data(),
                            perLayer.size());
  for (size_t l = 0; l < perLayer.size(); ++l)
    accumulated[l] += std::sqrt(double(perLayer[l]));
  said.clear();
  if (++accumulatedSteps < every)
    return rule.depth();
  uint32_t before = rule.depth();
  uint32_t depth = rule.evaluate(accumulated);
  llvm::raw_string_ostream line(said);
  line << "freeze gradient-norm after step " << step + 1
       << ": accumulated norm per active layer";
  for (size_t l = before; l < accumulated.size(); ++l)
    line << llvm::format(" %.4g", accumulated[l]);
  if (!previous.empty()) {
    line << ", change";
    for (size_t l = before; l < accumulated.size(); ++l)
      line << llvm::format(" %.1f%%",
                           previous[l] > 0
                               ? 100 * std::fabs(accumulated[l] - previous[l]) /
                                     previous[l]
                               : 100.0);
    line << llvm::format(" (threshold %.1f%%)", 100 * threshold);
  }
  line << "; " << depth << " of " << accumulated.size() << " layers frozen";
  previous = accumulated;
  std::fill(accumulated.begin(), accumulated.end(), 0.0);
  accumulatedSteps = 0;
  return depth;
}

llvm::json::Value GradientNormFreezer::state() const {
  return llvm::json::Object{{"depth", int64_t(rule.depth())},
                            {"every", every},
                            {"last_norms", llvm::json::Array(rule.lastNorms())},
                            {"accumulated", llvm::json::Array(accumulated)},
                            {"accumulated_steps", accumulatedSteps}};
}

llvm::Error GradientNormFreezer::restore(const llvm::json::Value &state) {
  auto refuse = [](const llvm::Twine &why) {
    return fail("the checkpoint's gradient-norm state: " + why);
  };
  const llvm::json::Object *object = state.getAsObject();
  if (!object)
    return refuse("not an object");
  auto numbers =
      [&](llvm::StringRef key) -> std::optional<std::vector<double>> {
    const llvm::json::Array *array = object->getArray(key);
    if (!array)
      return std::nullopt;
    std::vector<double> values;
    for (const llvm::json::Value &value : *array) {
      std::optional<double> number = value.getAsNumber();
      if (!number || !std::isfinite(*number) || *number < 0)
        return std::nullopt;
      values.push_back(*number);
    }
    return values;
  };
  std::optional<int64_t> depth = object->getInteger("depth");
  std::optional<int64_t> period = object->getInteger("every");
  std::optional<int64_t> steps = object->getInteger("accumulated_steps");
  std::optional<std::vector<double>> norms = numbers("last_norms");
  std::optional<std::vector<double>> sums = numbers("accumulated");
  if (!depth || *depth < 0 || !period || !steps || !norms || !sums)
    return refuse("malformed");
  if (*period != every)
    return refuse("evaluated every " + llvm::Twine(*period) +
                  " steps, --freeze gradient-norm says every " +
                  llvm::Twine(every));
  if (sums->size() != accumulated.size() || *steps < 0 || *steps >= every)
    return refuse("accumulated over " + llvm::Twine(sums->size()) +
                  " layers and " + llvm::Twine(*steps) + " steps, not " +
                  llvm::Twine(accumulated.size()) + " layers and fewer than " +
                  llvm::Twine(every));
  if (llvm::Error error = rule.restore(*norms, uint32_t(*depth)))
    return refuse(llvm::toString(std::move(error)));
  previous = std::move(*norms);
  accumulated = std::move(*sums);
  accumulatedSteps = *steps;
  return llvm::Error::success();
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
    if (count < 2)
      return fail("--freeze gradient-norm: the model has " +
                  llvm::Twine(count) +
                  " layer, and the rule keeps the last one learning");
    freezing.gradientNorm = *policy;
    return freezing;
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
