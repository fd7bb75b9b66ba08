//===- MemoryStats.cpp - A device's memory over a run ---------------------===//

#include "FTPipe/Runtime/MemoryStats.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <malloc.h>

#include <fstream>
#include <sstream>

using namespace ftpipe::runtime;

ResidentMemory ftpipe::runtime::readResidentMemory() {
  ResidentMemory memory;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    std::istringstream fields(line);
    std::string key;
    int64_t kib = 0;
    fields >> key >> kib;
    if (key == "VmRSS:")
      memory.nowBytes = kib * 1024;
    if (key == "VmHWM:")
      memory.peakBytes = kib * 1024;
  }
  return memory;
}

int64_t ftpipe::runtime::residentOverheadBytes() {
  int64_t ledgers = 0;
  for (int32_t device = -1; device < FTPIPE_MEM_MAX_DEVICES; ++device) {
    FTPipeMemLedger ledger;
    ftpipe_mem_read(device, &ledger);
    for (int64_t bytes : ledger.now)
      ledgers += bytes;
  }
  return readResidentMemory().nowBytes - ledgers;
}

void ftpipe::runtime::returnLargeBlocksToSystem() {
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
}

static double mib(int64_t bytes) { return double(bytes) / (1 << 20); }

std::string ftpipe::runtime::formatDeviceMemory(
    int64_t device, const DeviceMemory &memory,
    const std::optional<MemoryPrediction> &predicted,
    const ResidentMemory &resident, const FixedOverhead &overhead,
    std::optional<int64_t> planBytes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  const FTPipeMemLedger &l = memory.ledger;
  const HeldBytes &held = memory.heldAtPeak;
  os << llvm::format("device %lld memory: peak tensor %.3f MiB",
                     static_cast<long long>(device), mib(l.peak));
  if (predicted)
    os << llvm::format(
        " (predicted %.3f MiB, measured / predicted %.3f)",
        mib(predicted->peakBytes),
        predicted->peakBytes ? double(l.peak) / predicted->peakBytes : 0.0);
  os << " at " << (memory.peakAction.empty() ? "start" : memory.peakAction)
     << llvm::format(" [runtime %.1f: weights %.1f gradients %.1f optimizer "
                     "%.1f stash %.1f saved %.1f (%lld mb)",
                     mib(l.atPeak[FTPIPE_MEM_RUNTIME]), mib(held.weights),
                     mib(held.gradients), mib(held.optimizer), mib(held.stash),
                     mib(held.saved),
                     static_cast<long long>(held.savedMicroBatches));
  // Split backwards (zero-bubble schedules): what waits for a W.
  if (held.weightSavedMicroBatches)
    os << llvm::format(" W buffers %.1f (%lld mb)", mib(held.weightSaved),
                       static_cast<long long>(held.weightSavedMicroBatches));
  os << llvm::format("; generated %.1f; cached %.1f; messages %.1f]",
                     mib(l.atPeak[FTPIPE_MEM_GENERATED]),
                     mib(l.atPeak[FTPIPE_MEM_CACHED]),
                     mib(l.atPeak[FTPIPE_MEM_MESSAGES]))
     << llvm::format("; peak resident %.1f MiB, fixed overhead %.1f MiB",
                     mib(resident.peakBytes), mib(overhead.bytes()));
  if (overhead.afterStepsBytes)
    os << llvm::format(" (%.1f before the first step)",
                       mib(overhead.beforeBytes));
  if (planBytes)
    os << llvm::format("; plan %.3f MiB, measured / plan %.3f", mib(*planBytes),
                       *planBytes ? double(l.peak) / *planBytes : 0.0);
  if (predicted) {
    const HeldBytes &p = predicted->held;
    os << llvm::format(
        "\ndevice %lld predicted: peak tensor %.3f MiB at %s [runtime %.1f: "
        "weights %.1f gradients %.1f optimizer %.1f stash %.1f saved %.1f "
        "(%lld mb)",
        static_cast<long long>(device), mib(predicted->peakBytes),
        predicted->peakAction.c_str(),
        mib(p.total() + predicted->transientBytes), mib(p.weights),
        mib(p.gradients), mib(p.optimizer), mib(p.stash), mib(p.saved),
        static_cast<long long>(p.savedMicroBatches));
    if (p.weightSavedMicroBatches)
      os << llvm::format(" W buffers %.1f (%lld mb)", mib(p.weightSaved),
                         static_cast<long long>(p.weightSavedMicroBatches));
    os << llvm::format(
        ", action %.1f; generated and cached %.1f; messages %.1f]",
        mib(predicted->transientBytes), mib(predicted->generatedBytes),
        mib(predicted->messageBytes));
  }
  return text;
}
