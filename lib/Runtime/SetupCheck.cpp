//===- SetupCheck.cpp - A run's setup against the plan's memory -----------===//
//
// The first device that does not fit is named, with what it would keep.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/SetupCheck.h"
#include "FTPipe/Schedule/MemoryCheck.h"
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
  if (manifest.deviceMemory.empty())
    return llvm::Error::success();
  schedule::MemoryCheck check = schedule::checkMemory(
      manifest.stageGraph(), manifest.deviceMemory, run, replicas);
  if (check.fits())
    return llvm::Error::success();
  std::string planned =
      manifest.training ? describeSetup(*manifest.training) : "unknown";
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv("{0} {1}; the plan was made for {2} "
                    "(--allow-over-budget runs it anyway)",
                    describeSetup(run), check.failure, planned)
          .str());
}
