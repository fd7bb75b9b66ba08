//===- TrainingSetup.cpp - Names of the training setup's enums ------------===//
//
// One table per enum: its spelling, its description; parse and print read
// the same table.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/TrainingSetup.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

#include <string>

using namespace ftpipe::schedule;

namespace {
template <typename Enum> struct Spelling {
  Enum value;
  llvm::StringRef name;
  llvm::StringRef description;
};
} // namespace

static constexpr Spelling<Kind> kKinds[] = {
    {Kind::GPipe, "gpipe", "GPipe"},
    {Kind::OneFOneB, "1f1b", "1F1B with flush"},
    {Kind::Async, "async", "async (PipeDream 1F1B)"},
    {Kind::ZeroBubbleH1, "zb-h1", "zero-bubble ZB-H1 (split backward)"},
    {Kind::ZeroBubbleAuto, "zb-auto",
     "zero-bubble list schedule from stage costs (split backward)"},
};

static constexpr Spelling<Optimizer> kOptimizers[] = {
    {Optimizer::SGD, "sgd", "plain SGD: no state"},
    {Optimizer::Momentum, "momentum", "SGD with momentum: one buffer"},
    {Optimizer::Adam, "adam", "Adam: two buffers"},
    {Optimizer::AdamW, "adamw", "AdamW: two buffers"},
    {Optimizer::Adafactor, "adafactor",
     "Adafactor without momentum: factored, about no state"},
};

static constexpr Spelling<WeightVersions> kWeightVersions[] = {
    {WeightVersions::None, "none", "one weight version"},
    {WeightVersions::Stash, "stash", "weight stashing"},
    {WeightVersions::DoubleBuffered, "2bw", "2 weight versions (2BW)"},
};

static constexpr Spelling<RecomputeMode> kRecomputeModes[] = {
    {RecomputeMode::Always, "true", "every stage (FTPipe's setup)"},
    {RecomputeMode::Never, "false", "no stage: every activation is kept"},
    {RecomputeMode::Auto, "auto",
     "the partitioner chooses per stage under the memory budget"},
};

template <typename Enum, size_t N>
static const Spelling<Enum> &spellingOf(const Spelling<Enum> (&table)[N],
                                        Enum value) {
  for (const Spelling<Enum> &entry : table)
    if (entry.value == value)
      return entry;
  llvm_unreachable("an enum value without a spelling");
}

template <typename Enum, size_t N>
static llvm::Expected<Enum> parse(const Spelling<Enum> (&table)[N],
                                  llvm::StringRef what, llvm::StringRef text) {
  std::string known;
  for (size_t i = 0; i < N; ++i) {
    if (table[i].name == text)
      return table[i].value;
    known += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + table[i].name.str();
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "unknown " + what + " '" + text + "' (" +
                                     known + ")");
}

llvm::Expected<Kind> ftpipe::schedule::parseKind(llvm::StringRef text) {
  return parse(kKinds, "schedule", text);
}
llvm::StringRef ftpipe::schedule::kindName(Kind kind) {
  return spellingOf(kKinds, kind).name;
}
llvm::StringRef ftpipe::schedule::describeKind(Kind kind) {
  return spellingOf(kKinds, kind).description;
}

llvm::Expected<Optimizer>
ftpipe::schedule::parseOptimizer(llvm::StringRef text) {
  return parse(kOptimizers, "optimizer", text);
}
llvm::StringRef ftpipe::schedule::optimizerName(Optimizer optimizer) {
  return spellingOf(kOptimizers, optimizer).name;
}
llvm::StringRef ftpipe::schedule::describeOptimizer(Optimizer optimizer) {
  return spellingOf(kOptimizers, optimizer).description;
}

llvm::Expected<WeightVersions>
ftpipe::schedule::parseWeightVersions(llvm::StringRef text) {
  return parse(kWeightVersions, "weight versions", text);
}
llvm::StringRef ftpipe::schedule::weightVersionsName(WeightVersions versions) {
  return spellingOf(kWeightVersions, versions).name;
}
llvm::StringRef
ftpipe::schedule::describeWeightVersions(WeightVersions versions) {
  return spellingOf(kWeightVersions, versions).description;
}

llvm::Expected<RecomputeMode>
ftpipe::schedule::parseRecomputeMode(llvm::StringRef text) {
  return parse(kRecomputeModes, "recomputation", text);
}
llvm::StringRef ftpipe::schedule::recomputeModeName(RecomputeMode mode) {
  return spellingOf(kRecomputeModes, mode).name;
}
llvm::StringRef ftpipe::schedule::describeRecomputeMode(RecomputeMode mode) {
  return spellingOf(kRecomputeModes, mode).description;
}

llvm::json::Value ftpipe::schedule::toJSON(const TrainingSetup &setup) {
  return llvm::json::Object{
      {"schedule", kindName(setup.schedule)},
      {"microbatches", int64_t(setup.microBatches)},
      {"optimizer", optimizerName(setup.optimizer)},
      {"weight_versions", weightVersionsName(setup.weightVersions)},
      {"recompute", recomputeModeName(setup.recompute)}};
}

/// Reads the string field `name` of `object` with `parseFn`.
template <typename Enum>
static bool readEnum(const llvm::json::Object &object, llvm::StringRef name,
                     llvm::Expected<Enum> (*parseFn)(llvm::StringRef),
                     Enum &out, llvm::json::Path path) {
  std::optional<llvm::StringRef> text = object.getString(name);
  if (!text) {
    path.field(name).report("expected a string");
    return false;
  }
  llvm::Expected<Enum> value = parseFn(*text);
  if (!value) {
    // json::Path::report keeps a pointer to its message, so a fixed text.
    llvm::consumeError(value.takeError());
    path.field(name).report("not one of the options' spellings");
    return false;
  }
  out = *value;
  return true;
}

bool ftpipe::schedule::fromJSON(const llvm::json::Value &value,
                                TrainingSetup &setup, llvm::json::Path path) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object) {
    path.report("expected an object");
    return false;
  }
  std::optional<int64_t> microBatches = object->getInteger("microbatches");
  if (!microBatches || *microBatches < 1 || *microBatches > (1 << 20)) {
    path.field("microbatches").report("expected an integer from 1 to 2^20");
    return false;
  }
  setup.microBatches = uint32_t(*microBatches);
  return readEnum(*object, "schedule", parseKind, setup.schedule, path) &&
         readEnum(*object, "optimizer", parseOptimizer, setup.optimizer,
                  path) &&
         readEnum(*object, "weight_versions", parseWeightVersions,
                  setup.weightVersions, path) &&
         readEnum(*object, "recompute", parseRecomputeMode, setup.recompute,
                  path);
}
