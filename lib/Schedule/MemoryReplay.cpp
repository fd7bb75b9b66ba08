//===- MemoryReplay.cpp - A device's memory over its action list ----------===//
//
// replayMemory walks one device's list with byte counts instead of tensors,
// following the executor's rules for what lives between actions (its
// lifetimes, not each term's maximum); replayedMemory feeds it what a plan
// fixes, over the lists the plan's schedule kind generates.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/MemoryReplay.h"
#include "FTPipe/Schedule/Replicas.h"
#include "FTPipe/Schedule/ZeroBubble.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <optional>
#include <set>

using namespace ftpipe::schedule;

std::optional<ReplayPeak>
ftpipe::schedule::replayMemory(llvm::ArrayRef<Action> actions,
                               const ReplayDevice &device) {
  if (actions.empty())
    return std::nullopt;
  int64_t version = device.firstVersion;
  int64_t microBatches = std::max<int64_t>(device.microBatches, 1);
  bool stateAllocated = device.stateAllocated;
  // Steps whose gradient set is open; the version each micro-batch in
  // flight (F ran, B or I did not) read; versions kept as copies.
  std::set<int64_t> openSteps;
  std::map<std::pair<int64_t, int64_t>, int64_t> inFlight;
  std::set<int64_t> stashed;
  ReplayHeld held;
  held.weights = device.weights;

  ReplayPeak peak;
  peak.bytes = -1;
  auto consider = [&](size_t index, int64_t running, int64_t messages) {
    held.gradients = int64_t(openSteps.size()) * device.trained;
    held.optimizer = stateAllocated ? device.optimizer : 0;
    held.stash = int64_t(stashed.size()) * device.trained;
    int64_t total = held.total() + device.resident + running + messages;
    if (total > peak.bytes) {
      peak.bytes = total;
      peak.action = index;
      peak.held = held;
      peak.running = running;
      peak.messages = messages;
    }
  };
  auto stageOf = [&](const Action &action) -> const ReplayStage & {
    static const ReplayStage none;
    auto it = device.stages.find(action.stage);
    return it == device.stages.end() ? none : it->second;
  };
  // B or I of a micro-batch: its kept bytes go, and with them the copy of
  // the version it read when it was the last reader.
  auto release = [&](const Action &action, const ReplayStage &stage) {
    auto it = inFlight.find({action.stage, action.index});
    if (it == inFlight.end())
      return;
    int64_t used = it->second;
    inFlight.erase(it);
    held.kept -= stage.kept;
    --held.keptMicroBatches;
    if (used != version && llvm::none_of(inFlight, [&](const auto &entry) {
          return entry.second == used;
        }))
      stashed.erase(used);
  };

  for (auto [index, action] : llvm::enumerate(actions)) {
    const ReplayStage &stage = stageOf(action);
    switch (action.kind) {
    case ActionKind::Forward:
      consider(index, stage.forward, stage.forwardMessages);
      inFlight[{action.stage, action.index}] = version;
      held.kept += stage.kept;
      ++held.keptMicroBatches;
      break;
    case ActionKind::Backward:
      openSteps.insert(action.index / microBatches);
      consider(index, stage.backward, stage.backwardMessages);
      release(action, stage);
      break;
    case ActionKind::InputBackward:
      consider(index, stage.input, stage.backwardMessages);
      release(action, stage);
      held.weightBuffers += stage.weightBuffer;
      ++held.weightBufferMicroBatches;
      break;
    case ActionKind::WeightBackward:
      openSteps.insert(action.index / microBatches);
      consider(index, stage.weight, 0);
      held.weightBuffers -= stage.weightBuffer;
      --held.weightBufferMicroBatches;
      break;
    case ActionKind::Update:
      if (device.versions != WeightVersions::None &&
          llvm::any_of(inFlight, [&](const auto &entry) {
            return entry.second == version;
          }))
        stashed.insert(version);
      openSteps.insert(action.index);
      stateAllocated = true;
      consider(index, device.update, 0);
      openSteps.erase(action.index);
      ++version;
      break;
    }
  }
  return peak;
}

std::vector<DeviceMemory>
ftpipe::schedule::replayedMemory(const StageGraph &graph,
                                 llvm::ArrayRef<DeviceMemoryInputs> inputs,
                                 const TrainingSetup &setup,
                                 llvm::ArrayRef<int64_t> replicas) {
  std::vector<DeviceMemory> bound;
  for (const DeviceMemoryInputs &device : inputs)
    bound.push_back(runtimeMemory(device, setup));
  if (setup.schedule == Kind::ZeroBubbleAuto ||
      int64_t(inputs.size()) != graph.devices)
    return bound;
  if (llvm::Error error = graph.validate()) {
    llvm::consumeError(std::move(error));
    return bound;
  }

  // The async stream repeats once every micro-batch in flight was started
  // in a step that began after the first update.
  std::vector<int64_t> heights = graph.heights();
  int64_t highest = heights.empty() ? 0 : *llvm::max_element(heights);
  int64_t m = std::max<int64_t>(setup.microBatches, 1);
  ScheduleConfig config;
  config.kind = setup.schedule;
  config.microBatches = m;
  config.steps = setup.schedule == Kind::Async ? 3 + (highest + m) / m : 2;
  ReplicaLayout layout = ReplicaLayout::none(graph.devices);
  if (llvm::any_of(replicas, [](int64_t r) { return r > 1; })) {
    if (int64_t(replicas.size()) != graph.devices)
      return bound;
    layout.replicas.assign(replicas.begin(), replicas.end());
    config.replicas = layout.replicas;
  }
  // zb-h1 within 1F1B's peak, as ftpipe-run builds its lists.
  std::optional<StageMemory> stageBytes;
  if (setup.schedule == Kind::ZeroBubbleH1) {
    llvm::Expected<ZeroBubbleLimits> limits =
        zeroBubbleLimits(graph, inputs, setup);
    if (!limits) {
      llvm::consumeError(limits.takeError());
      return bound;
    }
    stageBytes = std::move(limits->memory);
  }
  llvm::Expected<Schedule> plan =
      generate(graph, config, stageBytes ? &*stageBytes : nullptr);
  if (!plan) {
    llvm::consumeError(plan.takeError());
    return bound;
  }
  Schedule lists = replicateSchedule(*plan, layout);

  std::vector<DeviceMemory> replayed;
  std::vector<size_t> next(inputs.size(), 0);
  std::vector<ReplayDevice> devices(inputs.size());
  for (int64_t s = 0; s < graph.stages(); ++s) {
    int64_t d = graph.device[s];
    if (next[d] >= inputs[d].stages.size())
      return bound;
    const DeviceMemoryInputs::Stage &stage = inputs[d].stages[next[d]++];
    ReplayStage &replay = devices[d].stages[s];
    replay.kept = int64_t(stage.keptBytesPerMicroBatch);
    replay.weightBuffer = int64_t(stage.weightBufferBytesPerMicroBatch);
    // A task's working set holds its own micro-batch's kept bytes (F) or W
    // buffer (I) while the generated code's results are alive.
    replay.forward = int64_t(stage.recomputePeakBytes) + replay.kept;
    replay.backward = int64_t(stage.recomputePeakBytes);
    replay.input = int64_t(stage.recomputePeakBytes) + replay.weightBuffer;
    replay.weight = int64_t(stage.weightWorkingBytes);
  }
  for (auto [d, device] : llvm::enumerate(inputs)) {
    DeviceMemory memory = bound[d];
    ReplayDevice &replay = devices[d];
    replay.trained = int64_t(memory.weightBytes - device.frozenParamBytes);
    replay.weights = int64_t(memory.weightBytes);
    replay.optimizer = int64_t(memory.optimizerBytes);
    replay.update = int64_t(device.updateWorkingBytes);
    if (setup.optimizer == Optimizer::Adafactor)
      replay.update += 2 * int64_t(device.largestParamBytes);
    replay.microBatches = m;
    replay.versions = setup.weightVersions;
    // The busiest of the device's replicas.
    std::optional<ReplayPeak> peak;
    for (int64_t j = 0; j < layout.replicas[d]; ++j) {
      std::optional<ReplayPeak> own =
          replayMemory(lists.devices[layout.process(d, j)], replay);
      if (!own)
        return bound;
      if (!peak || own->bytes > peak->bytes)
        peak = own;
    }
    if (!peak || next[d] != device.stages.size())
      return bound;
    memory.gradientBytes = uint64_t(peak->held.gradients);
    memory.optimizerBytes = uint64_t(peak->held.optimizer);
    memory.stashBytes = uint64_t(peak->held.stash);
    memory.activationBytes =
        uint64_t(peak->held.kept + peak->held.weightBuffers + peak->running);
    replayed.push_back(memory);
  }
  return replayed;
}
