//===- MemoryCheck.h - Whether a plan's devices fit in memory ---*- C++ -*-===//
//
// The one rule by which a plan's devices fit in their memory, run with or
// without replicas, and its one message: the planner scores every replicated
// option by it (partition::scoreReplicated), ftpipe-compile checks a plan
// made already and the compiled code's figures by it, and ftpipe-run refuses
// a setup by it (runtime::checkRunMemory). No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SCHEDULE_MEMORYCHECK_H
#define FTPIPE_SCHEDULE_MEMORYCHECK_H

#include "FTPipe/Schedule/Memory.h"
#include "FTPipe/Schedule/Replicas.h"
#include "FTPipe/Schedule/Schedule.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ftpipe {
namespace schedule {

/// What one device needs by checkMemory's rule.
struct DeviceNeed {
  /// runtimeMemory's parts at the peak of its busiest replica's list
  /// replayed (replayedMemory), and its budget.
  DeviceMemory memory;
  /// Its replicas' all-reduce buffer (allReduceBufferBytes; 0 without).
  uint64_t allReduceBytes = 0;
  /// A figure counted otherwise that it needs at least (the planner's cost
  /// model; 0 when none).
  uint64_t countedBytes = 0;
  /// What it needs: the largest of replicatedBytes and countedBytes.
  uint64_t bytes = 0;
  bool fits() const { return bytes <= memory.budgetBytes; }
};

/// Each device's need, and why the first one over its budget does not fit.
struct MemoryCheck {
  std::vector<DeviceNeed> devices;
  /// "does not fit in memory[ as replicas 1,2]: device D needs X bytes of
  /// its Y bytes (weights ..., activations ..., reserved ...[; Z while its
  /// replicas' all-reduce buffer of B is held][; C by the plan's count])"
  /// for the first device over its budget; empty when every device fits.
  std::string failure;
  bool fits() const { return failure.empty(); }
};

/// Checks the devices of the plan `graph` with `inputs` (one per device,
/// DeviceMemoryInputs) under `setup`, run as `layout` (empty or every
/// factor 1: without replicas): each device needs its busiest replica's
/// list replayed (replayedMemory, the lists made for the layout) and, when
/// replicated, its weights' state with its all-reduce's buffer
/// (replicatedBytes), and at least `counted[d]` where given.
MemoryCheck checkMemory(const StageGraph &graph,
                        llvm::ArrayRef<DeviceMemoryInputs> inputs,
                        const TrainingSetup &setup, const ReplicaLayout &layout,
                        llvm::ArrayRef<uint64_t> counted = {});

} // namespace schedule
} // namespace ftpipe

#endif // FTPIPE_SCHEDULE_MEMORYCHECK_H
