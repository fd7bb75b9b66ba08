//===- ArtifactManifest.cpp - Reading and checking manifest.json ----------===//
//
// The fields are read with llvm::json's mappers, so a missing or mistyped
// field is reported with its path in the file ("manifest.json:
// entry_points[3].arguments[1].shape: expected array"); the checks after
// that are about references between the parts.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/ArtifactManifest.h"
#include "FTPipe/Support/BoundedInput.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <set>

using namespace ftpipe::runtime;
namespace json = llvm::json;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static std::optional<DType> manifestDType(llvm::StringRef name) {
  if (name == "index")
    return DType::I64;
  if (name == "i1")
    return DType::Bool;
  return parseDType(name.upper());
}

namespace ftpipe {
namespace runtime {

static bool fromJSON(const json::Value &value, ManifestTensor &tensor,
                     json::Path path) {
  json::ObjectMapper mapper(value, path);
  std::string dtype;
  if (!mapper || !mapper.map("dtype", dtype) ||
      !mapper.map("shape", tensor.shape) ||
      !mapper.mapOptional("index_bound", tensor.indexBound) ||
      !mapper.mapOptional("index_ignored", tensor.indexIgnored))
    return false;
  if (tensor.indexBound && *tensor.indexBound < 1) {
    path.field("index_bound").report("must be at least 1");
    return false;
  }
  std::optional<DType> type = manifestDType(dtype);
  if (!type) {
    path.field("dtype").report("unknown element type");
    return false;
  }
  if (llvm::any_of(tensor.shape, [](int64_t d) { return d < 0; })) {
    path.field("shape").report("negative dimension");
    return false;
  }
  if (!tensorBytes(*type, tensor.shape)) {
    path.field("shape").report("larger than 256 GiB");
    return false;
  }
  tensor.type = *type;
  return true;
}

static bool fromJSON(const json::Value &value, EntryValue &entry,
                     json::Path path) {
  json::ObjectMapper mapper(value, path);
  std::string kind;
  if (!mapper || !mapper.map("kind", kind) ||
      !mapper.mapOptional("name", entry.name) ||
      !mapper.mapOptional("saved", entry.saved))
    return false;
  // The micro-batch is an index passed by value: no shape.
  if (kind == "microbatch") {
    entry.kind = EntryValue::Kind::Microbatch;
    entry.tensor = {{}, DType::I64};
    return true;
  }
  if (!fromJSON(value, entry.tensor, path))
    return false;
  using Kind = EntryValue::Kind;
  static const std::pair<const char *, Kind> kinds[] = {
      {"microbatch", Kind::Microbatch},
      {"param", Kind::Param},
      {"input", Kind::Input},
      {"saved", Kind::Saved},
      {"loss", Kind::Loss},
      {"grad", Kind::Grad},
      {"output", Kind::Output}};
  const auto *it =
      llvm::find_if(kinds, [&](auto &k) { return kind == k.first; });
  if (it == std::end(kinds)) {
    path.field("kind").report("unknown kind");
    return false;
  }
  entry.kind = it->second;
  bool named = entry.kind == Kind::Param || entry.kind == Kind::Grad ||
               entry.kind == Kind::Input;
  if (named && entry.name.empty()) {
    path.field("name").report("missing");
    return false;
  }
  if (entry.kind == Kind::Saved && entry.saved < 0) {
    path.field("saved").report("missing or negative");
    return false;
  }
  return true;
}

static bool fromJSON(const json::Value &value, ManifestTransfer &transfer,
                     json::Path path) {
  json::ObjectMapper mapper(value, path);
  std::string direction;
  if (!mapper || !mapper.map("direction", direction) ||
      !mapper.map("peer", transfer.peer) || !mapper.map("tag", transfer.tag) ||
      !fromJSON(value, transfer.tensor, path))
    return false;
  if (direction != "send" && direction != "recv") {
    path.field("direction").report("expected send or recv");
    return false;
  }
  transfer.send = direction == "send";
  return true;
}

static bool fromJSON(const json::Value &value, EntryPoint &entry,
                     json::Path path) {
  json::ObjectMapper mapper(value, path);
  std::string kind;
  if (!mapper || !mapper.map("name", entry.name) ||
      !mapper.map("symbol", entry.symbol) ||
      !mapper.map("device", entry.device) ||
      !mapper.map("stage", entry.stage) || !mapper.map("kind", kind) ||
      !mapper.map("arguments", entry.arguments) ||
      !mapper.map("results", entry.results) ||
      !mapper.mapOptional("transfers", entry.transfers))
    return false;
  entry.backward = kind == "backward";
  if (kind != "forward" && kind != "backward") {
    path.field("kind").report("expected forward or backward");
    return false;
  }
  return true;
}

} // namespace runtime
} // namespace ftpipe

namespace {
struct RawDevice {
  int64_t id = 0;
  std::string artifact;
};
struct RawStage {
  int64_t id = 0, device = 0;
  std::string forward, backward;
};
struct RawParameter {
  ManifestTensor tensor;
  int64_t owner = 0;
  std::vector<int64_t> copies;
};
bool fromJSON(const json::Value &value, RawDevice &device, json::Path path) {
  json::ObjectMapper mapper(value, path);
  return mapper && mapper.map("id", device.id) &&
         mapper.map("artifact", device.artifact);
}
bool fromJSON(const json::Value &value, RawStage &stage, json::Path path) {
  json::ObjectMapper mapper(value, path);
  return mapper && mapper.map("id", stage.id) &&
         mapper.map("device", stage.device) &&
         mapper.map("forward", stage.forward) &&
         mapper.mapOptional("backward", stage.backward);
}
struct RawDeviceMemory {
  int64_t device = 0;
  ftpipe::schedule::DeviceMemoryInputs inputs;
};
bool fromJSON(const json::Value &value, RawDeviceMemory &memory,
              json::Path path) {
  json::ObjectMapper mapper(value, path);
  return mapper && mapper.map("device", memory.device) &&
         mapper.map("inputs", memory.inputs);
}
bool fromJSON(const json::Value &value, RawParameter &param, json::Path path) {
  json::ObjectMapper mapper(value, path);
  return mapper && mapper.map("owner", param.owner) &&
         mapper.mapOptional("copies", param.copies) &&
         fromJSON(value, param.tensor, path);
}
} // namespace

/// Checks the references between the parts of a parsed manifest.
static llvm::Error checkReferences(const ArtifactManifest &manifest) {
  int64_t devices = manifest.devices();
  int64_t stages = static_cast<int64_t>(manifest.stages.size());
  auto where = [](const EntryPoint &entry) {
    return "entry point '" + entry.name + "'";
  };
  std::set<int64_t> tags;
  for (const auto &[name, entry] : manifest.entryPoints) {
    if (entry.device < 0 || entry.device >= devices || entry.stage < 0 ||
        entry.stage >= stages)
      return fail(where(entry) + ": device " + llvm::Twine(entry.device) +
                  " or stage " + llvm::Twine(entry.stage) + " does not exist");
    const ManifestStage &stage = manifest.stages[entry.stage];
    if (stage.device != entry.device)
      return fail(where(entry) + " is on device " + llvm::Twine(entry.device) +
                  ", its stage " + llvm::Twine(entry.stage) + " on device " +
                  llvm::Twine(stage.device));
    if ((entry.backward ? stage.backward : stage.forward) != name)
      return fail(where(entry) + " is not the " +
                  (entry.backward ? "backward" : "forward") + " that stage " +
                  llvm::Twine(entry.stage) + " lists");
    for (const EntryValue &value : entry.arguments) {
      if (value.kind == EntryValue::Kind::Param &&
          !manifest.parameters.count(value.name))
        return fail(where(entry) + " reads parameter '" + value.name +
                    "', which is not in 'parameters'");
      if (value.kind == EntryValue::Kind::Input &&
          !manifest.inputs.count(value.name))
        return fail(where(entry) + " reads input '" + value.name +
                    "', which is not in 'inputs'");
      if (value.kind != EntryValue::Kind::Microbatch &&
          value.kind != EntryValue::Kind::Param &&
          value.kind != EntryValue::Kind::Input &&
          value.kind != EntryValue::Kind::Saved)
        return fail(where(entry) + " has an argument of a result's kind");
    }
    for (const ManifestTransfer &transfer : entry.transfers) {
      if (transfer.peer < 0 || transfer.peer >= devices)
        return fail(where(entry) + ": a transfer with device " +
                    llvm::Twine(transfer.peer) + ", which does not exist");
      if (transfer.send && !tags.insert(transfer.tag).second)
        return fail(where(entry) + ": tag " + llvm::Twine(transfer.tag) +
                    " is sent twice");
    }
  }
  for (int64_t s = 0; s < stages; ++s) {
    const ManifestStage &stage = manifest.stages[s];
    for (const std::string *name : {&stage.forward, &stage.backward})
      if (!name->empty() && !manifest.entryPoints.count(*name))
        return fail("stage " + llvm::Twine(s) + ": entry point '" + *name +
                    "' is not in 'entry_points'");
  }
  std::vector<int64_t> order = manifest.stageOrder;
  llvm::sort(order);
  for (int64_t s = 0; s < stages; ++s)
    if (order.size() != size_t(stages) || order[s] != s)
      return fail("'stage_order' is not a permutation of the stages");
  return llvm::Error::success();
}

llvm::Expected<ArtifactManifest>
ftpipe::runtime::readManifest(llvm::StringRef directory) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, "manifest.json");
  auto buffer = ftpipe::support::readBoundedFile(path, "artifact manifest");
  if (!buffer)
    return fail(llvm::toString(buffer.takeError()) +
                " (is this a directory written by ftpipe-compile?)");
  auto parsed = ftpipe::support::parseBoundedJSON((*buffer)->getBuffer());
  if (!parsed)
    return fail(path + ": " + llvm::toString(parsed.takeError()));

  ArtifactManifest manifest;
  manifest.directory = directory.str();
  std::string format;
  int64_t version = 0;
  std::vector<RawDevice> devices;
  std::vector<RawStage> stages;
  std::vector<EntryPoint> entries;
  std::map<std::string, RawParameter> parameters;
  std::vector<RawDeviceMemory> deviceMemory;
  json::Path::Root root("manifest");
  json::ObjectMapper mapper(*parsed, root);
  bool ok = mapper && mapper.map("format", format) &&
            mapper.map("version", version) &&
            mapper.map("target", manifest.target) &&
            mapper.map("devices", devices) && mapper.map("stages", stages) &&
            mapper.mapOptional("stage_order", manifest.stageOrder) &&
            mapper.map("entry_points", entries) &&
            mapper.mapOptional("parameters", parameters) &&
            mapper.mapOptional("inputs", manifest.inputs) &&
            mapper.mapOptional("training", manifest.training) &&
            mapper.mapOptional("device_memory", deviceMemory) &&
            mapper.mapOptional("replicas", manifest.replicas);
  if (!ok)
    return fail(path + ": " + llvm::toString(root.getError()));
  if (format != "ftpipe-manifest" || version != 1)
    return fail(path +
                ": not an ftpipe-compile manifest of version 1 "
                "(format '" +
                format + "', version " + llvm::Twine(version) + ")");

  manifest.artifacts.resize(devices.size());
  for (const RawDevice &device : devices) {
    if (device.id < 0 || device.id >= int64_t(devices.size()) ||
        !manifest.artifacts[device.id].empty())
      return fail(path + ": device ids are not 0.." +
                  llvm::Twine(devices.size() - 1) + ", each once");
    if (device.artifact.empty() ||
        llvm::sys::path::has_parent_path(device.artifact))
      return fail(path + ": device " + llvm::Twine(device.id) +
                  ": the artifact must be a file name in the directory");
    manifest.artifacts[device.id] = device.artifact;
  }
  manifest.stages.resize(stages.size());
  std::vector<bool> seen(stages.size());
  for (const RawStage &stage : stages) {
    if (stage.id < 0 || stage.id >= int64_t(stages.size()) || seen[stage.id])
      return fail(path + ": stage ids are not 0.." +
                  llvm::Twine(stages.size() - 1) + ", each once");
    if (stage.device < 0 || stage.device >= int64_t(devices.size()))
      return fail(path + ": stage " + llvm::Twine(stage.id) + " is on device " +
                  llvm::Twine(stage.device) + ", which does not exist");
    seen[stage.id] = true;
    manifest.stages[stage.id] = {stage.device, stage.forward, stage.backward};
  }
  if (!deviceMemory.empty()) {
    manifest.deviceMemory.resize(devices.size());
    std::vector<bool> counted(devices.size());
    for (RawDeviceMemory &memory : deviceMemory) {
      if (memory.device < 0 || memory.device >= int64_t(devices.size()) ||
          counted[memory.device] || deviceMemory.size() != devices.size())
        return fail(path + ": 'device_memory' must list devices 0.." +
                    llvm::Twine(devices.size() - 1) + ", each once");
      counted[memory.device] = true;
      manifest.deviceMemory[memory.device] = std::move(memory.inputs);
    }
  }
  if (manifest.replicas)
    if (llvm::Error error = manifest.replicas->verify(
            devices.size(), manifest.replicas->processes()))
      return fail(path + ": " + llvm::toString(std::move(error)));
  if (manifest.stageOrder.empty())
    for (size_t s = 0; s < stages.size(); ++s)
      manifest.stageOrder.push_back(s);
  for (EntryPoint &entry : entries) {
    std::string name = entry.name;
    if (!manifest.entryPoints.emplace(name, std::move(entry)).second)
      return fail(path + ": entry point '" + name + "' is listed twice");
  }
  for (auto &[name, raw] : parameters) {
    ManifestParameter param{raw.tensor, {raw.owner}};
    for (int64_t copy : raw.copies)
      param.devices.push_back(copy);
    llvm::sort(param.devices);
    if (param.devices.front() != raw.owner ||
        std::adjacent_find(param.devices.begin(), param.devices.end()) !=
            param.devices.end() ||
        param.devices.back() >= int64_t(devices.size()))
      return fail(path + ": parameter '" + name +
                  "': the owner must be the lowest of its devices, each once");
    manifest.parameters[name] = std::move(param);
  }
  for (const auto &[name, entry] : manifest.entryPoints)
    for (const EntryValue &result : entry.results)
      if (result.kind == EntryValue::Kind::Loss) {
        if (manifest.lossStage >= 0)
          return fail(path + ": two entry points return a loss");
        manifest.lossStage = entry.stage;
      }
  if (llvm::Error error = checkReferences(manifest))
    return fail(path + ": " + llvm::toString(std::move(error)));
  return manifest;
}

ftpipe::schedule::StageGraph ArtifactManifest::stageGraph() const {
  ftpipe::schedule::StageGraph graph;
  graph.devices = devices();
  std::map<int64_t, int64_t> senderOfTag;
  for (const ManifestStage &stage : stages) {
    graph.device.push_back(stage.device);
    const EntryPoint &forward = entryPoints.at(stage.forward);
    for (const ManifestTransfer &transfer : forward.transfers)
      if (transfer.send)
        senderOfTag[transfer.tag] = forward.stage;
  }
  graph.producers.resize(stages.size());
  for (size_t s = 0; s < stages.size(); ++s) {
    std::set<int64_t> producers;
    for (const ManifestTransfer &transfer :
         entryPoints.at(stages[s].forward).transfers) {
      auto it = senderOfTag.find(transfer.tag);
      if (!transfer.send && it != senderOfTag.end() && it->second != int64_t(s))
        producers.insert(it->second);
    }
    graph.producers[s].assign(producers.begin(), producers.end());
  }
  std::set<std::vector<int64_t>> tied;
  for (const auto &[name, param] : parameters)
    if (param.devices.size() > 1)
      tied.insert(param.devices);
  graph.tiedDevices.assign(tied.begin(), tied.end());
  return graph;
}
