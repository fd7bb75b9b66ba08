//===- ZeroBubbleLists.cpp - A plan's zb-h1 lists within 1F1B's memory ----===//
//
// The cost model's bytes per stage as the dry run counts them, and zb-h1's
// lists built with them (schedule::generate).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/ZeroBubbleLists.h"

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
