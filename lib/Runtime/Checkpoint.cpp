//===- Checkpoint.cpp - Writing, committing and verifying checkpoints -----===//
//
// Files are written through support::OutputDirectory (fsync of the file
// before its rename and of the directory after, nothing created or deleted
// through a link) and read through support::readBoundedFile. Checksums are
// XXH3-64 of the whole file.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Checkpoint.h"
#include "FTPipe/Runtime/Safetensors.h"
#include "FTPipe/Support/BoundedInput.h"
#include "FTPipe/Support/OutputFiles.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <thread>

using namespace ftpipe::runtime;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;
namespace support = ftpipe::support;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static constexpr int64_t kFormatVersion = 1;
/// Runtime tags of the gathering of file records (RuntimeTags.h).
static constexpr int64_t kRecordSizeTag =
    tagOf(RuntimeTag::CheckpointRecordSize);
static constexpr int64_t kRecordTag = tagOf(RuntimeTag::CheckpointRecord);

static std::string checksum(llvm::StringRef bytes) {
  return llvm::formatv("{0:x-16}", llvm::xxh3_64bits(bytes)).str();
}

static std::string checkpointName(int64_t updates) {
  return llvm::formatv("steps-{0:d6}", updates).str();
}

static llvm::json::Array shapeJson(llvm::ArrayRef<int64_t> shape) {
  llvm::json::Array result;
  for (int64_t size : shape)
    result.push_back(size);
  return result;
}

RunIdentity ftpipe::runtime::identifyRun(const PipelineModel &model,
                                         const ExecutorConfig &config,
                                         const TensorMap &data) {
  RunIdentity identity;
  for (const ParameterInfo &param : model.parameters())
    identity.model[param.name] = llvm::json::Object{
        {"dtype", dtypeName(param.type)}, {"shape", shapeJson(param.shape)}};

  const schedule::StageGraph &graph = model.stageGraph();
  llvm::json::Array stages, holders;
  for (int64_t s = 0; s < graph.stages(); ++s)
    stages.push_back(
        llvm::json::Object{{"device", graph.device[s]},
                           {"producers", shapeJson(graph.producers[s])}});
  llvm::json::Object parameterHolders;
  for (const auto &[name, devices] : model.placement())
    parameterHolders[name] = shapeJson(devices);
  identity.plan = llvm::json::Object{{"devices", graph.devices},
                                     {"stages", std::move(stages)},
                                     {"holders", std::move(parameterHolders)}};

  llvm::json::Object dataSet;
  for (const auto &[name, tensor] : data)
    dataSet[name] = llvm::json::Object{
        {"dtype", dtypeName(tensor.type)},
        {"shape", shapeJson(tensor.shape)},
        {"xxh3_64",
         checksum(llvm::StringRef(tensor.bytes.data(), tensor.bytes.size()))}};
  identity.training =
      llvm::json::Object{{"optimizer", schedule::nameOf(config.optimizer.kind)},
                         {"micro_batches", config.schedule.microBatches},
                         {"micro_batch_size", model.microBatchSize()},
                         {"data", std::move(dataSet)}};
  // The frozen parameters (no optimizer state in the checkpoint): recorded
  // only when there are any, so that older checkpoints still match.
  if (!config.frozen.empty()) {
    llvm::json::Array frozen;
    for (const std::string &name : config.frozen)
      frozen.push_back(name);
    identity.training["frozen"] = std::move(frozen);
  }
  return identity;
}

namespace {
/// One file of a checkpoint as the manifest lists it.
struct FileRecord {
  std::string name;
  int64_t device = 0;
  int64_t bytes = 0;
  std::string checksum;
};
} // namespace

static llvm::json::Value recordJson(const FileRecord &record) {
  return llvm::json::Object{{"name", record.name},
                            {"device", record.device},
                            {"bytes", record.bytes},
                            {"xxh3_64", record.checksum}};
}

static std::optional<FileRecord> parseRecord(const llvm::json::Value &value) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return std::nullopt;
  std::optional<llvm::StringRef> name = object->getString("name");
  std::optional<int64_t> device = object->getInteger("device");
  std::optional<int64_t> bytes = object->getInteger("bytes");
  std::optional<llvm::StringRef> sum = object->getString("xxh3_64");
  if (!name || !device || !bytes || !sum || name->contains('/') ||
      name->starts_with("."))
    return std::nullopt;
  return FileRecord{name->str(), *device, *bytes, sum->str()};
}

//===----------------------------------------------------------------------===//
// Saving
//===----------------------------------------------------------------------===//

/// Whether `name` is one that a checkpoint's directory holds: a device's
/// file, the manifest, or a temporary name of either.
static bool isCheckpointFileName(llvm::StringRef name) {
  return name.starts_with("weights-device-") ||
         name.starts_with("optimizer-device-") ||
         name.starts_with("manifest.json") || name.contains(".tmp-");
}

/// The step of a checkpoint directory's name (`steps-<k>`, or
/// `.partial-steps-<k>` with `partial` set), or -1.
static int64_t checkpointStep(llvm::StringRef name, bool &partial) {
  partial = name.consume_front(".partial-");
  int64_t step = 0;
  if (!name.consume_front("steps-") || name.getAsInteger(10, step))
    return -1;
  return step;
}

llvm::Error ftpipe::runtime::checkCheckpointDirectory(llvm::StringRef path) {
  if (!fs::exists(path))
    return llvm::Error::success();
  llvm::Expected<support::OutputDirectory> root =
      support::OutputDirectory::open(path, /*create=*/false);
  if (!root)
    return root.takeError();
  llvm::Expected<std::vector<std::string>> names = root->entries();
  if (!names)
    return names.takeError();
  for (const std::string &name : *names) {
    bool partial = false;
    if (checkpointStep(name, partial) < 0)
      continue;
    std::string why = root->whyNotOwned(name, kCheckpointMarker);
    if (!why.empty())
      return fail(why + ": checkpoints would replace or delete it; move it "
                        "away or choose another directory");
  }
  return llvm::Error::success();
}

/// Device 0: the manifest, written last, then the rename that makes the
/// checkpoint complete, then the older checkpoints go. Only directories of
/// our own making are deleted (OutputDirectory::removeOwnedSubdirectory),
/// and in them only the files a checkpoint writes.
static llvm::Error commit(const CheckpointSetup &setup, int64_t updates,
                          support::OutputDirectory &root,
                          support::OutputDirectory &partial,
                          const std::vector<FileRecord> &records,
                          const llvm::json::Value &freezePolicy) {
  llvm::json::Array files;
  for (const FileRecord &record : records)
    files.push_back(recordJson(record));
  int64_t microBatches =
      setup.identity.training.getInteger("micro_batches").value_or(0);
  llvm::json::Object manifest{
      {"format", "ftpipe-checkpoint"},
      {"version", kFormatVersion},
      {"updates", updates},
      {"next_micro_batch", updates * microBatches},
      {"random",
       llvm::json::Object{{"init_seed", static_cast<int64_t>(setup.seed)},
                          {"draws_after_init", 0}}},
      {"model", llvm::json::Object(setup.identity.model)},
      {"plan", llvm::json::Object(setup.identity.plan)},
      {"training", llvm::json::Object(setup.identity.training)},
      {"files", std::move(files)}};
  if (freezePolicy.kind() != llvm::json::Value::Null)
    manifest["freeze_policy"] = freezePolicy;
  // Leftovers of an earlier attempt at this step (a killed writer): files
  // a checkpoint writes go; anything else is not ours and stops the commit.
  llvm::Expected<std::vector<std::string>> names = partial.entries();
  if (!names)
    return names.takeError();
  for (const std::string &name : *names) {
    if (name == kCheckpointMarker ||
        llvm::any_of(records, [&](const FileRecord &record) {
          return record.name == name;
        }))
      continue;
    if (!isCheckpointFileName(name) || !partial.isRegularFile(name))
      return fail(partial.path() + "/" + name +
                  " is not a file of a checkpoint; not deleted (move it "
                  "away)");
    if (llvm::Error error = partial.removeFile(name))
      return error;
  }

  if (llvm::Error error = partial.writeFile(
          "manifest.json",
          llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))).str(),
          support::Durability::Synced))
    return error;
  std::string final = checkpointName(updates);
  if (root.contains(final))
    if (llvm::Error error =
            root.removeOwnedSubdirectory(final, kCheckpointMarker))
      return error;
  if (llvm::Error error = root.rename(".partial-" + final, final))
    return error;
  if (llvm::Error error = root.sync())
    return error;

  // The new checkpoint is complete: the older ones (and abandoned partial
  // directories of earlier steps) go. Partial directories of later steps
  // may be in the middle of their writes.
  llvm::Expected<std::vector<std::string>> old = root.entries();
  if (!old)
    return old.takeError();
  for (const std::string &name : *old) {
    bool isPartial = false;
    int64_t step = checkpointStep(name, isPartial);
    if (step < 0 || step == updates || (isPartial && step > updates))
      continue;
    if (llvm::Error error =
            root.removeOwnedSubdirectory(name, kCheckpointMarker))
      return error;
  }
  return llvm::Error::success();
}

llvm::Error ftpipe::runtime::saveCheckpoint(
    Communicator &communicator, const CheckpointSetup &setup, int64_t updates,
    const TensorMap &ownedWeights, const TensorMap &optimizerState,
    const llvm::json::Value &freezePolicy) {
  int64_t self = communicator.device();
  // Every device may create the partial directory at once: one that has
  // no marker yet is adopted, a link or another user's directory refused.
  llvm::Expected<support::OutputDirectory> root =
      support::OutputDirectory::open(setup.directory, /*create=*/true);
  if (!root)
    return root.takeError();
  llvm::Expected<support::OutputDirectory> partial =
      root->openOwnedSubdirectory(".partial-" + checkpointName(updates),
                                  kCheckpointMarker, /*adoptUnmarked=*/true);
  if (!partial)
    return partial.takeError();

  // Each file says where it belongs; the manifest says it for the whole.
  int64_t microBatches =
      setup.identity.training.getInteger("micro_batches").value_or(0);
  std::map<std::string, std::string> metadata = {
      {"format", "pt"},
      {"ftpipe_updates", std::to_string(updates)},
      {"ftpipe_next_micro_batch", std::to_string(updates * microBatches)},
      {"ftpipe_init_seed", std::to_string(setup.seed)},
      {"ftpipe_device", std::to_string(self)}};
  std::vector<std::pair<std::string, std::string>> contents = {
      {"weights-device-" + std::to_string(self) + ".safetensors",
       serializeSafetensors(ownedWeights, metadata)},
      {"optimizer-device-" + std::to_string(self) + ".safetensors",
       serializeSafetensors(optimizerState, metadata)}};
  std::vector<FileRecord> mine;
  std::vector<std::string> temporaries;
  for (const auto &[name, bytes] : contents) {
    llvm::Expected<std::string> temporary =
        partial->writeTemporary(name, bytes, support::Durability::Synced);
    if (!temporary)
      return temporary.takeError();
    temporaries.push_back(std::move(*temporary));
    mine.push_back(
        {name, self, static_cast<int64_t>(bytes.size()), checksum(bytes)});
  }
  if (updates == setup.pauseAtUpdates) {
    // One write, so that the lines of several processes do not interleave.
    llvm::errs() << llvm::formatv(
                        "device {0}: writing checkpoint {1}, paused\n", self,
                        checkpointName(updates))
                        .str();
    std::this_thread::sleep_for(
        std::chrono::duration<double>(setup.pauseSeconds));
  }
  for (size_t i = 0; i < contents.size(); ++i)
    if (llvm::Error error = partial->rename(temporaries[i], contents[i].first))
      return error;
  if (llvm::Error error = partial->sync())
    return error;

  if (self != 0) {
    llvm::json::Array records;
    for (const FileRecord &record : mine)
      records.push_back(recordJson(record));
    std::string text =
        llvm::formatv("{0}", llvm::json::Value(std::move(records))).str();
    int64_t size = text.size();
    communicator.send(0, kRecordSizeTag, updates, &size, sizeof(size));
    communicator.send(0, kRecordTag, updates, text.data(), text.size());
    return llvm::Error::success();
  }
  for (int64_t d = 1; d < communicator.devices(); ++d) {
    int64_t size = 0;
    communicator.recv(d, kRecordSizeTag, updates, &size, sizeof(size));
    std::string text(size, '\0');
    communicator.recv(d, kRecordTag, updates, text.data(), text.size());
    llvm::Expected<llvm::json::Value> records = support::parseBoundedJSON(text);
    if (!records)
      return records.takeError();
    const llvm::json::Array *list = records->getAsArray();
    for (size_t i = 0; list && i < list->size(); ++i) {
      std::optional<FileRecord> record = parseRecord((*list)[i]);
      if (!record)
        return fail("device " + llvm::Twine(d) +
                    " sent a malformed checkpoint file record");
      mine.push_back(std::move(*record));
    }
  }
  return commit(setup, updates, *root, *partial, mine, freezePolicy);
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

/// The newest `steps-<k>` directory with a manifest under `root`.
static llvm::Expected<std::string> newestCheckpoint(llvm::StringRef root) {
  std::error_code error;
  int64_t best = -1;
  std::string found;
  for (fs::directory_iterator it(root, error), end; it != end && !error;
       it.increment(error)) {
    llvm::StringRef name = path::filename(it->path());
    int64_t step = 0;
    if (!name.consume_front("steps-") || name.getAsInteger(10, step) ||
        !fs::exists(it->path() + "/manifest.json") || step <= best)
      continue;
    best = step;
    found = it->path();
  }
  if (error)
    return fail(root + ": " + error.message());
  if (found.empty())
    return fail(root + ": no complete checkpoint (no steps-<k> directory "
                       "with a manifest.json)");
  return found;
}

/// A value of RunIdentity as a message shows it: a tensor as "F32 [8, 4]",
/// anything else as JSON.
static std::string describe(const llvm::json::Value &value) {
  if (const llvm::json::Object *object = value.getAsObject())
    if (std::optional<llvm::StringRef> dtype = object->getString("dtype"))
      if (const llvm::json::Array *shape = object->getArray("shape")) {
        std::vector<std::string> sizes;
        for (const llvm::json::Value &size : *shape)
          sizes.push_back(llvm::formatv("{0}", size).str());
        return (*dtype + " [" + llvm::join(sizes, ", ") + "]").str();
      }
  return llvm::formatv("{0}", value).str();
}

static std::vector<std::string> sortedKeys(const llvm::json::Object &object) {
  std::vector<std::string> keys;
  for (const auto &entry : object)
    keys.push_back(entry.first.str());
  llvm::sort(keys);
  return keys;
}

/// Describes how `found` differs from `expected` (both JSON objects of
/// RunIdentity), key by key in name order; empty when equal.
static std::vector<std::string> differences(const llvm::json::Object &found,
                                            const llvm::json::Object &expected,
                                            llvm::StringRef what) {
  std::vector<std::string> result;
  for (const std::string &key : sortedKeys(expected)) {
    const llvm::json::Value &value = *expected.get(key);
    const llvm::json::Value *other = found.get(key);
    if (!other)
      result.push_back(what.str() + " '" + key + "' is " + describe(value) +
                       " here, absent in the checkpoint");
    else if (*other != value && describe(*other) == describe(value))
      result.push_back(what.str() + " '" + key + "' is " + describe(value) +
                       " with other contents than in the checkpoint");
    else if (*other != value)
      result.push_back(what.str() + " '" + key + "' is " + describe(value) +
                       " here, " + describe(*other) + " in the checkpoint");
  }
  for (const std::string &key : sortedKeys(found))
    if (!expected.get(key))
      result.push_back(what.str() + " '" + key + "' is " +
                       describe(*found.get(key)) +
                       " in the checkpoint, absent here");
  return result;
}

/// Refuses a checkpoint of another model, plan or training setup.
static llvm::Error checkIdentity(const llvm::json::Object &manifest,
                                 const RunIdentity &expected,
                                 llvm::StringRef directory) {
  struct Part {
    const char *key, *what, *refusal;
    const llvm::json::Object &expected;
  };
  for (const Part &part :
       {Part{"model", "parameter", "another model", expected.model},
        Part{"plan", "plan entry", "another plan", expected.plan},
        Part{"training", "setting", "another training setup",
             expected.training}}) {
    const llvm::json::Object *found = manifest.getObject(part.key);
    if (!found)
      return fail(directory + ": the manifest has no '" + part.key + "'");
    std::vector<std::string> diff =
        differences(*found, part.expected, part.what);
    if (diff.empty())
      continue;
    // The data set's entry is one object: name its tensors instead.
    if (llvm::StringRef(part.key) == "training")
      if (const llvm::json::Object *data = found->getObject("data"))
        if (const llvm::json::Object *want = part.expected.getObject("data")) {
          std::vector<std::string> dataDiff =
              differences(*data, *want, "data tensor");
          if (!dataDiff.empty()) {
            llvm::erase_if(diff, [](const std::string &line) {
              return llvm::StringRef(line).starts_with("setting 'data'");
            });
            diff.insert(diff.end(), dataDiff.begin(), dataDiff.end());
          }
        }
    constexpr size_t kShown = 4;
    size_t total = diff.size();
    if (total > kShown) {
      diff.resize(kShown);
      diff.push_back("and " + std::to_string(total - kShown) + " more");
    }
    return fail(directory + " is a checkpoint of " + part.refusal + ": " +
                llvm::join(diff, "; "));
  }
  return llvm::Error::success();
}

llvm::Expected<LoadedCheckpoint>
ftpipe::runtime::loadCheckpoint(llvm::StringRef where,
                                const RunIdentity &expected) {
  std::string directory = where.str();
  if (!fs::is_directory(directory))
    return fail(directory + ": no such checkpoint directory");
  if (!fs::exists(directory + "/manifest.json")) {
    llvm::Expected<std::string> newest = newestCheckpoint(directory);
    if (!newest)
      return newest.takeError();
    directory = *newest;
  }
  std::string manifestPath = directory + "/manifest.json";
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> manifestBytes =
      support::readBoundedFile(manifestPath, "checkpoint manifest");
  if (!manifestBytes)
    return manifestBytes.takeError();
  llvm::Expected<llvm::json::Value> parsed =
      support::parseBoundedJSON((*manifestBytes)->getBuffer());
  if (!parsed)
    return fail(manifestPath +
                ": not JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *manifest = parsed->getAsObject();
  if (!manifest || manifest->getString("format") != "ftpipe-checkpoint")
    return fail(manifestPath + ": not an ftpipe checkpoint manifest");
  if (manifest->getInteger("version") != kFormatVersion)
    return fail(manifestPath + ": checkpoint format version " +
                llvm::Twine(manifest->getInteger("version").value_or(-1)) +
                ", this runtime reads version " + llvm::Twine(kFormatVersion));
  std::optional<int64_t> updates = manifest->getInteger("updates");
  const llvm::json::Array *files = manifest->getArray("files");
  if (!updates || *updates < 1 || !files)
    return fail(manifestPath + ": no 'updates' or 'files'");
  if (llvm::Error error = checkIdentity(*manifest, expected, directory))
    return std::move(error);
  int64_t microBatches =
      expected.training.getInteger("micro_batches").value_or(0);
  if (manifest->getInteger("next_micro_batch") != *updates * microBatches)
    return fail(manifestPath +
                ": the data position 'next_micro_batch' is "
                "not " +
                llvm::Twine(*updates * microBatches) + " (" +
                llvm::Twine(*updates) + " updates of " +
                llvm::Twine(microBatches) + " micro-batches)");

  int64_t devices = expected.plan.getInteger("devices").value_or(0);
  LoadedCheckpoint loaded;
  loaded.directory = directory;
  loaded.updates = *updates;
  loaded.optimizerState.resize(devices);
  if (const llvm::json::Value *policy = manifest->get("freeze_policy"))
    loaded.freezePolicy = *policy;
  std::vector<bool> haveWeights(devices), haveState(devices);
  for (const llvm::json::Value &value : *files) {
    std::optional<FileRecord> record = parseRecord(value);
    if (!record || record->device < 0 || record->device >= devices)
      return fail(manifestPath + ": a malformed file entry");
    std::string file = directory + "/" + record->name;
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> bytes =
        support::readBoundedFile(file, "checkpoint file",
                                 kMaxSafetensorsFileBytes);
    if (!bytes)
      return fail(llvm::toString(bytes.takeError()) +
                  " (the checkpoint is incomplete)");
    llvm::StringRef content = (*bytes)->getBuffer();
    if (static_cast<int64_t>(content.size()) != record->bytes)
      return fail(file + " has " + llvm::Twine(content.size()) +
                  " bytes, the manifest says " + llvm::Twine(record->bytes) +
                  " (truncated or replaced)");
    if (checksum(content) != record->checksum)
      return fail(file + ": checksum " + checksum(content) +
                  ", the manifest says " + record->checksum + " (corrupted)");
    llvm::Expected<SafetensorsFile> tensors = parseSafetensors(content, file);
    if (!tensors)
      return tensors.takeError();
    bool weights = llvm::StringRef(record->name).starts_with("weights-");
    std::vector<bool> &have = weights ? haveWeights : haveState;
    if (have[record->device])
      return fail(manifestPath + ": two files of the same kind for device " +
                  llvm::Twine(record->device));
    have[record->device] = true;
    if (weights)
      loaded.weights.merge(tensors->tensors);
    else
      loaded.optimizerState[record->device] = std::move(tensors->tensors);
  }
  for (int64_t d = 0; d < devices; ++d)
    if (!haveWeights[d] || !haveState[d])
      return fail(manifestPath + ": the files of device " + llvm::Twine(d) +
                  " are missing");
  return loaded;
}

void ftpipe::runtime::shiftSchedule(schedule::Schedule &schedule,
                                    int64_t updates, int64_t microBatches) {
  for (std::vector<schedule::Action> &actions : schedule.devices)
    for (schedule::Action &action : actions)
      action.index += action.kind == schedule::ActionKind::Update
                          ? updates
                          : updates * microBatches;
}
