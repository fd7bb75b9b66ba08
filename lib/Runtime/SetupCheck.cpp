//===- SetupCheck.cpp - A run's setup against the plan's memory -----------===//
//
// The first device that does not fit is named, with what it would keep.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/SetupCheck.h"
#include "FTPipe/Schedule/MemoryReplay.h"

#include "llvm/Support/FormatVariadic.h"

using namespace ftpipe;
using namespace ftpipe::runtime;

std::string ftpipe::runtime::describeSetup(const schedule::TrainingSetup &s) {
  return llvm::formatv("schedule={0} microbatches={1} optimizer={2} "
                       "stashing={3}",
                       schedule::nameOf(s.schedule), s.microBatches,
                       schedule::nameOf(s.optimizer),
                       schedule::nameOf(s.weightVersions))
      .str();
}

std::vector<schedule::DeviceMemory>
ftpipe::runtime::plannedMemory(const ArtifactManifest &manifest,
                               const schedule::TrainingSetup &run,
                               const schedule::ReplicaLayout &replicas) {
  if (manifest.deviceMemory.empty())
    return {};
  return schedule::replayedMemory(
      manifest.stageGraph(), manifest.deviceMemory, run,
      replicas.replicated() ? llvm::ArrayRef(replicas.replicas)
                            : llvm::ArrayRef<int64_t>());
}

llvm::Error
ftpipe::runtime::checkRunMemory(const ArtifactManifest &manifest,
                                const schedule::TrainingSetup &run,
                                const schedule::ReplicaLayout &replicas) {
  for (auto [device, memory] :
       llvm::enumerate(plannedMemory(manifest, run, replicas))) {
    int64_t processes =
        device < replicas.replicas.size() ? replicas.replicas[device] : 1;
    const schedule::DeviceMemoryInputs &inputs = manifest.deviceMemory[device];
    uint64_t needed = schedule::replicatedBytes(memory, inputs, processes);
    if (needed <= memory.budgetBytes)
      continue;
    std::string planned =
        manifest.training ? describeSetup(*manifest.training) : "unknown";
    std::string reducing;
    if (needed > memory.totalBytes())
      reducing = llvm::formatv(
          "; {0} bytes while its replicas' all-reduce buffer of {1} bytes "
          "is held",
          needed, schedule::allReduceBufferBytes(inputs, processes));
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv(
            "device {0} needs {1} bytes for {2} (weights {3}, gradients {4}, "
            "optimizer state {5}, stashed versions {6}, activations {7}, "
            "reserved {8}{9}) but its budget is {10} bytes; the plan was made "
            "for {11} (--allow-over-budget runs it anyway)",
            device, memory.totalBytes(), describeSetup(run), memory.weightBytes,
            memory.gradientBytes, memory.optimizerBytes, memory.stashBytes,
            memory.activationBytes, memory.reservedBytes, reducing,
            memory.budgetBytes, planned)
            .str());
  }
  return llvm::Error::success();
}
