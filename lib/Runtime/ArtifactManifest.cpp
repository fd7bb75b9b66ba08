//===- ArtifactManifest.cpp - Reading and checking manifest.json ----------===//
//
// The file is read with the schema's fromJSON (ManifestSchema.h), so a
// missing or mistyped field is reported with its path in the file; the
// checks here are about references between the parts, and the view is
// indexed by device, stage and name.
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
    if (stage.entryOf(entry) != name)
      return fail(where(entry) + " is not the " + entryPointKind(entry).str() +
                  " that stage " + llvm::Twine(entry.stage) + " lists");
    // A frozen parameter is never updated: nothing may compute its gradient.
    for (const EntryValue &value : entry.results) {
      auto param = manifest.parameters.find(value.name);
      if (value.kind == EntryValue::Kind::Grad &&
          param != manifest.parameters.end() && param->second.frozen)
        return fail(where(entry) + " returns the gradient of '" + value.name +
                    "', which is frozen");
    }
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
          value.kind != EntryValue::Kind::Saved &&
          value.kind != EntryValue::Kind::WeightSaved)
        return fail(where(entry) + " has an argument of a result's kind");
    }
    for (const ManifestTransfer &transfer : entry.transfers) {
      if (transfer.peer < 0 || transfer.peer >= devices)
        return fail(where(entry) + ": a transfer with device " +
                    llvm::Twine(transfer.peer) + ", which does not exist");
      // A split backward's input part repeats the whole backward's sends.
      if (transfer.send && entry.part != EntryPoint::Part::Input &&
          !tags.insert(transfer.tag).second)
        return fail(where(entry) + ": tag " + llvm::Twine(transfer.tag) +
                    " is sent twice");
    }
  }
  for (int64_t s = 0; s < stages; ++s) {
    const ManifestStage &stage = manifest.stages[s];
    if (stage.backwardInput.empty() != stage.backwardWeight.empty())
      return fail("stage " + llvm::Twine(s) +
                  " lists only one part of a split backward");
    for (const std::string *name :
         {&stage.forward, &stage.backward, &stage.backwardInput,
          &stage.backwardWeight})
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

  ManifestFile file;
  json::Path::Root root("manifest");
  if (!fromJSON(*parsed, file, root))
    return fail(path + ": " + llvm::toString(root.getError()));

  ArtifactManifest manifest;
  manifest.directory = directory.str();
  manifest.target = file.target;
  manifest.stageOrder = file.stageOrder;
  manifest.inputs = std::move(file.inputs);
  manifest.training = file.training;
  manifest.replicas = std::move(file.replicas);
  manifest.compile = std::move(file.compile);
  const std::vector<ManifestDevice> &devices = file.devices;
  const std::vector<ManifestStage> &stages = file.stages;
  std::vector<ManifestDeviceMemory> &deviceMemory = file.deviceMemory;
  manifest.artifacts.resize(devices.size());
  for (const ManifestDevice &device : devices) {
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
  for (const ManifestStage &stage : stages) {
    if (stage.id < 0 || stage.id >= int64_t(stages.size()) || seen[stage.id])
      return fail(path + ": stage ids are not 0.." +
                  llvm::Twine(stages.size() - 1) + ", each once");
    if (stage.device < 0 || stage.device >= int64_t(devices.size()))
      return fail(path + ": stage " + llvm::Twine(stage.id) + " is on device " +
                  llvm::Twine(stage.device) + ", which does not exist");
    seen[stage.id] = true;
    manifest.stages[stage.id] = stage;
  }
  if (!deviceMemory.empty()) {
    manifest.deviceMemory.resize(devices.size());
    std::vector<bool> counted(devices.size());
    for (ManifestDeviceMemory &memory : deviceMemory) {
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
  for (EntryPoint &entry : file.entryPoints) {
    std::string name = entry.name;
    if (!manifest.entryPoints.emplace(name, std::move(entry)).second)
      return fail(path + ": entry point '" + name + "' is listed twice");
  }
  for (auto &[name, param] : file.parameters) {
    int64_t owner = param.devices.front();
    llvm::sort(param.devices);
    if (param.devices.front() != owner ||
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
  if (file.loss) {
    auto entry = manifest.entryPoints.find(file.loss->entry);
    if (entry == manifest.entryPoints.end() ||
        entry->second.device != file.loss->device ||
        entry->second.stage != file.loss->stage || file.loss->result < 0 ||
        file.loss->result >= int64_t(entry->second.results.size()) ||
        entry->second.results[file.loss->result].kind != EntryValue::Kind::Loss)
      return fail(path + ": 'loss' names entry point '" + file.loss->entry +
                  "' result " + llvm::Twine(file.loss->result) + " on device " +
                  llvm::Twine(file.loss->device) + ", stage " +
                  llvm::Twine(file.loss->stage) +
                  ", which is not a loss there");
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
