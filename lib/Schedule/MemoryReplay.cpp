//===- MemoryReplay.cpp - A device's memory over its action list ----------===//
//
// replayMemory walks one device's list with byte counts instead of tensors,
// following the executor's rules for what lives between actions (its
// lifetimes, not each term's maximum); sendsHeldUntil walks all devices'
// lists together for how long each send's buffer may live; replayedMemory
// feeds them what a plan fixes, over the lists the plan's schedule kind
// generates.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/MemoryReplay.h"
#include "FTPipe/Schedule/Replicas.h"
#include "FTPipe/Schedule/ZeroBubble.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

using namespace ftpipe::schedule;

namespace {
/// What matches a message's sender and receiver: whether it is a backward's
/// (B or I), the stage and the micro-batch.
using MessageKey = std::tuple<bool, int64_t, int64_t>;

std::optional<MessageKey> messageKey(const Action &action) {
  switch (action.kind) {
  case ActionKind::Forward:
    return MessageKey{false, action.stage, action.index};
  case ActionKind::Backward:
  case ActionKind::InputBackward:
    return MessageKey{true, action.stage, action.index};
  case ActionKind::WeightBackward:
  case ActionKind::Update:
    return std::nullopt;
  }
  llvm_unreachable("unknown action kind");
}

/// An action's index in its process's list.
struct Site {
  size_t process = 0, index = 0;
};
} // namespace

std::vector<std::vector<size_t>>
ftpipe::schedule::sendsHeldUntil(const Schedule &lists,
                                 const StageGraph &graph) {
  size_t processes = lists.devices.size();
  std::vector<std::vector<int64_t>> consumers = graph.consumers();
  // The keys of the actions whose messages `action` receives (`senders`)
  // or that receive its messages: an F's come from its producers' F and go
  // to its consumers' F, a B's or I's the other way.
  auto peers = [&](const Action &action, bool senders) {
    std::vector<MessageKey> keys;
    std::optional<MessageKey> key = messageKey(action);
    if (!key)
      return keys;
    auto [backward, stage, mb] = *key;
    if (stage < 0 || stage >= graph.stages())
      return keys;
    for (int64_t peer :
         backward != senders ? graph.producers[stage] : consumers[stage])
      keys.emplace_back(backward, peer, mb);
    return keys;
  };
  std::map<MessageKey, Site> sites;
  for (auto [p, list] : llvm::enumerate(lists.devices))
    for (auto [i, action] : llvm::enumerate(list))
      if (std::optional<MessageKey> key = messageKey(action))
        sites.emplace(*key, Site{p, i});

  // clocks[p][i][q]: how many of process q's first actions had received
  // their messages, as far as process p knows once action i's arrived.
  std::vector<std::vector<std::vector<int64_t>>> clocks(processes);
  std::vector<size_t> next(processes, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (auto [p, list] : llvm::enumerate(lists.devices)) {
      for (size_t i = next[p]; i < list.size(); i = ++next[p]) {
        std::vector<int64_t> clock =
            i ? clocks[p][i - 1] : std::vector<int64_t>(processes, 0);
        bool ready = true;
        for (const MessageKey &from : peers(list[i], /*senders=*/true)) {
          auto site = sites.find(from);
          // A sender outside the lists ran before them.
          if (site == sites.end())
            continue;
          auto [q, j] = site->second;
          if (j >= next[q]) {
            ready = false;
            break;
          }
          for (size_t r = 0; r < processes; ++r)
            clock[r] = std::max(clock[r], clocks[q][j][r]);
        }
        if (!ready)
          break;
        clock[p] = int64_t(i) + 1;
        clocks[p].push_back(std::move(clock));
        progress = true;
      }
    }
  }
  bool ran = llvm::all_of(llvm::enumerate(lists.devices), [&](auto entry) {
    return next[entry.index()] == entry.value().size();
  });

  std::vector<std::vector<size_t>> result(processes);
  for (auto [process, own] : llvm::enumerate(lists.devices)) {
    size_t n = own.size();
    std::vector<size_t> &until = result[process];
    until.resize(n);
    for (size_t a = 0; a < n; ++a) {
      until[a] = a + 1;
      std::vector<MessageKey> to = peers(own[a], /*senders=*/false);
      if (to.empty())
        continue;
      until[a] = n;
      std::vector<Site> receivers;
      for (const MessageKey &key : to)
        if (auto site = sites.find(key); site != sites.end())
          receivers.push_back(site->second);
      if (!ran || receivers.size() != to.size())
        continue;
      // What the process knows only grows along its list: the first action
      // after whose receives every receiver had received.
      auto known = [&](size_t k) {
        return llvm::all_of(receivers, [&](const Site &site) {
          return clocks[process][k][site.process] > int64_t(site.index);
        });
      };
      size_t low = a, high = n;
      while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (known(mid))
          high = mid;
        else
          low = mid + 1;
      }
      // What a process knows grows only at its receives, after which it
      // frees what they say was received.
      until[a] = low;
    }
  }
  return result;
}

/// What a task of `kind` adds while it runs (none for an update).
static int64_t taskBytes(const ReplayStage &stage, ActionKind kind) {
  switch (kind) {
  case ActionKind::Forward:
    return stage.forward;
  case ActionKind::Backward:
    return stage.backward;
  case ActionKind::InputBackward:
    return stage.input;
  case ActionKind::WeightBackward:
    return stage.weight;
  case ActionKind::Update:
    return 0;
  }
  llvm_unreachable("unknown action kind");
}

std::optional<ReplayPeak>
ftpipe::schedule::replayMemory(llvm::ArrayRef<Action> actions,
                               llvm::ArrayRef<size_t> sendsHeldUntil,
                               const ReplayDevice &device) {
  if (actions.empty() || sendsHeldUntil.size() != actions.size())
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
  // Earlier actions' sends still held: by the index of the first action
  // that no longer holds them, their bytes.
  std::multimap<size_t, int64_t> sent;
  int64_t pending = 0;
  auto hold = [&](size_t index, int64_t bytes) {
    if (bytes > 0 && sendsHeldUntil[index] > index + 1) {
      sent.emplace(sendsHeldUntil[index], bytes);
      pending += bytes;
    }
  };

  ReplayPeak peak;
  peak.bytes = -1;
  // What the last task left in the generated code's cache: the runtime
  // bounds it by what the replay counted for that task (HostAllocator.h).
  int64_t carried = 0;
  // Per action: its total, and of it the generated code's bytes.
  std::vector<int64_t> totals(actions.size()), generated(actions.size());
  auto consider = [&](size_t index, int64_t running, int64_t messages,
                      int64_t generatedBytes) {
    held.gradients = int64_t(openSteps.size()) * device.trained;
    held.optimizer = stateAllocated ? device.optimizer : 0;
    held.stash = int64_t(stashed.size()) * device.trained;
    int64_t total = held.total() + running + messages + pending;
    totals[index] = total;
    generated[index] = generatedBytes;
    if (total > peak.bytes) {
      peak.bytes = total;
      peak.action = index;
      peak.held = held;
      peak.running = running;
      peak.messages = messages;
      peak.pending = pending;
      peak.carried = 0;
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
    while (!sent.empty() && sent.begin()->first <= index) {
      pending -= sent.begin()->second;
      sent.erase(sent.begin());
    }
    const ReplayStage &stage = stageOf(action);
    int64_t keptBefore = held.kept + held.weightBuffers;
    int64_t running = taskBytes(stage, action.kind);
    int64_t generatedBytes = std::max<int64_t>(running - stage.transient, 0);
    switch (action.kind) {
    case ActionKind::Forward:
      consider(index, running, stage.forwardMessages + stage.forwardReceive,
               generatedBytes);
      hold(index, stage.forwardMessages);
      inFlight[{action.stage, action.index}] = version;
      held.kept += stage.kept;
      ++held.keptMicroBatches;
      break;
    case ActionKind::Backward:
      openSteps.insert(action.index / microBatches);
      consider(index, running, stage.backwardMessages + stage.backwardReceive,
               generatedBytes);
      hold(index, stage.backwardMessages);
      release(action, stage);
      break;
    case ActionKind::InputBackward:
      consider(index, running, stage.backwardMessages + stage.backwardReceive,
               generatedBytes);
      hold(index, stage.backwardMessages);
      release(action, stage);
      held.weightBuffers += stage.weightBuffer;
      ++held.weightBufferMicroBatches;
      break;
    case ActionKind::WeightBackward:
      openSteps.insert(action.index / microBatches);
      consider(index, running, 0, generatedBytes);
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
      consider(index, device.update + carried, 0, carried);
      if (peak.action == index)
        peak.carried = carried;
      openSteps.erase(action.index);
      ++version;
      continue;
    }
    carried = running - stage.transient;
    if (stage.adopted)
      carried += keptBefore - held.kept - held.weightBuffers;
    carried = std::max<int64_t>(carried, 0);
  }
  for (auto [total, bytes] : llvm::zip(totals, generated))
    peak.cacheBounds.push_back(bytes + peak.bytes - total);
  return peak;
}

std::vector<DeviceMemory> ftpipe::schedule::replayedMemory(
    const StageGraph &graph, llvm::ArrayRef<DeviceMemoryInputs> inputs,
    const TrainingSetup &setup, llvm::ArrayRef<int64_t> replicas) {
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
    // The messages, within the kept bytes and the working set, are counted
    // apart: from the task that sends them for as long as they may wait.
    replay.forwardMessages = int64_t(stage.forwardMessageBytes);
    replay.backwardMessages = int64_t(stage.backwardMessageBytes);
    replay.kept =
        int64_t(stage.keptBytesPerMicroBatch) - replay.forwardMessages;
    replay.weightBuffer = int64_t(stage.weightBufferBytesPerMicroBatch);
    // A task's working set holds its own micro-batch's kept bytes (F) or W
    // buffer (I) while the generated code's results are alive.
    int64_t working =
        int64_t(stage.recomputePeakBytes) - replay.backwardMessages;
    replay.forward = stage.forwardWorkingBytes
                         ? int64_t(stage.forwardWorkingBytes)
                         : working + replay.kept;
    replay.backward = working;
    replay.input = working + replay.weightBuffer;
    replay.weight = int64_t(stage.weightWorkingBytes);
    // Compiled for the CPU, whose runtime adopts them.
    replay.adopted = true;
  }
  std::vector<std::vector<size_t>> held = sendsHeldUntil(lists, graph);
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
      size_t process = size_t(layout.process(d, j));
      std::optional<ReplayPeak> own =
          replayMemory(lists.devices[process], held[process], replay);
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
        uint64_t(peak->held.kept + peak->held.weightBuffers + peak->running +
                 peak->messages + peak->pending);
    replayed.push_back(memory);
  }
  return replayed;
}
