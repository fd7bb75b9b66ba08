//===- MemoryNeeds.cpp - What compiled stages need in memory --------------===//
//
// The one reading of a compiled stage's memory needs, used by the runtime's
// prediction (CompiledModel.cpp, with the peaks an artifact exports) and by
// ftpipe-compile for the plan's figure in the manifest (with the peaks of the
// code it just lowered).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/MemoryNeeds.h"
#include "FTPipe/Runtime/ArtifactManifest.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <set>

using namespace ftpipe::runtime;

static int64_t bytesOf(const ManifestTensor &tensor) {
  int64_t count = 1;
  for (int64_t size : tensor.shape)
    count *= size;
  return count * dtypeBytes(tensor.type);
}

/// What the host allocator charges for a buffer the generated code
/// allocated for `tensor` and the runtime adopted: the lowering allocates
/// the bytes and the buffer's alignment (64, one-shot bufferization's), and
/// HostAllocator.cpp rounds blocks from 1 MiB up to whole pages, smaller
/// ones to 64 bytes. On GPT-2 124M's 8 micro-batches of saved values that
/// was 1.3 MiB beyond their sizes.
static int64_t adoptedBytes(const ManifestTensor &tensor) {
  constexpr int64_t kAlignment = 64, kPage = 4096, kPagedFrom = 1 << 20;
  int64_t bytes = bytesOf(tensor) + kAlignment;
  int64_t unit = bytes >= kPagedFrom ? kPage : kAlignment;
  return (bytes + unit - 1) / unit * unit;
}

std::optional<StageMemory>
ftpipe::runtime::stageMemory(const EntryPoint &forward,
                             const EntryPoint &backward, PeakLookup peakOf) {
  std::optional<int64_t> forwardPeak = peakOf(forward.name),
                         backwardPeak = peakOf(backward.name);
  if (!forwardPeak || !backwardPeak)
    return std::nullopt;
  StageMemory memory;
  memory.forwardPeakBytes = *forwardPeak;
  memory.backwardPeakBytes = *backwardPeak;
  for (const EntryValue &result : forward.results)
    if (result.kind == EntryValue::Kind::Saved)
      memory.savedBytes += adoptedBytes(result.tensor);
  std::set<std::string> inputs;
  for (const EntryPoint *entry : {&forward, &backward})
    for (const EntryValue &argument : entry->arguments)
      if (argument.kind == EntryValue::Kind::Input &&
          inputs.insert(argument.name).second)
        memory.dataBytes += bytesOf(argument.tensor);
  // A message is its micro-batch (8 bytes) and the tensor's bytes.
  constexpr int64_t kHeader = 8;
  for (const ManifestTransfer &transfer : forward.transfers)
    if (transfer.send)
      memory.forwardSendBytes += bytesOf(transfer.tensor);
    else
      memory.forwardReceiveBytes = std::max(memory.forwardReceiveBytes,
                                            bytesOf(transfer.tensor) + kHeader);
  for (const ManifestTransfer &transfer : backward.transfers)
    if (transfer.send)
      memory.backwardSendBytes += bytesOf(transfer.tensor);
    else
      memory.backwardReceiveBytes = std::max(
          memory.backwardReceiveBytes, bytesOf(transfer.tensor) + kHeader);
  return memory;
}

int64_t StageMemory::peakOf(schedule::ActionKind kind) const {
  switch (kind) {
  case schedule::ActionKind::Forward:
    return forwardPeakBytes;
  case schedule::ActionKind::Backward:
    return backwardPeakBytes;
  case schedule::ActionKind::InputBackward:
    return inputPeakBytes;
  case schedule::ActionKind::WeightBackward:
    return weightPeakBytes;
  case schedule::ActionKind::Update:
    return 0;
  }
  llvm_unreachable("unknown action kind");
}

std::optional<StageMemory>
ftpipe::runtime::splitMemory(StageMemory memory, const EntryPoint &input,
                             const EntryPoint &weight, PeakLookup peakOf) {
  std::optional<int64_t> inputPeak = peakOf(input.name),
                         weightPeak = peakOf(weight.name);
  if (!inputPeak || !weightPeak)
    return std::nullopt;
  memory.inputPeakBytes = *inputPeak;
  memory.weightPeakBytes = *weightPeak;
  for (const EntryValue &result : input.results)
    if (result.kind == EntryValue::Kind::WeightSaved)
      memory.weightSavedBytes += adoptedBytes(result.tensor);
  // The saved values the weight part reads stay from the input part on.
  for (const EntryValue &argument : weight.arguments)
    if (argument.kind == EntryValue::Kind::Saved)
      memory.weightSavedBytes += adoptedBytes(argument.tensor);
  return memory;
}

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error ftpipe::runtime::compiledMemoryInputs(
    const ArtifactManifest &manifest, PeakLookup peakOf,
    std::vector<schedule::DeviceMemoryInputs> &inputs) {
  if (static_cast<int64_t>(inputs.size()) != manifest.devices())
    return fail("the plan counts the memory of " + llvm::Twine(inputs.size()) +
                " devices but the manifest has " +
                llvm::Twine(manifest.devices()));
  std::vector<std::vector<StageMemory>> needs(inputs.size());
  for (const ManifestStage &stage : manifest.stages) {
    if (stage.backward.empty())
      return fail("stage of " + stage.forward + " has no backward");
    std::optional<StageMemory> memory =
        stageMemory(manifest.entryPoints.at(stage.forward),
                    manifest.entryPoints.at(stage.backward), peakOf);
    if (!memory)
      return fail("no recorded peak for " + stage.forward + " or " +
                  stage.backward);
    // A split stage's parts: what I keeps for W, and their peaks.
    if (stage.splits()) {
      memory =
          splitMemory(*memory, manifest.entryPoints.at(stage.backwardInput),
                      manifest.entryPoints.at(stage.backwardWeight), peakOf);
      if (!memory)
        return fail("no recorded peak for " + stage.backwardInput + " or " +
                    stage.backwardWeight);
    }
    needs[stage.device].push_back(*memory);
  }
  // An update's scratch: the largest tied parameter's exchange a device
  // takes part in and the largest trained parameter it holds.
  std::vector<uint64_t> tied(inputs.size(), 0), largest(inputs.size(), 0),
      copies(inputs.size(), 0);
  for (const auto &[name, param] : manifest.parameters) {
    if (param.frozen || param.devices.empty())
      continue;
    uint64_t bytes = uint64_t(bytesOf(param.tensor));
    for (int64_t device : param.devices)
      if (device >= 0 && device < int64_t(largest.size()))
        largest[device] = std::max(largest[device], bytes);
    for (auto [i, device] : llvm::enumerate(param.devices)) {
      if (device < 0 || device >= int64_t(tied.size()))
        continue;
      tied[device] = std::max(
          tied[device], schedule::tiedExchangeBytes(bytes, param.devices.size(),
                                                    /*owner=*/i == 0));
      if (i > 0)
        copies[device] += bytes;
    }
  }
  for (auto [device, planned] : llvm::enumerate(inputs)) {
    // The generated code's cache at an update is what the task before it
    // left, which the replay counts (schedule::replayMemory).
    planned.updateWorkingBytes = tied[device];
    planned.tiedCopyBytes = copies[device];
    planned.largestParamBytes = largest[device];
    if (planned.stages.size() != needs[device].size())
      return fail("the plan puts " + llvm::Twine(planned.stages.size()) +
                  " stages on device " + llvm::Twine(device) +
                  " but the manifest " + llvm::Twine(needs[device].size()));
    // Each task counts its own entry point's peak: the runtime limits the
    // allocator's cache to it while the task runs (HostAllocator.h).
    using schedule::ActionKind;
    for (auto [stage, memory] : llvm::zip(planned.stages, needs[device])) {
      stage.keptBytesPerMicroBatch =
          uint64_t(memory.savedBytes + memory.forwardSendBytes);
      stage.forwardWorkingBytes =
          uint64_t(memory.peakOf(ActionKind::Forward) + memory.dataBytes +
                   memory.forwardReceiveBytes);
      // An I's peak holds the W buffer it returns, which the replay adds
      // to the working set (schedule::replayedMemory).
      stage.recomputePeakBytes =
          uint64_t(std::max(memory.peakOf(ActionKind::Backward),
                            memory.peakOf(ActionKind::InputBackward) -
                                memory.weightSavedBytes) +
                   memory.dataBytes + memory.backwardSendBytes +
                   memory.backwardReceiveBytes);
      stage.forwardMessageBytes = uint64_t(memory.forwardSendBytes);
      stage.backwardMessageBytes = uint64_t(memory.backwardSendBytes);
      stage.weightBufferBytesPerMicroBatch = uint64_t(memory.weightSavedBytes);
      // A W sends nothing (DeviceExecutor::predictMemory).
      stage.weightWorkingBytes = uint64_t(
          memory.peakOf(ActionKind::WeightBackward) + memory.dataBytes);
    }
  }
  return llvm::Error::success();
}
