//===- MemoryPrediction.cpp - A device's memory from its action list -----===//
//
// DeviceExecutor::predictMemory: replays the device's actions with byte
// counts instead of tensors (schedule::replayMemory: the executor's rules,
// Executor.cpp, for what lives between actions) with the compiled stages'
// needs, so a runtime that starts keeping a buffer the rules do not name
// shows up as a measured peak above the prediction
// (test/Runtime/memory-as-predicted.test).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Executor.h"
#include "FTPipe/Schedule/MemoryReplay.h"

using namespace ftpipe::runtime;
using ftpipe::schedule::Action;

static int64_t bytesOf(const ParameterInfo &param) {
  int64_t count = 1;
  for (int64_t size : param.shape)
    count *= size;
  return count * static_cast<int64_t>(dtypeBytes(param.type));
}

std::optional<MemoryPrediction>
DeviceExecutor::predictMemory(llvm::ArrayRef<Action> actions,
                              llvm::ArrayRef<size_t> sendsHeldUntil) const {
  std::map<int64_t, StageMemory> needs;
  for (StageProgram *stage : stages) {
    std::optional<StageMemory> memory = stage->memory();
    if (!memory)
      return std::nullopt;
    needs[stage->stage()] = *memory;
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
    // A tied parameter's exchange, its owner's and its copies'.
    auto holders = placement.find(param.name);
    if (holders != placement.end())
      updateScratch = std::max(
          updateScratch,
          int64_t(schedule::tiedExchangeBytes(
              uint64_t(bytes), holders->second.size(), owns(param.name))));
    if (!owns(param.name))
      continue;
    stateBytes += optimizer.stateBytes(param.shape);
    // Adafactor's update of one parameter works in doubles.
    if (config.optimizer.kind == schedule::Optimizer::Adafactor)
      updateScratch = std::max(updateScratch, 2 * bytes);
  }

  schedule::ReplayDevice device;
  for (const auto &[id, stage] : needs) {
    // The saved values and W buffers stay in the buffers the generated code
    // returned them in (adopted, CompiledModel.cpp: no copy beside them,
    // and within the entry point's recorded peak while it runs); a W sends
    // nothing. A task's generated buffers and the allocator's cache stay
    // within its own entry point's peak (limitCache, HostAllocator.h).
    using schedule::ActionKind;
    schedule::ReplayStage &replay = device.stages[id];
    replay.kept = stage.savedBytes;
    replay.weightBuffer = stage.weightSavedBytes;
    replay.forward = stage.peakOf(ActionKind::Forward) + stage.dataBytes;
    replay.backward = stage.peakOf(ActionKind::Backward) + stage.dataBytes;
    replay.input = stage.peakOf(ActionKind::InputBackward) + stage.dataBytes;
    replay.weight = stage.peakOf(ActionKind::WeightBackward) + stage.dataBytes;
    replay.forwardMessages = stage.forwardSendBytes;
    replay.backwardMessages = stage.backwardSendBytes;
    replay.forwardReceive = stage.forwardReceiveBytes;
    replay.backwardReceive = stage.backwardReceiveBytes;
    replay.transient = stage.dataBytes;
    replay.adopted = stage.adopted;
  }
  device.weights = weightBytes;
  device.trained = trainedBytes;
  device.optimizer = stateBytes;
  device.update = updateScratch;
  device.microBatches = config.schedule.microBatches;
  device.versions = config.stashing;
  device.firstVersion = version;
  device.stateAllocated = optimizer.stateBytes() > 0;
  std::optional<schedule::ReplayPeak> peak =
      schedule::replayMemory(actions, sendsHeldUntil, device);
  if (!peak)
    return std::nullopt;
  MemoryPrediction best;
  best.peakBytes = peak->bytes;
  best.peakAction = actions[peak->action].str();
  best.held.weights = peak->held.weights;
  best.held.gradients = peak->held.gradients;
  best.held.optimizer = peak->held.optimizer;
  best.held.stash = peak->held.stash;
  best.held.saved = peak->held.kept;
  best.held.savedMicroBatches = peak->held.keptMicroBatches;
  best.held.weightSaved = peak->held.weightBuffers;
  best.held.weightSavedMicroBatches = peak->held.weightBufferMicroBatches;
  // Of what the action adds, the generated code's buffers and cache.
  const Action &atPeak = actions[peak->action];
  auto stage = needs.find(atPeak.stage);
  best.generatedBytes =
      atPeak.kind == schedule::ActionKind::Update ? peak->carried
      : stage == needs.end()                      ? 0
                             : stage->second.peakOf(atPeak.kind);
  best.messageBytes = peak->messages + peak->pending;
  best.transientBytes = peak->running - best.generatedBytes;
  best.cacheBounds = std::move(peak->cacheBounds);
  return best;
}
