//===- RuntimeTags.h - Every tag of the runtime's own messages --*- C++ -*-===//
//
// The tag space of a run's point-to-point messages (Transport::send/recv,
// matched by sender, receiver, tag and micro-batch):
//
//   [0, kRuntimeTagBase)   stage code's activations and gradients: edge e of
//                          the stage graph sends its forward values with tag
//                          2e and its gradients with 2e + 1 (the manifest's
//                          transfers, docs/StagePrograms.md);
//   [kRuntimeTagBase, ...) the runtime's own messages, every one named by
//                          RuntimeTag below; no other file writes a tag
//                          number.
//
// Over MPI the tag is the MPI tag (MpiCommunicator checks it against
// MPI_TAG_UB; OpenMPI's is 2^31 - 1). Over NCCL, tags below kRuntimeTagBase
// travel on the device links and the runtime's own (host memory) go over
// MPI, so the boundary is also the NCCL communicator's routing rule. The
// values are part of no file format: processes of one run are one build.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_RUNTIMETAGS_H
#define FTPIPE_RUNTIME_RUNTIMETAGS_H

#include <cstdint>

namespace ftpipe {
namespace runtime {

/// Tags at or above this are the runtime's own (RuntimeTag); stage code
/// uses the tags below.
constexpr int64_t kRuntimeTagBase = int64_t(1) << 24;

/// Every message tag of the runtime itself, with its sender and receiver.
enum class RuntimeTag : int64_t {
  /// Communicator::barrier: every device to device 0, then back.
  BarrierArrive = kRuntimeTagBase,
  BarrierRelease = kRuntimeTagBase + 1,
  /// Communicator::allReduceSum over send/recv (the replicas' gradient
  /// sum): each member's values to the group's first, and the sum back.
  AllReduceGather = kRuntimeTagBase + 2,
  AllReduceResult = kRuntimeTagBase + 3,
  /// NcclCommunicator: a device pair's NCCL unique id (over MPI), and the
  /// header (tag, micro-batch, bytes) that announces each NCCL message.
  NcclUniqueId = kRuntimeTagBase + 4,
  NcclHeader = kRuntimeTagBase + 5,
  /// NcclCommunicator::allReduceSum: the group communicator's NCCL unique
  /// id, from the group's first member to the others (over MPI).
  NcclGroupId = kRuntimeTagBase + 6,
  /// ReplicaCommunicator::gatherLosses: a replica's count of step losses
  /// to its device's first replica (the micro-batch field is the step);
  /// the losses follow at ReplicaLosses.
  ReplicaLossCount = kRuntimeTagBase + 7,
  /// The end of a run (Gather.h): an owner's parameter to device 0 (the
  /// micro-batch field numbers the parameter), a device's timeline length
  /// and its events.
  GatherWeight = kRuntimeTagBase + 8,
  GatherTraceLength = kRuntimeTagBase + 9,
  GatherTrace = kRuntimeTagBase + 10,
  /// saveCheckpoint: a device's file records (size, then text) to device 0.
  CheckpointRecordSize = kRuntimeTagBase + 11,
  CheckpointRecord = kRuntimeTagBase + 12,
  /// FailureDetector: each process's heartbeat address to device 0, and the
  /// table of all addresses back.
  FailureDetectorAddress = kRuntimeTagBase + 13,
  FailureDetectorTable = kRuntimeTagBase + 14,
  /// The losses themselves (see ReplicaLossCount).
  ReplicaLosses = kRuntimeTagBase + 15,
  /// migrateState (Migration.h): from every device to every other, the
  /// count of tensors that follow (micro-batch 0) and their sizes
  /// (micro-batch 1); then tensor i (micro-batch i), a safetensors image.
  MigrationHeader = kRuntimeTagBase + 16,
  MigrationTensor = kRuntimeTagBase + 17,
  /// exchangeReplanControl (Replan.h), after each step (the micro-batch
  /// field): every device's compute seconds to device 0, device 0's action
  /// and path length back, then the path.
  ReplanReport = kRuntimeTagBase + 18,
  ReplanControl = kRuntimeTagBase + 19,
  ReplanPath = kRuntimeTagBase + 20,
  /// The end of a run under --compare-simulator (Gather.h): a process's
  /// host and CPUs to device 0.
  GatherCpus = kRuntimeTagBase + 21,
  /// The executor's tied-parameter exchange, the last and open-ended range:
  /// tied parameter t's gradient to its owner at tiedGradientTag(t), its
  /// updated value back at tiedValueTag(t).
  TiedParameters = kRuntimeTagBase + 22,
};

/// The tag to pass to Transport::send and recv.
constexpr int64_t tagOf(RuntimeTag tag) { return static_cast<int64_t>(tag); }

/// Tags of tied parameter `tied` (its index among the tied parameters).
constexpr int64_t tiedGradientTag(int64_t tied) {
  return tagOf(RuntimeTag::TiedParameters) + 2 * tied;
}
constexpr int64_t tiedValueTag(int64_t tied) {
  return tagOf(RuntimeTag::TiedParameters) + 2 * tied + 1;
}

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_RUNTIMETAGS_H
