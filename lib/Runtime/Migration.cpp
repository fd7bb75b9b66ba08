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
ftpipe::runtime::partitionState(int64_t self, const ParameterPlacement &from,
                                const ParameterPlacement &to,
                                DeviceState current) {
  for (const auto &[name, holders] : from)
    if (!to.count(name))
      return fail("parameter '" + name + "' is not in the next plan");
  for (const auto &[name, holders] : to)
    if (!from.count(name))
      return fail("parameter '" + name + "' is not in the current plan");
  auto ownedNow = [&](llvm::StringRef name) {
    auto it = from.find(name.str());
    return it != from.end() && it->second.front() == self;
  };
  std::map<int64_t, DeviceState> out;
  for (auto &[name, value] : current.weights) {
    if (!from.count(name))
      return fail("device " + llvm::Twine(self) + " holds '" + name +
                  "', not a parameter of the plan");
    if (!ownedNow(name))
      continue;
    const std::vector<int64_t> &holders = to.at(name);
    for (size_t h = 0; h < holders.size(); ++h)
      out[holders[h]].weights[name] =
          h + 1 == holders.size() ? std::move(value) : value;
  }
  for (auto &[name, value] : current.optimizerState) {
    llvm::StringRef param = parameterOfState(name);
    if (!ownedNow(param))
      return fail("device " + llvm::Twine(self) + " holds optimizer state '" +
                  name + "' of a parameter it does not own");
    out[to.at(param.str()).front()].optimizerState[name] = std::move(value);
  }
  for (auto &[device, state] : out)
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

llvm::Expected<DeviceState> ftpipe::runtime::migrateState(
    Communicator &communicator, const ParameterPlacement &from,
    const ParameterPlacement &to, DeviceState current,
    MigrationTraffic *traffic, const std::function<void()> &afterSending) {
  int64_t self = communicator.device(), devices = communicator.devices();
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
    if (count < 0 || count > 8 * int64_t(to.size()))
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

llvm::Expected<PlannedMigration> ftpipe::runtime::planMigration(
    const PipelineModel &current, const ExecutorConfig &config,
    std::unique_ptr<PipelineModel> next, llvm::StringRef name, int64_t atStep,
    bool allowOverBudget) {
  auto refuse = [&](const llvm::Twine &why) {
    return fail("--migrate-to " + name + ": " + why);
  };
  int64_t steps = config.schedule.steps;
  if (atStep < 1 || atStep >= steps)
    return fail("--migrate-at " + llvm::Twine(atStep) +
                ": the run migrates after a step and before its last, so "
                "from 1 to " +
                llvm::Twine(steps - 1) + " with --steps " + llvm::Twine(steps));
  if (next->stageGraph().devices != current.stageGraph().devices)
    return refuse("the plan has " + llvm::Twine(next->stageGraph().devices) +
                  " devices, the run " +
                  llvm::Twine(current.stageGraph().devices));
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
  // The next plan's own layout: none (a run with replicas is refused above).
  rest.replicas.clear();
  // Compiled plans record their memory and which stages split.
  if (auto *compiled = dynamic_cast<const CompiledModel *>(next.get())) {
    schedule::TrainingSetup setup;
    setup.schedule = config.schedule.kind;
    setup.microBatches = config.schedule.microBatches;
    setup.optimizer = config.optimizer.kind;
    setup.weightVersions = config.stashing;
    if (!allowOverBudget)
      if (llvm::Error error = checkRunMemory(compiled->manifest(), setup))
        return refuse(llvm::toString(std::move(error)));
    for (const schedule::DeviceMemory &memory :
         plannedMemory(compiled->manifest(), setup))
      plan.planBytes.push_back(int64_t(memory.totalBytes()));
    if (schedule::isZeroBubble(rest.kind))
      rest.split = splitStages(compiled->manifest());
  }
  auto lists =
      generateRunSchedule(next->stageGraph(), rest, next->plannedCosts());
  if (!lists)
    return refuse(llvm::toString(lists.takeError()));
  if (auto checked = schedule::dryRun(next->stageGraph(), rest, *lists);
      !checked)
    return refuse(llvm::toString(checked.takeError()));
  plan.rest = std::move(*lists);
  plan.config = config;
  plan.config.schedule.split = rest.split;
  // The parameters the next plan freezes (its manifest) join those the run
  // froze before it: neither is ever trained again.
  if (auto *compiled = dynamic_cast<const CompiledModel *>(next.get()))
    for (const auto &[paramName, parameter] : compiled->manifest().parameters)
      if (parameter.frozen)
        plan.config.frozen.insert(paramName);
  shiftSchedule(plan.rest, atStep, rest.microBatches);
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
    const PipelineModel &current, const ExecutorConfig &config,
    llvm::StringRef directory, int64_t atStep, bool allowOverBudget) {
  auto opened = CompiledModel::open(directory);
  if (!opened)
    return fail("--migrate-to " + directory + ": " +
                llvm::toString(opened.takeError()));
  return planMigration(current, config, std::move(*opened), directory, atStep,
                       allowOverBudget);
}
