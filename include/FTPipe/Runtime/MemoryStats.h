//===- MemoryStats.h - A device's memory over a run -------------*- C++ -*-===//
//
// What ftpipe-run reports about memory: per device the peak of its tensor
// memory (the ledger's, MemoryLedger.h: what would live in GPU memory) with
// what made it up at that moment, and the process's resident memory (peak
// and the fixed overhead: code, libraries, MPI, the BLAS's work buffer).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_MEMORYSTATS_H
#define FTPIPE_RUNTIME_MEMORYSTATS_H

#include "FTPipe/Runtime/MemoryLedger.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

/// What a device's runtime holds between actions, by purpose.
struct HeldBytes {
  int64_t weights = 0, gradients = 0, optimizer = 0, stash = 0, saved = 0;
  /// Micro-batches whose saved values are held.
  int64_t savedMicroBatches = 0;
  /// What split backwards' input parts keep for their weight parts (W
  /// buffers), and for how many micro-batches.
  int64_t weightSaved = 0, weightSavedMicroBatches = 0;
  int64_t total() const {
    return weights + gradients + optimizer + stash + saved + weightSaved;
  }
};

/// A device's tensor memory over a run.
struct DeviceMemory {
  /// The ledger at the end of the run: its peak and the kinds at the peak.
  FTPipeMemLedger ledger = {};
  /// The action during which the peak was reached ("1B3", "U0"; empty
  /// before any action), and what the runtime held when it began.
  std::string peakAction;
  HeldBytes heldAtPeak;
};

/// A device's tensor memory as predicted from its action list, its stages'
/// memory needs and the run's setup (DeviceExecutor::predictMemory).
struct MemoryPrediction {
  int64_t peakBytes = 0;
  /// The action where the peak falls and what the runtime holds then.
  std::string peakAction;
  HeldBytes held;
  /// Of the peak: the generated code's buffers and the allocator's cache
  /// (at most the running entry point's recorded peak; at an update, the
  /// largest of the device's), the messages in flight, and what the action
  /// itself adds beside them (data slices, update scratch).
  int64_t generatedBytes = 0, messageBytes = 0, transientBytes = 0;
  /// Per action of the list, what the generated code's buffers and the
  /// allocator's cache may hold while it runs, the device staying within
  /// `peakBytes` (schedule::ReplayPeak::cacheBounds).
  std::vector<int64_t> cacheBounds;
};

/// The process's resident memory now and its high-water mark (VmRSS and
/// VmHWM of /proc/self/status; zero where that file is missing).
struct ResidentMemory {
  int64_t nowBytes = 0, peakBytes = 0;
};
ResidentMemory readResidentMemory();

/// Resident memory not held by any ledger now: code, libraries, MPI's
/// buffers, the BLAS's work buffer, the heap's own overhead.
int64_t residentOverheadBytes();

/// The fixed overhead of the process: residentOverheadBytes before the
/// device's weights are adopted, and again after each step. The first
/// step's gemms make the BLAS touch its work buffer (OpenBLAS: one 128 MiB
/// mapping, resident as far as its widest packed panel; 50 MiB with GPT-2
/// 124M's head) and run library code for the first time; later steps repeat
/// the same shapes, but the heap may keep freed small blocks resident (one
/// GPT-2 124M run's peak resident memory was 2.6 MiB above its peak tensor
/// memory and the overhead after its first step). The stated overhead is
/// the largest of them.
struct FixedOverhead {
  int64_t beforeBytes = 0;
  std::optional<int64_t> afterStepsBytes;
  int64_t bytes() const {
    return std::max(beforeBytes, afterStepsBytes.value_or(0));
  }
};

/// Makes the C library return every freed block of 1 MiB or more to the
/// system at once (a fixed mmap threshold), so that resident memory follows
/// the bytes live instead of the largest heap so far.
void returnLargeBlocksToSystem();

/// One device's report, e.g.
///   device 1 memory: peak tensor 412.3 MiB (predicted 420.0 MiB, 0.98x) at
///   1B3 [runtime 300.1: weights 100.0 gradients 100.0 optimizer 0.0 stash
///   0.0 saved 90.0 (3 mb); generated 100.2; cached 12.0; messages 0.0];
///   peak resident 530.2 MiB, fixed overhead 80.1 MiB (60.3 before the
///   first step); plan 450.0 MiB,
///   measured / plan 0.916
/// `predicted` absent: no prediction is printed; `overhead`: the stated
/// fixed overhead and its part before the first step; `planBytes`, the
/// plan's figure for the run's setup (schedule::deviceMemory of the
/// manifest's `device_memory`), absent where the manifest records none.
std::string formatDeviceMemory(int64_t device, const DeviceMemory &memory,
                               const std::optional<MemoryPrediction> &predicted,
                               const ResidentMemory &resident,
                               const FixedOverhead &overhead,
                               std::optional<int64_t> planBytes);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_MEMORYSTATS_H
