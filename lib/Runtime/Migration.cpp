//===- Migration.cpp - Moving a running pipeline to another plan ----------===//
//
// Migration.h: what each device hands over (partitionState), the exchange
// over the communicator (migrateState: per peer a header of tensor sizes,
// then one safetensors image per tensor) and the checks of a next plan
// before the run starts (planMigration).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Migration.h"

#include "FTPipe/Runtime/CompiledModel.h"
#include "FTPipe/Runtime/RunSchedule.h"
#include "FTPipe/Runtime/Safetensors.h"
#include "FTPipe/Runtime/SetupCheck.h"

#include "llvm/ADT/STLExtras.h"

using namespace ftpipe;
using namespace ftpipe::runtime;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The metadata key that says whether a migrated tensor is a weight or
/// optimizer state, and its two values.
static constexpr const char *kKindKey = "ftpipe_migration";
static constexpr const char *kWeight = "weight", *kOptimizer = "optimizer";

DeviceState ftpipe::runtime::captureState(const DeviceExecutor &executor) {
  return {executor.updates(), executor.weights(), executor.optimizerState()};
}

/// The parameter an optimizer state tensor belongs to: its name up to the
/// last dot (Optimizer::saveState's "<parameter>.<slot>"; no slot name has
/// a dot).
static llvm::StringRef parameterOfState(llvm::StringRef stateName) {
  return stateName.rsplit('.').first;
}

llvm::Expected<std::map<int64_t, DeviceState>>
ftpipe::runtime::partitionState(int64_t self, ProcessPlacement from,
                                ProcessPlacement to, DeviceState current) {
  for (const auto &[name, holders] : from.parameters)
    if (!to.parameters.count(name))
      return fail("parameter '" + name + "' is not in the next plan");
  for (const auto &[name, holders] : to.parameters)
    if (!from.parameters.count(name))
      return fail("parameter '" + name + "' is not in the current plan");
  // The device whose replica process `self` runs, as messages name it.
  int64_t device = from.replicas.replicaOf(self).first;
  std::string who = from.replicas.replicated()
                        ? "process " + std::to_string(self)
                        : "device " + std::to_string(self);
  // The processes that get `name`'s value (its holders' under `to`, or its
  // owner's alone), each with the process that gives it: the destination
  // itself when it runs a replica of the old owner, else one of the old
  // owner's replicas.
  auto sources = [&](const std::string &name, bool ownerOnly) {
    int64_t owner = from.parameters.at(name).front();
    int64_t ownerReplicas = from.replicas.replicas[owner];
    std::vector<std::pair<int64_t, int64_t>> result;
    for (int64_t holder : to.parameters.at(name)) {
      for (int64_t j = 0; j < to.replicas.replicas[holder]; ++j) {
        int64_t destination = to.replicas.process(holder, j);
        int64_t source =
            from.replicas.replicaOf(destination).first == owner
                ? destination
                : from.replicas.process(owner, destination % ownerReplicas);
        result.push_back({destination, source});
      }
      if (ownerOnly)
        break;
    }
    return result;
  };
  // Copies `value` to every destination `self` gives it to, the last one
  // taking it (a device's share is not held twice for nothing).
  auto handOver = [&](const std::vector<std::pair<int64_t, int64_t>> &routes,
                      Tensor &value,
                      llvm::function_ref<TensorMap &(int64_t)> into,
                      const std::string &name) {
    std::vector<int64_t> mine;
    for (auto [destination, source] : routes)
      if (source == self)
        mine.push_back(destination);
    for (size_t i = 0; i < mine.size(); ++i)
      into(mine[i])[name] = i + 1 == mine.size() ? std::move(value) : value;
  };
  std::map<int64_t, DeviceState> out;
  for (auto &[name, value] : current.weights) {
    if (!from.parameters.count(name))
      return fail(who + " holds '" + name + "', not a parameter of the plan");
    if (from.parameters.at(name).front() != device)
      continue;
    handOver(
        sources(name, false), value,
        [&](int64_t to) -> TensorMap & { return out[to].weights; }, name);
  }
  for (auto &[name, value] : current.optimizerState) {
    llvm::StringRef param = parameterOfState(name);
    auto it = from.parameters.find(param.str());
    if (it == from.parameters.end() || it->second.front() != device)
      return fail(who + " holds optimizer state '" + name +
                  "' of a parameter it does not own");
    handOver(
        sources(param.str(), true), value,
        [&](int64_t to) -> TensorMap & { return out[to].optimizerState; },
        name);
  }
  for (auto &[destination, state] : out)
    state.updates = current.updates;
  return std::move(out);
}

/// One tensor as the bytes of a safetensors file, its kind in the metadata.
static std::string image(const std::string &name, const Tensor &tensor,
                         const char *kind) {
  TensorMap one;
  one.emplace(name, tensor);
  return serializeSafetensors(one, {{kKindKey, kind}});
}

llvm::Expected<DeviceState>
ftpipe::runtime::migrateState(Communicator &communicator, ProcessPlacement from,
                              ProcessPlacement to, DeviceState current,
                              MigrationTraffic *traffic,
                              const std::function<void()> &afterSending) {
  int64_t self = communicator.device(), devices = communicator.devices();
  if (from.replicas.processes() != devices ||
      to.replicas.processes() != devices)
    return fail("the plans run as " + llvm::Twine(from.replicas.processes()) +
                " and " + llvm::Twine(to.replicas.processes()) +
                " processes, the run has " + llvm::Twine(devices));
  int64_t updates = current.updates;
  auto parts = partitionState(self, from, to, std::move(current));
  if (!parts)
    return parts.takeError();
  MigrationTraffic counts;
  int64_t headerTag = tagOf(RuntimeTag::MigrationHeader),
          tensorTag = tagOf(RuntimeTag::MigrationTensor);
  // Every device sends every other one a header, even an empty one: each
  // receiver then knows how many tensors follow without a collective.
  for (int64_t peer = 0; peer < devices; ++peer) {
    if (peer == self)
      continue;
    std::vector<std::string> images;
    auto part = parts->find(peer);
    if (part != parts->end()) {
      for (const auto &[name, tensor] : part->second.weights)
        images.push_back(image(name, tensor, kWeight));
      for (const auto &[name, tensor] : part->second.optimizerState)
        images.push_back(image(name, tensor, kOptimizer));
      parts->erase(part);
    }
    // The count, then (when there are any) the images' sizes.
    int64_t count = images.size();
    communicator.send(peer, headerTag, 0, &count, sizeof(count));
    std::vector<int64_t> sizes;
    for (const std::string &bytes : images)
      sizes.push_back(bytes.size());
    if (count)
      communicator.send(peer, headerTag, 1, sizes.data(),
                        sizes.size() * sizeof(int64_t));
    for (size_t i = 0; i < images.size(); ++i) {
      communicator.send(peer, tensorTag, i, images[i].data(), images[i].size());
      counts.bytesSent += images[i].size();
    }
    counts.tensorsSent += images.size();
  }
  if (afterSending)
    afterSending();
  DeviceState next;
  next.updates = updates;
  if (auto kept = parts->find(self); kept != parts->end())
    next = std::move(kept->second);
  for (int64_t peer = 0; peer < devices; ++peer) {
    if (peer == self)
      continue;
    int64_t count = 0;
    communicator.recv(peer, headerTag, 0, &count, sizeof(count));
    // A parameter's value and at most a few optimizer slots each.
    if (count < 0 || count > 8 * int64_t(to.parameters.size()))
      return fail("device " + llvm::Twine(peer) + " announced " +
                  llvm::Twine(count) + " tensors");
    std::vector<int64_t> sizes(count);
    if (count)
      communicator.recv(peer, headerTag, 1, sizes.data(),
                        sizes.size() * sizeof(int64_t));
    for (int64_t i = 0; i < count; ++i) {
      if (sizes[i] < 0)
        return fail("device " + llvm::Twine(peer) + " announced a tensor of " +
                    llvm::Twine(sizes[i]) + " bytes");
      std::string bytes(sizes[i], '\0');
      communicator.recv(peer, tensorTag, i, bytes.data(), bytes.size());
      auto file = parseSafetensors(bytes, "migration");
      if (!file)
        return file.takeError();
      auto kind = file->metadata.find(kKindKey);
      if (file->tensors.size() != 1 || kind == file->metadata.end())
        return fail("device " + llvm::Twine(peer) +
                    " sent a tensor without its kind");
      TensorMap &into =
          kind->second == kWeight ? next.weights : next.optimizerState;
      into.merge(file->tensors);
      counts.bytesReceived += bytes.size();
    }
    counts.tensorsReceived += count;
  }
  if (traffic)
    *traffic = counts;
  return std::move(next);
}

/// "4 processes (2 devices, replicas 2,2)", or "N devices" unreplicated.
static std::string describeProcesses(const schedule::ReplicaLayout &layout) {
  if (!layout.replicated())
    return std::to_string(layout.devices()) + " devices";
  return std::to_string(layout.processes()) + " processes (" +
         std::to_string(layout.devices()) + " devices, replicas " +
         layout.str() + ")";
}

llvm::Expected<PlannedMigration> ftpipe::runtime::planMigration(
    const PipelineModel &current, const schedule::ReplicaLayout &replicas,
    const ExecutorConfig &config, std::unique_ptr<PipelineModel> next,
    llvm::StringRef name, int64_t atStep, bool allowOverBudget) {
  auto refuse = [&](const llvm::Twine &why) {
    return fail("--migrate-to " + name + ": " + why);
  };
  int64_t steps = config.schedule.steps;
  if (atStep < 1 || atStep >= steps)
    return fail("--migrate-at " + llvm::Twine(atStep) +
                ": the run migrates after a step and before its last, so "
                "from 1 to " +
                llvm::Twine(steps - 1) + " with --steps " + llvm::Twine(steps));
  auto *nextCompiled = dynamic_cast<const CompiledModel *>(next.get());
  schedule::ReplicaLayout nextReplicas =
      nextCompiled && nextCompiled->manifest().replicas
          ? *nextCompiled->manifest().replicas
          : schedule::ReplicaLayout::none(next->stageGraph().devices);
  if (nextReplicas.processes() != replicas.processes()) {
    if (!nextReplicas.replicated() && !replicas.replicated())
      return refuse("the plan has " + llvm::Twine(next->stageGraph().devices) +
                    " devices, the run " +
                    llvm::Twine(current.stageGraph().devices));
    return refuse("the plan runs as " + describeProcesses(nextReplicas) +
                  ", the run as " + describeProcesses(replicas));
  }
  schedule::Kind kind = config.schedule.kind;
  if ((nextReplicas.replicated() || replicas.replicated()) &&
      kind != schedule::Kind::GPipe && kind != schedule::Kind::OneFOneB)
    return refuse("a migration to or from replicas runs with the gpipe and "
                  "1f1b schedules only, not " +
                  schedule::nameOf(kind) + " yet");
  if (llvm::Error error =
          validateWeights(current.parameters(), next->randomWeights(0)))
    return refuse("not a plan of the running model: " +
                  llvm::toString(std::move(error)));
  auto sameInput = [](const DataInputInfo &a, const DataInputInfo &b) {
    return a.name == b.name && a.type == b.type && a.shape == b.shape;
  };
  bool sameInputs =
      next->dataInputs().size() == current.dataInputs().size() &&
      llvm::all_of(next->dataInputs(), [&](const DataInputInfo &input) {
        return llvm::any_of(
            current.dataInputs(),
            [&](const DataInputInfo &mine) { return sameInput(mine, input); });
      });
  if (!sameInputs || next->microBatchSize() != current.microBatchSize())
    return refuse("the plan reads other data inputs or micro-batches than "
                  "the run");
  PlannedMigration plan;
  plan.directory = name.str();
  plan.atStep = atStep;
  schedule::ScheduleConfig rest = config.schedule;
  rest.steps = steps - atStep;
  rest.split.clear();
  // 1F1B's lists made for the next plan's own layout.
  rest.replicas.clear();
  if (nextReplicas.replicated())
    rest.replicas = nextReplicas.replicas;
  // Compiled plans record their memory and which stages split.
  if (nextCompiled) {
    const ArtifactManifest &manifest = nextCompiled->manifest();
    schedule::TrainingSetup setup;
    setup.schedule = config.schedule.kind;
    setup.microBatches = config.schedule.microBatches;
    setup.optimizer = config.optimizer.kind;
    setup.weightVersions = config.stashing;
    if (!allowOverBudget)
      if (llvm::Error error = checkRunMemory(manifest, setup, nextReplicas))
        return refuse(llvm::toString(std::move(error)));
    for (const schedule::DeviceMemory &memory :
         plannedMemory(manifest, setup, nextReplicas))
      plan.planBytes.push_back(int64_t(memory.totalBytes()));
    if (schedule::isZeroBubble(rest.kind))
      rest.split = splitStages(manifest);
  }
  auto lists = runSchedule(*next, rest);
  if (!lists)
    return refuse(llvm::toString(lists.takeError()));
  if (auto checked = schedule::dryRun(next->stageGraph(), rest, *lists);
      !checked)
    return refuse(llvm::toString(checked.takeError()));
  plan.config = config;
  plan.config.schedule.split = rest.split;
  plan.config.schedule.replicas = rest.replicas;
  // The parameters the next plan freezes (its manifest) join those the run
  // froze before it: neither is ever trained again.
  if (nextCompiled)
    for (const auto &[paramName, parameter] :
         nextCompiled->manifest().parameters)
      if (parameter.frozen)
        plan.config.frozen.insert(paramName);
  shiftSchedule(*lists, atStep, rest.microBatches);
  // Each process's list: micro-batch m on replica m mod r, counted from the
  // start of the run as the routing counts it.
  plan.rest = schedule::replicateSchedule(*lists, nextReplicas);
  if (nextReplicas.replicated())
    if (llvm::Error error = schedule::dryRunReplicated(next->stageGraph(),
                                                       nextReplicas, plan.rest))
      return refuse(llvm::toString(std::move(error)));
  plan.replicas = std::move(nextReplicas);
  plan.model = std::move(next);
  return std::move(plan);
}

llvm::Error
ftpipe::runtime::checkFrozenAtMigration(const PlannedMigration &migration,
                                        const std::set<std::string> &frozen) {
  for (const std::string &name : migration.config.frozen)
    if (!frozen.count(name))
      return fail("--migrate-to " + migration.directory +
                  ": the plan freezes '" + name +
                  "', which the run still trains after step " +
                  llvm::Twine(migration.atStep) +
                  " (its backward computes no gradient for it)");
  return llvm::Error::success();
}

llvm::Expected<PlannedMigration> ftpipe::runtime::planMigration(
    const PipelineModel &current, const schedule::ReplicaLayout &replicas,
    const ExecutorConfig &config, llvm::StringRef directory, int64_t atStep,
    bool allowOverBudget) {
  auto opened = CompiledModel::open(directory);
  if (!opened)
    return fail("--migrate-to " + directory + ": " +
                llvm::toString(opened.takeError()));
  return planMigration(current, replicas, config, std::move(*opened), directory,
                       atStep, allowOverBudget);
}
