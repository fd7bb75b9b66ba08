//===- TrainingSetup.cpp - The training setup as JSON ---------------------===//
//
// The manifest's `training` object, spelled as the options spell the
// setup's enums (TrainingSetup.h's tables).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/TrainingSetup.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

#include <string>

using namespace ftpipe::schedule;

llvm::json::Value ftpipe::schedule::toJSON(const TrainingSetup &setup) {
  return llvm::json::Object{{"schedule", nameOf(setup.schedule)},
                            {"microbatches", int64_t(setup.microBatches)},
                            {"optimizer", nameOf(setup.optimizer)},
                            {"weight_versions", nameOf(setup.weightVersions)},
                            {"recompute", nameOf(setup.recompute)}};
}

/// Reads the string field `name` of `object` as an Enum.
template <typename Enum>
static bool readEnum(const llvm::json::Object &object, llvm::StringRef name,
                     Enum &out, llvm::json::Path path) {
  std::optional<llvm::StringRef> text = object.getString(name);
  if (!text) {
    path.field(name).report("expected a string");
    return false;
  }
  llvm::Expected<Enum> value = parseName<Enum>(*text);
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
  return readEnum(*object, "schedule", setup.schedule, path) &&
         readEnum(*object, "optimizer", setup.optimizer, path) &&
         readEnum(*object, "weight_versions", setup.weightVersions, path) &&
         readEnum(*object, "recompute", setup.recompute, path);
}
