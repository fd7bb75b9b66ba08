//===- Memory.h - What a device keeps for a training setup ------*- C++ -*-===//
//
// The one memory formula of a pipeline device, used by the planner's memory
// check (partition::evaluatePlan) and by the runtime, which recomputes it
// from the manifest for the setup it is asked to run: weights, their
// gradients, the optimizer's state, stashed weight versions and the
// activations of the micro-batches in flight, against the device's budget.
// Its inputs are what a plan fixes (DeviceMemoryInputs); the setup
// (TrainingSetup) decides how many micro-batches are in flight, how many
// weight versions are kept and how much state the optimizer keeps. No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SCHEDULE_MEMORY_H
#define FTPIPE_SCHEDULE_MEMORY_H

#include "FTPipe/Schedule/TrainingSetup.h"

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <vector>

namespace ftpipe {
namespace schedule {

/// Bytes of optimizer state per byte of parameter (0, 1 or 2).
unsigned optimizerStateFactor(Optimizer optimizer);

/// The most bytes an update holds for one tied parameter of `bytes` that
/// `holders` devices hold (its exchange, DeviceExecutor::update): the owner
/// receives each copy's gradient into a message buffer and adds it from a
/// copy (2 x bytes), then sends its value to every copy (a send buffer
/// each); a copy sends its gradient and receives the value while that send
/// may still wait (2 x bytes). None for a parameter held once.
uint64_t tiedExchangeBytes(uint64_t bytes, uint64_t holders, bool owner);

/// Micro-batches in flight on a stage of the given height (the longest path
/// in stages to a stage without consumers): async and 1F1B keep height + 1
/// (1F1B and zb-h1 at most M), GPipe and zb-auto keep M.
uint32_t microBatchesInFlight(uint32_t height, Kind schedule,
                              uint32_t microBatches);

/// Weight versions a stage with `inFlight` micro-batches keeps beyond the
/// live one (only the async schedule keeps any).
uint32_t extraWeightVersions(uint32_t inFlight, Kind schedule,
                             WeightVersions versions);

/// The most bytes one stage keeps at once for micro-batches whose forward
/// ran and whose backward is not done: `inFlight` x `kept` (activations
/// until B or I), and under zb-auto also the W buffers of micro-batches
/// whose I ran and whose W did not (zb-h1's lists keep each device within
/// its 1F1B peak given the stages' bytes, schedule::generate: 1F1B's count). A
/// step's W all run before its update, so at most M micro-batches hold either
/// at once (M + 1 while an I holds both), at most `inFlight` of them
/// activations: max(kept + M x wbuf, inFlight x kept + (M + 1 - inFlight) x
/// wbuf) (activations and W buffers together; W buffers in the device's
/// activationBytes).
uint64_t stageActivationBytes(uint32_t inFlight, uint64_t kept,
                              uint64_t weightBuffer, Kind schedule,
                              uint32_t microBatches);

/// What a plan fixes about one device's memory.
struct DeviceMemoryInputs {
  /// Per stage on the device.
  struct Stage {
    uint32_t height = 0;
    /// Bytes kept per micro-batch in flight. The planner's cost model: the
    /// stage's activations (only its inputs under recomputation); once
    /// compiled (runtime::compiledMemoryInputs): the forward's saved values
    /// and the messages it sends.
    uint64_t keptBytesPerMicroBatch = 0;
    /// Bytes a backward (B or I) of the stage adds while it runs (one task
    /// of a device at a time). The cost model: the activations rebuilt
    /// under recomputation; once compiled: the larger of the B's and the
    /// I's recorded peaks (the generated code's buffers with the
    /// allocator's cache, which the runtime limits to the running entry
    /// point's peak), the data slices and the backward's messages (those it
    /// sends, and the largest it receives).
    uint64_t recomputePeakBytes = 0;
    /// Bytes a split backward's input part keeps for its weight part, per
    /// micro-batch (0 for a stage that does not split): counted under the
    /// zero-bubble kinds (weightBuffersInFlight).
    uint64_t weightBufferBytesPerMicroBatch = 0;
    /// Bytes a split backward's weight part adds while it runs, beyond its
    /// W buffer (counted by the lists' dry run, StageMemory). The cost
    /// model: none (W rebuilds nothing; its gradients are counted); once
    /// compiled: the W's recorded peak and the data slices.
    uint64_t weightWorkingBytes = 0;
    /// Bytes a forward adds while it runs, its own kept bytes included and
    /// its messages not. The cost model and older manifests: none (0: a
    /// forward adds recomputePeakBytes and its kept bytes); once compiled:
    /// the forward's recorded peak (its saved values among its results), the
    /// data slices and the largest message it receives.
    uint64_t forwardWorkingBytes = 0;
    /// Of keptBytesPerMicroBatch and recomputePeakBytes: the bytes a
    /// forward and a backward (B or I) send per micro-batch, which a replay
    /// of the lists counts for as long as the sends may wait for their
    /// receivers instead (replayedMemory, sendsHeldUntil). The cost model
    /// and manifests written before they were recorded: none.
    uint64_t forwardMessageBytes = 0, backwardMessageBytes = 0;
  };
  std::vector<Stage> stages;
  /// paramBytesByHeight[h]: bytes of the distinct parameters the device
  /// reads whose most demanding reader stage on the device has height h (it
  /// decides their stashed versions).
  std::vector<uint64_t> paramBytesByHeight;
  /// Bytes of the distinct frozen parameters the device reads (not in
  /// paramBytesByHeight): stored once, with no gradient, optimizer state or
  /// stashed version.
  uint64_t frozenParamBytes = 0;
  /// Of paramBytesByHeight: the bytes of tied parameters the device holds
  /// as a copy (gradients, no optimizer state: the owner updates them).
  /// The cost model and older manifests: none.
  uint64_t tiedCopyBytes = 0;
  /// Bytes an update adds while it runs (counted by replayedMemory, beside
  /// the generated code's cache that the task before it left): the
  /// largest tied parameter's exchange (tiedExchangeBytes); and the largest
  /// trained parameter the device holds (Adafactor's update of it works in
  /// doubles: twice its bytes more). Manifests written before they were
  /// recorded: the largest working set and all trained bytes.
  uint64_t updateWorkingBytes = 0, largestParamBytes = 0;
  /// Bytes kept free (CUDA context, workspace).
  uint64_t reservedBytes = 0;
  /// The device's memory.
  uint64_t budgetBytes = 0;
};

/// One device's memory under a setup.
struct DeviceMemory {
  uint64_t weightBytes = 0, gradientBytes = 0, optimizerBytes = 0;
  uint64_t stashBytes = 0, activationBytes = 0, reservedBytes = 0;
  uint64_t budgetBytes = 0;

  uint64_t totalBytes() const {
    return weightBytes + gradientBytes + optimizerBytes + stashBytes +
           activationBytes + reservedBytes;
  }
  bool fits() const { return totalBytes() <= budgetBytes; }
};

/// The memory of a device with `inputs` under `setup` (its recompute field
/// is not read: recomputation is fixed with the stages' kept bytes), as the
/// partitioner counts it (a weight version per micro-batch under async).
DeviceMemory deviceMemory(const DeviceMemoryInputs &inputs,
                          const TrainingSetup &setup);

/// The same under the runtime's rules, where they differ for the async
/// schedule: two sets of gradient sums at once on a device of several
/// stages, and whole copies of the
/// device's weights per older version, one version per step of M
/// micro-batches. With the compiled inputs (runtime::compiledMemoryInputs)
/// it bounds the runtime's peak tensor memory for any list of the kind,
/// each term at its maximum; replayedMemory (MemoryReplay.h), the plan's
/// figure, is tighter where the lists can be built, and falls back on it.
DeviceMemory runtimeMemory(const DeviceMemoryInputs &inputs,
                           const TrainingSetup &setup);

/// The least memory that a device's replicas' gradient all-reduce adds to
/// its weights, gradients, optimizer state and stashes once a stage's last
/// backward has ended: each all-reduce works on a copy of the gradients one
/// backward completes (NCCL: a device buffer per all-reduce, one at a time on
/// the group's stream; MPI and threads: every stage's flattened until the
/// update, runtime::ReplicaReductions), so at least the largest of those:
/// the parameters whose tallest reader on the device has one height
/// (paramBytesByHeight: one stage's gradients where the device's stages
/// differ in height). 0 with fewer than 2 replicas.
uint64_t allReduceBufferBytes(const DeviceMemoryInputs &inputs,
                              int64_t replicas);

/// What a device of `replicas` holds while its all-reduce's buffer is held:
/// `memory` (its figure under the setup) less its activations (the
/// all-reduce starts after the stage's last backward, not necessarily
/// beside the activations' peak) plus allReduceBufferBytes.
uint64_t reducingBytes(const DeviceMemory &memory,
                       const DeviceMemoryInputs &inputs, int64_t replicas);

/// The memory a device of `replicas` needs: the larger of `memory`'s total
/// and reducingBytes; applied to every device by checkMemory
/// (MemoryCheck.h), the planner's, ftpipe-compile's and ftpipe-run's check.
uint64_t replicatedBytes(const DeviceMemory &memory,
                         const DeviceMemoryInputs &inputs, int64_t replicas);

/// The inputs as the manifest records them, and back (fails naming the
/// field; sizes are checked, values taken as given).
llvm::json::Value toJSON(const DeviceMemoryInputs &inputs);
bool fromJSON(const llvm::json::Value &value, DeviceMemoryInputs &inputs,
              llvm::json::Path path);
llvm::json::Value toJSON(const DeviceMemory &memory);
/// Refuses a `total_bytes` that is not the sum of the parts.
bool fromJSON(const llvm::json::Value &value, DeviceMemory &memory,
              llvm::json::Path path);

} // namespace schedule
} // namespace ftpipe

#endif // FTPIPE_SCHEDULE_MEMORY_H
