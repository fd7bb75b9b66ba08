//===- Freezing.cpp - When to freeze which prefix of a model ----*- C++ -*-===//
//
// The freeze policies of Freezing.h: PipeTransformer's alpha schedule, its
// gradient-norm rule, schedule files, and the grouping of parameter names
// into the model's layers.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/Freezing.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Regex.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace ftpipe::schedule;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

uint32_t ftpipe::schedule::alphaFrozenDepth(uint32_t layers, double alpha,
                                            uint32_t epochs) {
  alpha = std::clamp(alpha, 0.0, 1.0);
  double frozen = double(layers) * (1.0 - std::pow(1.0 - alpha, epochs));
  // A hair below an integer is that integer (pow's rounding).
  return std::min<uint32_t>(layers, uint32_t(std::floor(frozen + 1e-9)));
}

uint32_t FreezeSchedule::depthAt(int64_t step) const {
  uint32_t depth = 0;
  for (const auto &[from, d] : points)
    if (from <= step)
      depth = d;
  return depth;
}

llvm::Expected<FreezeSchedule>
ftpipe::schedule::parseFreezeSchedule(llvm::StringRef text, uint32_t layers) {
  FreezeSchedule schedule;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (auto [index, raw] : llvm::enumerate(lines)) {
    llvm::StringRef line = raw.split('#').first.trim();
    if (line.empty())
      continue;
    auto where = [&, index = index] {
      return "line " + std::to_string(index + 1) + ": ";
    };
    llvm::SmallVector<llvm::StringRef> fields;
    line.split(fields, ' ', -1, /*KeepEmpty=*/false);
    int64_t step = 0;
    uint64_t depth = 0;
    if (fields.size() != 2 || fields[0].getAsInteger(10, step) || step < 0 ||
        fields[1].getAsInteger(10, depth))
      return fail(where() +
                  "expected 'STEP DEPTH' (two non-negative "
                  "integers), got '" +
                  line + "'");
    if (depth > layers)
      return fail(where() + "depth " + llvm::Twine(depth) + " exceeds the " +
                  llvm::Twine(layers) + " layers");
    if (!schedule.points.empty()) {
      if (step <= schedule.points.back().first)
        return fail(where() + "step " + llvm::Twine(step) +
                    " does not come after step " +
                    llvm::Twine(schedule.points.back().first));
      if (depth < schedule.points.back().second)
        return fail(where() + "depth " + llvm::Twine(depth) +
                    " is below the earlier " +
                    llvm::Twine(schedule.points.back().second) +
                    ": frozen layers never thaw");
    }
    schedule.points.push_back({step, uint32_t(depth)});
  }
  return schedule;
}

GradientNormRule::GradientNormRule(uint32_t layers, double threshold,
                                   uint32_t maxDepth, uint32_t maxStep)
    : layers(layers), maxDepth(std::min(maxDepth, layers)),
      maxStep(std::max<uint32_t>(maxStep, 1)), threshold(threshold) {}

uint32_t GradientNormRule::evaluate(llvm::ArrayRef<double> norms) {
  if (norms.size() != layers)
    return frozen;
  if (!previous.empty()) {
    uint32_t depth = frozen;
    while (depth < maxDepth && depth - frozen < maxStep) {
      double before = previous[depth], now = norms[depth];
      double change = before > 0 ? std::fabs(now - before) / before : 1.0;
      if (!(change < threshold))
        break;
      ++depth;
    }
    frozen = depth;
  }
  previous.assign(norms.begin(), norms.end());
  return frozen;
}

llvm::Error GradientNormRule::restore(std::vector<double> norms,
                                      uint32_t depth) {
  if (!norms.empty() && norms.size() != layers)
    return fail("gradient-norm state: " + llvm::Twine(norms.size()) +
                " norms for " + llvm::Twine(layers) + " layers");
  if (depth > maxDepth)
    return fail("gradient-norm state: depth " + llvm::Twine(depth) + " above " +
                llvm::Twine(maxDepth));
  previous = std::move(norms);
  frozen = depth;
  return llvm::Error::success();
}

llvm::Expected<FreezePolicy>
ftpipe::schedule::parseFreezePolicy(llvm::StringRef spec) {
  FreezePolicy policy;
  if (spec.consume_front("alpha=")) {
    policy.kind = FreezePolicy::Kind::Alpha;
    if (spec.getAsDouble(policy.alpha) || !(policy.alpha > 0) ||
        policy.alpha > 1)
      return fail("--freeze alpha=X: X must be in (0, 1], not '" + spec + "'");
    return policy;
  }
  if (spec.consume_front("schedule=")) {
    policy.kind = FreezePolicy::Kind::Schedule;
    if (spec.empty())
      return fail("--freeze schedule=FILE: no file");
    policy.file = spec.str();
    return policy;
  }
  llvm::SmallVector<llvm::StringRef> parts;
  spec.split(parts, ',');
  if (parts.front() != "gradient-norm")
    return fail("--freeze: expected alpha=X, gradient-norm[,threshold=X]"
                "[,every=N] or schedule=FILE, not '" +
                spec + "'");
  policy.kind = FreezePolicy::Kind::GradientNorm;
  for (llvm::StringRef part : llvm::drop_begin(parts)) {
    auto [key, value] = part.split('=');
    if (key == "threshold" && !value.getAsDouble(policy.threshold) &&
        policy.threshold > 0)
      continue;
    if (key == "every" && !value.getAsInteger(10, policy.every) &&
        policy.every > 0)
      continue;
    return fail("--freeze gradient-norm: bad setting '" + part +
                "' (threshold=X with X > 0, every=N with N > 0)");
  }
  return policy;
}

llvm::Expected<std::vector<std::vector<std::string>>>
ftpipe::schedule::groupLayers(llvm::ArrayRef<std::string> names) {
  llvm::Regex block("^(.*)\\.(layer|layers|h|block)\\.([0-9]+)\\.");
  std::map<uint32_t, std::vector<std::string>> byBlock;
  std::vector<std::string> embeddings;
  std::string stack;
  for (const std::string &name : names) {
    llvm::SmallVector<llvm::StringRef> match;
    if (block.match(name, &match)) {
      std::string thisStack = (match[1] + "." + match[2]).str();
      if (!stack.empty() && stack != thisStack)
        return fail("the parameters have blocks in two stacks ('" + stack +
                    "' and '" + thisStack +
                    "'), whose order their names do not tell");
      stack = thisStack;
      uint32_t index = 0;
      match[3].getAsInteger(10, index);
      byBlock[index].push_back(name);
    } else if (llvm::StringRef(name).contains_insensitive("embed")) {
      embeddings.push_back(name);
    }
  }
  std::vector<std::vector<std::string>> layers;
  for (auto &[index, members] : byBlock)
    layers.push_back(std::move(members));
  if (layers.empty())
    return fail("no parameter name has a block number ('.layer.N.', "
                "'.layers.N.', '.h.N.' or '.block.N.')");
  layers.front().insert(layers.front().begin(), embeddings.begin(),
                        embeddings.end());
  return layers;
}

std::set<std::string> ftpipe::schedule::frozenNames(
    const std::vector<std::vector<std::string>> &layers, uint32_t depth) {
  std::set<std::string> names;
  for (size_t l = 0; l < std::min<size_t>(depth, layers.size()); ++l)
    names.insert(layers[l].begin(), layers[l].end());
  return names;
}
