//===- Memory.cpp - What a device keeps for a training setup --------------===//
//
// Weights, gradients (one per weight) and optimizer state count once per
// parameter a device reads; stashed versions as many as its most demanding
// reader stage there needs; kept activations add up over the device's
// stages, recomputation peaks (working sets) do not (a device runs one task
// at a time). runtimeMemory applies the runtime's rules for the async
// schedule (Executor.cpp; DeviceExecutor::predictMemory replays them action
// by action, and the figure bounds that replay): one set of gradient sums
// per step whose backwards have started and whose update has not run (two
// at once under async on a device of several stages), and whole copies of the
// device's weights for each older version a micro-batch in flight still reads
// (updates come once per step of M micro-batches).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/Memory.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace ftpipe::schedule;

unsigned ftpipe::schedule::optimizerStateFactor(Optimizer optimizer) {
  switch (optimizer) {
  case Optimizer::SGD:
    return 0;
  case Optimizer::Momentum:
    return 1;
  case Optimizer::Adam:
  case Optimizer::AdamW:
    return 2;
  case Optimizer::Adafactor:
    return 0;
  }
  llvm_unreachable("unknown optimizer");
}

uint32_t ftpipe::schedule::microBatchesInFlight(uint32_t height, Kind schedule,
                                                uint32_t microBatches) {
  switch (schedule) {
  case Kind::Async:
    return height + 1;
  case Kind::OneFOneB:
  case Kind::ZeroBubbleH1:
    // zb-h1 keeps 1F1B's order, within 1F1B's peak (schedule::generate).
    return std::min(height + 1, microBatches);
  case Kind::GPipe:
  case Kind::ZeroBubbleAuto:
    // zb-auto's greedy variants may start every forward of a step first.
    return microBatches;
  }
  llvm_unreachable("unknown schedule");
}

uint32_t ftpipe::schedule::extraWeightVersions(uint32_t inFlight, Kind schedule,
                                               WeightVersions versions) {
  if (schedule != Kind::Async || inFlight <= 1)
    return 0;
  switch (versions) {
  case WeightVersions::Stash:
    return inFlight - 1;
  case WeightVersions::DoubleBuffered:
    return 1;
  case WeightVersions::None:
    return 0;
  }
  llvm_unreachable("unknown versioning");
}

uint64_t ftpipe::schedule::stageActivationBytes(uint32_t inFlight,
                                                uint64_t kept,
                                                uint64_t weightBuffer,
                                                Kind schedule,
                                                uint32_t microBatches) {
  uint64_t activations = uint64_t(inFlight) * kept;
  // zb-h1's lists keep each device within its 1F1B peak: its W buffers fit
  // in what 1F1B leaves free or its stages run whole.
  if (schedule != Kind::ZeroBubbleAuto || weightBuffer == 0)
    return activations;
  // During its I a micro-batch holds both its activations and its W buffer.
  uint64_t m = std::max(microBatches, inFlight);
  return std::max(kept + m * weightBuffer,
                  activations + (m + 1 - inFlight) * weightBuffer);
}

uint64_t ftpipe::schedule::tiedExchangeBytes(uint64_t bytes, uint64_t holders,
                                             bool owner) {
  if (holders < 2)
    return 0;
  return bytes * (owner ? std::max<uint64_t>(2, holders - 1) : 2);
}

DeviceMemory ftpipe::schedule::deviceMemory(const DeviceMemoryInputs &inputs,
                                            const TrainingSetup &setup) {
  DeviceMemory memory;
  uint64_t peak = 0;
  for (const DeviceMemoryInputs::Stage &stage : inputs.stages) {
    uint32_t inFlight =
        microBatchesInFlight(stage.height, setup.schedule, setup.microBatches);
    memory.activationBytes +=
        stageActivationBytes(inFlight, stage.keptBytesPerMicroBatch,
                             stage.weightBufferBytesPerMicroBatch,
                             setup.schedule, setup.microBatches);
    // A task's working set: a forward's holds its own kept bytes, which
    // the micro-batches in flight count already.
    uint64_t forward = stage.forwardWorkingBytes + stage.forwardMessageBytes;
    peak = std::max({peak, stage.recomputePeakBytes, stage.weightWorkingBytes,
                     forward > stage.keptBytesPerMicroBatch
                         ? forward - stage.keptBytesPerMicroBatch
                         : 0});
  }
  memory.activationBytes += peak;
  for (auto [height, bytes] : llvm::enumerate(inputs.paramBytesByHeight)) {
    memory.weightBytes += bytes;
    uint32_t inFlight = microBatchesInFlight(uint32_t(height), setup.schedule,
                                             setup.microBatches);
    memory.stashBytes += bytes * extraWeightVersions(inFlight, setup.schedule,
                                                     setup.weightVersions);
  }
  memory.gradientBytes = memory.weightBytes;
  // A tied parameter's copy has gradients but no state: its owner updates it.
  memory.optimizerBytes = (memory.weightBytes -
                           std::min(inputs.tiedCopyBytes, memory.weightBytes)) *
                          optimizerStateFactor(setup.optimizer);
  memory.weightBytes += inputs.frozenParamBytes;
  memory.reservedBytes = inputs.reservedBytes;
  memory.budgetBytes = inputs.budgetBytes;
  return memory;
}

/// Older weight versions the runtime keeps for `inFlight` consecutive
/// micro-batches: they span at most ceil((inFlight - 1) / M) updates, and
/// double buffering keeps one.
static uint64_t versionsPerStep(uint32_t inFlight, const TrainingSetup &setup) {
  if (setup.schedule != Kind::Async || inFlight <= 1 ||
      setup.weightVersions == WeightVersions::None)
    return 0;
  uint32_t m = std::max(setup.microBatches, 1u);
  uint64_t spanned = (inFlight - 1 + m - 1) / m;
  return setup.weightVersions == WeightVersions::DoubleBuffered
             ? std::min<uint64_t>(spanned, 1)
             : spanned;
}

DeviceMemory ftpipe::schedule::runtimeMemory(const DeviceMemoryInputs &inputs,
                                             const TrainingSetup &setup) {
  DeviceMemory memory = deviceMemory(inputs, setup);
  uint32_t mostInFlight = 0;
  for (const DeviceMemoryInputs::Stage &stage : inputs.stages)
    mostInFlight = std::max(
        mostInFlight,
        microBatchesInFlight(stage.height, setup.schedule, setup.microBatches));
  uint64_t trained = memory.weightBytes - inputs.frozenParamBytes;
  memory.stashBytes = trained * versionsPerStep(mostInFlight, setup);
  // Under async, a device of several stages may run the next step's first
  // backward of one stage before the last backward of another (which its
  // update waits for); one stage runs its backwards in order.
  bool twoSets = setup.schedule == Kind::Async && inputs.stages.size() > 1;
  memory.gradientBytes = trained * (twoSets ? 2 : 1);
  return memory;
}

uint64_t
ftpipe::schedule::allReduceBufferBytes(const DeviceMemoryInputs &inputs,
                                       int64_t replicas) {
  if (replicas < 2 || inputs.paramBytesByHeight.empty())
    return 0;
  return *llvm::max_element(inputs.paramBytesByHeight);
}

uint64_t ftpipe::schedule::reducingBytes(const DeviceMemory &memory,
                                         const DeviceMemoryInputs &inputs,
                                         int64_t replicas) {
  return memory.totalBytes() - memory.activationBytes +
         allReduceBufferBytes(inputs, replicas);
}

uint64_t ftpipe::schedule::replicatedBytes(const DeviceMemory &memory,
                                           const DeviceMemoryInputs &inputs,
                                           int64_t replicas) {
  return std::max(memory.totalBytes(), reducingBytes(memory, inputs, replicas));
}

llvm::json::Value ftpipe::schedule::toJSON(const DeviceMemoryInputs &inputs) {
  llvm::json::Array stages;
  for (const DeviceMemoryInputs::Stage &stage : inputs.stages)
    stages.push_back(llvm::json::Object{
        {"height", int64_t(stage.height)},
        {"kept_bytes_per_microbatch", int64_t(stage.keptBytesPerMicroBatch)},
        {"recompute_peak_bytes", int64_t(stage.recomputePeakBytes)},
        {"weight_buffer_bytes_per_microbatch",
         int64_t(stage.weightBufferBytesPerMicroBatch)},
        {"weight_working_bytes", int64_t(stage.weightWorkingBytes)},
        {"forward_working_bytes", int64_t(stage.forwardWorkingBytes)},
        {"forward_message_bytes", int64_t(stage.forwardMessageBytes)},
        {"backward_message_bytes", int64_t(stage.backwardMessageBytes)}});
  llvm::json::Array params;
  for (uint64_t bytes : inputs.paramBytesByHeight)
    params.push_back(int64_t(bytes));
  llvm::json::Object object{{"stages", std::move(stages)},
                            {"param_bytes_by_height", std::move(params)},
                            {"reserved_bytes", int64_t(inputs.reservedBytes)},
                            {"budget_bytes", int64_t(inputs.budgetBytes)}};
  if (inputs.frozenParamBytes)
    object["frozen_param_bytes"] = int64_t(inputs.frozenParamBytes);
  if (inputs.tiedCopyBytes)
    object["tied_copy_bytes"] = int64_t(inputs.tiedCopyBytes);
  object["update_working_bytes"] = int64_t(inputs.updateWorkingBytes);
  object["largest_param_bytes"] = int64_t(inputs.largestParamBytes);
  return object;
}

/// A non-negative integer field.
static bool readBytes(const llvm::json::Value &value, uint64_t &out,
                      llvm::json::Path path) {
  std::optional<int64_t> number = value.getAsInteger();
  if (!number || *number < 0) {
    path.report("expected a non-negative integer");
    return false;
  }
  out = uint64_t(*number);
  return true;
}

bool ftpipe::schedule::fromJSON(const llvm::json::Value &value,
                                DeviceMemoryInputs &inputs,
                                llvm::json::Path path) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object) {
    path.report("expected an object");
    return false;
  }
  auto field = [&](llvm::StringRef name) -> const llvm::json::Value * {
    const llvm::json::Value *v = object->get(name);
    if (!v)
      path.field(name).report("missing");
    return v;
  };
  const llvm::json::Value *stages = field("stages");
  const llvm::json::Value *params = field("param_bytes_by_height");
  const llvm::json::Value *reserved = field("reserved_bytes");
  const llvm::json::Value *budget = field("budget_bytes");
  if (!stages || !params || !reserved || !budget)
    return false;
  inputs.frozenParamBytes = 0;
  if (const llvm::json::Value *frozen = object->get("frozen_param_bytes"))
    if (!readBytes(*frozen, inputs.frozenParamBytes,
                   path.field("frozen_param_bytes")))
      return false;
  if (!readBytes(*reserved, inputs.reservedBytes,
                 path.field("reserved_bytes")) ||
      !readBytes(*budget, inputs.budgetBytes, path.field("budget_bytes")))
    return false;
  const llvm::json::Array *stageArray = stages->getAsArray();
  const llvm::json::Array *paramArray = params->getAsArray();
  if (!stageArray || !paramArray) {
    path.report("'stages' and 'param_bytes_by_height' must be arrays");
    return false;
  }
  inputs.stages.clear();
  // A Path refers to its parent: `stagesPath` must outlive `at` (a
  // temporary parent left `at` dangling, and reporting an error in a stage
  // crashed).
  llvm::json::Path stagesPath = path.field("stages");
  for (auto [i, stage] : llvm::enumerate(*stageArray)) {
    llvm::json::Path at = stagesPath.index(i);
    const llvm::json::Object *s = stage.getAsObject();
    const llvm::json::Value *height = s ? s->get("height") : nullptr;
    const llvm::json::Value *kept =
        s ? s->get("kept_bytes_per_microbatch") : nullptr;
    const llvm::json::Value *peak =
        s ? s->get("recompute_peak_bytes") : nullptr;
    if (!height || !kept || !peak) {
      at.report("expected height, kept_bytes_per_microbatch and "
                "recompute_peak_bytes");
      return false;
    }
    uint64_t h = 0;
    DeviceMemoryInputs::Stage entry;
    if (!readBytes(*height, h, at.field("height")) ||
        !readBytes(*kept, entry.keptBytesPerMicroBatch,
                   at.field("kept_bytes_per_microbatch")) ||
        !readBytes(*peak, entry.recomputePeakBytes,
                   at.field("recompute_peak_bytes")))
      return false;
    // Manifests written before the zero-bubble kinds were planned have none.
    if (const llvm::json::Value *buffer =
            s->get("weight_buffer_bytes_per_microbatch");
        buffer && !readBytes(*buffer, entry.weightBufferBytesPerMicroBatch,
                             at.field("weight_buffer_bytes_per_microbatch")))
      return false;
    // Older manifests: a W's working set as large as the other tasks'.
    entry.weightWorkingBytes = entry.recomputePeakBytes;
    if (const llvm::json::Value *working = s->get("weight_working_bytes");
        working && !readBytes(*working, entry.weightWorkingBytes,
                              at.field("weight_working_bytes")))
      return false;
    // Older manifests: a forward's working set counted as the others' with
    // its kept bytes beside it (0).
    if (const llvm::json::Value *working = s->get("forward_working_bytes");
        working && !readBytes(*working, entry.forwardWorkingBytes,
                              at.field("forward_working_bytes")))
      return false;
    // Older manifests: the messages counted within the kept bytes and the
    // working set only.
    for (auto [name, field] :
         {std::pair{"forward_message_bytes", &entry.forwardMessageBytes},
          std::pair{"backward_message_bytes", &entry.backwardMessageBytes}})
      if (const llvm::json::Value *bytes = s->get(name);
          bytes && !readBytes(*bytes, *field, at.field(name)))
        return false;
    if (entry.forwardMessageBytes > entry.keptBytesPerMicroBatch ||
        entry.backwardMessageBytes > entry.recomputePeakBytes) {
      at.report("message bytes beyond the kept bytes or the working set "
                "that hold them");
      return false;
    }
    if (h > (uint64_t(1) << 20)) {
      at.field("height").report("too large");
      return false;
    }
    entry.height = uint32_t(h);
    inputs.stages.push_back(entry);
  }
  inputs.paramBytesByHeight.clear();
  if (paramArray->size() > (size_t(1) << 20)) {
    path.field("param_bytes_by_height").report("too long");
    return false;
  }
  for (auto [i, bytes] : llvm::enumerate(*paramArray)) {
    uint64_t b = 0;
    if (!readBytes(bytes, b, path.field("param_bytes_by_height").index(i)))
      return false;
    inputs.paramBytesByHeight.push_back(b);
  }
  // Older manifests: an update adds the largest working set and scratch as
  // large as all trained bytes.
  inputs.updateWorkingBytes = inputs.largestParamBytes = 0;
  for (uint64_t bytes : inputs.paramBytesByHeight)
    inputs.largestParamBytes += bytes;
  for (const DeviceMemoryInputs::Stage &stage : inputs.stages)
    inputs.updateWorkingBytes =
        std::max(inputs.updateWorkingBytes, stage.recomputePeakBytes);
  inputs.updateWorkingBytes += inputs.largestParamBytes;
  // Older manifests: every trained parameter with its optimizer state.
  inputs.tiedCopyBytes = 0;
  for (auto [name, out] :
       {std::pair("update_working_bytes", &inputs.updateWorkingBytes),
        std::pair("largest_param_bytes", &inputs.largestParamBytes),
        std::pair("tied_copy_bytes", &inputs.tiedCopyBytes)})
    if (const llvm::json::Value *bytes = object->get(name))
      if (!readBytes(*bytes, *out, path.field(name)))
        return false;
  return true;
}

llvm::json::Value ftpipe::schedule::toJSON(const DeviceMemory &memory) {
  return llvm::json::Object{
      {"weight_bytes", int64_t(memory.weightBytes)},
      {"gradient_bytes", int64_t(memory.gradientBytes)},
      {"optimizer_bytes", int64_t(memory.optimizerBytes)},
      {"stash_bytes", int64_t(memory.stashBytes)},
      {"activation_bytes", int64_t(memory.activationBytes)},
      {"reserved_bytes", int64_t(memory.reservedBytes)},
      {"total_bytes", int64_t(memory.totalBytes())},
      {"budget_bytes", int64_t(memory.budgetBytes)}};
}

bool ftpipe::schedule::fromJSON(const llvm::json::Value &value,
                                DeviceMemory &memory, llvm::json::Path path) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object) {
    path.report("expected an object");
    return false;
  }
  uint64_t total = 0;
  std::pair<const char *, uint64_t *> fields[] = {
      {"weight_bytes", &memory.weightBytes},
      {"gradient_bytes", &memory.gradientBytes},
      {"optimizer_bytes", &memory.optimizerBytes},
      {"stash_bytes", &memory.stashBytes},
      {"activation_bytes", &memory.activationBytes},
      {"reserved_bytes", &memory.reservedBytes},
      {"total_bytes", &total},
      {"budget_bytes", &memory.budgetBytes}};
  for (auto [name, out] : fields) {
    const llvm::json::Value *field = object->get(name);
    if (!field) {
      path.field(name).report("missing");
      return false;
    }
    if (!readBytes(*field, *out, path.field(name)))
      return false;
  }
  if (total != memory.totalBytes()) {
    path.field("total_bytes").report("not the sum of the parts");
    return false;
  }
  return true;
}
