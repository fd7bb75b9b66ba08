//===- MemoryPrediction.cpp - A device's memory from its action list -----===//
//
// DeviceExecutor::predictMemory: replays the device's actions with byte
// counts instead of tensors, following the executor's own rules (Executor.cpp)
// for what lives between actions, so a runtime that starts keeping a buffer
// the rules do not name shows up as a measured peak above the prediction
// (test/Runtime/memory-as-predicted.test).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Executor.h"

#include "llvm/ADT/STLExtras.h"

#include <set>

using namespace ftpipe::runtime;
using ftpipe::schedule::Action;
using ftpipe::schedule::ActionKind;

static int64_t bytesOf(const ParameterInfo &param) {
  int64_t count = 1;
  for (int64_t size : param.shape)
    count *= size;
  return count * static_cast<int64_t>(dtypeBytes(param.type));
}

std::optional<MemoryPrediction>
DeviceExecutor::predictMemory(llvm::ArrayRef<Action> actions) const {
  std::map<int64_t, StageMemory> needs;
  int64_t generated = 0;
  for (StageProgram *stage : stages) {
    std::optional<StageMemory> memory = stage->memory();
    if (!memory)
      return std::nullopt;
    needs[stage->stage()] = *memory;
    generated = std::max({generated, memory->forwardPeakBytes,
                          memory->backwardPeakBytes, memory->inputPeakBytes,
                          memory->weightPeakBytes});
  }

  // Frozen parameters are stored, but have no gradient sums, optimizer
  // state or stashed versions.
  int64_t weightBytes = 0, trainedBytes = 0, stateBytes = 0, updateScratch = 0;
  for (const ParameterInfo &param : params) {
    int64_t bytes = bytesOf(param);
    weightBytes += bytes;
    if (isFrozen(param.name))
      continue;
    trainedBytes += bytes;
    if (!owns(param.name))
      continue;
    stateBytes += optimizer.stateBytes(param.shape);
    // Adafactor's update of one parameter works in doubles.
    if (config.optimizer.kind == schedule::Optimizer::Adafactor)
      updateScratch = std::max(updateScratch, 2 * bytes);
    // The owner of a tied parameter receives each copy's gradient.
    auto holders = placement.find(param.name);
    if (holders != placement.end() && holders->second.size() > 1)
      updateScratch = std::max(updateScratch, bytes);
  }

  int64_t version = this->version, sumSets = 0, stashCount = 0;
  bool stateAllocated = optimizer.stateBytes() > 0;
  std::set<int64_t> stepsWithSums;
  std::map<std::pair<int64_t, int64_t>, int64_t> inFlight;
  std::set<int64_t> stashedVersions;
  int64_t saved = 0;
  // Split backwards: the W buffers of the micro-batches whose I ran and
  // whose W did not.
  int64_t weightSaved = 0, waitingWeight = 0;

  MemoryPrediction best;
  best.peakBytes = -1;
  auto held = [&]() {
    HeldBytes h;
    h.weights = weightBytes;
    h.gradients = sumSets * trainedBytes;
    h.optimizer = stateAllocated ? stateBytes : 0;
    h.stash = stashCount * trainedBytes;
    h.saved = saved;
    h.savedMicroBatches = static_cast<int64_t>(inFlight.size());
    h.weightSaved = weightSaved;
    h.weightSavedMicroBatches = waitingWeight;
    return h;
  };
  // An action's messages are charged while it runs: a receiver takes them
  // as soon as it gets to them, and MPI completes small sends at once.
  auto consider = [&](const Action &action, int64_t transient,
                      int64_t message) {
    HeldBytes h = held();
    int64_t total = h.total() + transient + message + generated;
    if (total > best.peakBytes) {
      best.peakBytes = total;
      best.peakAction = action.str();
      best.held = h;
      best.generatedBytes = generated;
      best.messageBytes = message;
      best.transientBytes = transient;
    }
  };

  for (const Action &action : actions) {
    switch (action.kind) {
    case ActionKind::InputBackward: {
      // The W buffers are copied out while the generated code's results
      // are alive; the saved values go (zero-bubble kinds keep no stash).
      const StageMemory &stage = needs[action.stage];
      consider(action, stage.dataBytes + stage.weightSavedBytes,
               stage.backwardSendBytes);
      if (inFlight.erase({action.stage, action.index}))
        saved -= stage.savedBytes;
      weightSaved += stage.weightSavedBytes;
      ++waitingWeight;
      break;
    }
    case ActionKind::WeightBackward: {
      const StageMemory &stage = needs[action.stage];
      int64_t step = action.index / config.schedule.microBatches;
      if (stepsWithSums.insert(step).second)
        ++sumSets;
      consider(action, stage.dataBytes, 0);
      weightSaved -= stage.weightSavedBytes;
      --waitingWeight;
      break;
    }
    case ActionKind::Forward: {
      const StageMemory &stage = needs[action.stage];
      inFlight[{action.stage, action.index}] = version;
      // The saved values are copied out while the generated code's
      // results are alive.
      consider(action, stage.dataBytes + stage.savedBytes,
               stage.forwardSendBytes);
      saved += stage.savedBytes;
      break;
    }
    case ActionKind::Backward: {
      const StageMemory &stage = needs[action.stage];
      int64_t step = action.index / config.schedule.microBatches;
      if (stepsWithSums.insert(step).second)
        ++sumSets;
      consider(action, stage.dataBytes, stage.backwardSendBytes);
      auto it = inFlight.find({action.stage, action.index});
      if (it == inFlight.end())
        break;
      int64_t used = it->second;
      inFlight.erase(it);
      saved -= stage.savedBytes;
      if (used != version && stashedVersions.count(used) &&
          llvm::none_of(inFlight, [&](const auto &entry) {
            return entry.second == used;
          })) {
        stashedVersions.erase(used);
        --stashCount;
      }
      break;
    }
    case ActionKind::Update: {
      if (config.stashing != schedule::WeightVersions::None &&
          llvm::any_of(
              inFlight,
              [&](const auto &entry) { return entry.second == version; }) &&
          stashedVersions.insert(version).second)
        ++stashCount;
      if (stepsWithSums.insert(action.index).second)
        ++sumSets;
      stateAllocated = stateAllocated || stateBytes > 0;
      consider(action, updateScratch, 0);
      stepsWithSums.erase(action.index);
      --sumSets;
      ++version;
      break;
    }
    }
  }
  if (best.peakBytes < 0)
    return std::nullopt;
  return best;
}
