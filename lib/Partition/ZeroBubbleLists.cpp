//===- ZeroBubbleLists.cpp - A plan's zero-bubble lists in memory --------===//
//
// The cost model's bytes per stage as the dry run counts them, zb-h1's
// lists built with them (schedule::generate), and zb-auto's within each
// device's memory (schedule::generateZeroBubbleAuto).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/ZeroBubbleLists.h"

#include "FTPipe/Partition/Simulator.h"
#include "FTPipe/Schedule/ZeroBubble.h"

using namespace ftpipe::partition;

ftpipe::schedule::StageMemory
ftpipe::partition::stageMemory(const StageGraph &stages) {
  schedule::StageMemory memory;
  size_t n = stages.numStages();
  auto sized = [&](const std::vector<uint64_t> &bytes) {
    return bytes.size() == n ? bytes : std::vector<uint64_t>(n, 0);
  };
  memory.activationBytes = sized(stages.keptBytesPerMicroBatch);
  memory.weightBufferBytes = sized(stages.weightBufferBytesPerMicroBatch);
  memory.workingBytes = sized(stages.recomputePeakBytes);
  memory.weightWorkingBytes.assign(n, 0);
  return memory;
}

llvm::Expected<ftpipe::schedule::Schedule>
ftpipe::partition::zeroBubbleH1Lists(const StageGraph &stages, int64_t devices,
                                     uint32_t microBatches,
                                     const std::vector<bool> &split) {
  schedule::ScheduleConfig config{schedule::Kind::ZeroBubbleH1, microBatches, 1,
                                  split};
  schedule::StageMemory memory = stageMemory(stages);
  return schedule::generate(stages.topology(devices), config, &memory);
}

llvm::Expected<ftpipe::schedule::Schedule>
ftpipe::partition::zeroBubbleAutoLists(
    const StageGraph &stages, const Hardware &hw,
    llvm::ArrayRef<schedule::DeviceMemoryInputs> inputs,
    const schedule::TrainingSetup &setup, uint32_t microBatches,
    const schedule::ZeroBubbleSearch &search,
    llvm::ArrayRef<int64_t> replicas) {
  schedule::StageGraph topology = stages.topology(int64_t(hw.numDevices()));
  schedule::ScheduleConfig config{schedule::Kind::ZeroBubbleAuto, microBatches,
                                  1, stages.splitStages(), replicas.vec()};
  llvm::Expected<schedule::ZeroBubbleLimits> limits =
      schedule::zeroBubbleLimits(topology, inputs, setup);
  if (!limits)
    return limits.takeError();
  return schedule::generateZeroBubbleAuto(topology, stages, linksOf(hw), config,
                                          *limits, search);
}
